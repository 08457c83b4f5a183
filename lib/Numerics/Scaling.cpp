//===- Scaling.cpp - Transformer Engine scaling recipes -------------------===//

#include "fp8/Numerics/Scaling.h"

#include <cfloat>
#include <cmath>
#include <cstring>

using namespace mlir::fp8::numerics;

// fmaxf ignores a NaN operand; TE's amax reductions are built from it.
/// max(acc, value) where a NaN, quiet or signaling, counts as missing (TE's
/// fmaxf on the GPU, LLVM's maxnum). Not std::fmax: glibc's returns a NaN
/// for a signaling NaN (IEEE 754-2008 maxNum), so the folders disagreed with
/// the CPU lowering depending on the compiler (FP8FoldVsLowerTests).
static float maxIgnoringNaN(float acc, float value) {
  if (std::isnan(value))
    return acc;
  if (std::isnan(acc))
    return value;
  return value > acc ? value : acc;
}

float mlir::fp8::numerics::computeAmax(const float *values, size_t count) {
  float amax = 0.0f;
  for (size_t i = 0; i < count; ++i)
    amax = maxIgnoringNaN(amax, std::fabs(values[i]));
  return amax;
}

float mlir::fp8::numerics::reduceAmaxHistory(const float *history, size_t length,
                                       AmaxAlgo algo) {
  if (length == 0)
    return 0.0f;
  if (algo == AmaxAlgo::MostRecent)
    return history[0];
  float amax = history[0];
  for (size_t i = 1; i < length; ++i)
    amax = maxIgnoringNaN(amax, history[i]);
  return amax;
}

float mlir::fp8::numerics::scaledMax(float fp8Max, int margin) {
  return fp8Max * std::ldexp(1.0f, -margin);
}

float mlir::fp8::numerics::truncateToPowerOfTwo(float scale) {
  uint32_t bits;
  std::memcpy(&bits, &scale, sizeof(bits));
  bits &= 0xFF800000u;
  std::memcpy(&scale, &bits, sizeof(bits));
  return scale;
}

float mlir::fp8::numerics::computeDelayedScale(float amax, float previousScale,
                                         float fp8Max, int margin,
                                         bool powerOfTwo) {
  float scale = previousScale;
  if (std::isfinite(amax) && amax > 0.0f)
    scale = scaledMax(fp8Max, margin) / amax;
  if (std::isinf(scale))
    scale = FLT_MAX;
  return powerOfTwo ? truncateToPowerOfTwo(scale) : scale;
}

float mlir::fp8::numerics::computeCurrentScale(float amax, float fp8Max, int margin,
                                         bool powerOfTwo, float epsilon) {
  // A NaN amax compares false here and is caught below, as in TE.
  if (amax < epsilon)
    amax = epsilon;
  if (std::isinf(amax) || std::isnan(amax) || amax == 0.0f)
    return 1.0f;
  float scale = scaledMax(fp8Max, margin) / amax;
  if (std::isinf(scale))
    scale = FLT_MAX;
  return powerOfTwo ? truncateToPowerOfTwo(scale) : scale;
}

float mlir::fp8::numerics::computeBlockScale(float amax, float fp8Max,
                                             bool powerOfTwo, float epsilon) {
  return computeCurrentScale(amax, fp8Max, /*margin=*/0, powerOfTwo, epsilon);
}

static float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint8_t mlir::fp8::numerics::computeMXScaleInvCode(float amax, float fp8Max) {
  // 1 / fp8_max rounded to f32 once, then one rounded multiply (TE's
  // Quantized_Limits::max_norm_rcp; 448 and 57344 times it give exactly 1).
  float reciprocal = static_cast<float>(1.0 / static_cast<double>(fp8Max));
  float value = amax * reciprocal;
  if (std::isnan(value))
    return 0xFF;
  if (std::isinf(value))
    return 0xFE;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits &= 0x7FFFFFFFu;
  uint32_t exponent = bits >> 23, mantissa = bits & 0x7FFFFFu;
  // Round the exponent up unless the value is a power of two, never past
  // 0xFE; subnormals up to 2^-127 (mantissa <= 0x400000) stay at code 0.
  if (mantissa > 0 && exponent != 0xFE && !(exponent == 0 && mantissa <= 0x400000))
    ++exponent;
  return static_cast<uint8_t>(exponent);
}

float mlir::fp8::numerics::e8m0ToF32(uint8_t code) {
  if (code == 0xFF)
    return fromBits(0x7FC00000u);
  if (code == 0)
    return fromBits(0x00400000u); // 2^-127, an f32 subnormal
  return fromBits(uint32_t(code) << 23);
}

float mlir::fp8::numerics::mxScaleFromCode(uint8_t code) {
  if (code == 0xFF)
    return fromBits(0x7FC00000u);
  if (code == 0xFE)
    return fromBits(0x00400000u); // 2^-127
  return fromBits(uint32_t(254 - code) << 23);
}

void mlir::fp8::numerics::rollAmaxHistory(float *history, size_t length) {
  if (length == 0)
    return;
  float first = history[0];
  for (size_t i = 0; i + 1 < length; ++i)
    history[i] = history[i + 1];
  history[length - 1] = first;
  history[0] = 0.0f;
}
