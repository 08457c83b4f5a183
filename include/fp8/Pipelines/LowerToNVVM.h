//===- LowerToNVVM.h - fp8-lower-to-nvvm ------------------------*- C++ -*-===//

#ifndef FP8_PIPELINES_LOWERTONVVM_H
#define FP8_PIPELINES_LOWERTONVVM_H

#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"

#include "fp8/Pipelines/NVVMTargetOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

#include <string>

namespace mlir::fp8 {

/// Options of `fp8-lower-to-nvvm`.
struct LowerToNVVMOptions : public NVVMTargetOptions<LowerToNVVMOptions> {};

/// fp8-lower-to-nvvm: convert-fp8-to-nvvm, the kernels down to the LLVM and
/// NVVM dialects, and gpu-module-to-binary. The host functions stay on
/// memrefs with gpu.launch_func / alloc / memset / memcpy (fp8-run or
/// gpu-to-llvm takes them from there).
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// Registers `fp8-lower-to-nvvm`.
void registerLowerToNVVMPipeline();

/// Lowers the kernels of a gpu.module (gpu.funcs on memrefs, and LLVM-
/// dialect functions with arith/math/cf bodies) to the LLVM and NVVM
/// dialects, upstream's convert-gpu-to-nvvm doing the work; `kernels` is
/// nested on gpu.module. Shared by every NVVM pipeline.
void addKernelLoweringPasses(OpPassManager &kernels);

/// The tail of the kernel-only NVVM pipelines (fp8-lower-to-nvvm,
/// fp8-lower-gemm-to-nvvm): lowers the kernels and, unless `format` is
/// "llvm", serializes each gpu.module (format isa | bin | fatbin); the host
/// keeps its memrefs and GPU runtime ops.
void addKernelToBinaryPasses(OpPassManager &pm, StringRef format,
                             StringRef toolkit);

/// Registers an NVVM pipeline whose target and format options are checked
/// (checkNVVMTarget, checkNVVMFormat, checkNVVMToolkit) before it is built:
/// a bad chip, PTX version, format or toolkit is an option error, never an
/// LLVM abort or a module printed after a failed serialization.
template <typename Options>
void registerCheckedNVVMPipeline(StringRef arg, StringRef description,
                                 void (*builder)(OpPassManager &,
                                                 const Options &)) {
  registerPassPipeline(
      arg, description,
      [builder](OpPassManager &pm, StringRef text,
                function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (std::optional<std::string> error = checkNVVMTarget(
                options.chip, options.features, /*needsWgmma=*/false))
          return errorHandler(*error);
        if (std::optional<std::string> error = checkNVVMFormat(options.format))
          return errorHandler(*error);
        if (std::optional<std::string> error =
                checkNVVMToolkit(options.format, options.toolkit))
          return errorHandler(*error);
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> handler) {
        handler(Options());
      });
}

} // namespace mlir::fp8

#endif // FP8_PIPELINES_LOWERTONVVM_H
