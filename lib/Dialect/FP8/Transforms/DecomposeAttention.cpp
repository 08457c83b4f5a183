//===- DecomposeAttention.cpp - fp8-decompose-attention -------------------===//
//
// fp8.attention back as the math it is defined by, on whole tensors: the
// scores, the softmax in f32 and P V as linalg.generics. It materializes the
// sq x sk scores, so it is the lowering for routes without a flash kernel
// (the GPU route today) and an independent reference for the CPU's flash
// lowering, not the fast path.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8DECOMPOSEATTENTION
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
using utils::IteratorType;

/// kv [b, hkv, s, d] as [b, hkv * g, s, d]: head h is kv head h / g.
Value repeatHeads(PatternRewriter &rewriter, Location loc, Value kv,
                  int64_t group) {
  auto type = cast<RankedTensorType>(kv.getType());
  MLIRContext *context = rewriter.getContext();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, kv);
  sizes.insert(sizes.begin() + 2, rewriter.getIndexAttr(group));
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {d(0), d(1), d(3), d(4)}, context),
      rewriter.getMultiDimIdentityMap(5)};
  Value repeated =
      linalg::GenericOp::create(
          rewriter, loc, empty.getType(), ValueRange{kv}, ValueRange{empty},
          maps, SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      rewriter, loc, repeated,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

struct DecomposeAttention : OpRewritePattern<AttentionOp> {
  DecomposeAttention(MLIRContext *context, bool roundProbabilities)
      : OpRewritePattern(context), roundProbabilities(roundProbabilities) {}

  /// E rounded to the element type (bf16 / f16) before l and E V, as
  /// FlashAttention does for its P V GEMM: E V on the 16-bit GEMM kernel,
  /// half the bytes of E. Off: E in f32, the op's exact semantics.
  bool roundProbabilities;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Value query = op.getQuery(), key = op.getKey(), value = op.getValue(),
          mask = op.getMask();
    auto queryType = cast<RankedTensorType>(query.getType());
    auto keyType = cast<RankedTensorType>(key.getType());
    // A constant group repeats K and V (below); otherwise the contractions
    // read K and V with tensor.extract at `h / group`.
    int64_t hq = queryType.getDimSize(1), hkv = keyType.getDimSize(1);
    std::optional<int64_t> group;
    if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv))
      group = hq / hkv;
    Value dynamicGroup;
    if (!group)
      dynamicGroup = arith::DivUIOp::create(
          rewriter, loc, tensor::DimOp::create(rewriter, loc, query, 1),
          tensor::DimOp::create(rewriter, loc, key, 1));
    // kv[n, h / group, row, col] for the loop dimensions `row` and `col`.
    auto extractKV = [&](OpBuilder &b, Location l, Value tensor, unsigned row,
                         unsigned col) -> Value {
      Value n = linalg::IndexOp::create(b, l, 0);
      Value h = linalg::IndexOp::create(b, l, 1);
      Value g = arith::DivUIOp::create(b, l, h, dynamicGroup);
      return tensor::ExtractOp::create(
          b, l, tensor,
          ValueRange{n, g, linalg::IndexOp::create(b, l, row),
                     linalg::IndexOp::create(b, l, col)});
    };

    // A static group: K and V repeated to hq heads first, [b, hkv, g, s, d]
    // collapsed, as graphs write GQA, so that both contractions are plain
    // batched GEMMs (the GPU route's kernels take no floordiv map).
    if (group && *group > 1) {
      key = repeatHeads(rewriter, loc, key, *group);
      value = repeatHeads(rewriter, loc, value, *group);
      group = 1;
    }

    Type f32 = rewriter.getF32Type();
    Type element = queryType.getElementType();
    const float negInfValue = -std::numeric_limits<float>::infinity();
    auto constant = [&](OpBuilder &b, Location l, float x) -> Value {
      return arith::ConstantOp::create(b, l, b.getF32FloatAttr(x));
    };
    auto widen = [&](OpBuilder &b, Location l, Value x) -> Value {
      return x.getType().isF32() ? x : arith::ExtFOp::create(b, l, f32, x);
    };

    // Sizes of [b, hq, sq, sk] and [b, hq, sq, dv].
    auto size = [&](Value tensor, int64_t d) {
      return tensor::getMixedSize(rewriter, loc, tensor, d);
    };
    SmallVector<OpFoldResult> scoreSizes = {size(query, 0), size(query, 1),
                                            size(query, 2), size(key, 2)};
    SmallVector<OpFoldResult> outSizes = {size(query, 0), size(query, 1),
                                          size(query, 2), size(value, 3)};
    auto filled = [&](ArrayRef<OpFoldResult> sizes, float x) -> Value {
      Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, f32);
      return linalg::FillOp::create(rewriter, loc, constant(rewriter, loc, x),
                                    empty)
          .getResult(0);
    };
    auto generic =
        [&](ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
            ArrayRef<IteratorType> iterators,
            function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
          return linalg::GenericOp::create(
                     rewriter, loc, init.getType(), inputs, init, maps,
                     iterators,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       linalg::YieldOp::create(b, l, body(b, l, args));
                     })
              .getResult(0);
        };

    AffineExpr n = getAffineDimExpr(0, context), h = getAffineDimExpr(1, context),
               i = getAffineDimExpr(2, context), x = getAffineDimExpr(3, context),
               y = getAffineDimExpr(4, context);
    AffineExpr kvHead = h.floorDiv(group.value_or(1));
    auto map = [&](unsigned dims, ArrayRef<AffineExpr> results) {
      return AffineMap::get(dims, 0, results, context);
    };
    auto par = IteratorType::parallel, red = IteratorType::reduction;

    // S[n, h, i, j] = sum_c q[n, h, i, c] k[n, h / group, j, c], in f32.
    AffineMap qMap = map(5, {n, h, i, y}), sMap = map(5, {n, h, i, x});
    auto iterators5 = {par, par, par, par, red};
    Value scores;
    auto multiplyAdd = [&](OpBuilder &b, Location l, Value a, Value c,
                           Value acc) -> Value {
      Value p = arith::MulFOp::create(b, l, widen(b, l, a), widen(b, l, c));
      return arith::AddFOp::create(b, l, acc, p);
    };
    if (group)
      scores = generic({query, key}, filled(scoreSizes, 0.0f),
                       {qMap, map(5, {n, kvHead, x, y}), sMap}, iterators5,
                       [&](OpBuilder &b, Location l, ValueRange a) {
                         return multiplyAdd(b, l, a[0], a[1], a[2]);
                       });
    else
      scores = generic({query}, filled(scoreSizes, 0.0f), {qMap, sMap},
                       iterators5, [&](OpBuilder &b, Location l, ValueRange a) {
                         Value k = extractKV(b, l, key, 3, 4);
                         return multiplyAdd(b, l, a[0], k, a[1]);
                       });

    // Scale, mask, causal mask of one score, recomputed where it is read
    // (the row max and E): no masked copy of the sq x sk scores.
    SmallVector<Value> inputs = {scores};
    AffineMap id4 = map(4, {n, h, i, x});
    SmallVector<AffineMap> maps = {id4};
    if (mask) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      SmallVector<AffineExpr> results;
      for (int64_t d = 0; d < 4; ++d)
        results.push_back(maskType.getDimSize(d) == 1
                              ? getAffineConstantExpr(0, context)
                              : getAffineDimExpr(d, context));
      inputs.push_back(mask);
      maps.push_back(map(4, results));
    }
    const float scale = op.getScale().convertToFloat();
    const bool causal = op.getCausal(), booleanMask = op.hasBooleanMask();
    const int64_t offset = op.getCausalOffset();
    // `a` starts with the score, then the mask's element when there is one.
    auto masked = [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value s = arith::MulFOp::create(b, l, a[0], constant(b, l, scale));
      Value negInf = constant(b, l, negInfValue);
      if (mask && booleanMask)
        s = arith::SelectOp::create(b, l, a[1], s, negInf);
      else if (mask)
        s = arith::AddFOp::create(b, l, s, widen(b, l, a[1]));
      if (causal) {
        Value row = linalg::IndexOp::create(b, l, 2);
        Value column = linalg::IndexOp::create(b, l, 3);
        Value last = arith::AddIOp::create(
            b, l, row, arith::ConstantIndexOp::create(b, l, offset));
        Value hidden = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::sgt, column, last);
        s = arith::SelectOp::create(b, l, hidden, negInf, s);
      }
      return s;
    };
    const size_t numMasked = inputs.size();

    // m = max_j s (NaN propagates, as in the written graph).
    SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(),
                                       scoreSizes.begin() + 3);
    AffineMap row4 = map(4, {n, h, i});
    SmallVector<AffineMap> maxMaps(maps);
    maxMaps.push_back(row4);
    Value rowMax = generic(
        inputs, filled(rowSizes, negInfValue), maxMaps, {par, par, par, red},
        [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::MaximumFOp::create(b, l, masked(b, l, a),
                                           a[numMasked])
              .getResult();
        });
    // E = exp(s - m): NaN on a fully masked row (-inf - -inf); rounded to
    // the element type when asked (then l sums the rounded values, so the
    // weights E / l of each row still sum to 1).
    const bool rounded = roundProbabilities && group && !element.isF32();
    Type expType = rounded ? element : f32;
    SmallVector<Value> expInputs(inputs);
    expInputs.push_back(rowMax);
    SmallVector<AffineMap> expMaps(maps);
    expMaps.append({row4, id4});
    Value exps = generic(
        expInputs, tensor::EmptyOp::create(rewriter, loc, scoreSizes, expType),
        expMaps, {par, par, par, par},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value d = arith::SubFOp::create(b, l, masked(b, l, a), a[numMasked]);
          Value e = math::ExpOp::create(b, l, d);
          return rounded ? arith::TruncFOp::create(b, l, element, e).getResult()
                         : e;
        });
    Value rowSum = generic({exps}, filled(rowSizes, 0.0f), {id4, row4},
                           {par, par, par, red},
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return arith::AddFOp::create(b, l, a[1],
                                                          widen(b, l, a[0]))
                                 .getResult();
                           });
    // O[n, h, i, c] = sum_j E[n, h, i, j] v[n, h / group, j, c], in f32.
    // With E in f32, V is widened first (an O(sk d) copy), so both operands
    // are f32: a contraction of one operand type, which the GPU route's GEMM
    // kernels take, where f32 x bf16 would be left to loops.
    AffineMap eMap = map(5, {n, h, i, y}), oMap = map(5, {n, h, i, x});
    Value weighted;
    if (group && !element.isF32() && !rounded) {
      SmallVector<OpFoldResult> valueSizes = tensor::getMixedSizes(
          rewriter, loc, value);
      AffineMap id4 = map(4, {n, h, i, x});
      value = generic({value},
                      tensor::EmptyOp::create(rewriter, loc, valueSizes, f32),
                      {id4, id4}, {par, par, par, par},
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        return widen(b, l, a[0]);
                      });
    }
    if (group)
      weighted = generic({exps, value}, filled(outSizes, 0.0f),
                         {eMap, map(5, {n, kvHead, y, x}), oMap}, iterators5,
                         [&](OpBuilder &b, Location l, ValueRange a) {
                           return multiplyAdd(b, l, a[0], a[1], a[2]);
                         });
    else
      weighted = generic({exps}, filled(outSizes, 0.0f), {eMap, oMap},
                         iterators5, [&](OpBuilder &b, Location l, ValueRange a) {
                           Value v = extractKV(b, l, value, 4, 3);
                           return multiplyAdd(b, l, a[0], v, a[1]);
                         });
    Value output = generic(
        {weighted, rowSum},
        tensor::EmptyOp::create(rewriter, loc, outSizes, element),
        {id4, row4, id4}, {par, par, par, par},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value o = arith::DivFOp::create(b, l, a[0], a[1]);
          if (element.isF32())
            return o;
          return arith::TruncFOp::create(b, l, element, o).getResult();
        });

    SmallVector<Value> results = {output};
    if (op.getLse()) {
      // The log of an empty sum is -inf: a fully masked row's m is -inf and
      // its l NaN, so m + log(l) would be NaN.
      AffineMap id3 = map(3, {n, h, i});
      results.push_back(generic(
          {rowMax, rowSum}, tensor::EmptyOp::create(rewriter, loc, rowSizes, f32),
          {id3, id3, id3}, {par, par, par},
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value negInf = constant(b, l, negInfValue);
            Value lse = arith::AddFOp::create(
                b, l, a[0], math::LogOp::create(b, l, a[1]));
            Value empty = arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::OEQ, a[0], negInf);
            return arith::SelectOp::create(b, l, empty, negInf, lse)
                .getResult();
          }));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct FP8DecomposeAttentionPass
    : fp8::impl::FP8DecomposeAttentionBase<FP8DecomposeAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFP8DecomposeAttentionPatterns(patterns, roundProbabilities);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::fp8::populateFP8DecomposeAttentionPatterns(
    RewritePatternSet &patterns, bool roundProbabilities) {
  patterns.add<DecomposeAttention>(patterns.getContext(), roundProbabilities);
}
