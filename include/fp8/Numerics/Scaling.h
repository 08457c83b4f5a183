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

/// Block scaling (TE Float8BlockScaling, recipe_common.cuh
/// compute_scale_from_amax; torchao rowwise): amax is raised to `epsilon`;
/// amax 0, Inf or NaN gives 1; otherwise fp8_max / amax, FLT_MAX when that
/// overflows, and with `powerOfTwo` only the sign and exponent bits kept.
float computeBlockScale(float amax, float fp8Max, bool powerOfTwo,
                        float epsilon);

/// The biased E8M0 exponent of an MXFP8 block's scale_inv (TE's software
/// float_to_e8m0 on amax * (1 / fp8_max)): the exponent of that product
/// rounded up, 0xFE at most; 0 for 0, 0xFE for Inf, 0xFF (NaN) for NaN.
uint8_t computeMXScaleInvCode(float amax, float fp8Max);

/// The f32 value of an E8M0 code: 2^(code - 127), NaN for 0xFF.
float e8m0ToF32(uint8_t code);

/// The multiplier an MXFP8 block is quantized with: 1 / 2^(code - 127),
/// exact (TE's exp2f_rcp); NaN for 0xFF.
float mxScaleFromCode(uint8_t code);

/// TE's history roll after an update, in place:
///   new[i] = old[i+1], new[len-1] = old[0], new[0] = 0.
void rollAmaxHistory(float *history, size_t length);

} // namespace mlir::fp8::numerics

#endif // FP8_NUMERICS_SCALING_H
