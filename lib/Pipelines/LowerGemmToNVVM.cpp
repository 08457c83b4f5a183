//===- LowerGemmToNVVM.cpp - fp8-lower-gemm-to-nvvm -----------------------===//
//
// The Hopper GEMM kernels alone, to PTX or a cubin: what the GEMM tests and
// bench/gpu/run-hopper-gemm.sh compile. The kernels are lowered inside their
// gpu.module only, as fp8-lower-to-nvvm does for the other kernels.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerGemmToNVVM.h"
#include "fp8/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fp8::buildLowerGemmToNVVMPipeline(
    OpPassManager &pm, const LowerGemmToNVVMOptions &options) {
  ConvertFP8ScaledMatmulToWGMMAOptions convert;
  convert.chip = options.chip;
  convert.features = options.features;
  convert.promote = options.promote;
  convert.tmaStore = options.tmaStore;
  pm.addPass(createConvertFP8ScaledMatmulToWGMMA(convert));

  // Not convert-gpu-to-nvvm: it would turn math.absf and arith.maxnumf into
  // libdevice calls.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertNVVMToLLVMPass());
  // A module pass: it only finds control flow in the kernels.
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.nest<gpu::GPUModuleOp>().addPass(createReconcileUnrealizedCastsPass());

  if (options.format == "llvm")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::fp8::registerLowerGemmToNVVMPipeline() {
  PassPipelineRegistration<LowerGemmToNVVMOptions>(
      "fp8-lower-gemm-to-nvvm",
      "Generate the Hopper FP8 wgmma GEMM kernels of fp8.scaled_matmul ops "
      "and lower them to PTX / cubin",
      buildLowerGemmToNVVMPipeline);
}
