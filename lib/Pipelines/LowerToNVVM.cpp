//===- LowerToNVVM.cpp - fp8-lower-to-nvvm --------------------------------===//
//
// The Hopper path: fp8 ops become kernels (convert-fp8-to-nvvm), which are
// lowered inside their gpu.module only, so the host launcher keeps its
// memrefs and GPU runtime ops, and are then serialized by the upstream NVVM
// target: PTX with no CUDA installed, a cubin when ptxas is there.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerToNVVM.h"
#include "fp8/Conversion/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::fp8::buildLowerToNVVMPipeline(OpPassManager &pm,
                                         const LowerToNVVMOptions &options) {
  ConvertFP8ToNVVMOptions convert;
  convert.chip = options.chip;
  convert.features = options.features;
  pm.addPass(createConvertFP8ToNVVM(convert));

  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  addKernelToBinaryPasses(pm, options.format, options.toolkit);
}

void mlir::fp8::addKernelToBinaryPasses(OpPassManager &pm, StringRef format,
                                        StringRef toolkit) {
  // The kernels are llvm.funcs already: only their arith, math and scf
  // bodies remain. convert-gpu-to-nvvm is not used: it would turn
  // math.absf and arith.maxnumf into libdevice calls. The host functions
  // have no control flow, so convert-cf-to-llvm (a module pass) only
  // touches the kernels.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertMathToLLVMPass());
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.nest<gpu::GPUModuleOp>().addPass(createReconcileUnrealizedCastsPass());

  if (format == "llvm")
    return;
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = format.str();
  binary.toolkitPath = toolkit.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::fp8::registerLowerToNVVMPipeline() {
  registerCheckedNVVMPipeline<LowerToNVVMOptions>(
      "fp8-lower-to-nvvm",
      "Lower fp8 ops to Hopper kernels (PTX / cubin) and a host launcher",
      buildLowerToNVVMPipeline);
}
