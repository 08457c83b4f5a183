//===- AttentionTiles.h - tile-sized ops of the flash lowerings -*- C++ -*-===//
//
// Private to lib/Conversion/FP8ToLinalg: what the FlashAttention-2 forward
// (AttentionToLinalg.cpp) and backward (AttentionGradToLinalg.cpp) lowerings
// share. Both compute on [rows, cols] tiles of the scores of one head.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOLINALG_ATTENTIONTILES_H
#define FP8_LIB_CONVERSION_FP8TOLINALG_ATTENTIONTILES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

namespace mlir::fp8::attention {

/// Query rows and keys per tile: a 64 x 64 f32 score tile is 16 KiB, so the
/// scores, probabilities and the accumulator of one tile stay in L1/L2.
inline constexpr int64_t kQueryTile = 64;
inline constexpr int64_t kKeyTile = 64;

/// The tile along a sequence of static length `length` (dynamic: the
/// default tile): a whole short sequence is one tile.
inline int64_t tileFor(int64_t length, int64_t tile) {
  if (ShapedType::isDynamic(length))
    return tile;
  return std::max<int64_t>(1, std::min(length, tile));
}

inline Value widen(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

inline Value isNegInfinity(OpBuilder &b, Location loc, Value value) {
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, value,
                               negInf);
}

/// Index arithmetic and tile-sized linalg ops at one insertion point.
struct TileBuilder {
  OpBuilder &b;
  Location loc;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value f32(float value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value dim(Value tensor, int64_t i) {
    return tensor::DimOp::create(b, loc, tensor, i);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }

  /// A `size`-sized tile: the constant when static, `size` otherwise.
  OpFoldResult fold(Value size, std::optional<int64_t> staticSize) {
    if (staticSize)
      return b.getIndexAttr(*staticSize);
    return size;
  }

  /// The slice of `tensor` at `offsets` with `sizes` whose leading
  /// dimensions (all but the last `rank`) have size 1 and are dropped.
  Value slice(Value tensor, ArrayRef<OpFoldResult> offsets,
              ArrayRef<OpFoldResult> sizes, unsigned rank) {
    SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (OpFoldResult size : sizes.take_back(rank))
      shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(tensor.getType()).getElementType());
    return tensor::ExtractSliceOp::create(b, loc, type, tensor, offsets, sizes,
                                          strides);
  }
  /// The rank-2 slice `[rows, cols]` of a rank-4 `tensor` at
  /// `[n, h, row, col]`.
  Value slice2d(Value tensor, ArrayRef<OpFoldResult> offsets,
                ArrayRef<OpFoldResult> sizes) {
    return slice(tensor, offsets, sizes, 2);
  }

  Value filled(ArrayRef<OpFoldResult> sizes, float value) {
    Value empty = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
    return fill(empty, value);
  }
  Value fill(Value init, float value) {
    return linalg::FillOp::create(b, loc, f32(value), init).getResult(0);
  }

  /// A linalg.generic over `iterators` with one f32 result shaped like
  /// `init`; `body` gets the scalars of `inputs` and of `init`.
  Value generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    auto op = linalg::GenericOp::create(
        b, loc, init.getType(), inputs, init, maps, iterators,
        [&](OpBuilder &nested, Location l, ValueRange args) {
          linalg::YieldOp::create(nested, l, body(nested, l, args));
        });
    return op.getResult(0);
  }

  /// acc + lhs * rhs over loops (x, y, r), r the reduction, operands read
  /// through the maps (results among x, y, r): products of the widened
  /// operands summed in f32 into the f32 `acc`.
  Value contract(Value lhs, Value rhs, Value acc, ArrayRef<unsigned> lhsDims,
                 ArrayRef<unsigned> rhsDims, ArrayRef<unsigned> accDims) {
    MLIRContext *context = b.getContext();
    auto map = [&](ArrayRef<unsigned> dims) {
      SmallVector<AffineExpr> results;
      for (unsigned d : dims)
        results.push_back(getAffineDimExpr(d, context));
      return AffineMap::get(3, 0, results, context);
    };
    using utils::IteratorType;
    return generic({lhs, rhs}, acc, {map(lhsDims), map(rhsDims), map(accDims)},
                   {IteratorType::parallel, IteratorType::parallel,
                    IteratorType::reduction},
                   [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
                     Value product = arith::MulFOp::create(
                         nb, nl, widen(nb, nl, args[0]),
                         widen(nb, nl, args[1]));
                     return arith::AddFOp::create(nb, nl, args[2], product);
                   });
  }
};

/// What both lowerings read from Q [b, hq, sq, d], K [b, hkv, sk, d] and
/// V [b, hkv, sk, dv]: the sizes, the group (query head h reads KV head
/// h / group) and the tiles along sq and sk.
struct AttentionSizes {
  Value batch, queryHeads, queryLength, keyHeads, keyLength, group;
  OpFoldResult headDim, valueDim;
  int64_t queryTile, keyTile;

  AttentionSizes(TileBuilder &t, Value query, Value key, Value value)
      : batch(t.dim(query, 0)), queryHeads(t.dim(query, 1)),
        queryLength(t.dim(query, 2)), keyHeads(t.dim(key, 1)),
        keyLength(t.dim(key, 2)),
        group(arith::DivUIOp::create(t.b, t.loc, queryHeads, keyHeads)),
        headDim(tensor::getMixedSize(t.b, t.loc, query, 3)),
        valueDim(tensor::getMixedSize(t.b, t.loc, value, 3)),
        queryTile(tileFor(cast<RankedTensorType>(query.getType()).getDimSize(2),
                          kQueryTile)),
        keyTile(tileFor(cast<RankedTensorType>(key.getType()).getDimSize(2),
                        kKeyTile)) {}

  /// The static size of every tile of a sequence of static `length` when
  /// all are full, else none.
  static std::optional<int64_t> staticTile(int64_t length, int64_t tile) {
    if (!ShapedType::isDynamic(length) && length % tile == 0)
      return tile;
    return std::nullopt;
  }
};

/// Where a score tile lies: head (n, h), query rows from q0, keys from k0.
struct ScoreTile {
  Value n, h, q0, k0;
  OpFoldResult rows, cols;
};

/// The op's score modifiers, applied in place to the f32 products of a
/// [rows, cols] tile: times `scale`, the mask (added, or -inf where a
/// boolean mask is false), -inf past the causal diagonal.
struct ScoreModifiers {
  float scale;
  Value mask; // rank 4, broadcast on [b, hq, sq, sk]
  bool booleanMask;
  bool causal;
  int64_t causalOffset;

  template <typename OpTy>
  static ScoreModifiers of(OpTy op, Value mask) {
    return {op.getScale().convertToFloat(), mask, op.hasBooleanMask(),
            op.getCausal(), static_cast<int64_t>(op.getCausalOffset())};
  }

  /// The products tile scaled and masked, in place.
  Value apply(TileBuilder &t, const ScoreTile &tile, Value products) const;
};

} // namespace mlir::fp8::attention

#endif // FP8_LIB_CONVERSION_FP8TOLINALG_ATTENTIONTILES_H
