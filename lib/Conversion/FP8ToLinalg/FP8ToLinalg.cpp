//===- FP8ToLinalg.cpp - fp8 to linalg, tensor, arith and math -------------===//
//
// convert-fp8-to-linalg: each fp8 op becomes target-independent ops on
// tensors computing exactly what its folder computes (lib/Numerics is the
// reference): the same f32 operations in the same order, so that a CPU run
// is bit-identical to the folded constants.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToLinalg/FP8ToLinalg.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Numerics/Scaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8TOLINALG
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
namespace num = mlir::fp8::numerics;

/// The f32 NaN whose nearest-even conversion (APFloat's) is 0x7F in both
/// E4M3FN and E5M2: positive, quiet, payload bit 21 set. It is what
/// `cvt.rn.satfinite` returns for any NaN.
static constexpr uint32_t kCanonicalNaNBits = 0x7FE00000u;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// An f32 constant, splat to the shape of `like` when it is shaped.
static Value createF32Constant(OpBuilder &builder, Location loc, Type like,
                               const APFloat &value) {
  auto attr = FloatAttr::get(builder.getF32Type(), value);
  if (auto shaped = dyn_cast<ShapedType>(like))
    return arith::ConstantOp::create(
        builder, loc, SplatElementsAttr::get(shaped.clone(builder.getF32Type()),
                                             Attribute(attr)));
  return arith::ConstantOp::create(builder, loc, attr);
}

static Value createF32Constant(OpBuilder &builder, Location loc, float value) {
  return createF32Constant(builder, loc, builder.getF32Type(), APFloat(value));
}

/// Widens an f32 / bf16 / f16 / FP8 scalar to f32 (exact).
static Value widenToF32(OpBuilder &builder, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(builder, loc, builder.getF32Type(), value);
}

/// Rounds an f32 scalar to `type` (f32, bf16 or f16), nearest even.
///
/// bf16 is rounded with integer operations: LLVM's fptrunc to bf16 becomes
/// an instruction that flushes subnormal results to zero on some hosts
/// (vcvtneps2bf16, AVX512-BF16), while the folders, the numerics library
/// and the GPU's cvt.rn.bf16.f32 keep them. Found by FP8FoldVsLowerTests.
static Value narrowFromF32(OpBuilder &builder, Location loc, Value value,
                           Type type) {
  if (type.isF32())
    return value;
  if (!type.isBF16())
    return arith::TruncFOp::create(builder, loc, type, value);
  Type i32 = builder.getI32Type();
  auto constant = [&](uint32_t bits) -> Value {
    return arith::ConstantOp::create(builder, loc,
                                     builder.getI32IntegerAttr(bits));
  };
  Value bits = arith::BitcastOp::create(builder, loc, i32, value);
  Value sixteen = constant(16);
  // Nearest even: add 0x7FFF plus the lowest kept bit, drop 16 bits. An
  // overflow carries into the exponent and gives Inf, as it should.
  Value lowestKept = arith::AndIOp::create(
      builder, loc, arith::ShRUIOp::create(builder, loc, bits, sixteen),
      constant(1));
  Value bias = arith::AddIOp::create(builder, loc, constant(0x7FFF), lowestKept);
  Value rounded = arith::ShRUIOp::create(
      builder, loc, arith::AddIOp::create(builder, loc, bits, bias), sixteen);
  // NaN stays NaN (quiet, sign and top payload bits kept): rounding could
  // carry a payload into Inf.
  Value quietNaN = arith::OrIOp::create(
      builder, loc, arith::ShRUIOp::create(builder, loc, bits, sixteen),
      constant(0x40));
  Value isNaN = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO,
                                      value, value);
  Value result = arith::SelectOp::create(builder, loc, isNaN, quietNaN, rounded);
  Value half = arith::TruncIOp::create(builder, loc, builder.getI16Type(), result);
  return arith::BitcastOp::create(builder, loc, type, half);
}

static Value createIndex(OpBuilder &builder, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(builder, loc, value);
}

/// The size of dimension `dim` of `tensor`: static, or a tensor.dim.
static OpFoldResult getDimSize(OpBuilder &builder, Location loc, Value tensor,
                               int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return builder.getIndexAttr(type.getDimSize(dim));
  return tensor::DimOp::create(builder, loc, tensor, dim).getResult();
}

static SmallVector<utils::IteratorType> getParallelIterators(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// A parallel linalg.generic applying `body` to each element of `input`,
/// into a new tensor of the same sizes and element type `elementType`.
static Value
createElementwiseMap(OpBuilder &builder, Location loc, Value input,
                     Type elementType,
                     function_ref<Value(OpBuilder &, Location, Value)> body) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Value empty = tensor::EmptyOp::create(
      builder, loc, tensor::getMixedSizes(builder, loc, input), elementType);
  auto map = linalg::GenericOp::create(
      builder, loc, empty.getType(), input, empty,
      SmallVector<AffineMap>(2, builder.getMultiDimIdentityMap(rank)),
      getParallelIterators(rank),
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, body(b, l, args[0]));
      });
  return map.getResult(0);
}

/// The verifiers accept a result whose shape is only compatible with the
/// input's (`?` against a static size); the lowering builds the input's type
/// and casts to the declared one.
static Value castToType(OpBuilder &builder, Location loc, Value value,
                        Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(builder, loc, type, value);
}

/// `input` converted element-wise to f32 (exact from FP8, bf16 and f16).
static Value widenTensorToF32(OpBuilder &builder, Location loc, Value input) {
  if (cast<RankedTensorType>(input.getType()).getElementType().isF32())
    return input;
  return createElementwiseMap(builder, loc, input, builder.getF32Type(),
                              widenToF32);
}

/// max(|x|) over every element of `input`, NaN ignored, from 0: the order-free
/// reduction of numerics::computeAmax.
static Value createAmax(OpBuilder &builder, Location loc, Value input) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Value zero = createF32Constant(builder, loc, 0.0f);
  Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{},
                                       builder.getF32Type());
  Value accumulator =
      linalg::FillOp::create(builder, loc, zero, init).getResult(0);
  SmallVector<AffineMap> maps = {
      builder.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, /*symbolCount=*/0, builder.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto reduction = linalg::GenericOp::create(
      builder, loc, accumulator.getType(), input, accumulator, maps, iterators,
      [](OpBuilder &b, Location l, ValueRange args) {
        Value magnitude = math::AbsFOp::create(b, l, widenToF32(b, l, args[0]));
        linalg::YieldOp::create(
            b, l, arith::MaxNumFOp::create(b, l, args[1], magnitude).getResult());
      });
  return tensor::ExtractOp::create(builder, loc, reduction.getResult(0),
                                   ValueRange{});
}

/// `scale` is replaced by FLT_MAX when infinite, as Transformer Engine does.
static Value clampInfiniteScale(OpBuilder &builder, Location loc, Value scale) {
  Value inf =
      createF32Constant(builder, loc, std::numeric_limits<float>::infinity());
  Value magnitude = math::AbsFOp::create(builder, loc, scale);
  Value isInf = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::OEQ,
                                      magnitude, inf);
  Value floatMax =
      createF32Constant(builder, loc, std::numeric_limits<float>::max());
  return arith::SelectOp::create(builder, loc, isInf, floatMax, scale);
}

/// Keeps the sign and exponent bits: the power of two at or below |scale|.
static Value truncateToPowerOfTwo(OpBuilder &builder, Location loc,
                                  Value scale) {
  Value bits =
      arith::BitcastOp::create(builder, loc, builder.getI32Type(), scale);
  Value mask = arith::ConstantOp::create(
      builder, loc, builder.getI32IntegerAttr(int32_t(0xFF800000u)));
  Value masked = arith::AndIOp::create(builder, loc, bits, mask);
  return arith::BitcastOp::create(builder, loc, builder.getF32Type(), masked);
}

Value mlir::fp8::createSaturatingTruncF(OpBuilder &builder, Location loc,
                                        Value value, FloatType float8Type) {
  Type type = value.getType();
  float maxFinite =
      num::getFormatInfo(*getNumericsFormat(float8Type)).maxFinite;
  // minimumf / maximumf keep NaN, so the clamp cannot hide one; the select
  // then replaces every NaN, whatever its sign and payload.
  Value upper = createF32Constant(builder, loc, type, APFloat(maxFinite));
  Value lower = createF32Constant(builder, loc, type, APFloat(-maxFinite));
  Value clamped = arith::MaximumFOp::create(
      builder, loc, arith::MinimumFOp::create(builder, loc, value, upper),
      lower);
  Value isNaN = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO,
                                      value, value);
  Value nan = createF32Constant(
      builder, loc, type,
      APFloat(APFloat::IEEEsingle(), APInt(32, kCanonicalNaNBits)));
  Value finite = arith::SelectOp::create(builder, loc, isNaN, nan, clamped);
  Type resultType = float8Type;
  if (auto shaped = dyn_cast<ShapedType>(type))
    resultType = shaped.clone(float8Type);
  return arith::TruncFOp::create(builder, loc, resultType, finite);
}

/// The element-wise body of fp8.quantize: widen, scale, cast saturating.
static Value createQuantizedElement(OpBuilder &builder, Location loc,
                                    Value element, Value scale,
                                    FloatType float8Type) {
  Value scaled = arith::MulFOp::create(
      builder, loc, widenToF32(builder, loc, element), scale);
  return createSaturatingTruncF(builder, loc, scaled, float8Type);
}

//===----------------------------------------------------------------------===//
// Scaling state
//===----------------------------------------------------------------------===//

namespace {
struct AmaxOpLowering : OpConversionPattern<AmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       createAmax(rewriter, op.getLoc(), adaptor.getInput()));
    return success();
  }
};

struct ComputeScaleOpLowering : OpConversionPattern<ComputeScaleOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ComputeScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value amax = reduceHistory(rewriter, loc, adaptor.getAmax(), op.getAlgo());
    float fp8Max =
        num::getFormatInfo(*getNumericsFormat(op.getFp8Type())).maxFinite;
    Value scaledMax = createF32Constant(
        rewriter, loc, num::scaledMax(fp8Max, int(op.getMarginAttr().getInt())));
    Value zero = createF32Constant(rewriter, loc, 0.0f);
    Value inf =
        createF32Constant(rewriter, loc, std::numeric_limits<float>::infinity());

    Value scale;
    Value useOne;
    if (Value previous = adaptor.getPrevious()) {
      // A new scale only from a finite, positive amax (NaN fails both).
      Value isPositive = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OGT, amax, zero);
      Value isFinite = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OLT, amax, inf);
      Value isUsable = arith::AndIOp::create(rewriter, loc, isPositive, isFinite);
      Value fresh = arith::DivFOp::create(rewriter, loc, scaledMax, amax);
      scale = arith::SelectOp::create(rewriter, loc, isUsable, fresh, previous);
    } else {
      // Raise amax to epsilon (NaN compares false and stays NaN), then amax
      // 0, Inf or NaN gives scale 1.
      Value epsilon = createF32Constant(
          rewriter, loc, op.getEpsilon().convertToFloat());
      Value isBelow = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OLT, amax, epsilon);
      amax = arith::SelectOp::create(rewriter, loc, isBelow, epsilon, amax);
      Value isNaN = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::UNO, amax, amax);
      Value isInf = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OEQ,
          math::AbsFOp::create(rewriter, loc, amax), inf);
      Value isZero = arith::CmpFOp::create(
          rewriter, loc, arith::CmpFPredicate::OEQ, amax, zero);
      useOne = arith::OrIOp::create(
          rewriter, loc, arith::OrIOp::create(rewriter, loc, isNaN, isInf),
          isZero);
      scale = arith::DivFOp::create(rewriter, loc, scaledMax, amax);
    }
    scale = clampInfiniteScale(rewriter, loc, scale);
    if (op.getPowerOfTwo())
      scale = truncateToPowerOfTwo(rewriter, loc, scale);
    if (useOne)
      scale = arith::SelectOp::create(rewriter, loc, useOne,
                                      createF32Constant(rewriter, loc, 1.0f),
                                      scale);
    rewriter.replaceOp(op, scale);
    return success();
  }

private:
  /// The amax a history gives (numerics::reduceAmaxHistory): row 0 for
  /// most_recent, else the NaN-ignoring max of all rows starting from row 0.
  static Value reduceHistory(OpBuilder &builder, Location loc, Value amax,
                             AmaxAlgo algo) {
    if (!isa<RankedTensorType>(amax.getType()))
      return amax;
    Value first = tensor::ExtractOp::create(builder, loc, amax,
                                            createIndex(builder, loc, 0));
    if (algo == AmaxAlgo::most_recent)
      return first;
    Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{},
                                         builder.getF32Type());
    Value accumulator =
        linalg::FillOp::create(builder, loc, first, init).getResult(0);
    SmallVector<AffineMap> maps = {
        builder.getMultiDimIdentityMap(1),
        AffineMap::get(1, /*symbolCount=*/0, builder.getContext())};
    auto reduction = linalg::GenericOp::create(
        builder, loc, accumulator.getType(), amax, accumulator, maps,
        {utils::IteratorType::reduction},
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l, arith::MaxNumFOp::create(b, l, args[1], args[0]).getResult());
        });
    return tensor::ExtractOp::create(builder, loc, reduction.getResult(0),
                                     ValueRange{});
  }
};

struct RecordAmaxOpLowering : OpConversionPattern<RecordAmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RecordAmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value index = createIndex(rewriter, loc, 0);
    Value row = tensor::ExtractOp::create(rewriter, loc, adaptor.getHistory(),
                                          index);
    // The folder's computeAmax({row, amax}): |.|, NaN ignored, from 0.
    Value zero = createF32Constant(rewriter, loc, 0.0f);
    Value rowMagnitude = math::AbsFOp::create(rewriter, loc, row);
    Value merged = arith::MaxNumFOp::create(rewriter, loc, zero, rowMagnitude);
    Value amaxMagnitude = math::AbsFOp::create(rewriter, loc, adaptor.getAmax());
    merged = arith::MaxNumFOp::create(rewriter, loc, merged, amaxMagnitude);
    rewriter.replaceOpWithNewOp<tensor::InsertOp>(op, merged,
                                                  adaptor.getHistory(), index);
    return success();
  }
};

struct RollHistoryOpLowering : OpConversionPattern<RollHistoryOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(RollHistoryOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value history = adaptor.getHistory();
    RankedTensorType type = op.getType();
    int64_t length = type.getDimSize(0);
    Value zero = createF32Constant(rewriter, loc, 0.0f);
    Value first = createIndex(rewriter, loc, 0);
    // new[i] = old[i+1], new[N-1] = old[0], then new[0] = 0.
    Value rolled = history;
    if (length > 1) {
      Value tail = tensor::ExtractSliceOp::create(
          rewriter, loc, history, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(length - 1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                            type.getElementType());
      rolled = tensor::InsertSliceOp::create(
          rewriter, loc, tail, empty,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(length - 1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      Value oldFirst = tensor::ExtractOp::create(rewriter, loc, history, first);
      rolled = tensor::InsertOp::create(rewriter, loc, oldFirst, rolled,
                                        createIndex(rewriter, loc, length - 1));
    }
    rewriter.replaceOpWithNewOp<tensor::InsertOp>(op, zero, rolled, first);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

struct QuantizeOpLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value scale = adaptor.getScale();
    RankedTensorType resultType = op.getResult().getType();
    auto float8Type = cast<FloatType>(resultType.getElementType());
    Value quantized = createElementwiseMap(
        rewriter, loc, input, float8Type,
        [&](OpBuilder &b, Location l, Value element) {
          return createQuantizedElement(b, l, element, scale, float8Type);
        });
    SmallVector<Value> results = {
        castToType(rewriter, loc, quantized, resultType)};
    if (op.getAmax())
      results.push_back(createAmax(rewriter, loc, input));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct DequantizeOpLowering : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value scaleInv = adaptor.getScaleInv();
    RankedTensorType resultType = op.getResult().getType();
    Type elementType = resultType.getElementType();
    Value dequantized =
        createElementwiseMap(rewriter, loc, input, elementType,
                             [&](OpBuilder &b, Location l, Value element) {
                               Value value = arith::MulFOp::create(
                                   b, l, widenToF32(b, l, element), scaleInv);
                               return narrowFromF32(b, l, value, elementType);
                             });
    rewriter.replaceOp(op, castToType(rewriter, loc, dequantized, resultType));
    return success();
  }
};

/// One pass over the input writes both layouts (two outputs, the second with
/// a transposed indexing map).
struct CastTransposeOpLowering : OpConversionPattern<CastTransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CastTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Value scale = adaptor.getScale();
    auto float8Type =
        cast<FloatType>(op.getResult().getType().getElementType());
    OpFoldResult rows = getDimSize(rewriter, loc, input, 0);
    OpFoldResult cols = getDimSize(rewriter, loc, input, 1);
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{rows, cols}, float8Type);
    Value emptyTransposed = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>{cols, rows}, float8Type);
    MLIRContext *context = rewriter.getContext();
    AffineExpr d0 = getAffineDimExpr(0, context);
    AffineExpr d1 = getAffineDimExpr(1, context);
    AffineMap identity = AffineMap::get(2, 0, {d0, d1}, context);
    AffineMap transposed = AffineMap::get(2, 0, {d1, d0}, context);
    auto cast = linalg::GenericOp::create(
        rewriter, loc, TypeRange{empty.getType(), emptyTransposed.getType()},
        input, ValueRange{empty, emptyTransposed},
        SmallVector<AffineMap>{identity, identity, transposed},
        getParallelIterators(2),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value code = createQuantizedElement(b, l, args[0], scale, float8Type);
          linalg::YieldOp::create(b, l, ValueRange{code, code});
        });
    SmallVector<Value> results = {
        castToType(rewriter, loc, cast.getResult(0), op.getResult().getType()),
        castToType(rewriter, loc, cast.getResult(1),
                   op.getTransposed().getType())};
    if (op.getAmax())
      results.push_back(createAmax(rewriter, loc, input));
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

struct ScaledMatmulOpLowering : OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    // Decode each FP8 operand once, O(MK + KN), instead of inside the
    // contraction, O(MNK): without FP8 arithmetic the decode is a dozen
    // integer operations. The products are the same f32 values either way.
    Value lhs = widenTensorToF32(rewriter, loc, adaptor.getLhs());
    Value rhs = widenTensorToF32(rewriter, loc, adaptor.getRhs());
    RankedTensorType resultType = op.getResult().getType();
    int64_t rank = resultType.getRank();
    int64_t numBatch = rank - 2;
    int64_t rhsRank = cast<RankedTensorType>(rhs.getType()).getRank();
    bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();

    // Loops: batch..., m, n, k.
    SmallVector<AffineExpr> batch;
    for (int64_t i = 0; i < numBatch; ++i)
      batch.push_back(getAffineDimExpr(i, context));
    AffineExpr m = getAffineDimExpr(numBatch, context);
    AffineExpr n = getAffineDimExpr(numBatch + 1, context);
    AffineExpr k = getAffineDimExpr(numBatch + 2, context);
    auto makeMap = [&](ArrayRef<AffineExpr> prefix, AffineExpr a,
                       AffineExpr b) {
      SmallVector<AffineExpr> exprs(prefix);
      exprs.append({a, b});
      return AffineMap::get(rank + 1, 0, exprs, context);
    };
    AffineMap lhsMap = transposeLhs ? makeMap(batch, k, m) : makeMap(batch, m, k);
    ArrayRef<AffineExpr> rhsBatch =
        rhsRank == rank ? ArrayRef<AffineExpr>(batch) : ArrayRef<AffineExpr>();
    AffineMap rhsMap =
        transposeRhs ? makeMap(rhsBatch, n, k) : makeMap(rhsBatch, k, n);
    AffineMap accMap = makeMap(batch, m, n);

    // The result's sizes, from the operands where dynamic.
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < numBatch; ++i)
      sizes.push_back(getDimSize(rewriter, loc, lhs, i));
    sizes.push_back(getDimSize(rewriter, loc, lhs, transposeLhs ? rank - 1 : rank - 2));
    sizes.push_back(
        getDimSize(rewriter, loc, rhs, transposeRhs ? rhsRank - 2 : rhsRank - 1));

    Type f32 = rewriter.getF32Type();
    Value zero = createF32Constant(rewriter, loc, 0.0f);
    Value accEmpty = tensor::EmptyOp::create(rewriter, loc, sizes, f32);
    Value accInit =
        linalg::FillOp::create(rewriter, loc, zero, accEmpty).getResult(0);
    SmallVector<utils::IteratorType> iterators = getParallelIterators(rank);
    iterators.push_back(utils::IteratorType::reduction);
    auto contraction = linalg::GenericOp::create(
        rewriter, loc, accInit.getType(), ValueRange{lhs, rhs}, accInit,
        SmallVector<AffineMap>{lhsMap, rhsMap, accMap}, iterators,
        [](OpBuilder &b, Location l, ValueRange args) {
          // FP8 x FP8 products are exact in f32; the sum rounds per step.
          Value product = arith::MulFOp::create(b, l, args[0], args[1]);
          linalg::YieldOp::create(
              b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
        });

    // result = convert(acc * (lhs_scale_inv * rhs_scale_inv) + bias).
    Value scale = arith::MulFOp::create(rewriter, loc, adaptor.getLhsScaleInv(),
                                        adaptor.getRhsScaleInv());
    Type elementType = resultType.getElementType();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<Value> inputs = {contraction.getResult(0)};
    SmallVector<AffineMap> maps = {identity};
    if (Value bias = adaptor.getBias()) {
      inputs.push_back(bias);
      maps.push_back(AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context)));
    }
    maps.push_back(identity);
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, elementType);
    bool hasBias = static_cast<bool>(adaptor.getBias());
    auto epilogue = linalg::GenericOp::create(
        rewriter, loc, empty.getType(), inputs, empty, maps,
        getParallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value value = arith::MulFOp::create(b, l, args[0], scale);
          if (hasBias)
            value = arith::AddFOp::create(b, l, value, widenToF32(b, l, args[1]));
          linalg::YieldOp::create(b, l,
                                  narrowFromF32(b, l, value, elementType));
        });

    SmallVector<Value> results = {
        castToType(rewriter, loc, epilogue.getResult(0), resultType)};
    if (op.getResultAmax())
      results.push_back(createAmax(rewriter, loc, epilogue.getResult(0)));
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void mlir::fp8::populateFP8ToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AmaxOpLowering, ComputeScaleOpLowering, RecordAmaxOpLowering,
               RollHistoryOpLowering, QuantizeOpLowering, DequantizeOpLowering,
               CastTransposeOpLowering, ScaledMatmulOpLowering>(
      patterns.getContext());
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct ConvertFP8ToLinalgPass
    : fp8::impl::ConvertFP8ToLinalgBase<ConvertFP8ToLinalgPass> {
  void runOnOperation() override {
    ConversionTarget target(getContext());
    target.addIllegalDialect<FP8Dialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateFP8ToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    // The recipe is baked into the lowered ops now; keeping the attribute
    // (on this module or a nested one) would tie the output to the fp8
    // dialect.
    getOperation()->walk(
        [](ModuleOp module) { module->removeAttr("fp8.recipe"); });
  }
};
} // namespace
