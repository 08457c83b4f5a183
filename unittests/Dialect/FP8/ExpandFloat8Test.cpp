//===- ExpandFloat8Test.cpp - fp8-expand-float8 against the numerics ------===//
//
// The integer sequences fp8-expand-float8 emits, and the saturating cast of
// convert-fp8-to-linalg followed by them, evaluated by MLIR's own arith
// folders (the pass, then the canonicalizer, on constant vectors) and
// compared bit for bit with the numerics library, which is itself verified
// against APFloat on every f32 input (unittests/Numerics).
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToLinalg/FP8ToLinalg.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Numerics/Float8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "gtest/gtest.h"

#include <cstring>
#include <functional>

using namespace mlir;
namespace num = mlir::fp8::numerics;

namespace {

/// f32 inputs: every `stride`-th bf16 pattern widened (all exponents, signs,
/// Inf, NaN payloads), the neighbours of every FP8 rounding boundary of both
/// formats, the infinities and NaNs of both signs, and `randomCount`
/// pseudo-random patterns.
std::vector<uint32_t> makeInputs(uint32_t stride, int randomCount) {
  std::vector<uint32_t> inputs = {0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                  0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu};
  for (uint32_t high = 0; high < 0x10000; high += stride)
    inputs.push_back(high << 16);
  for (num::Format format : {num::Format::E4M3FN, num::Format::E5M2}) {
    for (uint32_t code = 0; code < 0x80; ++code) {
      float lo = num::toF32(uint8_t(code), format);
      float hi = num::toF32(uint8_t(code + 1), format);
      float mid = (lo + hi) / 2; // exact: FP8 values have few bits
      uint32_t bits;
      std::memcpy(&bits, &mid, sizeof(bits));
      for (uint32_t sign : {0u, 0x80000000u})
        for (int delta = -1; delta <= 1; ++delta)
          inputs.push_back((bits + delta) | sign);
    }
  }
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < randomCount; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    inputs.push_back(uint32_t(state >> 32));
  }
  return inputs;
}

class ExpandFloat8Test : public ::testing::Test {
protected:
  ExpandFloat8Test() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        fp8::FP8Dialect>();
  }

  /// Builds `func @f() -> (f8, ...)` whose body turns each of `inputs` (as
  /// a constant f32, or one constant vector of them when `asVector`) into FP8
  /// with `buildCast`, runs fp8-expand-float8 and the canonicalizer, and
  /// returns the folded codes. Vectors fold faster, but arith.cmpf has no
  /// vector folder, so the saturating cast is evaluated on scalars.
  std::vector<uint8_t>
  foldCast(ArrayRef<uint32_t> inputs, FloatType float8Type, bool asVector,
           const std::function<Value(OpBuilder &, Location, Value)> &buildCast) {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    int64_t count = inputs.size();
    SmallVector<Type> resultTypes(asVector ? 1 : count, float8Type);
    if (asVector)
      resultTypes[0] = VectorType::get({count}, float8Type);
    auto func = func::FuncOp::create(b, loc, "f",
                                     b.getFunctionType({}, resultTypes));
    b.setInsertionPointToEnd(func.addEntryBlock());
    std::vector<float> values(inputs.size());
    std::memcpy(values.data(), inputs.data(), inputs.size() * sizeof(float));
    SmallVector<Value> results;
    if (asVector) {
      auto inputType = VectorType::get({count}, b.getF32Type());
      Value x = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(inputType, ArrayRef<float>(values)));
      results.push_back(buildCast(b, loc, x));
    } else {
      for (float value : values) {
        Value x = arith::ConstantOp::create(
            b, loc, FloatAttr::get(b.getF32Type(), APFloat(value)));
        results.push_back(buildCast(b, loc, x));
      }
    }
    func::ReturnOp::create(b, loc, results);

    PassManager pm(&context);
    pm.addPass(fp8::createFP8ExpandFloat8());
    pm.addPass(createCanonicalizerPass());
    EXPECT_TRUE(succeeded(pm.run(*module)));

    std::vector<uint8_t> codes;
    auto ret = cast<func::ReturnOp>(
        module->lookupSymbol<func::FuncOp>("f").getBody().front().back());
    for (Value result : ret.getOperands()) {
      auto folded = result.getDefiningOp<arith::ConstantOp>();
      EXPECT_TRUE(folded) << "the expansion did not fold to a constant";
      if (!folded)
        return {};
      if (auto scalar = dyn_cast<IntegerAttr>(folded.getValue())) {
        codes.push_back(uint8_t(scalar.getValue().getZExtValue()));
        continue;
      }
      for (APInt code : cast<DenseIntElementsAttr>(folded.getValue()))
        codes.push_back(uint8_t(code.getZExtValue()));
    }
    return codes;
  }

  void checkTrunc(num::Format format, FloatType float8Type, bool saturate) {
    // The saturating cast folds only on scalars (slow): fewer inputs there;
    // the rounding it shares with truncf is covered densely above.
    std::vector<uint32_t> inputs =
        saturate ? makeInputs(/*stride=*/16, /*randomCount=*/2048)
                 : makeInputs(/*stride=*/1, /*randomCount=*/65536);
    num::Overflow policy =
        saturate ? num::Overflow::SatFinite : num::Overflow::NonSaturating;
    size_t kChunk = saturate ? 4096 : 16384;
    for (size_t start = 0; start < inputs.size(); start += kChunk) {
      ArrayRef<uint32_t> chunk =
          ArrayRef<uint32_t>(inputs).slice(start,
                                           std::min(kChunk, inputs.size() - start));
      std::vector<uint8_t> codes = foldCast(
          chunk, float8Type, /*asVector=*/!saturate,
          [&](OpBuilder &b, Location loc, Value x) -> Value {
            if (saturate)
              return fp8::createSaturatingTruncF(b, loc, x, float8Type);
            return arith::TruncFOp::create(
                b, loc, cast<VectorType>(x.getType()).clone(float8Type), x);
          });
      ASSERT_EQ(codes.size(), chunk.size());
      for (size_t i = 0; i < chunk.size(); ++i)
        ASSERT_EQ(codes[i], num::fromF32Bits(chunk[i], format, policy))
            << "input 0x" << std::hex << chunk[i];
    }
  }

  MLIRContext context;
};

TEST_F(ExpandFloat8Test, TruncFE4M3FNMatchesAPFloat) {
  checkTrunc(num::Format::E4M3FN, Float8E4M3FNType::get(&context), false);
}

TEST_F(ExpandFloat8Test, TruncFE5M2MatchesAPFloat) {
  checkTrunc(num::Format::E5M2, Float8E5M2Type::get(&context), false);
}

TEST_F(ExpandFloat8Test, SaturatingE4M3FNMatchesSatFinite) {
  checkTrunc(num::Format::E4M3FN, Float8E4M3FNType::get(&context), true);
}

TEST_F(ExpandFloat8Test, SaturatingE5M2MatchesSatFinite) {
  checkTrunc(num::Format::E5M2, Float8E5M2Type::get(&context), true);
}

/// Every code of both formats widened to f32, bf16 and f16.
TEST_F(ExpandFloat8Test, ExtFIsExact) {
  for (num::Format format : {num::Format::E4M3FN, num::Format::E5M2}) {
    FloatType float8Type =
        format == num::Format::E4M3FN
            ? FloatType(Float8E4M3FNType::get(&context))
            : FloatType(Float8E5M2Type::get(&context));
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto codeType = VectorType::get({256}, float8Type);
    SmallVector<Type> resultTypes = {VectorType::get({256}, b.getF32Type()),
                                     VectorType::get({256}, b.getBF16Type()),
                                     VectorType::get({256}, b.getF16Type())};
    auto func = func::FuncOp::create(b, loc, "f",
                                     b.getFunctionType({}, resultTypes));
    b.setInsertionPointToEnd(func.addEntryBlock());
    std::vector<char> codes(256);
    for (int i = 0; i < 256; ++i)
      codes[i] = char(i);
    Value x = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::getFromRawBuffer(codeType, codes));
    SmallVector<Value> results;
    for (Type type : resultTypes)
      results.push_back(arith::ExtFOp::create(b, loc, type, x));
    func::ReturnOp::create(b, loc, results);

    PassManager pm(&context);
    pm.addPass(fp8::createFP8ExpandFloat8());
    pm.addPass(createCanonicalizerPass());
    ASSERT_TRUE(succeeded(pm.run(*module)));
    auto ret = cast<func::ReturnOp>(
        module->lookupSymbol<func::FuncOp>("f").getBody().front().back());
    for (unsigned r = 0; r < 3; ++r) {
      auto folded = ret.getOperand(r).getDefiningOp<arith::ConstantOp>();
      ASSERT_TRUE(folded) << "result " << r << " did not fold";
      auto values = cast<DenseFPElementsAttr>(folded.getValue());
      int i = 0;
      for (APFloat value : values.getValues<APFloat>()) {
        uint64_t bits = value.bitcastToAPInt().getZExtValue();
        uint64_t expected =
            r == 0 ? num::toF32Bits(uint8_t(i), format)
            : r == 1 ? num::toBF16Bits(uint8_t(i), format)
                     : num::toF16Bits(uint8_t(i), format);
        ASSERT_EQ(bits, expected) << "code 0x" << std::hex << i
                                  << ", result " << r;
        ++i;
      }
    }
  }
}

} // namespace
