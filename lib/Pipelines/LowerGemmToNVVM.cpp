//===- LowerGemmToNVVM.cpp - fp8-lower-gemm-to-nvvm -----------------------===//
//
// The Hopper GEMM kernels alone, to PTX or a cubin: what the GEMM tests and
// bench/gpu/run-hopper-gemm.sh compile. The kernels are lowered inside their
// gpu.module only, as fp8-lower-to-nvvm does for the other kernels.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerGemmToNVVM.h"
#include "fp8/Pipelines/LowerToNVVM.h"
#include "fp8/Conversion/Passes.h"

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

  addKernelToBinaryPasses(pm, options.format, options.toolkit);
}

void mlir::fp8::registerLowerGemmToNVVMPipeline() {
  registerCheckedNVVMPipeline<LowerGemmToNVVMOptions>(
      "fp8-lower-gemm-to-nvvm",
      "Generate the Hopper FP8 wgmma GEMM kernels of fp8.scaled_matmul ops "
      "and lower them to PTX / cubin",
      buildLowerGemmToNVVMPipeline);
}
