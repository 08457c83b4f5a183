//===- AttentionToLinalg.cpp - fp8.attention as FlashAttention-2 ----------===//
//
// The forward algorithm of FlashAttention-2 on tensors: an scf.forall over
// (batch, query head, tile of query rows), an scf.for over tiles of keys
// carrying the running row max `m`, the running sum `l` and the f32
// accumulator `O`, and linalg ops on tile-sized tensors inside (the CPU
// path's tiling and vectorization then apply to them). Memory beyond the
// inputs and outputs is a few tiles per thread, never sq x sk.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToLinalg/FP8ToLinalg.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "AttentionTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::fp8;

using namespace mlir::fp8::attention;

Value ScoreModifiers::apply(TileBuilder &t, const ScoreTile &tile,
                            Value products) const {
  OpBuilder &b = t.b;
  MLIRContext *context = b.getContext();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  AffineExpr i = getAffineDimExpr(0, context), j = getAffineDimExpr(1, context);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    auto broadcast = [&](int64_t d) { return maskType.getDimSize(d) == 1; };
    SmallVector<OpFoldResult> offsets = {
        broadcast(0) ? zero : OpFoldResult(tile.n),
        broadcast(1) ? zero : OpFoldResult(tile.h),
        broadcast(2) ? zero : OpFoldResult(tile.q0),
        broadcast(3) ? zero : OpFoldResult(tile.k0)};
    SmallVector<OpFoldResult> sizes = {one, one,
                                       broadcast(2) ? one : tile.rows,
                                       broadcast(3) ? one : tile.cols};
    inputs.push_back(t.slice2d(mask, offsets, sizes));
    AffineExpr zeroExpr = getAffineConstantExpr(0, context);
    maps.push_back(AffineMap::get(
        2, 0, {broadcast(2) ? zeroExpr : i, broadcast(3) ? zeroExpr : j},
        context));
  }
  maps.push_back(AffineMap::get(2, 0, {i, j}, context));
  return t.generic(
      inputs, products, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value s = arith::MulFOp::create(
            nb, nl, args.back(),
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(scale)));
        Value masked = arith::ConstantOp::create(
            nb, nl,
            nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
        if (mask && booleanMask)
          s = arith::SelectOp::create(nb, nl, args[0], s, masked);
        else if (mask)
          s = arith::AddFOp::create(nb, nl, s, widen(nb, nl, args[0]));
        if (causal) {
          Value row = arith::AddIOp::create(
              nb, nl, linalg::IndexOp::create(nb, nl, 0), tile.q0);
          Value col = arith::AddIOp::create(
              nb, nl, linalg::IndexOp::create(nb, nl, 1), tile.k0);
          Value limit = arith::AddIOp::create(
              nb, nl, row,
              arith::ConstantIndexOp::create(nb, nl, causalOffset));
          Value after = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::sgt, col, limit);
          s = arith::SelectOp::create(nb, nl, after, masked, s);
        }
        return s;
      });
}

namespace {
struct AttentionOpLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TileBuilder t{rewriter, loc};
    MLIRContext *context = rewriter.getContext();
    Value query = adaptor.getQuery(), key = adaptor.getKey(),
          value = adaptor.getValue(), mask = adaptor.getMask();
    // FP8 scores: one scale per token of the query and of the key.
    Value queryScaleInv = adaptor.getQueryScaleInv(),
          keyScaleInv = adaptor.getKeyScaleInv();
    // The output's type: the inputs', or f32 (unrounded).
    Type element = op.getOutput().getType().getElementType();
    const ScoreModifiers modifiers = ScoreModifiers::of(op, mask);
    const float negInf = -std::numeric_limits<float>::infinity();

    AttentionSizes sizes(t, query, key, value);
    // FP8 probabilities and values: P is rounded per key tile of block_k
    // (the op's semantics), so the key tiles are those.
    const bool fp8Values = op.hasFP8Values();
    if (fp8Values)
      sizes.keyTile = tileFor(
          cast<RankedTensorType>(key.getType()).getDimSize(2), *op.getBlockK());
    const float probabilityScale =
        fp8Values ? op.getProbabilityScale()->convertToFloat() : 1.0f;
    // Plain copies: lambdas below capture them (C++17 cannot capture
    // structured bindings).
    Value batch = sizes.batch, queryHeads = sizes.queryHeads,
          queryLength = sizes.queryLength, keyLength = sizes.keyLength,
          group = sizes.group;
    OpFoldResult headDim = sizes.headDim, valueDim = sizes.valueDim;
    const int64_t queryTile = sizes.queryTile, keyTile = sizes.keyTile;
    // Query tiles have a static size when every one is full; key tiles
    // always do, but for one tail tile after them (below), so the linalg
    // ops vectorize.
    std::optional<int64_t> staticQueryTile = AttentionSizes::staticTile(
        cast<RankedTensorType>(query.getType()).getDimSize(2), queryTile);

    Value numQueryTiles = arith::CeilDivUIOp::create(rewriter, loc, queryLength,
                                                     t.index(queryTile));
    SmallVector<OpFoldResult> outputSizes = {
        tensor::getMixedSize(rewriter, loc, query, 0),
        tensor::getMixedSize(rewriter, loc, query, 1),
        tensor::getMixedSize(rewriter, loc, query, 2), valueDim};
    Value outputInit =
        tensor::EmptyOp::create(rewriter, loc, outputSizes, element);
    Value lseInit = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<OpFoldResult>(outputSizes).take_front(3),
        rewriter.getF32Type());

    auto forall = scf::ForallOp::create(
        rewriter, loc,
        SmallVector<OpFoldResult>{batch, queryHeads, numQueryTiles},
        ValueRange{outputInit, lseInit}, std::nullopt);
    Block *body = forall.getBody();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(body->getTerminator());
    Value n = body->getArgument(0), h = body->getArgument(1),
          tile = body->getArgument(2);
    Value kvHead = arith::DivUIOp::create(rewriter, loc, h, group);
    Value q0 = t.mul(tile, t.index(queryTile));
    Value rows = arith::MinUIOp::create(rewriter, loc, t.index(queryTile),
                                        t.sub(queryLength, q0));
    OpFoldResult rowsOfr = t.fold(rows, staticQueryTile);
    OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
    Value queryTileValue =
        t.slice2d(query, {n, h, q0, zero}, {one, one, rowsOfr, headDim});

    // Keys past the causal diagonal of the tile's last row are masked for
    // every row of the tile: the loop stops before them.
    Value keyEnd = keyLength;
    if (modifiers.causal) {
      Value diagonal =
          t.add(t.add(q0, rows), t.index(modifiers.causalOffset));
      diagonal = arith::MaxSIOp::create(rewriter, loc, diagonal, t.index(0));
      keyEnd = arith::MinSIOp::create(rewriter, loc, diagonal, keyLength);
    }
    Value numKeyTiles = arith::CeilDivUIOp::create(rewriter, loc, keyEnd,
                                                   t.index(keyTile));

    AffineExpr i = getAffineDimExpr(0, context), j = getAffineDimExpr(1, context);
    auto map2 = [&](ArrayRef<AffineExpr> results) {
      return AffineMap::get(2, 0, results, context);
    };
    using utils::IteratorType;
    SmallVector<IteratorType> parallel2(2, IteratorType::parallel);
    SmallVector<IteratorType> rowReduction = {IteratorType::parallel,
                                              IteratorType::reduction};
    AffineMap rowMap = map2({i}), colMap = map2({j}), tileMap = map2({i, j});
    AffineMap identity1 = AffineMap::get(1, 0, {i}, context);

    // The running state and the scratch tiles live for one query tile; every
    // op of a key tile updates them in place (destination-passing into the
    // loop's own iter_args), so after bufferization the loops carry no
    // buffers and the threaded loop body frees only its own tiles, without
    // run-time alias checks.
    Value mInit = t.filled({rowsOfr}, negInf);
    Value lInit = t.filled({rowsOfr}, 0.0f);
    Value accInit = t.filled({rowsOfr, valueDim}, 0.0f);
    Value alphaInit = tensor::EmptyOp::create(
        rewriter, loc, SmallVector<OpFoldResult>{rowsOfr}, rewriter.getF32Type());

    // One key tile of `cols` keys from `k0`: `state` is (m, l, O, alpha, S),
    // S a [rows, cols] scratch; returns the updated state.
    auto keyTileStep = [&](OpBuilder &b, Location l, Value k0,
                           OpFoldResult colsOfr,
                           ValueRange state) -> SmallVector<Value> {
      TileBuilder tb{b, l};
      Value mOld = state[0], lOld = state[1], accOld = state[2],
            alphaOld = state[3], scratch = state[4];
      Value keys = tb.slice2d(key, {n, kvHead, k0, zero},
                              {one, one, colsOfr, headDim});
      Value values = tb.slice2d(value, {n, kvHead, k0, zero},
                                {one, one, colsOfr, valueDim});

      // S = Q K^T, f32 products summed in f32; then the scale, the mask
      // and the causal diagonal, in place.
      Value products = tb.contract(queryTileValue, keys, tb.fill(scratch, 0.0f),
                                   {0, 2}, {1, 2}, {0, 1});
      // FP8 scores: (sum * query_scale_inv[i]) * key_scale_inv[j].
      if (queryScaleInv) {
        Value rowScales = tb.slice(queryScaleInv, {n, h, q0},
                                   {one, one, rowsOfr}, 1);
        Value colScales = tb.slice(keyScaleInv, {n, kvHead, k0},
                                   {one, one, colsOfr}, 1);
        products = tb.generic(
            {rowScales, colScales}, products, {rowMap, colMap, tileMap},
            parallel2, [](OpBuilder &nb, Location nl, ValueRange args) {
              Value row = arith::MulFOp::create(nb, nl, args[2], args[0]);
              return arith::MulFOp::create(nb, nl, row, args[1]).getResult();
            });
      }
      Value scores = modifiers.apply(tb, {n, h, q0, k0, rowsOfr, colsOfr},
                                     products);

      // m' = max(m, max_j s) (NaN propagates as in the written max) and
      // alpha = exp(m - m'), which rescales what was summed before, in
      // place of m and of the tile's max.
      Value tileMaxInit =
          linalg::FillOp::create(b, l, tb.f32(negInf), alphaOld).getResult(0);
      Value tileMax = tb.generic(
          {scores}, tileMaxInit, {tileMap, rowMap}, rowReduction,
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::MaximumFOp::create(nb, nl, args[1], args[0]);
          });
      auto update = linalg::GenericOp::create(
          b, l, TypeRange{mOld.getType(), tileMax.getType()}, ValueRange{},
          ValueRange{mOld, tileMax}, {identity1, identity1},
          {IteratorType::parallel},
          [](OpBuilder &nb, Location nl, ValueRange args) {
            Value mNew = arith::MaximumFOp::create(nb, nl, args[0], args[1]);
            Value oneF = arith::ConstantOp::create(nb, nl,
                                                   nb.getF32FloatAttr(1));
            Value rescale = math::ExpOp::create(
                nb, nl, arith::SubFOp::create(nb, nl, args[0], mNew));
            Value alpha = arith::SelectOp::create(
                nb, nl, isNegInfinity(nb, nl, mNew), oneF, rescale);
            linalg::YieldOp::create(nb, nl, ValueRange{mNew, alpha});
          });
      Value mNew = update.getResult(0), alpha = update.getResult(1);
      // p = exp(s - m'), over s; a row that is all -inf so far subtracts 0
      // instead (its p are exp(-inf) = 0), never exp(-inf - -inf).
      Value probabilities = tb.generic(
          {mNew}, scores, {rowMap, tileMap}, parallel2,
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            Value zeroF = arith::ConstantOp::create(nb, nl,
                                                    nb.getF32FloatAttr(0));
            Value base = arith::SelectOp::create(
                nb, nl, isNegInfinity(nb, nl, args[0]), zeroF, args[0]);
            return math::ExpOp::create(
                nb, nl, arith::SubFOp::create(nb, nl, args[1], base));
          });
      // l' = l alpha + sum_j p.
      Value lScaled = tb.generic(
          {alpha}, lOld, {identity1, identity1}, {IteratorType::parallel},
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::MulFOp::create(nb, nl, args[1], args[0]);
          });
      Value lNew = tb.generic(
          {probabilities}, lScaled, {tileMap, rowMap}, rowReduction,
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::AddFOp::create(nb, nl, args[1], args[0]);
          });
      // FP8 values: P * ps rounded to E4M3, in place (l summed it unrounded).
      if (fp8Values)
        probabilities = tb.generic(
            {}, probabilities, {tileMap}, parallel2,
            [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
              Value scaled = arith::MulFOp::create(
                  nb, nl, args[0],
                  arith::ConstantOp::create(
                      nb, nl, nb.getF32FloatAttr(probabilityScale)));
              Value e4m3 = arith::TruncFOp::create(
                  nb, nl, nb.getType<Float8E4M3FNType>(), scaled);
              return arith::ExtFOp::create(nb, nl, nb.getF32Type(), e4m3);
            });
      // O' = O alpha + P V.
      Value accScaled = tb.generic(
          {alpha}, accOld, {rowMap, tileMap}, parallel2,
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::MulFOp::create(nb, nl, args[1], args[0]);
          });
      Value accNew = tb.contract(probabilities, values, accScaled, {0, 2},
                                 {2, 1}, {0, 1});
      return {mNew, lNew, accNew, alpha, probabilities};
    };

    // Full key tiles have the static size (they vectorize as contractions);
    // the causal diagonal inside one is the select above. The rest of the
    // keys, if any, is one more tile of dynamic size with its own scratch.
    Value numFullTiles =
        arith::DivUIOp::create(rewriter, loc, keyEnd, t.index(keyTile));
    Value scratchInit = tensor::EmptyOp::create(
        rewriter, loc,
        SmallVector<OpFoldResult>{rowsOfr, rewriter.getIndexAttr(keyTile)},
        rewriter.getF32Type());
    auto fullLoop = scf::ForOp::create(
        rewriter, loc, t.index(0), numFullTiles, t.index(1),
        ValueRange{mInit, lInit, accInit, alphaInit, scratchInit},
        [&](OpBuilder &b, Location l, Value keyTileIndex, ValueRange carried) {
          TileBuilder tb{b, l};
          Value k0 = tb.mul(keyTileIndex, tb.index(keyTile));
          scf::YieldOp::create(b, l,
                               keyTileStep(b, l, k0,
                                           b.getIndexAttr(keyTile), carried));
        });
    auto tailLoop = scf::ForOp::create(
        rewriter, loc, numFullTiles, numKeyTiles, t.index(1),
        ValueRange(fullLoop.getResults()).take_front(4),
        [&](OpBuilder &b, Location l, Value keyTileIndex, ValueRange carried) {
          TileBuilder tb{b, l};
          Value k0 = tb.mul(keyTileIndex, tb.index(keyTile));
          Value cols = tb.sub(keyEnd, k0);
          Value tailScratch = tensor::EmptyOp::create(
              b, l, SmallVector<OpFoldResult>{rowsOfr, cols}, b.getF32Type());
          SmallVector<Value> state(carried);
          state.push_back(tailScratch);
          SmallVector<Value> next = keyTileStep(b, l, k0, cols, state);
          next.pop_back();
          scf::YieldOp::create(b, l, next);
        });
    Value m = tailLoop.getResult(0), l = tailLoop.getResult(1),
          acc = tailLoop.getResult(2);

    // FP8 values: O times value_scale_inv[n, g] / ps first.
    Value valueFactor;
    if (fp8Values) {
      Value valueScaleInv = tensor::ExtractOp::create(
          rewriter, loc, adaptor.getValueScaleInv(), ValueRange{n, kvHead});
      valueFactor = arith::DivFOp::create(rewriter, loc, valueScaleInv,
                                          t.f32(probabilityScale));
    }
    // O / l rounded once; a fully masked row is 0 / 0 = NaN.
    Value outputTile = t.generic(
        {acc, l},
        tensor::EmptyOp::create(rewriter, loc,
                                SmallVector<OpFoldResult>{rowsOfr, valueDim},
                                element),
        {tileMap, rowMap, tileMap}, parallel2,
        [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          Value sum = args[0];
          if (valueFactor)
            sum = arith::MulFOp::create(nb, nl, sum, valueFactor);
          Value quotient = arith::DivFOp::create(nb, nl, sum, args[1]);
          if (element.isF32())
            return quotient;
          return arith::TruncFOp::create(nb, nl, element, quotient);
        });
    // lse = m + log(l): -inf for a fully masked row (l = 0).
    Value lseTile = t.generic(
        {m, l}, t.filled({rowsOfr}, 0.0f), {identity1, identity1, identity1},
        {utils::IteratorType::parallel},
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return arith::AddFOp::create(nb, nl, args[0],
                                       math::LogOp::create(nb, nl, args[1]));
        });

    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> strides4(4, one), strides3(3, one);
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, outputTile, body->getArgument(3),
        SmallVector<OpFoldResult>{n, h, q0, zero},
        SmallVector<OpFoldResult>{one, one, rowsOfr, valueDim}, strides4);
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, lseTile, body->getArgument(4),
        SmallVector<OpFoldResult>{n, h, q0},
        SmallVector<OpFoldResult>{one, one, rowsOfr}, strides3);

    rewriter.setInsertionPointAfter(forall);
    SmallVector<Value> results;
    auto castTo = [&](Value v, Type type) -> Value {
      if (v.getType() == type)
        return v;
      return tensor::CastOp::create(rewriter, loc, type, v);
    };
    results.push_back(castTo(forall.getResult(0), op.getOutput().getType()));
    if (Value lse = op.getLse())
      results.push_back(castTo(forall.getResult(1), lse.getType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

void mlir::fp8::populateFP8AttentionToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionOpLowering>(patterns.getContext());
}
