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

void mlir::fp8::numerics::rollAmaxHistory(float *history, size_t length) {
  if (length == 0)
    return;
  float first = history[0];
  for (size_t i = 0; i + 1 < length; ++i)
    history[i] = history[i + 1];
  history[length - 1] = first;
  history[0] = 0.0f;
}
