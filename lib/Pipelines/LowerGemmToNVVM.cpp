//===- LowerGemmToNVVM.cpp - fp8-lower-gemm-to-nvvm -----------------------===//
//
// The Hopper wgmma kernels alone (the GEMMs of fp8.scaled_matmul, the flash
// attention of fp8.attention), to PTX or a cubin: what their tests and the
// GPU kit compile. The kernels are lowered inside their
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
  ConvertFP8AttentionToWGMMAOptions attention;
  attention.chip = options.chip;
  attention.features = options.features;
  pm.addPass(createConvertFP8AttentionToWGMMA(attention));

  addKernelToBinaryPasses(pm, options.format, options.toolkit);
}

void mlir::fp8::registerLowerGemmToNVVMPipeline() {
  registerCheckedNVVMPipeline<LowerGemmToNVVMOptions>(
      "fp8-lower-gemm-to-nvvm",
      "Generate the Hopper wgmma kernels of fp8.scaled_matmul (GEMMs) and "
      "fp8.attention (flash attention) ops and lower them to PTX / cubin",
      buildLowerGemmToNVVMPipeline);
}
