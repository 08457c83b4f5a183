//===- LowerGemmToNVVM.h - fp8-lower-gemm-to-nvvm ---------------*- C++ -*-===//

#ifndef FP8_PIPELINES_LOWERGEMMTONVVM_H
#define FP8_PIPELINES_LOWERGEMMTONVVM_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::fp8 {

/// Options of `fp8-lower-gemm-to-nvvm`.
struct LowerGemmToNVVMOptions
    : public PassPipelineOptions<LowerGemmToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVVM target chip"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("NVVM target features (PTX version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<bool> promote{
      *this, "promote",
      llvm::cl::desc("Promote wgmma partial sums into an f32 accumulator "
                     "every 4 wgmma"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tmaStore{
      *this, "tma-store",
      llvm::cl::desc("Store results through shared memory with TMA"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("isa (PTX, no CUDA needed), bin (cubin, runs ptxas), "
                     "fatbin, or llvm (not serialized)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit path for format=bin/fatbin"),
      llvm::cl::init("")};
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
