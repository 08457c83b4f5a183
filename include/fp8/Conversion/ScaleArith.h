//===- ScaleArith.h - The scaling recipes as arith ops ----------*- C++ -*-===//
//
// lib/Numerics' scalar rules (Scaling.h) built as arith/math ops on f32 and
// i32 scalars, for every lowering that computes scales in generated code:
// fp8-lower-to-cpu's linalg bodies and the Hopper kernels build the same
// arithmetic from here, so the two cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_SCALEARITH_H
#define FP8_CONVERSION_SCALEARITH_H

#include "mlir/IR/Builders.h"

namespace mlir::fp8 {

/// An f32 scalar constant.
Value createF32Constant(OpBuilder &builder, Location loc, float value);

/// FLT_MAX where `scale` is infinite, as Transformer Engine does.
Value clampInfiniteScale(OpBuilder &builder, Location loc, Value scale);

/// The sign and exponent bits of `scale`: the power of two at or below it.
Value truncateToPowerOfTwo(OpBuilder &builder, Location loc, Value scale);

/// Current and block scaling (numerics::computeCurrentScale,
/// computeBlockScale): amax raised to `epsilon`; 0, Inf or NaN give 1;
/// otherwise scaledMax / amax, FLT_MAX for Inf, power of two on request.
Value createCurrentScale(OpBuilder &builder, Location loc, Value amax,
                         Value scaledMax, float epsilon, bool powerOfTwo);

/// MXFP8 (numerics::computeMXScaleInvCode): the biased E8M0 exponent of a
/// block's scale_inv, as an i32 in [0, 255].
Value createMXScaleCode(OpBuilder &builder, Location loc, Value amax,
                        float fp8Max);

/// The exact f32 multiplier of an E8M0 code (numerics::mxScaleFromCode):
/// 2^(127 - code), 2^-127 for 0xFE, NaN for 0xFF.
Value createMXScaleFromCode(OpBuilder &builder, Location loc, Value code);

/// An f32 scalar rounded to `type` (f32, bf16 or f16), nearest even, as
/// `arith.truncf` defines it and the GPU's cvt.rn rounds. bf16 is rounded
/// with integer operations: LLVM's fptrunc to bf16 becomes an instruction
/// that flushes subnormal results to zero on some hosts (vcvtneps2bf16,
/// AVX512-BF16), while the folders, the numerics library and the GPU's
/// cvt.rn.bf16.f32 keep them. Found by FP8FoldVsLowerTests.
Value createTruncFFromF32(OpBuilder &builder, Location loc, Value value,
                          Type type);

/// The f32 an E8M0 code (an i32) stands for (numerics::e8m0ToF32):
/// 2^(code - 127), NaN for 0xFF.
Value createE8M0ToF32(OpBuilder &builder, Location loc, Value code);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_SCALEARITH_H
