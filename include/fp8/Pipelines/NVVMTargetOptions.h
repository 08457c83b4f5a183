//===- NVVMTargetOptions.h - Options of the NVVM pipelines ------*- C++ -*-===//

#ifndef FP8_PIPELINES_NVVMTARGETOPTIONS_H
#define FP8_PIPELINES_NVVMTARGETOPTIONS_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::fp8 {

/// The target and serialization options of every pipeline that makes
/// kernels (fp8-lower-to-nvvm, fp8-lower-gemm-to-nvvm, fp8-lower-to-gpu);
/// `Derived` adds its own.
template <typename Derived>
struct NVVMTargetOptions : public PassPipelineOptions<Derived> {
  mlir::detail::PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVVM target chip"),
      llvm::cl::init("sm_90a")};
  mlir::detail::PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("NVVM target features (PTX version)"),
      llvm::cl::init("+ptx80")};
  mlir::detail::PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the kernels become: isa (PTX, no CUDA needed), "
                     "bin (cubin, runs ptxas), fatbin, or llvm (LLVM/NVVM "
                     "dialect, not serialized)"),
      llvm::cl::init("isa")};
  mlir::detail::PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit path for format=bin/fatbin"),
      llvm::cl::init("")};
};

} // namespace mlir::fp8

#endif // FP8_PIPELINES_NVVMTARGETOPTIONS_H
