//===- BlockKernels.h - Shared pieces of the per-block kernels --*- C++ -*-===//
//
// Private to lib/Conversion/FP8ToNVVM: what the LLVM-dialect kernel builders
// (FP8ToNVVM.cpp) and the gpu.func kernels (BlockCastTranspose.cpp) share,
// so that the same recipe computes the same scales in both.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP8TONVVM_BLOCKKERNELS_H
#define LIB_CONVERSION_FP8TONVVM_BLOCKKERNELS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <string>

namespace mlir::fp8 {

/// compute_block_scales' rule, as the kernels build it.
struct BlockRecipe {
  bool mx = false;
  bool powerOfTwo = false;
  float epsilon = 0.0f;

  /// The kernel-name suffix (KernelABI.h).
  std::string getSuffix() const;
};

/// Short type names used in kernel names (KernelABI.h); empty for a type
/// no kernel takes.
StringRef getKernelTypeTag(Type type);

/// The largest finite value of E4M3FN or E5M2.
float getFloat8MaxFinite(Type float8Type);

/// compute_block_scales on one f32 amax: the f32 scale and the scale_inv to
/// store (an f32, or for MX the E8M0 code as an i8).
std::pair<Value, Value> createBlockScale(OpBuilder &builder, Location loc,
                                         Value amax, Type float8Type,
                                         const BlockRecipe &recipe);

/// cvt.rn.satfinite.<fp8>x2.f32 of (hi, lo): `lo` in the low byte.
Value createFloat8Pair(OpBuilder &builder, Location loc, Value hi, Value lo,
                       Type float8Type);

/// memref<?x?xelement>: a matrix parameter of the gpu.func kernels.
MemRefType getDynamicMatrixType(Type element);

/// The transposing block cast (KernelABI.h,
/// `block_cast_transpose_<in>_<fp8>_<bc>x1<recipe>`) in `module`, a
/// gpu.func on memrefs, created once; returns its name.
StringRef getOrCreateBlockCastTranspose(gpu::GPUModuleOp module, Type in,
                                        Type out, int64_t bc,
                                        const BlockRecipe &recipe);

} // namespace mlir::fp8

#endif // LIB_CONVERSION_FP8TONVVM_BLOCKKERNELS_H
