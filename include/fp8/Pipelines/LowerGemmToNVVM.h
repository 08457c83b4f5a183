//===- LowerGemmToNVVM.h - fp8-lower-gemm-to-nvvm ---------------*- C++ -*-===//

#ifndef FP8_PIPELINES_LOWERGEMMTONVVM_H
#define FP8_PIPELINES_LOWERGEMMTONVVM_H

#include "fp8/Pipelines/NVVMTargetOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::fp8 {

/// Options of `fp8-lower-gemm-to-nvvm`.
struct LowerGemmToNVVMOptions
    : public NVVMTargetOptions<LowerGemmToNVVMOptions> {
  PassOptions::Option<bool> promote{
      *this, "promote",
      llvm::cl::desc("Promote wgmma partial sums into an f32 accumulator "
                     "every 4 wgmma"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tmaStore{
      *this, "tma-store",
      llvm::cl::desc("Store results through shared memory with TMA"),
      llvm::cl::init(false)};
};

/// fp8-lower-gemm-to-nvvm: convert-fp8-scaled-matmul-to-wgmma, the GEMM
/// kernels down to the LLVM and NVVM dialects, and gpu-module-to-binary.
/// The fp8.scaled_matmul ops stay, annotated with their kernels.
void buildLowerGemmToNVVMPipeline(OpPassManager &pm,
                                  const LowerGemmToNVVMOptions &options);

/// Registers `fp8-lower-gemm-to-nvvm`.
void registerLowerGemmToNVVMPipeline();

} // namespace mlir::fp8

#endif // FP8_PIPELINES_LOWERGEMMTONVVM_H
