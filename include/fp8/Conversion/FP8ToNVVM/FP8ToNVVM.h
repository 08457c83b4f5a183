//===- FP8ToNVVM.h - fp8 to GPU kernels for Hopper --------------*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TONVVM_FP8TONVVM_H
#define FP8_CONVERSION_FP8TONVVM_FP8TONVVM_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::fp8 {

/// The interfaces that lowering and serializing the kernels needs in the
/// context: the NVVM target attribute's serialization and the translations
/// of the LLVM, NVVM and GPU dialects to LLVM IR.
void registerFP8ToNVVMDialectExtensions(DialectRegistry &registry);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TONVVM_FP8TONVVM_H
