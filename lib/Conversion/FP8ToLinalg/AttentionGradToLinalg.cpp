//===- AttentionGradToLinalg.cpp - fp8.attention_grad by tiles ------------===//
//
// The backward of FlashAttention-2 on tensors, without atomics: one
// scf.forall over (batch, key/value head, tile of keys) accumulates dK and dV
// over the query tiles of every query head of the group, a second one over
// (batch, query head, tile of query rows) accumulates dQ over the key tiles.
// Both recompute, per [query tile, key tile] pair, P = exp(S - lse) and
// dS = P (dO V^T - D), with D = rowsum(dO O) computed once before them. The
// recomputation costs two of the seven tile GEMMs (FlashAttention-2 has five
// and adds dQ atomically); memory beyond the inputs and outputs is D and a
// few tiles per thread, never sq x sk. Causally masked tiles are skipped in
// both loops.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToLinalg/FP8ToLinalg.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "AttentionTiles.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::attention;

namespace {
using utils::IteratorType;

/// The rows of one query tile of head (n, h): Q, dO, lse and D.
struct QueryRows {
  Value query, gradOutput, lse, delta;
};

/// The keys of one key tile of kv head (n, g): K and V.
struct KeyRows {
  Value key, value;
};

struct AttentionGradOpLowering : OpConversionPattern<AttentionGradOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    TileBuilder t{rewriter, loc};
    MLIRContext *context = rewriter.getContext();
    Value query = adaptor.getQuery(), key = adaptor.getKey(),
          value = adaptor.getValue(), output = adaptor.getOutput(),
          gradOutput = adaptor.getGradOutput(), lse = adaptor.getLse();
    Type element = cast<RankedTensorType>(query.getType()).getElementType();
    const ScoreModifiers modifiers = ScoreModifiers::of(op, adaptor.getMask());
    const float scale = modifiers.scale;

    AttentionSizes sizes(t, query, key, value);
    // Plain copies: lambdas below capture them (C++17 cannot capture
    // structured bindings).
    Value batch = sizes.batch, queryHeads = sizes.queryHeads,
          queryLength = sizes.queryLength, keyHeads = sizes.keyHeads,
          keyLength = sizes.keyLength, group = sizes.group;
    OpFoldResult headDim = sizes.headDim, valueDim = sizes.valueDim;
    const int64_t queryTile = sizes.queryTile, keyTile = sizes.keyTile;
    OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);

    AffineExpr i = getAffineDimExpr(0, context), j = getAffineDimExpr(1, context);
    AffineMap rowMap = AffineMap::get(2, 0, {i}, context);
    AffineMap tileMap = AffineMap::get(2, 0, {i, j}, context);
    SmallVector<IteratorType> parallel2(2, IteratorType::parallel);

    // D = rowsum(dO O) in f32, [b, hq, sq]: what the softmax's backward
    // subtracts, once for all the tiles that need it.
    SmallVector<OpFoldResult> rowSizes =
        tensor::getMixedSizes(rewriter, loc, query);
    rowSizes.pop_back();
    Value delta;
    {
      MLIRContext *ctx = context;
      auto d = [&](unsigned k) { return getAffineDimExpr(k, ctx); };
      AffineMap all = AffineMap::getMultiDimIdentityMap(4, ctx);
      AffineMap rows = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
      delta = t.generic(
          {gradOutput, output}, t.filled(rowSizes, 0.0f), {all, all, rows},
          {IteratorType::parallel, IteratorType::parallel,
           IteratorType::parallel, IteratorType::reduction},
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            Value product = arith::MulFOp::create(
                nb, nl, widen(nb, nl, args[0]), widen(nb, nl, args[1]));
            return arith::AddFOp::create(nb, nl, args[2], product);
          });
    }

    // The rows of a query tile, and the keys of a key tile.
    auto queryRows = [&](TileBuilder &tb, Value n, Value h, Value q0,
                         OpFoldResult rows) {
      return QueryRows{
          tb.slice2d(query, {n, h, q0, zero}, {one, one, rows, headDim}),
          tb.slice2d(gradOutput, {n, h, q0, zero}, {one, one, rows, valueDim}),
          tb.slice(lse, {n, h, q0}, {one, one, rows}, 1),
          tb.slice(delta, {n, h, q0}, {one, one, rows}, 1)};
    };
    auto keyRows = [&](TileBuilder &tb, Value n, Value g, Value k0,
                       OpFoldResult cols) {
      return KeyRows{
          tb.slice2d(key, {n, g, k0, zero}, {one, one, cols, headDim}),
          tb.slice2d(value, {n, g, k0, zero}, {one, one, cols, valueDim})};
    };

    // P = exp(S - lse) into `pScratch` and dS = P (dO V^T - D) into
    // `dsScratch`, both [rows, cols] f32, for the tile `where`.
    auto recompute = [&](TileBuilder &tb, const ScoreTile &where,
                         const QueryRows &q, const KeyRows &k, Value pScratch,
                         Value dsScratch) -> std::pair<Value, Value> {
      Value products = tb.contract(q.query, k.key, tb.fill(pScratch, 0.0f),
                                   {0, 2}, {1, 2}, {0, 1});
      Value scores = modifiers.apply(tb, where, products);
      Value p = tb.generic(
          {q.lse}, scores, {rowMap, tileMap}, parallel2,
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return math::ExpOp::create(
                nb, nl, arith::SubFOp::create(nb, nl, args[1], args[0]));
          });
      Value dp = tb.contract(q.gradOutput, k.value, tb.fill(dsScratch, 0.0f),
                             {0, 2}, {1, 2}, {0, 1});
      Value ds = tb.generic(
          {p, q.delta}, dp, {tileMap, rowMap, tileMap}, parallel2,
          [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            return arith::MulFOp::create(
                nb, nl, args[0],
                arith::SubFOp::create(nb, nl, args[2], args[1]));
          });
      return {p, ds};
    };

    // acc * factor rounded to the element type, once.
    auto rounded = [&](TileBuilder &tb, Value acc, float factor,
                     ArrayRef<OpFoldResult> sizes) {
      Value init = tensor::EmptyOp::create(tb.b, tb.loc, sizes, element);
      return tb.generic(
          {acc}, init, {tileMap, tileMap}, parallel2,
          [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
            Value x = args[0];
            if (factor != 1.0f)
              x = arith::MulFOp::create(
                  nb, nl, x,
                  arith::ConstantOp::create(nb, nl,
                                            nb.getF32FloatAttr(factor)));
            if (element.isF32())
              return x;
            return arith::TruncFOp::create(nb, nl, element, x);
          });
    };

    // Tiles from `first` to `end` of `length` in `tile`s: the full ones at
    // the static size, then the tail, if any, at its dynamic size with its
    // own [rows, cols] scratch. `step(b, l, start, size, state)` returns the
    // updated state; state[scratchAt..] are scratches of the full tiles'
    // shape, made by `scratch(size)` for the tail.
    auto tileLoops =
        [&](Value first, Value end, int64_t tile, ValueRange init,
            unsigned scratches,
            function_ref<Value(OpBuilder &, Location, OpFoldResult)> scratch,
            function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                            OpFoldResult, ValueRange)>
                step) -> SmallVector<Value> {
      Value numFull = arith::DivUIOp::create(rewriter, loc, end, t.index(tile));
      Value numTiles =
          arith::CeilDivUIOp::create(rewriter, loc, end, t.index(tile));
      auto full = scf::ForOp::create(
          rewriter, loc, first, numFull, t.index(1), init,
          [&](OpBuilder &b, Location l, Value index, ValueRange carried) {
            TileBuilder tb{b, l};
            scf::YieldOp::create(
                b, l,
                step(b, l, tb.mul(index, tb.index(tile)), b.getIndexAttr(tile),
                     carried));
          });
      unsigned kept = init.size() - scratches;
      Value tailStart = arith::MaxUIOp::create(rewriter, loc, first, numFull);
      auto tail = scf::ForOp::create(
          rewriter, loc, tailStart, numTiles, t.index(1),
          ValueRange(full.getResults()).take_front(kept),
          [&](OpBuilder &b, Location l, Value index, ValueRange carried) {
            TileBuilder tb{b, l};
            Value start = tb.mul(index, tb.index(tile));
            Value size = tb.sub(end, start);
            SmallVector<Value> state(carried);
            for (unsigned s = 0; s < scratches; ++s)
              state.push_back(scratch(b, l, size));
            SmallVector<Value> next = step(b, l, start, size, state);
            next.resize(kept);
            scf::YieldOp::create(b, l, next);
          });
      SmallVector<Value> results(tail.getResults());
      llvm::append_range(results,
                         ValueRange(full.getResults()).drop_front(kept));
      return results;
    };

    // ---- dK and dV: per key tile, over every query row that sees it. ----
    std::optional<int64_t> staticKeyTile = AttentionSizes::staticTile(
        cast<RankedTensorType>(key.getType()).getDimSize(2), keyTile);
    SmallVector<OpFoldResult> keySizes =
        tensor::getMixedSizes(rewriter, loc, key);
    SmallVector<OpFoldResult> valueSizes =
        tensor::getMixedSizes(rewriter, loc, value);
    Value numKeyTiles =
        arith::CeilDivUIOp::create(rewriter, loc, keyLength, t.index(keyTile));
    auto keyForall = scf::ForallOp::create(
        rewriter, loc,
        SmallVector<OpFoldResult>{batch, keyHeads, numKeyTiles},
        ValueRange{tensor::EmptyOp::create(rewriter, loc, keySizes, element),
                   tensor::EmptyOp::create(rewriter, loc, valueSizes, element)},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = keyForall.getBody();
      rewriter.setInsertionPoint(body->getTerminator());
      Value n = body->getArgument(0), g = body->getArgument(1),
            k0 = t.mul(body->getArgument(2), t.index(keyTile));
      Value cols = arith::MinUIOp::create(rewriter, loc, t.index(keyTile),
                                          t.sub(keyLength, k0));
      OpFoldResult colsOfr = t.fold(cols, staticKeyTile);
      KeyRows keys = keyRows(t, n, g, k0, colsOfr);
      // Causal: row i sees key k0 from i = k0 - offset on; tiles before the
      // one holding that row see none of these keys.
      Value firstTile = t.index(0);
      if (modifiers.causal) {
        Value firstRow = arith::MaxSIOp::create(
            rewriter, loc, t.sub(k0, t.index(modifiers.causalOffset)),
            t.index(0));
        firstTile = arith::DivUIOp::create(rewriter, loc, firstRow,
                                           t.index(queryTile));
      }
      auto scratchOf = [&](OpBuilder &b, Location l, OpFoldResult rows) {
        return tensor::EmptyOp::create(b, l,
                                       SmallVector<OpFoldResult>{rows, colsOfr},
                                       b.getF32Type())
            .getResult();
      };
      Value pScratch = scratchOf(rewriter, loc, rewriter.getIndexAttr(queryTile));
      Value dsScratch = scratchOf(rewriter, loc, rewriter.getIndexAttr(queryTile));
      auto heads = scf::ForOp::create(
          rewriter, loc, t.index(0), group, t.index(1),
          ValueRange{t.filled({colsOfr, headDim}, 0.0f),
                     t.filled({colsOfr, valueDim}, 0.0f), pScratch, dsScratch},
          [&](OpBuilder &b, Location l, Value hh, ValueRange carried) {
            TileBuilder tb{b, l};
            Value h = tb.add(tb.mul(g, group), hh);
            auto step = [&](OpBuilder &sb, Location sl, Value q0,
                            OpFoldResult rows,
                            ValueRange state) -> SmallVector<Value> {
              TileBuilder st{sb, sl};
              QueryRows q = queryRows(st, n, h, q0, rows);
              auto [p, ds] = recompute(st, {n, h, q0, k0, rows, colsOfr}, q,
                                       keys, state[2], state[3]);
              // dV += P^T dO and dK += dS^T Q over the loops (key, c, row).
              Value dv = st.contract(p, q.gradOutput, state[1], {2, 0}, {2, 1},
                                     {0, 1});
              Value dk =
                  st.contract(ds, q.query, state[0], {2, 0}, {2, 1}, {0, 1});
              return {dk, dv, p, ds};
            };
            OpBuilder::InsertionGuard inner(rewriter);
            rewriter.setInsertionPoint(b.getInsertionBlock(),
                                       b.getInsertionPoint());
            SmallVector<Value> next =
                tileLoops(firstTile, queryLength, queryTile, carried, 2,
                          scratchOf, step);
            scf::YieldOp::create(b, l, next);
          });
      Value gradKey = rounded(t, heads.getResult(0), scale, {colsOfr, headDim});
      Value gradValue = rounded(t, heads.getResult(1), 1.0f, {colsOfr, valueDim});
      rewriter.setInsertionPointToStart(keyForall.getTerminator().getBody());
      SmallVector<OpFoldResult> strides(4, one);
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, gradKey, body->getArgument(3),
          SmallVector<OpFoldResult>{n, g, k0, zero},
          SmallVector<OpFoldResult>{one, one, colsOfr, headDim}, strides);
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, gradValue, body->getArgument(4),
          SmallVector<OpFoldResult>{n, g, k0, zero},
          SmallVector<OpFoldResult>{one, one, colsOfr, valueDim}, strides);
    }

    // ---- dQ: per query tile, over the keys it sees. ----
    std::optional<int64_t> staticQueryTile = AttentionSizes::staticTile(
        cast<RankedTensorType>(query.getType()).getDimSize(2), queryTile);
    Value numQueryTiles = arith::CeilDivUIOp::create(rewriter, loc, queryLength,
                                                     t.index(queryTile));
    SmallVector<OpFoldResult> querySizes =
        tensor::getMixedSizes(rewriter, loc, query);
    auto queryForall = scf::ForallOp::create(
        rewriter, loc,
        SmallVector<OpFoldResult>{batch, queryHeads, numQueryTiles},
        ValueRange{tensor::EmptyOp::create(rewriter, loc, querySizes, element)},
        std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      Block *body = queryForall.getBody();
      rewriter.setInsertionPoint(body->getTerminator());
      Value n = body->getArgument(0), h = body->getArgument(1),
            q0 = t.mul(body->getArgument(2), t.index(queryTile));
      Value kvHead = arith::DivUIOp::create(rewriter, loc, h, group);
      Value rows = arith::MinUIOp::create(rewriter, loc, t.index(queryTile),
                                          t.sub(queryLength, q0));
      OpFoldResult rowsOfr = t.fold(rows, staticQueryTile);
      QueryRows q = queryRows(t, n, h, q0, rowsOfr);
      // Keys past the diagonal of the tile's last row are masked for all.
      Value keyEnd = keyLength;
      if (modifiers.causal)
        keyEnd = arith::MinSIOp::create(
            rewriter, loc,
            t.add(t.add(q0, rows), t.index(modifiers.causalOffset)),
            keyLength);
      auto scratchOf = [&](OpBuilder &b, Location l, OpFoldResult cols) {
        return tensor::EmptyOp::create(b, l,
                                       SmallVector<OpFoldResult>{rowsOfr, cols},
                                       b.getF32Type())
            .getResult();
      };
      auto step = [&](OpBuilder &b, Location l, Value k0, OpFoldResult cols,
                      ValueRange state) -> SmallVector<Value> {
        TileBuilder tb{b, l};
        KeyRows keys = keyRows(tb, n, kvHead, k0, cols);
        auto [p, ds] = recompute(tb, {n, h, q0, k0, rowsOfr, cols}, q, keys,
                                 state[1], state[2]);
        // dQ += dS K over the loops (row, c, key).
        Value dq = tb.contract(ds, keys.key, state[0], {0, 2}, {2, 1}, {0, 1});
        return {dq, p, ds};
      };
      Value keyScratch = scratchOf(rewriter, loc, rewriter.getIndexAttr(keyTile));
      SmallVector<Value> loops = tileLoops(
          t.index(0), keyEnd, keyTile,
          {t.filled({rowsOfr, headDim}, 0.0f), keyScratch,
           scratchOf(rewriter, loc, rewriter.getIndexAttr(keyTile))},
          2, scratchOf, step);
      Value gradQuery = rounded(t, loops[0], scale, {rowsOfr, headDim});
      rewriter.setInsertionPointToStart(queryForall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(
          rewriter, loc, gradQuery, body->getArgument(3),
          SmallVector<OpFoldResult>{n, h, q0, zero},
          SmallVector<OpFoldResult>{one, one, rowsOfr, headDim},
          SmallVector<OpFoldResult>(4, one));
    }

    auto castTo = [&](Value v, Type type) -> Value {
      if (v.getType() == type)
        return v;
      return tensor::CastOp::create(rewriter, loc, type, v);
    };
    rewriter.replaceOp(
        op, {castTo(queryForall.getResult(0), op.getGradQuery().getType()),
             castTo(keyForall.getResult(0), op.getGradKey().getType()),
             castTo(keyForall.getResult(1), op.getGradValue().getType())});
    return success();
  }
};
} // namespace

void mlir::fp8::populateFP8AttentionGradToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<AttentionGradOpLowering>(patterns.getContext());
}
