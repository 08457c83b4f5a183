//===- ScalingTest.cpp - Block and MX scales against f64 references -------===//
//
// The per-block scale rules of the numerics library (TE Float8BlockScaling,
// torchao rowwise, TE MXFP8) against references written from their
// definitions in double precision and APFloat, over powers of two, the
// rounding boundaries around them, random bit patterns and specials.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Scaling.h"

#include "llvm/ADT/APFloat.h"
#include "gtest/gtest.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mlir::fp8::numerics;

namespace {

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t toBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Non-negative amaxes (block amaxes are |x| maxima): zero, subnormals,
/// powers of two and their neighbours, the FP8 maxima and their multiples,
/// Inf, NaN and random finite bit patterns.
std::vector<float> getAmaxes() {
  std::vector<float> amaxes = {0.0f, FLT_MIN, FLT_MAX, 448.0f, 57344.0f,
                               1e-12f, 1e-30f, 1e30f, 3.7f, 0.1f};
  for (int e = -149; e <= 127; ++e) {
    float p = std::ldexp(1.0f, e);
    amaxes.push_back(p);
    amaxes.push_back(std::nextafter(p, 0.0f));
    amaxes.push_back(std::nextafter(p, INFINITY));
    amaxes.push_back(p * 448.0f);
    amaxes.push_back(p * 57344.0f);
  }
  amaxes.push_back(INFINITY);
  amaxes.push_back(NAN);
  std::mt19937 rng(12);
  for (int i = 0; i < 20000; ++i)
    amaxes.push_back(fromBits(rng() & 0x7F7FFFFFu)); // finite, positive
  return amaxes;
}

/// TE's compute_scale_from_amax from its definition, in double: the
/// quotient of two floats rounded once to f32 (double rounding through
/// double is innocuous for division: 53 >= 2 * 24 + 2).
float referenceBlockScale(float amax, float fp8Max, bool powerOfTwo,
                          float epsilon) {
  if (amax < epsilon)
    amax = epsilon;
  if (std::isnan(amax) || std::isinf(amax) || amax == 0.0f)
    return 1.0f;
  double quotient = double(fp8Max) / double(amax);
  float scale = quotient > double(FLT_MAX) * (1 + 0x1p-25) ? INFINITY
                                                           : float(quotient);
  if (std::isinf(scale))
    scale = FLT_MAX;
  if (powerOfTwo)
    scale = float(std::exp2(std::floor(std::log2(double(scale)))));
  return scale;
}

TEST(BlockScale, MatchesDefinition) {
  for (float fp8Max : {448.0f, 57344.0f})
    for (bool powerOfTwo : {false, true})
      for (float epsilon : {0.0f, 1e-12f})
        for (float amax : getAmaxes()) {
          float expected =
              referenceBlockScale(amax, fp8Max, powerOfTwo, epsilon);
          float actual = computeBlockScale(amax, fp8Max, powerOfTwo, epsilon);
          ASSERT_EQ(toBits(actual), toBits(expected))
              << "amax " << amax << " (0x" << std::hex << toBits(amax)
              << "), fp8 max " << fp8Max << ", power of two " << powerOfTwo
              << ", epsilon " << epsilon;
        }
}

TEST(BlockScale, HandDerivedValues) {
  // The seeds' worked numbers (FP8-FACTS.md): amax 0.05 -> 8960, amax 1200
  // -> 0.37333333; powers of two round down: 8960 -> 8192, 0.3733 -> 0.25.
  EXPECT_EQ(computeBlockScale(0.05f, 448.0f, false, 0.0f), 448.0f / 0.05f);
  EXPECT_EQ(computeBlockScale(0.05f, 448.0f, true, 0.0f), 8192.0f);
  EXPECT_EQ(computeBlockScale(1200.0f, 448.0f, true, 0.0f), 0.25f);
  // An all-zero block: scale 1 (DeepSeek's reference kernel divides 0/0).
  EXPECT_EQ(computeBlockScale(0.0f, 448.0f, true, 0.0f), 1.0f);
  // torchao's EPS: an amax below 1e-12 counts as 1e-12.
  EXPECT_EQ(computeBlockScale(1e-20f, 448.0f, false, 1e-12f),
            448.0f / 1e-12f);
}

/// The MX exponent from its definition: e = ceil(log2(v)) for
/// v = amax * (1 / fp8_max) (both rounded to f32), clamped to E8M0's
/// [-127, 127]; Inf gives 127 (0xFE), NaN the E8M0 NaN.
uint8_t referenceMXCode(float amax, float fp8Max) {
  float reciprocal = float(1.0 / double(fp8Max));
  // The exact product of two floats fits a double: one rounding to f32.
  float v = float(double(amax) * double(reciprocal));
  if (std::isnan(v))
    return 0xFF;
  if (std::isinf(v))
    return 0xFE;
  if (v == 0.0f)
    return 0;
  int exponent;
  double fraction = std::frexp(double(v), &exponent); // v = f * 2^e, f in [0.5, 1)
  int ceilLog2 = fraction == 0.5 ? exponent - 1 : exponent;
  return uint8_t(std::clamp(ceilLog2 + 127, 0, 254));
}

TEST(MXScale, MatchesDefinition) {
  for (float fp8Max : {448.0f, 57344.0f})
    for (float amax : getAmaxes())
      ASSERT_EQ(int(computeMXScaleInvCode(amax, fp8Max)),
                int(referenceMXCode(amax, fp8Max)))
          << "amax " << amax << " (0x" << std::hex << toBits(amax) << ")";
}

TEST(MXScale, RoundsUpSoNothingSaturates) {
  // Rounding the exponent up (TE, arXiv 2506.08027) keeps every scaled
  // element within the format; the OCP spec's floor would not.
  for (float fp8Max : {448.0f, 57344.0f})
    for (float amax : getAmaxes()) {
      uint8_t code = computeMXScaleInvCode(amax, fp8Max);
      if (!std::isfinite(amax) || code == 0 || code == 0xFE)
        continue; // clamped: outside E8M0's range
      double scaled = double(amax) * double(mxScaleFromCode(code));
      EXPECT_LE(scaled, double(fp8Max)) << "amax " << amax;
      // ... and uses the top binade: halving the scale_inv would overflow.
      EXPECT_GT(scaled * 2, double(fp8Max)) << "amax " << amax;
    }
  EXPECT_EQ(computeMXScaleInvCode(448.0f, 448.0f), 127); // 2^0
  EXPECT_EQ(computeMXScaleInvCode(449.0f, 448.0f), 128); // 2^1
  EXPECT_EQ(computeMXScaleInvCode(1.0f, 448.0f), 127 - 8); // 2^-8: 1 -> 256
}

TEST(MXScale, E8M0CodesMatchAPFloat) {
  for (unsigned code = 0; code < 256; ++code) {
    llvm::APFloat value(llvm::APFloat::Float8E8M0FNU(), llvm::APInt(8, code));
    // Asked before converting: LLVM 22's APFloat converts the E8M0 NaN
    // (0xFF) to f32 +Inf.
    bool isNaN = value.isNaN();
    bool lost;
    value.convert(llvm::APFloat::IEEEsingle(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
    float expected = value.convertToFloat();
    float actual = e8m0ToF32(uint8_t(code));
    if (isNaN) {
      EXPECT_TRUE(std::isnan(actual)) << code;
      EXPECT_TRUE(std::isnan(mxScaleFromCode(uint8_t(code)))) << code;
      continue;
    }
    EXPECT_EQ(toBits(actual), toBits(expected)) << code;
    // The quantization multiplier is the exact reciprocal.
    EXPECT_EQ(double(actual) * double(mxScaleFromCode(uint8_t(code))), 1.0)
        << code;
  }
}

} // namespace
