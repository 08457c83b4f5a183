//===- FP8ToLinalg.cpp - fp8 to linalg, tensor, arith and math -------------===//
//
// convert-fp8-to-linalg: each fp8 op becomes target-independent ops on
// tensors computing exactly what its folder computes (lib/Numerics is the
// reference): the same f32 operations in the same order, so that a CPU run
// is bit-identical to the folded constants.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToLinalg/FP8ToLinalg.h"
#include "fp8/Conversion/ScaleArith.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Numerics/Scaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
static Value createF32ConstantLike(OpBuilder &builder, Location loc, Type like,
                               const APFloat &value) {
  auto attr = FloatAttr::get(builder.getF32Type(), value);
  if (auto shaped = dyn_cast<ShapedType>(like))
    return arith::ConstantOp::create(
        builder, loc, SplatElementsAttr::get(shaped.clone(builder.getF32Type()),
                                             Attribute(attr)));
  return arith::ConstantOp::create(builder, loc, attr);
}


/// Widens an f32 / bf16 / f16 / FP8 scalar to f32 (exact).
static Value widenToF32(OpBuilder &builder, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(builder, loc, builder.getF32Type(), value);
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

//===----------------------------------------------------------------------===//
// Block views
//===----------------------------------------------------------------------===//

/// The static `tensor` extended with zeros to `shape` (no smaller in any
/// dimension). Written as a gather rather than tensor.pad: bufferized, a pad
/// copies its source into a strided view, which LLVM lowering turns into a
/// call of the runner library's memrefCopy.
static Value padWithZeros(OpBuilder &builder, Location loc, Value tensor,
                          ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getShape() == shape)
    return tensor;
  Value empty = tensor::EmptyOp::create(builder, loc, shape,
                                        type.getElementType());
  auto pad = linalg::GenericOp::create(
      builder, loc, empty.getType(), ValueRange(), empty,
      builder.getMultiDimIdentityMap(type.getRank()),
      getParallelIterators(type.getRank()),
      [&](OpBuilder &b, Location l, ValueRange) {
        Value inBounds;
        SmallVector<Value> indices;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          Value index = linalg::IndexOp::create(b, l, d);
          if (shape[d] != type.getDimSize(d)) {
            Value isInside = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, index,
                createIndex(b, l, type.getDimSize(d)));
            index = arith::SelectOp::create(b, l, isInside, index,
                                            createIndex(b, l, 0));
            inBounds = inBounds ? arith::AndIOp::create(b, l, inBounds,
                                                        isInside)
                                      .getResult()
                                : isInside;
          }
          indices.push_back(index);
        }
        Value element = tensor::ExtractOp::create(b, l, tensor, indices);
        Value zero = arith::ConstantOp::create(
            b, l, b.getZeroAttr(type.getElementType()));
        linalg::YieldOp::create(
            b, l, arith::SelectOp::create(b, l, inBounds, element, zero)
                      .getResult());
      });
  return pad.getResult(0);
}

namespace {
/// A static tensor seen as blocks: every dimension whose block extent is
/// > 1 is padded to a multiple of it and split into (block index, offset in
/// the block); a dimension with extent 1 stays one dimension (its index is
/// the block index). Indexing maps over the view's dimensions then reach a
/// block's scale with a projected permutation.
struct BlockedView {
  /// The padded, expanded tensor.
  Value value;
  /// Per original dimension, the view dimension holding the block index.
  SmallVector<int64_t> blockDims;
  /// The view dimensions that are offsets inside a block.
  SmallVector<int64_t> innerDims;
  /// From the padded tensor to the view.
  SmallVector<ReassociationIndices> reassociation;
  SmallVector<int64_t> paddedShape;

  int64_t getRank() const {
    return int64_t(blockDims.size() + innerDims.size());
  }
};
} // namespace

/// `tensor` padded with zeros where its blocks need it and expanded into
/// its block view.
static BlockedView createBlockedView(OpBuilder &builder, Location loc,
                                     Value tensor, ArrayRef<int64_t> block) {
  auto type = cast<RankedTensorType>(tensor.getType());
  BlockedView view;
  SmallVector<int64_t> viewShape;
  for (auto [size, extent] : llvm::zip_equal(type.getShape(), block)) {
    int64_t dim = int64_t(viewShape.size());
    view.blockDims.push_back(dim);
    if (extent == 1) {
      view.reassociation.push_back({dim});
      view.paddedShape.push_back(size);
      viewShape.push_back(size);
      continue;
    }
    int64_t blocks = llvm::divideCeil(size, extent);
    view.reassociation.push_back({dim, dim + 1});
    view.innerDims.push_back(dim + 1);
    view.paddedShape.push_back(blocks * extent);
    viewShape.append({blocks, extent});
  }
  Value padded = padWithZeros(builder, loc, tensor, view.paddedShape);
  view.value = tensor::ExpandShapeOp::create(
      builder, loc, RankedTensorType::get(viewShape, type.getElementType()),
      padded, view.reassociation);
  return view;
}

/// The inverse of createBlockedView for a result computed over the view:
/// collapsed to the padded shape, then cut to `shape`.
static Value createFromBlockedView(OpBuilder &builder, Location loc,
                                   const BlockedView &view, Value result,
                                   ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(result.getType());
  Value collapsed = tensor::CollapseShapeOp::create(
      builder, loc, type.clone(view.paddedShape), result, view.reassociation);
  if (ArrayRef<int64_t>(view.paddedShape) == shape)
    return collapsed;
  SmallVector<OpFoldResult> offsets(shape.size(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(shape.size(),
                                           builder.getIndexAttr(1));
  for (int64_t size : shape)
    sizes.push_back(builder.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(builder, loc, type.clone(shape),
                                        collapsed, offsets, sizes, strides);
}

/// The map from the view's dimensions to a block's scale.
static AffineMap getBlockScaleMap(const BlockedView &view,
                                  MLIRContext *context) {
  SmallVector<AffineExpr> exprs;
  for (int64_t dim : view.blockDims)
    exprs.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(view.getRank(), 0, exprs, context);
}

/// The lowerings of per-block ops need static shapes (blocks are padded and
/// split); anything else is reported where it is.
static LogicalResult checkStaticShapes(Operation *op, TypeRange types) {
  for (Type type : types)
    if (auto shaped = dyn_cast<ShapedType>(type);
        shaped && !shaped.hasStaticShape())
      return op->emitOpError("with per-block scales needs static shapes, got ")
             << type;
  return success();
}

/// An E8M0 code as the f32 it stands for (2^(code - 127), NaN for 0xFF):
/// integer operations, as numerics::e8m0ToF32. Other scale types are
/// widened as usual.
static Value widenScaleToF32(OpBuilder &builder, Location loc, Value value) {
  if (!isa<Float8E8M0FNUType>(value.getType()))
    return widenToF32(builder, loc, value);
  Value code = arith::ExtUIOp::create(
      builder, loc, builder.getI32Type(),
      arith::BitcastOp::create(builder, loc, builder.getI8Type(), value));
  return createE8M0ToF32(builder, loc, code);
}

/// MXFP8: the E8M0 scale_inv of a block amax and the exact f32 scale
/// (ScaleArith.h).
static std::pair<Value, Value> createMXScales(OpBuilder &builder, Location loc,
                                              Value amax, float fp8Max) {
  Value code = createMXScaleCode(builder, loc, amax, fp8Max);
  Value scale = createMXScaleFromCode(builder, loc, code);
  Value scaleInv = arith::BitcastOp::create(
      builder, loc, builder.getType<Float8E8M0FNUType>(),
      arith::TruncIOp::create(builder, loc, builder.getI8Type(), code));
  return {scale, scaleInv};
}

Value mlir::fp8::createSaturatingTruncF(OpBuilder &builder, Location loc,
                                        Value value, FloatType float8Type) {
  Type type = value.getType();
  float maxFinite =
      num::getFormatInfo(*getNumericsFormat(float8Type)).maxFinite;
  // minimumf / maximumf keep NaN, so the clamp cannot hide one; the select
  // then replaces every NaN, whatever its sign and payload.
  Value upper = createF32ConstantLike(builder, loc, type, APFloat(maxFinite));
  Value lower = createF32ConstantLike(builder, loc, type, APFloat(-maxFinite));
  Value clamped = arith::MaximumFOp::create(
      builder, loc, arith::MinimumFOp::create(builder, loc, value, upper),
      lower);
  Value isNaN = arith::CmpFOp::create(builder, loc, arith::CmpFPredicate::UNO,
                                      value, value);
  Value nan = createF32ConstantLike(
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
    Value previous = adaptor.getPrevious();
    if (!previous) {
      rewriter.replaceOp(op, createCurrentScale(
                                 rewriter, loc, amax, scaledMax,
                                 op.getEpsilon().convertToFloat(),
                                 op.getPowerOfTwo()));
      return success();
    }
    // A new scale only from a finite, positive amax (NaN fails both).
    Value zero = createF32Constant(rewriter, loc, 0.0f);
    Value inf =
        createF32Constant(rewriter, loc, std::numeric_limits<float>::infinity());
    Value isPositive = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, amax, zero);
    Value isFinite = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OLT, amax, inf);
    Value isUsable = arith::AndIOp::create(rewriter, loc, isPositive, isFinite);
    Value fresh = arith::DivFOp::create(rewriter, loc, scaledMax, amax);
    Value scale =
        arith::SelectOp::create(rewriter, loc, isUsable, fresh, previous);
    scale = clampInfiniteScale(rewriter, loc, scale);
    if (op.getPowerOfTwo())
      scale = truncateToPowerOfTwo(rewriter, loc, scale);
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

/// The NaN-ignoring max of |x| per block, over the input's block view.
struct BlockAmaxOpLowering : OpConversionPattern<BlockAmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BlockAmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkStaticShapes(
            op, {op.getInput().getType(), op.getAmax().getType()})))
      return failure();
    Location loc = op.getLoc();
    BlockedView view =
        createBlockedView(rewriter, loc, adaptor.getInput(), op.getBlockShape());
    RankedTensorType resultType = op.getAmax().getType();
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          resultType.getElementType());
    Value init = linalg::FillOp::create(rewriter, loc,
                                        createF32Constant(rewriter, loc, 0.0f),
                                        empty)
                     .getResult(0);
    SmallVector<utils::IteratorType> iterators =
        getParallelIterators(view.getRank());
    for (int64_t dim : view.innerDims)
      iterators[dim] = utils::IteratorType::reduction;
    auto reduction = linalg::GenericOp::create(
        rewriter, loc, resultType, view.value, init,
        SmallVector<AffineMap>{
            rewriter.getMultiDimIdentityMap(view.getRank()),
            getBlockScaleMap(view, rewriter.getContext())},
        iterators, [](OpBuilder &b, Location l, ValueRange args) {
          Value magnitude =
              math::AbsFOp::create(b, l, widenToF32(b, l, args[0]));
          linalg::YieldOp::create(
              b, l,
              arith::MaxNumFOp::create(b, l, args[1], magnitude).getResult());
        });
    rewriter.replaceOp(op, reduction.getResult(0));
    return success();
  }
};

struct ComputeBlockScalesOpLowering
    : OpConversionPattern<ComputeBlockScalesOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ComputeBlockScalesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value amax = adaptor.getAmax();
    float fp8Max =
        num::getFormatInfo(*getNumericsFormat(op.getFp8Type())).maxFinite;
    bool isMX = op.isMX(), powerOfTwo = op.getPowerOfTwo();
    float epsilon = op.getEpsilon().convertToFloat();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, amax);
    Value scaleInit = tensor::EmptyOp::create(rewriter, loc, sizes,
                                              rewriter.getF32Type());
    Value inverseInit = tensor::EmptyOp::create(
        rewriter, loc, sizes, op.getScaleInv().getType().getElementType());
    int64_t rank = op.getAmax().getType().getRank();
    auto scales = linalg::GenericOp::create(
        rewriter, loc, TypeRange{scaleInit.getType(), inverseInit.getType()},
        amax, ValueRange{scaleInit, inverseInit},
        SmallVector<AffineMap>(3, rewriter.getMultiDimIdentityMap(rank)),
        getParallelIterators(rank),
        [&](OpBuilder &b, Location l, ValueRange args) {
          if (isMX) {
            auto [scale, scaleInv] = createMXScales(b, l, args[0], fp8Max);
            linalg::YieldOp::create(b, l, ValueRange{scale, scaleInv});
            return;
          }
          Value scale = createCurrentScale(
              b, l, args[0], createF32Constant(b, l, fp8Max), epsilon,
              powerOfTwo);
          Value inverse = arith::DivFOp::create(
              b, l, createF32Constant(b, l, 1.0f), scale);
          linalg::YieldOp::create(b, l, ValueRange{scale, inverse});
        });
    rewriter.replaceOp(op, ValueRange{castToType(rewriter, loc,
                                                 scales.getResult(0),
                                                 op.getScale().getType()),
                                      castToType(rewriter, loc,
                                                 scales.getResult(1),
                                                 op.getScaleInv().getType())});
    return success();
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

/// `body(element, its block's scale)` over every element of the static
/// `input`, into a tensor of its shape and `elementType`: computed over the
/// block view, so that every indexing map is a projected permutation.
static Value createBlockMap(
    OpBuilder &builder, Location loc, Value input, Value scales,
    ArrayRef<int64_t> block, Type elementType,
    function_ref<Value(OpBuilder &, Location, Value, Value)> body) {
  auto inputType = cast<RankedTensorType>(input.getType());
  BlockedView view = createBlockedView(builder, loc, input, block);
  auto viewType = cast<RankedTensorType>(view.value.getType());
  Value empty = tensor::EmptyOp::create(builder, loc, viewType.getShape(),
                                        elementType);
  AffineMap identity = builder.getMultiDimIdentityMap(view.getRank());
  auto map = linalg::GenericOp::create(
      builder, loc, empty.getType(), ValueRange{view.value, scales}, empty,
      SmallVector<AffineMap>{identity,
                             getBlockScaleMap(view, builder.getContext()),
                             identity},
      getParallelIterators(view.getRank()),
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, body(b, l, args[0], args[1]));
      });
  return createFromBlockedView(builder, loc, view, map.getResult(0),
                               inputType.getShape());
}

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
    if (std::optional<ArrayRef<int64_t>> block = op.getBlockShape()) {
      if (failed(checkStaticShapes(op, {resultType, input.getType()})))
        return failure();
      rewriter.replaceOp(
          op, createBlockMap(rewriter, loc, input, scale, *block, float8Type,
                             [&](OpBuilder &b, Location l, Value element,
                                 Value blockScale) {
                               return createQuantizedElement(b, l, element,
                                                             blockScale,
                                                             float8Type);
                             }));
      return success();
    }
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
    if (std::optional<ArrayRef<int64_t>> block = op.getBlockShape()) {
      if (failed(checkStaticShapes(op, {resultType, input.getType()})))
        return failure();
      rewriter.replaceOp(
          op,
          createBlockMap(rewriter, loc, input, scaleInv, *block, elementType,
                         [&](OpBuilder &b, Location l, Value element,
                             Value blockScaleInv) {
                           Value value = arith::MulFOp::create(
                               b, l, widenToF32(b, l, element),
                               widenScaleToF32(b, l, blockScaleInv));
                           return createTruncFFromF32(b, l, value, elementType);
                         }));
      return success();
    }
    Value dequantized = createElementwiseMap(
        rewriter, loc, input, elementType,
        [&](OpBuilder &b, Location l, Value element) {
          Value value =
              arith::MulFOp::create(b, l, widenToF32(b, l, element), scaleInv);
          return createTruncFFromF32(b, l, value, elementType);
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

/// sum_k lhs * rhs into `init` (f32, K in ascending order): FP8 x FP8
/// products are exact in f32, the sum rounds per step.
static Value createProductSum(OpBuilder &builder, Location loc, Value lhs,
                              Value rhs, Value init, ArrayRef<AffineMap> maps,
                              ArrayRef<utils::IteratorType> iterators) {
  auto contraction = linalg::GenericOp::create(
      builder, loc, init.getType(), ValueRange{lhs, rhs}, init, maps,
      iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(b, l, args[0], args[1]);
        linalg::YieldOp::create(
            b, l, arith::AddFOp::create(b, l, args[2], product).getResult());
      });
  return contraction.getResult(0);
}

/// The slice [offset, offset + size) of `tensor` along `dim`, every other
/// dimension whole.
static Value sliceDimension(OpBuilder &builder, Location loc, Value tensor,
                            int64_t dim, OpFoldResult offset, int64_t size) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(),
                                           builder.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  for (int64_t extent : shape)
    sizes.push_back(builder.getIndexAttr(extent));
  offsets[dim] = offset;
  return tensor::ExtractSliceOp::create(
      builder, loc, type.clone(shape), tensor, offsets, sizes, strides);
}

/// The unit dimension `dim` of `tensor` dropped by merging it into a
/// neighbour. Not a rank-reducing extract_slice: with several unit
/// dimensions its type does not say which one went, and MLIR 22's
/// canonicalization then rebuilt the slice with its sizes permuted
/// ("slice along dimension 2 runs out-of-bounds", the Llama-3-8B FFN under
/// granularity=row).
static Value dropUnitDimension(OpBuilder &builder, Location loc, Value tensor,
                               int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  assert(type.getRank() >= 2 && "scales have the rank of their operand");
  SmallVector<ReassociationIndices> reassociation;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == dim)
      continue;
    ReassociationIndices group = {d};
    if (d + 1 == dim || (dim == 0 && d == 1))
      group = d < dim ? ReassociationIndices{d, dim}
                      : ReassociationIndices{dim, d};
    reassociation.push_back(group);
    shape.push_back(type.getDimSize(d));
  }
  return tensor::CollapseShapeOp::create(
      builder, loc, RankedTensorType::get(shape, type.getElementType()),
      tensor, reassociation);
}

/// The block-scaled accumulator of fp8.scaled_matmul (f32, [batch..., M, N]):
/// a loop over the K blocks in order; in each, the partial sum over the
/// block's K range from zero (a plain contraction, K ascending), then
/// acc = fma(partial, lhs_scale_inv * rhs_scale_inv, acc) element-wise.
/// Memory stays O(M N) whatever the number of K blocks. A partial last block
/// is padded with zeros, which leaves every partial sum bit-identical (the
/// sums start at +0).
static Value createBlockScaledProduct(OpBuilder &builder, ScaledMatmulOp op,
                                      Value lhs, Value rhs, Value lhsScaleInv,
                                      Value rhsScaleInv,
                                      ArrayRef<OpFoldResult> sizes) {
  Location loc = op.getLoc();
  MLIRContext *context = builder.getContext();
  int64_t rank = op.getResult().getType().getRank();
  int64_t numBatch = rank - 2;
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();
  int64_t blockK = op.getBlockK();
  int64_t lhsKDim = lhsRank - (transposeLhs ? 2 : 1);
  int64_t rhsKDim = rhsRank - (transposeRhs ? 1 : 2);
  int64_t numKBlocks = llvm::divideCeil(lhsType.getDimSize(lhsKDim), blockK);
  auto padK = [&](Value tensor, int64_t dim) {
    SmallVector<int64_t> shape(cast<RankedTensorType>(tensor.getType()).getShape());
    shape[dim] = numKBlocks * blockK;
    return padWithZeros(builder, loc, tensor, shape);
  };
  lhs = padK(lhs, lhsKDim);
  rhs = padK(rhs, rhsKDim);

  // Maps over (batch..., m, n, k) for the partial sums and (batch..., m, n)
  // for the promotion.
  auto dims = [&](unsigned count) {
    SmallVector<AffineExpr> exprs;
    for (unsigned i = 0; i < count; ++i)
      exprs.push_back(getAffineDimExpr(i, context));
    return exprs;
  };
  SmallVector<AffineExpr> d = dims(rank + 1);
  ArrayRef<AffineExpr> batch(d.data(), numBatch);
  AffineExpr m = d[numBatch], n = d[numBatch + 1], k = d[numBatch + 2];
  auto makeMap = [&](unsigned numDims, ArrayRef<AffineExpr> prefix,
                     ArrayRef<AffineExpr> rest) {
    SmallVector<AffineExpr> exprs(prefix);
    exprs.append(rest.begin(), rest.end());
    return AffineMap::get(numDims, 0, exprs, context);
  };
  ArrayRef<AffineExpr> rhsBatch =
      rhsRank == rank ? batch : ArrayRef<AffineExpr>();
  AffineMap lhsMap = transposeLhs ? makeMap(rank + 1, batch, {k, m})
                                  : makeMap(rank + 1, batch, {m, k});
  AffineMap rhsMap = transposeRhs ? makeMap(rank + 1, rhsBatch, {n, k})
                                  : makeMap(rank + 1, rhsBatch, {k, n});
  AffineMap partialMap = makeMap(rank + 1, batch, {m, n});
  // A scale's M (N) index is the row's (column's) block: m floordiv bm. The
  // K-block dimension is sliced away.
  ArrayRef<int64_t> lhsBlock = *op.getLhsBlock(), rhsBlock = *op.getRhsBlock();
  AffineExpr lhsRow = m.floorDiv(lhsBlock[lhsRank - (transposeLhs ? 1 : 2)]);
  AffineExpr rhsCol = n.floorDiv(rhsBlock[rhsRank - (transposeRhs ? 2 : 1)]);
  AffineMap lhsScaleMap = makeMap(rank, batch, {lhsRow});
  AffineMap rhsScaleMap = makeMap(rank, rhsBatch, {rhsCol});
  AffineMap identity = builder.getMultiDimIdentityMap(rank);

  Type f32 = builder.getF32Type();
  Value zero = createF32Constant(builder, loc, 0.0f);
  Value empty = tensor::EmptyOp::create(builder, loc, sizes, f32);
  Value accInit = linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
  SmallVector<utils::IteratorType> partialIterators = getParallelIterators(rank);
  partialIterators.push_back(utils::IteratorType::reduction);
  auto loop = scf::ForOp::create(
      builder, loc, createIndex(builder, loc, 0),
      createIndex(builder, loc, numKBlocks), createIndex(builder, loc, 1),
      ValueRange{accInit},
      [&](OpBuilder &b, Location l, Value kb, ValueRange iterArgs) {
        Value kOffset = arith::MulIOp::create(b, l, kb,
                                              createIndex(b, l, blockK));
        Value lhsSlice = sliceDimension(b, l, lhs, lhsKDim, kOffset, blockK);
        Value rhsSlice = sliceDimension(b, l, rhs, rhsKDim, kOffset, blockK);
        Value partialInit =
            linalg::FillOp::create(
                b, l, zero, tensor::EmptyOp::create(b, l, sizes, f32).getResult())
                .getResult(0);
        Value partial =
            createProductSum(b, l, lhsSlice, rhsSlice, partialInit,
                             {lhsMap, rhsMap, partialMap}, partialIterators);
        Value lhsScale = dropUnitDimension(
            b, l, sliceDimension(b, l, lhsScaleInv, lhsKDim, kb, 1), lhsKDim);
        Value rhsScale = dropUnitDimension(
            b, l, sliceDimension(b, l, rhsScaleInv, rhsKDim, kb, 1), rhsKDim);
        auto promotion = linalg::GenericOp::create(
            b, l, iterArgs[0].getType(),
            ValueRange{partial, lhsScale, rhsScale}, iterArgs[0],
            SmallVector<AffineMap>{identity, lhsScaleMap, rhsScaleMap,
                                   identity},
            getParallelIterators(rank),
            [](OpBuilder &nb, Location nl, ValueRange args) {
              Value scale = arith::MulFOp::create(
                  nb, nl, widenScaleToF32(nb, nl, args[1]),
                  widenScaleToF32(nb, nl, args[2]));
              linalg::YieldOp::create(
                  nb, nl,
                  math::FmaOp::create(nb, nl, args[0], scale, args[3])
                      .getResult());
            });
        scf::YieldOp::create(b, l, promotion.getResult(0));
      });
  return loop.getResult(0);
}

struct ScaledMatmulOpLowering : OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.isBlockScaled() &&
        failed(checkStaticShapes(op, op->getOperandTypes())))
      return failure();
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

    Value accumulator;
    Value scale;
    if (op.isBlockScaled()) {
      accumulator = createBlockScaledProduct(rewriter, op, lhs, rhs,
                                             adaptor.getLhsScaleInv(),
                                             adaptor.getRhsScaleInv(), sizes);
    } else {
      Type f32 = rewriter.getF32Type();
      Value zero = createF32Constant(rewriter, loc, 0.0f);
      Value accEmpty = tensor::EmptyOp::create(rewriter, loc, sizes, f32);
      Value accInit =
          linalg::FillOp::create(rewriter, loc, zero, accEmpty).getResult(0);
      SmallVector<utils::IteratorType> iterators = getParallelIterators(rank);
      iterators.push_back(utils::IteratorType::reduction);
      accumulator = createProductSum(rewriter, loc, lhs, rhs, accInit,
                                     {lhsMap, rhsMap, accMap}, iterators);
      // result = convert(acc * (lhs_scale_inv * rhs_scale_inv) + bias).
      scale = arith::MulFOp::create(rewriter, loc, adaptor.getLhsScaleInv(),
                                    adaptor.getRhsScaleInv());
    }

    Type elementType = resultType.getElementType();
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    SmallVector<Value> inputs = {accumulator};
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
          Value value = args[0];
          if (scale)
            value = arith::MulFOp::create(b, l, value, scale);
          if (hasBias)
            value = arith::AddFOp::create(b, l, value, widenToF32(b, l, args[1]));
          linalg::YieldOp::create(
              b, l, createTruncFFromF32(b, l, value, elementType));
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
  patterns.add<AmaxOpLowering, BlockAmaxOpLowering,
               ComputeBlockScalesOpLowering, ComputeScaleOpLowering,
               RecordAmaxOpLowering,
               RollHistoryOpLowering, QuantizeOpLowering, DequantizeOpLowering,
               CastTransposeOpLowering, ScaledMatmulOpLowering>(
      patterns.getContext());
  populateFP8AttentionToLinalgPatterns(patterns);
  populateFP8AttentionGradToLinalgPatterns(patterns);
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
