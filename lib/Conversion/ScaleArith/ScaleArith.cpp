//===- ScaleArith.cpp - The scaling recipes as arith ops ------------------===//

#include "fp8/Conversion/ScaleArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;

static Value createI32Constant(OpBuilder &builder, Location loc,
                               uint32_t bits) {
  return arith::ConstantOp::create(builder, loc,
                                   builder.getI32IntegerAttr(int32_t(bits)));
}

static Value compareI32(OpBuilder &builder, Location loc,
                        arith::CmpIPredicate predicate, Value a, Value b) {
  return arith::CmpIOp::create(builder, loc, predicate, a, b);
}

Value fp8::createF32Constant(OpBuilder &builder, Location loc, float value) {
  return arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(value));
}

Value fp8::clampInfiniteScale(OpBuilder &builder, Location loc, Value scale) {
  Value inf =
      createF32Constant(builder, loc, std::numeric_limits<float>::infinity());
  Value magnitude = math::AbsFOp::create(builder, loc, scale);
  Value isInf = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                      magnitude, inf);
  Value floatMax =
      createF32Constant(builder, loc, std::numeric_limits<float>::max());
  return arith::SelectOp::create(builder, loc, isInf, floatMax, scale);
}

Value fp8::truncateToPowerOfTwo(OpBuilder &builder, Location loc,
                                Value scale) {
  Value bits =
      arith::BitcastOp::create(builder, loc, builder.getI32Type(), scale);
  Value masked = arith::AndIOp::create(
      builder, loc, bits, createI32Constant(builder, loc, 0xFF800000u));
  return arith::BitcastOp::create(builder, loc, builder.getF32Type(), masked);
}

Value fp8::createCurrentScale(OpBuilder &builder, Location loc, Value amax,
                              Value scaledMax, float epsilonValue,
                              bool powerOfTwo) {
  Value zero = createF32Constant(builder, loc, 0.0f);
  Value inf =
      createF32Constant(builder, loc, std::numeric_limits<float>::infinity());
  Value epsilon = createF32Constant(builder, loc, epsilonValue);
  // NaN compares false and stays NaN.
  Value isBelow = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OLT,
                                        amax, epsilon);
  amax = arith::SelectOp::create(builder, loc, isBelow, epsilon, amax);
  Value isNaN = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO,
                                      amax, amax);
  Value isInf = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                      math::AbsFOp::create(builder, loc, amax),
                                      inf);
  Value isZero = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                       amax, zero);
  Value useOne = arith::OrIOp::create(
      builder, loc, arith::OrIOp::create(builder, loc, isNaN, isInf), isZero);
  Value scale = arith::DivFOp::create(builder, loc, scaledMax, amax);
  scale = clampInfiniteScale(builder, loc, scale);
  if (powerOfTwo)
    scale = truncateToPowerOfTwo(builder, loc, scale);
  return arith::SelectOp::create(builder, loc, useOne,
                                 createF32Constant(builder, loc, 1.0f), scale);
}

Value fp8::createMXScaleCode(OpBuilder &builder, Location loc, Value amax,
                             float fp8Max) {
  Type i32 = builder.getI32Type();
  auto constant = [&](uint32_t bits) {
    return createI32Constant(builder, loc, bits);
  };
  auto compare = [&](arith::CmpIPredicate predicate, Value a, Value b) {
    return compareI32(builder, loc, predicate, a, b);
  };
  // 1 / fp8_max rounded to f32 once, then one rounded multiply.
  float reciprocal = static_cast<float>(1.0 / static_cast<double>(fp8Max));
  Value value = arith::MulFOp::create(
      builder, loc, amax, createF32Constant(builder, loc, reciprocal));
  Value magnitude = arith::AndIOp::create(
      builder, loc, arith::BitcastOp::create(builder, loc, i32, value),
      constant(0x7FFFFFFFu));
  Value exponent = arith::ShRUIOp::create(builder, loc, magnitude, constant(23));
  Value mantissa = arith::AndIOp::create(builder, loc, magnitude,
                                         constant(0x7FFFFFu));
  // Round the exponent up unless the value is a power of two, never past
  // 0xFE, and not for subnormals up to 2^-127.
  Value tinySubnormal = arith::AndIOp::create(
      builder, loc, compare(arith::CmpIPredicate::eq, exponent, constant(0)),
      compare(arith::CmpIPredicate::ule, mantissa, constant(0x400000)));
  Value roundUp = arith::AndIOp::create(
      builder, loc,
      arith::AndIOp::create(
          builder, loc, compare(arith::CmpIPredicate::ne, mantissa, constant(0)),
          compare(arith::CmpIPredicate::ne, exponent, constant(0xFE))),
      arith::XOrIOp::create(builder, loc, tinySubnormal,
                            arith::ConstantOp::create(
                                builder, loc, builder.getBoolAttr(true))));
  Value code = arith::AddIOp::create(
      builder, loc, exponent, arith::ExtUIOp::create(builder, loc, i32, roundUp));
  Value isInf =
      compare(arith::CmpIPredicate::eq, magnitude, constant(0x7F800000u));
  code = arith::SelectOp::create(builder, loc, isInf, constant(0xFE), code);
  Value isNaN = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO,
                                      value, value);
  return arith::SelectOp::create(builder, loc, isNaN, constant(0xFF), code);
}

Value fp8::createMXScaleFromCode(OpBuilder &builder, Location loc,
                                 Value code) {
  auto constant = [&](uint32_t bits) {
    return createI32Constant(builder, loc, bits);
  };
  auto equals = [&](uint32_t c) {
    return compareI32(builder, loc, arith::CmpIPredicate::eq, code,
                      constant(c));
  };
  // Biased exponent 254 - code; 2^-127 for 0xFE; NaN for 0xFF.
  Value bits = arith::ShLIOp::create(
      builder, loc, arith::SubIOp::create(builder, loc, constant(254), code),
      constant(23));
  bits = arith::SelectOp::create(builder, loc, equals(0xFE),
                                 constant(0x00400000u), bits);
  bits = arith::SelectOp::create(builder, loc, equals(0xFF),
                                 constant(0x7FC00000u), bits);
  return arith::BitcastOp::create(builder, loc, builder.getF32Type(), bits);
}

Value fp8::createE8M0ToF32(OpBuilder &builder, Location loc, Value code) {
  auto constant = [&](uint32_t bits) {
    return createI32Constant(builder, loc, bits);
  };
  auto equals = [&](uint32_t c) {
    return compareI32(builder, loc, arith::CmpIPredicate::eq, code,
                      constant(c));
  };
  Value bits = arith::ShLIOp::create(builder, loc, code, constant(23));
  bits = arith::SelectOp::create(builder, loc, equals(0),
                                 constant(0x00400000u), bits);
  bits = arith::SelectOp::create(builder, loc, equals(0xFF),
                                 constant(0x7FC00000u), bits);
  return arith::BitcastOp::create(builder, loc, builder.getF32Type(), bits);
}

Value fp8::createTruncFFromF32(OpBuilder &builder, Location loc, Value value,
                               Type type) {
  if (type.isF32())
    return value;
  if (!type.isBF16())
    return arith::TruncFOp::create(builder, loc, type, value);
  Value bits = arith::BitcastOp::create(builder, loc, builder.getI32Type(),
                                        value);
  Value sixteen = createI32Constant(builder, loc, 16);
  Value high = arith::ShRUIOp::create(builder, loc, bits, sixteen);
  // Nearest even: add 0x7FFF plus the lowest kept bit, drop 16 bits. An
  // overflow carries into the exponent and gives Inf, as it should.
  Value lowestKept = arith::AndIOp::create(builder, loc, high,
                                           createI32Constant(builder, loc, 1));
  Value bias = arith::AddIOp::create(
      builder, loc, createI32Constant(builder, loc, 0x7FFF), lowestKept);
  Value rounded = arith::ShRUIOp::create(
      builder, loc, arith::AddIOp::create(builder, loc, bits, bias), sixteen);
  // NaN stays NaN (quiet, sign and top payload bits kept): rounding could
  // carry a payload into Inf.
  Value quietNaN = arith::OrIOp::create(builder, loc, high,
                                        createI32Constant(builder, loc, 0x40));
  Value isNaN = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO,
                                      value, value);
  Value result =
      arith::SelectOp::create(builder, loc, isNaN, quietNaN, rounded);
  Value half =
      arith::TruncIOp::create(builder, loc, builder.getI16Type(), result);
  return arith::BitcastOp::create(builder, loc, type, half);
}
