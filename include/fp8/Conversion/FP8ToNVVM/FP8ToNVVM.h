//===- FP8ToNVVM.h - fp8 to GPU kernels for Hopper --------------*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TONVVM_FP8TONVVM_H
#define FP8_CONVERSION_FP8TONVVM_FP8TONVVM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::gpu {
class GPUModuleOp;
} // namespace mlir::gpu

namespace mlir::fp8 {

/// Marks the private functions convert-fp8-to-gpu-launches outlines: host
/// code on memrefs that launches the fp8 kernels on the buffers it is
/// given (fp8-inline-gpu-launchers inlines them into their callers).
inline constexpr llvm::StringLiteral kGpuLauncherAttr = "fp8.gpu_launcher";

/// The runtime function a GEMM launcher encodes a TMA tensor map with
/// (libfp8_gpu_runtime: the map's host memory, then the buffer's address).
inline constexpr llvm::StringLiteral kEncodeTensorMapFunction =
    "fp8GpuEncodeTensorMap";

/// The interfaces that lowering and serializing the kernels needs in the
/// context: the NVVM target attribute's serialization and the translations
/// of the LLVM, NVVM and GPU dialects to LLVM IR.
void registerFP8ToNVVMDialectExtensions(DialectRegistry &registry);

/// Why `chip` and `features` cannot carry the FP8 kernels, or nullopt when
/// they can: the chip must be one LLVM's NVPTX backend knows with FP8
/// conversions (sm_89 and later; `needsWgmma`: sm_90a, for wgmma and
/// setmaxnreg), and `features` empty or `+ptxNN` with a PTX ISA the chip
/// supports. Checked before any upstream pass sees them: LLVM aborts or
/// crashes on the rest.
std::optional<std::string> checkNVVMTarget(llvm::StringRef chip,
                                           llvm::StringRef features,
                                           bool needsWgmma);

/// The `gpu.module @name` of `module` with an NVVM target for `chip` and
/// `features`, created at its start (the module then a GPU container) when
/// absent; a located error when another symbol has the name.
FailureOr<gpu::GPUModuleOp> getOrCreateKernelModule(ModuleOp module,
                                                    llvm::StringRef name,
                                                    llvm::StringRef chip,
                                                    llvm::StringRef features);

/// Why `format` is not a serialization the NVVM pipelines offer (isa, bin,
/// fatbin, llvm), or nullopt.
std::optional<std::string> checkNVVMFormat(llvm::StringRef format);

/// Why `toolkit` (a CUDA toolkit's root; empty: upstream looks for one)
/// cannot serialize to `format`, or nullopt: it must be a directory, and
/// for bin and fatbin hold bin/ptxas (and bin/fatbinary). Upstream's
/// serializer reports a missing directory without failing and takes the
/// tools from the PATH.
std::optional<std::string> checkNVVMToolkit(llvm::StringRef format,
                                            llvm::StringRef toolkit);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TONVVM_FP8TONVVM_H
