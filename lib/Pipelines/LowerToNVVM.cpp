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
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
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

void mlir::fp8::addKernelLoweringPasses(OpPassManager &kernels) {
  // convert-gpu-to-nvvm lowers gpu.func kernels on memrefs and the LLVM-
  // dialect ones alike (their arith, math and cf); fp8-expand-math-for-gpu
  // first, or math.absf and arith.maxnumf would become libdevice calls.
  kernels.addPass(fp8::createFP8ExpandMathForGPU());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  // The NVVM ops the fp8 kernels use that have no intrinsic (mbarrier
  // waits, wgmma fences, ...) as inline PTX.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::fp8::addKernelToBinaryPasses(OpPassManager &pm, StringRef format,
                                        StringRef toolkit) {
  // Only the kernels: the host keeps its memrefs and GPU runtime ops.
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createSCFToControlFlowPass());
  addKernelLoweringPasses(kernels);

  if (format == "llvm")
    return;
  FP8GpuModuleToBinaryOptions binary;
  binary.format = format.str();
  binary.toolkit = toolkit.str();
  pm.addPass(createFP8GpuModuleToBinary(binary));
}

void mlir::fp8::registerLowerToNVVMPipeline() {
  registerCheckedNVVMPipeline<LowerToNVVMOptions>(
      "fp8-lower-to-nvvm",
      "Lower fp8 ops to Hopper kernels (PTX / cubin) and a host launcher",
      buildLowerToNVVMPipeline);
}
