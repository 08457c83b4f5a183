//===- Float8.h - Bit-exact FP8 conversions ---------------------*- C++ -*-===//
//
// Conversions between f32 / bf16 / f16 and the OCP FP8 formats E4M3FN and
// E5M2, round-to-nearest-even, with the two overflow policies the project
// names:
//
//  * Overflow::NonSaturating: exactly LLVM APFloat's results (what
//    `arith.truncf` means): E4M3FN overflow and +-Inf -> NaN, E5M2 overflow
//    -> +-Inf, NaN payloads truncated and quieted as APFloat does.
//  * Overflow::SatFinite: exactly Hopper's `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`:
//    finite overflow and +-Inf -> +-max finite, any NaN -> 0x7F.
//
// bf16 and f16 inputs are widened to f32 exactly first, so every conversion
// rounds once (no double rounding through f16).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_NUMERICS_FLOAT8_H
#define FP8_NUMERICS_FLOAT8_H

#include <cstddef>
#include <cstdint>

namespace mlir::fp8::numerics {

enum class Format : uint8_t { E4M3FN, E5M2 };
enum class Overflow : uint8_t { NonSaturating, SatFinite };

/// Static description of one FP8 format.
struct FormatInfo {
  const char *name;       // "f8E4M3FN" / "f8E5M2", as MLIR spells them.
  unsigned exponentBits;  // 4 / 5
  unsigned mantissaBits;  // 3 / 2
  int bias;               // 7 / 15
  bool hasInfinity;       // false / true
  uint8_t maxFiniteBits;  // 0x7E / 0x7B
  float maxFinite;        // 448 / 57344
  float minNormal;        // 2^-6 / 2^-14
  float minSubnormal;     // 2^-9 / 2^-16
};

const FormatInfo &getFormatInfo(Format format);

/// f32 bit pattern -> FP8 bits, rounding to nearest even, once.
uint8_t fromF32Bits(uint32_t bits, Format format, Overflow overflow);
uint8_t fromF32(float value, Format format, Overflow overflow);
/// Converts `count` f32 bit patterns from `in` into `out`, as fromF32Bits
/// does for each element.
void fromF32Bits(const uint32_t *in, uint8_t *out, size_t count, Format format,
                 Overflow overflow);
/// bf16 / f16 bit patterns -> FP8 bits (widened exactly to f32 first).
uint8_t fromBF16Bits(uint16_t bits, Format format, Overflow overflow);
uint8_t fromF16Bits(uint16_t bits, Format format, Overflow overflow);

/// FP8 bits -> f32 bit pattern. Exact for every finite value; NaN as APFloat
/// converts it (payload widened, quieted).
uint32_t toF32Bits(uint8_t bits, Format format);
float toF32(uint8_t bits, Format format);
/// FP8 bits -> bf16 / f16 bit patterns (exact: every FP8 value fits).
uint16_t toBF16Bits(uint8_t bits, Format format);
uint16_t toF16Bits(uint8_t bits, Format format);

/// Widening helpers shared with the callers above (exact).
uint32_t bf16BitsToF32Bits(uint16_t bits);
uint32_t f16BitsToF32Bits(uint16_t bits);

} // namespace mlir::fp8::numerics

#endif // FP8_NUMERICS_FLOAT8_H
