//===- Float8.cpp - Bit-exact FP8 conversions -----------------------------===//
//
// Integer-only implementation of the conversions declared in Float8.h.
//
// f32 -> FP8 (one rounding, round-to-nearest-even)
// ------------------------------------------------
// Only integer operations are used so that the same sequence can be emitted
// as `arith` integer ops on any target. With M mantissa bits, bias B and
// `abs` the f32 bits without the sign:
//
//  1. Normal path. An f32 exponent field is biased by 127, an FP8 one by B, so
//     subtracting (127 - B) << 23 from `abs` rebiases the exponent while
//     keeping the 23-bit mantissa underneath it. Rounding the result to M
//     mantissa bits is one add-and-shift over the whole word:
//       (x + (half - 1) + lsb) >> (23 - M),  half = 1 << (22 - M)
//     where `lsb` is bit (23 - M) of x, so exact ties round up only when the
//     kept LSB is odd. A mantissa carry propagates into the exponent field,
//     which is exactly the next binade's encoding.
//  2. Subnormal path, for |x| below the FP8 minimum normal 2^(1-B). The
//     code is the significand (with its implicit bit) scaled to units of the
//     minimum subnormal 2^(1-B-M), i.e. shifted right by 151 - B - M - e for
//     an f32 exponent field e; the same add-and-shift rounds it (the `half - 1`
//     addend is the sticky bit: it carries only if any discarded bit is set
//     beyond an exact half). The shift is clamped to [1, 31]: everything
//     needing more rounds to zero anyway, f32 subnormals included (their
//     wrongly added implicit bit does not matter there). Rounding up
//     from the largest subnormal yields the minimum normal's encoding.
//  3. The path is selected by comparing `abs` with the minimum normal; both
//     paths are branch-free, so the selection is a select.
//  4. Overflow is detected on the resulting code: anything above the largest
//     finite code (0x7E / 0x7B) overflowed, which includes +-Inf, whose
//     rebiased encoding is far above it. Only NaN needs a separate test.
//
// Specials, per policy:
//  * NonSaturating follows APFloat: E4M3FN has no infinity, so overflow, Inf
//    and NaN all become the (signed) NaN 0x7F; E5M2 overflow becomes Inf and
//    a NaN keeps its sign and the top two payload bits, quieted.
//  * SatFinite follows Hopper's cvt.rn.satfinite: overflow and Inf clamp to
//    the signed largest finite value, any NaN becomes the positive 0x7F.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Float8.h"

#include <algorithm>
#include <cstring>

using namespace mlir::fp8::numerics;

namespace {
constexpr uint32_t kF32ExpMask = 0x7F800000u;
constexpr uint32_t kF32ManMask = 0x007FFFFFu;
constexpr uint32_t kF32QuietBit = 0x00400000u;

/// The compile-time encoding parameters of one FP8 format.
template <Format F> struct Encoding;
template <> struct Encoding<Format::E4M3FN> {
  static constexpr unsigned mantissaBits = 3;
  static constexpr uint32_t bias = 7;
  static constexpr uint32_t maxFiniteCode = 0x7E;
};
template <> struct Encoding<Format::E5M2> {
  static constexpr unsigned mantissaBits = 2;
  static constexpr uint32_t bias = 15;
  static constexpr uint32_t maxFiniteCode = 0x7B;
};
} // namespace

/// Rounds `value` to nearest-even after dropping its low `shift` bits
/// (1 <= shift <= 31); exact whenever the sum below does not wrap, which holds
/// for every input whose path is selected.
static uint32_t shiftRightRNE(uint32_t value, uint32_t shift) {
  uint32_t halfMinusOne = (1u << (shift - 1)) - 1;
  uint32_t lsb = (value >> shift) & 1;
  return (value + halfMinusOne + lsb) >> shift;
}

template <Format F, Overflow O> static uint8_t convertF32(uint32_t bits) {
  using Enc = Encoding<F>;
  constexpr unsigned mantissaShift = 23 - Enc::mantissaBits;
  constexpr uint32_t minNormalAbs = (128 - Enc::bias) << 23;

  uint32_t sign = (bits >> 24) & 0x80;
  uint32_t abs = bits & 0x7FFFFFFF;

  uint32_t normal =
      shiftRightRNE(abs - ((127 - Enc::bias) << 23), mantissaShift);

  uint32_t exponent = abs >> 23;
  uint32_t significand = (abs & kF32ManMask) | 0x00800000u;
  // The clamp keeps the shifts defined when this path is not selected; any
  // shift of 25 or more rounds to zero, so 31 stands for all of them.
  uint32_t subnormalShift = uint32_t(std::clamp(
      151 - int(Enc::bias) - int(Enc::mantissaBits) - int(exponent), 1, 31));
  uint32_t subnormal = shiftRightRNE(significand, subnormalShift);

  uint32_t code = abs < minNormalAbs ? subnormal : normal;
  bool overflow = code > Enc::maxFiniteCode;
  bool isNaN = abs > kF32ExpMask;

  if constexpr (O == Overflow::SatFinite) {
    uint32_t finite = overflow ? Enc::maxFiniteCode : code;
    return isNaN ? 0x7F : uint8_t(sign | finite);
  } else if constexpr (F == Format::E4M3FN) {
    return uint8_t(sign | (overflow || isNaN ? 0x7F : code));
  } else {
    // APFloat truncates the payload to the top two mantissa bits and, for a
    // signaling source, sets the quiet bit, so the result is always 0x7E|lsb.
    uint32_t nan = 0x7E | ((abs >> 21) & 1);
    uint32_t nonNaN = overflow ? 0x7C : code;
    return uint8_t(sign | (isNaN ? nan : nonNaN));
  }
}

template <Format F, Overflow O>
static void convertF32Buffer(const uint32_t *in, uint8_t *out, size_t count) {
  for (size_t i = 0; i < count; ++i)
    out[i] = convertF32<F, O>(in[i]);
}

uint8_t mlir::fp8::numerics::fromF32Bits(uint32_t bits, Format format,
                                         Overflow overflow) {
  bool sat = overflow == Overflow::SatFinite;
  if (format == Format::E4M3FN)
    return sat ? convertF32<Format::E4M3FN, Overflow::SatFinite>(bits)
               : convertF32<Format::E4M3FN, Overflow::NonSaturating>(bits);
  return sat ? convertF32<Format::E5M2, Overflow::SatFinite>(bits)
             : convertF32<Format::E5M2, Overflow::NonSaturating>(bits);
}

void mlir::fp8::numerics::fromF32Bits(const uint32_t *in, uint8_t *out,
                                      size_t count, Format format,
                                      Overflow overflow) {
  // Dispatching once per buffer lets the compiler vectorise each variant.
  bool sat = overflow == Overflow::SatFinite;
  if (format == Format::E4M3FN) {
    if (sat)
      convertF32Buffer<Format::E4M3FN, Overflow::SatFinite>(in, out, count);
    else
      convertF32Buffer<Format::E4M3FN, Overflow::NonSaturating>(in, out, count);
    return;
  }
  if (sat)
    convertF32Buffer<Format::E5M2, Overflow::SatFinite>(in, out, count);
  else
    convertF32Buffer<Format::E5M2, Overflow::NonSaturating>(in, out, count);
}

uint8_t mlir::fp8::numerics::fromF32(float value, Format format,
                                     Overflow overflow) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return fromF32Bits(bits, format, overflow);
}

uint8_t mlir::fp8::numerics::fromBF16Bits(uint16_t bits, Format format,
                                          Overflow overflow) {
  return fromF32Bits(bf16BitsToF32Bits(bits), format, overflow);
}

uint8_t mlir::fp8::numerics::fromF16Bits(uint16_t bits, Format format,
                                         Overflow overflow) {
  return fromF32Bits(f16BitsToF32Bits(bits), format, overflow);
}

static unsigned floorLog2(uint32_t value) {
  unsigned log = 0;
  while (value >>= 1)
    ++log;
  return log;
}

/// f32 bits of significand * 2^scaleExponent for a subnormal significand of
/// a narrower format (nonzero); every such value is normal in f32.
static uint32_t normalizeToF32Bits(uint32_t significand, int scaleExponent) {
  unsigned msb = floorLog2(significand);
  uint32_t exponent = uint32_t(int(msb) + scaleExponent + 127);
  return (exponent << 23) | ((significand ^ (1u << msb)) << (23 - msb));
}

uint32_t mlir::fp8::numerics::bf16BitsToF32Bits(uint16_t bits) {
  return uint32_t(bits) << 16;
}

uint32_t mlir::fp8::numerics::f16BitsToF32Bits(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0x1F)
    // Shifting keeps the payload and the quiet bit (bit 9 -> bit 22) as is.
    return sign | kF32ExpMask | (mantissa << 13);
  if (exponent != 0)
    return sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  if (mantissa == 0)
    return sign;
  return sign | normalizeToF32Bits(mantissa, -24);
}

uint32_t mlir::fp8::numerics::toF32Bits(uint8_t bits, Format format) {
  unsigned mantissaBits = format == Format::E4M3FN ? 3 : 2;
  int bias = format == Format::E4M3FN ? 7 : 15;
  uint32_t sign = uint32_t(bits & 0x80) << 24;
  uint32_t magnitude = bits & 0x7F;
  uint32_t exponent = magnitude >> mantissaBits;
  uint32_t mantissa = magnitude & ((1u << mantissaBits) - 1);
  uint32_t allOnesExponent = 0x7Fu >> mantissaBits;

  bool isNaN = format == Format::E4M3FN
                   ? magnitude == 0x7F
                   : exponent == allOnesExponent && mantissa != 0;
  // APFloat widens the payload by shifting, then quiets it.
  if (isNaN)
    return sign | kF32ExpMask | kF32QuietBit |
           (mantissa << (23 - mantissaBits));
  if (format == Format::E5M2 && magnitude == 0x7C)
    return sign | kF32ExpMask;
  if (exponent != 0)
    return sign | ((exponent + uint32_t(127 - bias)) << 23) |
           (mantissa << (23 - mantissaBits));
  if (mantissa == 0)
    return sign;
  return sign | normalizeToF32Bits(mantissa, 1 - bias - int(mantissaBits));
}

float mlir::fp8::numerics::toF32(uint8_t bits, Format format) {
  uint32_t f32Bits = toF32Bits(bits, format);
  float value;
  std::memcpy(&value, &f32Bits, sizeof(value));
  return value;
}

uint16_t mlir::fp8::numerics::toBF16Bits(uint8_t bits, Format format) {
  // FP8 values have at most 3 mantissa bits and NaN payloads stay in the top
  // ones, so the low half of the f32 encoding is always zero.
  return uint16_t(toF32Bits(bits, format) >> 16);
}

uint16_t mlir::fp8::numerics::toF16Bits(uint8_t bits, Format format) {
  // Narrowing the exact f32 encoding is exact: every FP8 value, including
  // E5M2's subnormals (which stay subnormal in f16), fits in f16.
  uint32_t f32Bits = toF32Bits(bits, format);
  uint32_t sign = (f32Bits >> 16) & 0x8000;
  uint32_t exponent = (f32Bits >> 23) & 0xFF;
  uint32_t mantissa = f32Bits & kF32ManMask;
  if (exponent == 0xFF)
    return uint16_t(sign | 0x7C00 | (mantissa >> 13));
  if (exponent == 0)
    return uint16_t(sign);
  if (exponent >= 127 - 14)
    return uint16_t(sign | ((exponent - (127 - 15)) << 10) | (mantissa >> 13));
  return uint16_t(sign | ((mantissa | 0x00800000u) >> (126 - exponent)));
}

const FormatInfo &mlir::fp8::numerics::getFormatInfo(Format format) {
  static const FormatInfo e4m3fn = {"f8E4M3FN", 4,      3,       7,      false,
                                    0x7E,       448.0f, 0x1p-6f, 0x1p-9f};
  static const FormatInfo e5m2 = {"f8E5M2", 5,        2,        15,      true,
                                  0x7B,     57344.0f, 0x1p-14f, 0x1p-16f};
  return format == Format::E4M3FN ? e4m3fn : e5m2;
}
