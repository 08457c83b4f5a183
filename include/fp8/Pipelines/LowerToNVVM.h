//===- LowerToNVVM.h - fp8-lower-to-nvvm ------------------------*- C++ -*-===//

#ifndef FP8_PIPELINES_LOWERTONVVM_H
#define FP8_PIPELINES_LOWERTONVVM_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir::fp8 {

/// Options of `fp8-lower-to-nvvm`.
struct LowerToNVVMOptions : public PassPipelineOptions<LowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVVM target chip"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("NVVM target features (PTX version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the kernels become: isa (PTX, no CUDA needed), "
                     "bin (cubin, runs ptxas), fatbin, or llvm (LLVM/NVVM "
                     "dialect, not serialized)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit path for format=bin/fatbin"),
      llvm::cl::init("")};
};

/// fp8-lower-to-nvvm: convert-fp8-to-nvvm, the kernels down to the LLVM and
/// NVVM dialects, and gpu-module-to-binary. The host functions stay on
/// memrefs with gpu.launch_func / alloc / memset / memcpy (fp8-run or
/// gpu-to-llvm takes them from there).
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// Registers `fp8-lower-to-nvvm`.
void registerLowerToNVVMPipeline();

/// The tail shared by the NVVM pipelines: lowers the bodies of kernels that
/// are already NVVM/LLVM functions to the LLVM dialect and, unless `format`
/// is "llvm", serializes each gpu.module (format isa | bin | fatbin).
void addKernelToBinaryPasses(OpPassManager &pm, StringRef format,
                             StringRef toolkit);

} // namespace mlir::fp8

#endif // FP8_PIPELINES_LOWERTONVVM_H
