//===- Float8Test.cpp - FP8 conversions against LLVM APFloat --------------===//
//
// Every expectation here comes from LLVM's APFloat (the semantics of
// `arith.truncf` / `arith.extf`) or, for SatFinite, is derived from APFloat's
// result by the documented cvt.rn.satfinite rule. Nothing is compared against
// values produced by the code under test.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Float8.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir::fp8::numerics;
using llvm::APFloat;
using llvm::APInt;

namespace {

constexpr Format kFormats[] = {Format::E4M3FN, Format::E5M2};
constexpr Overflow kPolicies[] = {Overflow::NonSaturating, Overflow::SatFinite};

const llvm::fltSemantics &semantics(Format format) {
  return format == Format::E4M3FN ? APFloat::Float8E4M3FN()
                                  : APFloat::Float8E5M2();
}

const char *policyName(Overflow overflow) {
  return overflow == Overflow::SatFinite ? "SatFinite" : "NonSaturating";
}

uint8_t maxFiniteCode(Format format) {
  return uint8_t(
      APFloat::getLargest(semantics(format)).bitcastToAPInt().getZExtValue());
}

/// APFloat's direct conversion of `bits` (in `from`) to the FP8 format.
APFloat convertWithAPFloat(const llvm::fltSemantics &from, uint64_t bits,
                           Format format) {
  APFloat value(from, APInt(APFloat::getSizeInBits(from), bits));
  bool losesInfo;
  value.convert(semantics(format), APFloat::rmNearestTiesToEven, &losesInfo);
  return value;
}

/// The expected FP8 code: APFloat's result, or for SatFinite the
/// cvt.rn.satfinite rule applied on top of it (NaN -> 0x7F; a result that
/// APFloat turned into Inf or NaN is an overflow or an infinite input ->
/// signed max finite).
uint8_t expected(const llvm::fltSemantics &from, uint64_t bits, Format format,
                 Overflow overflow) {
  APFloat input(from, APInt(APFloat::getSizeInBits(from), bits));
  APFloat result = convertWithAPFloat(from, bits, format);
  uint8_t code = uint8_t(result.bitcastToAPInt().getZExtValue());
  if (overflow == Overflow::NonSaturating)
    return code;
  if (input.isNaN())
    return 0x7F;
  if (result.isInfinity() || result.isNaN())
    return uint8_t((input.isNegative() ? 0x80 : 0) | maxFiniteCode(format));
  return code;
}

/// Collects mismatches and reports the count plus the first few.
class MismatchLog {
public:
  explicit MismatchLog(std::string what) : what(std::move(what)) {}

  void check(uint64_t input, unsigned actual, unsigned expected,
             const std::string &context) {
    ++checked;
    if (actual == expected)
      return;
    if (++failures <= kShown) {
      char line[160];
      std::snprintf(line, sizeof(line),
                    "  %s input 0x%llx: got 0x%x, want 0x%x\n", context.c_str(),
                    static_cast<unsigned long long>(input), actual, expected);
      details += line;
    }
  }

  ~MismatchLog() {
    EXPECT_EQ(failures, 0u) << what << ": " << failures << " of " << checked
                            << " conversions differ from APFloat\n"
                            << details;
  }

private:
  static constexpr unsigned kShown = 8;
  std::string what;
  std::string details;
  uint64_t checked = 0;
  uint64_t failures = 0;
};

std::string context(Format format, Overflow overflow) {
  return std::string(getFormatInfo(format).name) + "/" + policyName(overflow);
}

uint32_t f32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// f32 patterns around every boundary the formats have (both signs,
/// +-kRadius ulps), the specials, and NaNs with assorted payloads.
std::vector<uint32_t> boundaryF32Patterns() {
  constexpr int kRadius = 300;
  const float anchors[] = {0.0f,      1.0f,       448.0f,    464.0f,   480.0f,
                           57344.0f,  61440.0f,   65536.0f,  0x1p-6f,  0x1p-7f,
                           0x1p-9f,   0x1p-10f,   0x3p-10f,  0x1p-14f, 0x1p-15f,
                           0x1p-16f,  0x1p-17f,   0x3p-17f,  0x7p-10f, 0x7p-17f,
                           0x1.ep-7f, 0x1.cp-15f, 0x1p-126f, 0x1p127f};
  std::vector<uint32_t> patterns;
  for (float anchor : anchors) {
    uint32_t center = f32Bits(anchor);
    for (int delta = -kRadius; delta <= kRadius; ++delta) {
      int64_t bits = int64_t(center) + delta;
      if (bits < 0 || bits > 0x7FFFFFFF)
        continue;
      patterns.push_back(uint32_t(bits));
      patterns.push_back(uint32_t(bits) | 0x80000000u);
    }
  }
  const uint32_t specials[] = {
      0x7F800000u, 0x7F7FFFFFu, // Inf, largest finite
      0x7FC00000u, 0x7FC00001u, 0x7FE00000u, 0x7FDFFFFFu, 0x7FFFFFFFu,
      0x7FA00000u, 0x7F800001u, 0x7F800002u, 0x7F9FFFFFu, 0x7FBFFFFFu,
      0x7F900000u, 0x7FB00000u, 0x7F200000u, 0x00000001u, 0x007FFFFFu};
  for (uint32_t special : specials) {
    patterns.push_back(special);
    patterns.push_back(special | 0x80000000u);
  }
  return patterns;
}

} // namespace

TEST(Float8FormatInfo, MatchesAPFloatSemantics) {
  for (Format format : kFormats) {
    const llvm::fltSemantics &sem = semantics(format);
    const FormatInfo &info = getFormatInfo(format);
    SCOPED_TRACE(info.name);
    EXPECT_EQ(info.mantissaBits, APFloat::semanticsPrecision(sem) - 1);
    EXPECT_EQ(info.exponentBits, 7 - info.mantissaBits);
    EXPECT_EQ(1 - info.bias, APFloat::semanticsMinExponent(sem));
    EXPECT_EQ(info.hasInfinity, APFloat::semanticsHasInf(sem));
    EXPECT_EQ(info.maxFiniteBits, maxFiniteCode(format));
    EXPECT_EQ(info.maxFinite, APFloat::getLargest(sem).convertToFloat());
    EXPECT_EQ(info.minNormal,
              APFloat::getSmallestNormalized(sem).convertToFloat());
    EXPECT_EQ(info.minSubnormal, APFloat::getSmallest(sem).convertToFloat());
  }
  EXPECT_STREQ(getFormatInfo(Format::E4M3FN).name, "f8E4M3FN");
  EXPECT_STREQ(getFormatInfo(Format::E5M2).name, "f8E5M2");
}

TEST(Float8FromBF16, AllInputsMatchAPFloat) {
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies) {
      MismatchLog log("bf16 -> " + context(format, overflow));
      for (uint32_t bits = 0; bits <= 0xFFFF; ++bits)
        log.check(bits, fromBF16Bits(uint16_t(bits), format, overflow),
                  expected(APFloat::BFloat(), bits, format, overflow),
                  context(format, overflow));
    }
}

TEST(Float8FromF16, AllInputsMatchAPFloat) {
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies) {
      MismatchLog log("f16 -> " + context(format, overflow));
      for (uint32_t bits = 0; bits <= 0xFFFF; ++bits)
        log.check(bits, fromF16Bits(uint16_t(bits), format, overflow),
                  expected(APFloat::IEEEhalf(), bits, format, overflow),
                  context(format, overflow));
    }
}

TEST(Float8FromF32, StridedSweepMatchesAPFloat) {
  // A stride coprime with 2^32 visits patterns of every exponent and low-bit
  // shape; each pattern is converted through the scalar API.
  constexpr uint64_t kStride = 4099;
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies) {
      MismatchLog log("f32 strided -> " + context(format, overflow));
      for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += kStride)
        log.check(bits, fromF32Bits(uint32_t(bits), format, overflow),
                  expected(APFloat::IEEEsingle(), bits, format, overflow),
                  context(format, overflow));
    }
}

TEST(Float8FromF32, RoundingBitShapesMatchAPFloat) {
  // Every value of the top 16 bits (sign, exponent, the kept mantissa bits and
  // the round bit of both formats) combined with the low-bit shapes that
  // decide rounding: exact, barely above, just below/at/above a half of bit
  // 15, and all ones. Converted through the buffer API.
  const uint32_t lowShapes[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  std::vector<uint32_t> inputs;
  for (uint32_t high = 0; high <= 0xFFFF; ++high)
    for (uint32_t low : lowShapes)
      inputs.push_back(high << 16 | low);
  std::vector<uint8_t> outputs(inputs.size());
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies) {
      fromF32Bits(inputs.data(), outputs.data(), inputs.size(), format,
                  overflow);
      MismatchLog log("f32 bit shapes -> " + context(format, overflow));
      for (size_t i = 0; i < inputs.size(); ++i)
        log.check(inputs[i], outputs[i],
                  expected(APFloat::IEEEsingle(), inputs[i], format, overflow),
                  context(format, overflow));
    }
}

TEST(Float8FromF32, BoundariesAndSpecialsMatchAPFloat) {
  std::vector<uint32_t> inputs = boundaryF32Patterns();
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies) {
      MismatchLog log("f32 boundaries -> " + context(format, overflow));
      for (uint32_t bits : inputs)
        log.check(bits, fromF32Bits(bits, format, overflow),
                  expected(APFloat::IEEEsingle(), bits, format, overflow),
                  context(format, overflow));
    }
}

TEST(Float8FromF32, BufferMatchesScalar) {
  std::vector<uint32_t> inputs = boundaryF32Patterns();
  std::vector<uint8_t> outputs(inputs.size());
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies) {
      fromF32Bits(inputs.data(), outputs.data(), inputs.size(), format,
                  overflow);
      for (size_t i = 0; i < inputs.size(); ++i)
        ASSERT_EQ(outputs[i], fromF32Bits(inputs[i], format, overflow))
            << context(format, overflow) << " input 0x" << std::hex
            << inputs[i];
    }
}

TEST(Float8ToWide, AllCodesMatchAPFloat) {
  struct Target {
    const char *name;
    const llvm::fltSemantics &sem;
    uint32_t (*convert)(uint8_t, Format);
  };
  const Target targets[] = {
      {"f32", APFloat::IEEEsingle(),
       [](uint8_t bits, Format format) { return toF32Bits(bits, format); }},
      {"bf16", APFloat::BFloat(),
       [](uint8_t bits, Format format) {
         return uint32_t(toBF16Bits(bits, format));
       }},
      {"f16", APFloat::IEEEhalf(), [](uint8_t bits, Format format) {
         return uint32_t(toF16Bits(bits, format));
       }}};
  for (Format format : kFormats)
    for (const Target &target : targets) {
      std::string what =
          std::string(getFormatInfo(format).name) + " -> " + target.name;
      MismatchLog log(what);
      for (unsigned code = 0; code < 256; ++code) {
        APFloat value(semantics(format), APInt(8, code));
        bool losesInfo;
        value.convert(target.sem, APFloat::rmNearestTiesToEven, &losesInfo);
        EXPECT_TRUE(value.isNaN() || !losesInfo) << what << " code " << code;
        log.check(code, target.convert(uint8_t(code), format),
                  unsigned(value.bitcastToAPInt().getZExtValue()), what);
      }
    }
}

TEST(Float8ToWide, ToF32MatchesToF32Bits) {
  for (Format format : kFormats)
    for (unsigned code = 0; code < 256; ++code)
      EXPECT_EQ(f32Bits(toF32(uint8_t(code), format)),
                toF32Bits(uint8_t(code), format));
}

TEST(Float8RoundTrip, FiniteCodesSurviveBothPolicies) {
  for (Format format : kFormats)
    for (Overflow overflow : kPolicies)
      for (unsigned code = 0; code < 256; ++code) {
        if (APFloat(semantics(format), APInt(8, code)).isFinite())
          EXPECT_EQ(
              fromF32Bits(toF32Bits(uint8_t(code), format), format, overflow),
              code)
              << context(format, overflow);
      }
}

TEST(Float8Widening, MatchesAPFloatAndKeepsSignalingNaNs) {
  // APFloat quiets a signaling NaN when it widens, but these helpers must not
  // (a narrowing conversion after them has to see the original NaN), so for
  // NaNs the payload is checked by position and the signaling-ness through
  // APFloat's isSignaling on both sides.
  struct Source {
    const char *name;
    const llvm::fltSemantics &sem;
    uint32_t (*widen)(uint16_t);
    unsigned payloadShift;
  };
  const Source sources[] = {{"bf16", APFloat::BFloat(), bf16BitsToF32Bits, 16},
                            {"f16", APFloat::IEEEhalf(), f16BitsToF32Bits, 13}};
  for (const Source &source : sources) {
    MismatchLog log(std::string(source.name) + " -> f32");
    for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      APFloat value(source.sem, APInt(16, bits));
      uint32_t actual = source.widen(uint16_t(bits));
      if (!value.isNaN()) {
        bool losesInfo;
        value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                      &losesInfo);
        log.check(bits, actual, unsigned(value.bitcastToAPInt().getZExtValue()),
                  source.name);
        continue;
      }
      APInt payload =
          value.bitcastToAPInt() &
          APInt(16, (1u << (APFloat::semanticsPrecision(source.sem) - 1)) - 1);
      uint32_t want = (bits & 0x8000u) << 16 | 0x7F800000u |
                      uint32_t(payload.getZExtValue()) << source.payloadShift;
      log.check(bits, actual, want, source.name);
      EXPECT_EQ(APFloat(APFloat::IEEEsingle(), APInt(32, actual)).isSignaling(),
                value.isSignaling())
          << source.name << " 0x" << std::hex << bits;
    }
  }
}

//===----------------------------------------------------------------------===//
// Named vectors from the format definitions. The expected codes are spelled
// out from the OCP FP8 spec and cross-checked with APFloat where it applies.
//===----------------------------------------------------------------------===//

namespace {
struct Vector {
  float input;
  Format format;
  uint8_t nonSaturating;
  uint8_t satFinite;
};
} // namespace

TEST(Float8NamedVectors, FormatFacts) {
  const float inf = __builtin_inff();
  const float nan = __builtin_nanf("");
  const Vector vectors[] = {
      // E4M3FN: max 448 = 0x7E; 464 is the tie between 448 and the 480 that
      // 0x7F would be, and goes to the even 0x7E; anything above overflows.
      {448.0f, Format::E4M3FN, 0x7E, 0x7E},
      {464.0f, Format::E4M3FN, 0x7E, 0x7E},
      {-464.0f, Format::E4M3FN, 0xFE, 0xFE},
      {0x1.d00002p8f, Format::E4M3FN, 0x7F, 0x7E},
      {465.0f, Format::E4M3FN, 0x7F, 0x7E},
      {-465.0f, Format::E4M3FN, 0xFF, 0xFE},
      {1e30f, Format::E4M3FN, 0x7F, 0x7E},
      {inf, Format::E4M3FN, 0x7F, 0x7E},
      {-inf, Format::E4M3FN, 0xFF, 0xFE},
      {nan, Format::E4M3FN, 0x7F, 0x7F},
      {-nan, Format::E4M3FN, 0xFF, 0x7F},
      {1.0f, Format::E4M3FN, 0x38, 0x38},
      {0x1p-6f, Format::E4M3FN, 0x08, 0x08},  // min normal
      {0x1p-9f, Format::E4M3FN, 0x01, 0x01},  // min subnormal
      {0x1p-10f, Format::E4M3FN, 0x00, 0x00}, // half min subnormal: tie to 0
      {-0x1p-10f, Format::E4M3FN, 0x80, 0x80},
      {0x1.000002p-10f, Format::E4M3FN, 0x01, 0x01},
      {0x3p-10f, Format::E4M3FN, 0x02, 0x02},  // 1.5 ulp: tie to even 2
      {0x5p-10f, Format::E4M3FN, 0x02, 0x02},  // 2.5 ulp: tie to even 2
      {0x1.ep-7f, Format::E4M3FN, 0x08, 0x08}, // 7.5 ulp rounds to min normal
      {0.0f, Format::E4M3FN, 0x00, 0x00},
      {-0.0f, Format::E4M3FN, 0x80, 0x80},
      // E5M2: max 57344 = 0x7B; 61440 is the tie with 2^16 and goes to the
      // even 0x7C, which is Inf.
      {57344.0f, Format::E5M2, 0x7B, 0x7B},
      {0x1.dffffep15f, Format::E5M2, 0x7B, 0x7B},
      {61440.0f, Format::E5M2, 0x7C, 0x7B},
      {-61440.0f, Format::E5M2, 0xFC, 0xFB},
      {inf, Format::E5M2, 0x7C, 0x7B},
      {-inf, Format::E5M2, 0xFC, 0xFB},
      {nan, Format::E5M2, 0x7E, 0x7F},
      {-nan, Format::E5M2, 0xFE, 0x7F},
      {1.0f, Format::E5M2, 0x3C, 0x3C},
      {0x1p-14f, Format::E5M2, 0x04, 0x04}, // min normal
      {0x1p-16f, Format::E5M2, 0x01, 0x01}, // min subnormal
      {0x1p-17f, Format::E5M2, 0x00, 0x00},
      {0x3p-17f, Format::E5M2, 0x02, 0x02},
  };
  for (const Vector &v : vectors) {
    uint32_t bits = f32Bits(v.input);
    SCOPED_TRACE(std::string(getFormatInfo(v.format).name) + " " +
                 std::to_string(v.input));
    EXPECT_EQ(fromF32(v.input, v.format, Overflow::NonSaturating),
              v.nonSaturating);
    EXPECT_EQ(fromF32(v.input, v.format, Overflow::SatFinite), v.satFinite);
    // The hand-written non-saturating codes are APFloat's too.
    EXPECT_EQ(expected(APFloat::IEEEsingle(), bits, v.format,
                       Overflow::NonSaturating),
              v.nonSaturating);
  }
  EXPECT_EQ(toF32(0x7E, Format::E4M3FN), 448.0f);
  EXPECT_EQ(toF32(0x01, Format::E4M3FN), 0x1p-9f);
  EXPECT_EQ(toF32(0x7B, Format::E5M2), 57344.0f);
  EXPECT_EQ(toF32(0x01, Format::E5M2), 0x1p-16f);
  EXPECT_EQ(toF32(0x7C, Format::E5M2), inf);
  EXPECT_EQ(toF32(0xFC, Format::E5M2), -inf);
}

TEST(Float8APFloatNaN, DocumentedBehaviourHolds) {
  // The header describes APFloat's NaN handling; check the description itself
  // against APFloat for every f32 NaN shape that matters (all 2^9 values of
  // the sign, quiet bit and the next 7 payload bits, with low bits 0 and 1).
  for (uint32_t top = 0; top < 512; ++top)
    for (uint32_t low : {0u, 1u, 0x1FFFu}) {
      uint32_t bits = (top >> 8) << 31 | 0x7F800000u | (top & 0xFF) << 15 | low;
      if ((bits & 0x007FFFFFu) == 0)
        continue;
      uint8_t sign = (bits >> 24) & 0x80;
      auto code = [&](Format format) {
        return unsigned(convertWithAPFloat(APFloat::IEEEsingle(), bits, format)
                            .bitcastToAPInt()
                            .getZExtValue());
      };
      EXPECT_EQ(code(Format::E4M3FN), sign | 0x7Fu) << std::hex << bits;
      bool signaling = !(bits & 0x00400000u);
      unsigned e5m2 =
          sign | 0x7Cu | (bits & 0x007FFFFFu) >> 21 | (signaling ? 0x02u : 0u);
      EXPECT_EQ(code(Format::E5M2), e5m2) << std::hex << bits;
    }
}
