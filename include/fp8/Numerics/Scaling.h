//===- Scaling.h - Transformer Engine scaling recipes -----------*- C++ -*-===//
//
// The scalar semantics of per-tensor FP8 scaling, exactly as Transformer
// Engine computes it (recipe/delayed_scaling.cu, recipe/recipe_common.cuh):
//
//   q = saturate_rne(x * scale),  x ~= q * scale_inv,  scale_inv = 1 / scale
//   scale = (fp8_max * 2^-margin) / amax               (all in f32)
//
// These functions are the reference for the fp8 dialect's folders, its CPU
// lowering and the GPU kernels: every path must agree with them bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_NUMERICS_SCALING_H
#define FP8_NUMERICS_SCALING_H

#include <cstddef>
#include <cstdint>

namespace mlir::fp8::numerics {

/// How a delayed-scaling recipe reduces its amax history to one amax.
enum class AmaxAlgo : uint8_t { Max, MostRecent };

/// max(|x|) over the elements, ignoring NaN (as `fmaxf` does in TE's amax
/// kernels); +-Inf gives +Inf; an empty or all-NaN input gives 0.
float computeAmax(const float *values, size_t count);

/// The amax a delayed-scaling update uses: the NaN-ignoring max over all rows
/// (Max) or row 0, the slot the current step's casts wrote (MostRecent).
float reduceAmaxHistory(const float *history, size_t length, AmaxAlgo algo);

/// fp8_max * 2^-margin, rounded to f32 once.
float scaledMax(float fp8Max, int margin);

/// Keep only the sign and exponent bits: the power of two at or below |scale|.
float truncateToPowerOfTwo(float scale);

/// Delayed scaling: a new scale if amax is finite and > 0, otherwise the
/// previous scale; an infinite scale becomes FLT_MAX.
float computeDelayedScale(float amax, float previousScale, float fp8Max,
                          int margin, bool powerOfTwo);

/// Current scaling (TE compute_scale_from_amax): amax is first raised to
/// `epsilon`; amax 0, Inf or NaN gives scale 1; an infinite scale becomes
/// FLT_MAX.
float computeCurrentScale(float amax, float fp8Max, int margin,
                          bool powerOfTwo, float epsilon);

/// TE's history roll after an update, in place:
///   new[i] = old[i+1], new[len-1] = old[0], new[0] = 0.
void rollAmaxHistory(float *history, size_t length);

} // namespace mlir::fp8::numerics

#endif // FP8_NUMERICS_SCALING_H
