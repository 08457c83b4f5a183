//===- DecomposeAttention.cpp - fp8-decompose-attention -------------------===//
//
// fp8.attention and fp8.attention_grad back as the math they are defined
// by, on whole tensors: the scores, the softmax (or the probabilities
// recomputed from lse) in f32 and the contractions as linalg.generics. They
// materialize the sq x sk scores, so this is the lowering for routes
// without a flash kernel (the GPU route today) and an independent reference
// for the CPU's flash lowering, not the fast path.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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
          maps,
          SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      rewriter, loc, repeated,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// What the forward and the backward decompositions share, for one op: the
/// key/value head of each query head, generics on whole tensors, the two
/// contraction shapes against K or V, and the scaled, masked score.
///
/// A constant head group repeats K and V to hq heads first ([b, hkv, g, s,
/// d] collapsed, as graphs write GQA), so that the contractions are plain
/// batched GEMMs (the GPU route's kernels take no floordiv map); otherwise
/// the contractions read K and V with tensor.extract at `h / group`.
class AttentionMath {
public:
  template <typename OpTy>
  AttentionMath(PatternRewriter &rewriter, OpTy op)
      : rewriter(rewriter), loc(op.getLoc()), context(rewriter.getContext()),
        f32(rewriter.getF32Type()), query(op.getQuery()), key(op.getKey()),
        mask(op.getMask()), scale(op.getScale().convertToFloat()),
        causal(op.getCausal()), booleanMask(op.hasBooleanMask()),
        offset(op.getCausalOffset()) {
    int64_t hq = cast<RankedTensorType>(query.getType()).getDimSize(1),
            hkv = cast<RankedTensorType>(key.getType()).getDimSize(1);
    if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv))
      group = hq / hkv;
    else
      dynamicGroup = arith::DivUIOp::create(
          rewriter, loc, tensor::DimOp::create(rewriter, loc, query, 1),
          tensor::DimOp::create(rewriter, loc, key, 1));
  }

  PatternRewriter &rewriter;
  Location loc;
  MLIRContext *context;
  Type f32;
  Value query, key, mask;
  float scale;
  bool causal, booleanMask;
  int64_t offset;
  /// The query heads per key/value head, when constant.
  std::optional<int64_t> group;
  /// hq / hkv computed at run time, when the group is not constant.
  Value dynamicGroup;

  static constexpr float negInfValue = -std::numeric_limits<float>::infinity();
  const IteratorType par = IteratorType::parallel,
                     red = IteratorType::reduction;

  AffineExpr dim(unsigned i) const { return getAffineDimExpr(i, context); }
  AffineMap map(unsigned dims, ArrayRef<AffineExpr> results) const {
    return AffineMap::get(dims, 0, results, context);
  }
  /// [n, h, i, j] and [n, h, i] of a 4-d loop nest over the scores.
  AffineMap id4() const { return map(4, {dim(0), dim(1), dim(2), dim(3)}); }
  AffineMap row4() const { return map(4, {dim(0), dim(1), dim(2)}); }

  OpFoldResult size(Value tensor, int64_t d) const {
    return tensor::getMixedSize(rewriter, loc, tensor, d);
  }
  /// [b, hq, sq, sk], the scores' sizes.
  SmallVector<OpFoldResult> scoreSizes() const {
    return {size(query, 0), size(query, 1), size(query, 2), size(key, 2)};
  }

  /// kv as read by query head h: repeated to hq heads for a constant group.
  Value repeated(Value kv) const {
    return group && *group > 1 ? repeatHeads(rewriter, loc, kv, *group) : kv;
  }

  static Value constant(OpBuilder &b, Location l, float x) {
    return arith::ConstantOp::create(b, l, b.getF32FloatAttr(x));
  }
  Value widen(OpBuilder &b, Location l, Value x) const {
    return x.getType().isF32() ? x : arith::ExtFOp::create(b, l, f32, x);
  }
  /// f32 x rounded (to nearest even) to `element`.
  static Value narrow(OpBuilder &b, Location l, Value x, Type element) {
    return element.isF32() ? x : arith::TruncFOp::create(b, l, element, x);
  }
  /// f32 x [n, h, s, c] times its per-token scale [n, h, s].
  Value dequantize(Value x, Value scaleInv) const {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<OpFoldResult> sizes = {size(x, 0), size(x, 1), size(x, 2),
                                       size(x, 3)};
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes, f32);
    return linalg::GenericOp::create(
               rewriter, loc, init.getType(), ValueRange{x, scaleInv}, init,
               ArrayRef<AffineMap>{map(4, {dim(0), dim(1), dim(2), dim(3)}),
                                   map(4, {dim(0), dim(1), dim(2)}),
                                   map(4, {dim(0), dim(1), dim(2), dim(3)})},
               SmallVector<IteratorType>(type.getRank(), par),
               [&](OpBuilder &b, Location l, ValueRange args) {
                 Value wide = widen(b, l, args[0]);
                 linalg::YieldOp::create(
                     b, l, ValueRange{arith::MulFOp::create(b, l, wide,
                                                            args[1])});
               })
        .getResult(0);
  }

  /// acc + x * y in f32.
  Value multiplyAdd(OpBuilder &b, Location l, Value x, Value y,
                    Value acc) const {
    return arith::AddFOp::create(
        b, l, acc, arith::MulFOp::create(b, l, widen(b, l, x), widen(b, l, y)));
  }

  Value empty(ArrayRef<OpFoldResult> sizes, Type type) const {
    return tensor::EmptyOp::create(rewriter, loc, sizes, type);
  }
  Value filled(ArrayRef<OpFoldResult> sizes, float x) const {
    return linalg::FillOp::create(rewriter, loc, constant(rewriter, loc, x),
                                  empty(sizes, f32))
        .getResult(0);
  }
  Value
  generic(ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
          ArrayRef<IteratorType> iterators,
          function_ref<Value(OpBuilder &, Location, ValueRange)> body) const {
    return linalg::GenericOp::create(
               rewriter, loc, init.getType(), inputs, init, maps, iterators,
               [&](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(b, l, body(b, l, args));
               })
        .getResult(0);
  }
  /// `body` on each element of x, into a tensor of `element`.
  Value
  elementwise(Value x, Type element,
              function_ref<Value(OpBuilder &, Location, Value)> body) const {
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    AffineMap id = rewriter.getMultiDimIdentityMap(rank);
    return generic(x, empty(tensor::getMixedSizes(rewriter, loc, x), element),
                   {id, id}, SmallVector<IteratorType>(rank, par),
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     return body(b, l, a[0]);
                   });
  }
  /// x [..] in f32: widened elementwise unless it is.
  Value widened(Value x) const {
    if (cast<RankedTensorType>(x.getType()).getElementType().isF32())
      return x;
    return elementwise(x, f32, [&](OpBuilder &b, Location l, Value v) {
      return widen(b, l, v);
    });
  }

  /// out[n, h, i, x] = sum_y a[n, h, i, y] kv[n, h / group, x, y] in f32
  /// (S = Q K^T, dP = dO V^T), kv repeated for a constant group.
  Value contractRows(Value a, Value kv) const {
    SmallVector<OpFoldResult> sizes = {size(a, 0), size(a, 1), size(a, 2),
                                       size(kv, 2)};
    return contract(a, kv, sizes, /*kvRow=*/3, /*kvCol=*/4);
  }
  /// out[n, h, i, x] = sum_y p[n, h, i, y] kv[n, h / group, y, x] in f32
  /// (O = E V, dQ = dS K), kv repeated for a constant group.
  Value contractKeys(Value p, Value kv) const {
    SmallVector<OpFoldResult> sizes = {size(p, 0), size(p, 1), size(p, 2),
                                       size(kv, 3)};
    return contract(p, kv, sizes, /*kvRow=*/4, /*kvCol=*/3);
  }

  /// The operands of the masked score's generics: the scores, then the mask
  /// when there is one; `maskedMaps` are their 4-d maps.
  SmallVector<Value> maskedInputs(Value scores) const {
    SmallVector<Value> inputs = {scores};
    if (mask)
      inputs.push_back(mask);
    return inputs;
  }
  SmallVector<AffineMap> maskedMaps() const {
    SmallVector<AffineMap> maps = {id4()};
    if (!mask)
      return maps;
    auto maskType = cast<RankedTensorType>(mask.getType());
    SmallVector<AffineExpr> results;
    for (int64_t d = 0; d < 4; ++d)
      results.push_back(maskType.getDimSize(d) == 1
                            ? getAffineConstantExpr(0, context)
                            : dim(d));
    maps.push_back(map(4, results));
    return maps;
  }
  /// How many block arguments `masked` reads.
  size_t numMasked() const { return mask ? 2 : 1; }
  /// Scale, mask, causal mask of one score, recomputed where it is read: no
  /// masked copy of the sq x sk scores. `a` starts with the score, then the
  /// mask's element when there is one.
  Value masked(OpBuilder &b, Location l, ValueRange a) const {
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
      Value hidden =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, column, last);
      s = arith::SelectOp::create(b, l, hidden, negInf, s);
    }
    return s;
  }

  /// exp(s - shift[n, h, i]) of each masked score s, rounded to `type`:
  /// the forward's E (shift = the row max) and the backward's P (shift =
  /// lse). A fully masked row gives NaN (-inf - -inf), a masked score 0.
  Value shiftedExp(Value scores, Value shift, Type type) const {
    SmallVector<Value> inputs = maskedInputs(scores);
    inputs.push_back(shift);
    SmallVector<AffineMap> maps = maskedMaps();
    maps.append({row4(), id4()});
    return generic(inputs, empty(scoreSizes(), type), maps,
                   {par, par, par, par},
                   [&](OpBuilder &b, Location l, ValueRange a) {
                     Value d = arith::SubFOp::create(b, l, masked(b, l, a),
                                                     a[numMasked()]);
                     return narrow(b, l, math::ExpOp::create(b, l, d), type);
                   });
  }

private:
  /// out[n, h, i, x] = sum_y a[n, h, i, y] kv[n, h / group, kvRow, kvCol]
  /// over the loops (n, h, i, x, y); kvRow and kvCol are loop dimensions.
  Value contract(Value a, Value kv, ArrayRef<OpFoldResult> sizes,
                 unsigned kvRow, unsigned kvCol) const {
    AffineMap aMap = map(5, {dim(0), dim(1), dim(2), dim(4)}),
              outMap = map(5, {dim(0), dim(1), dim(2), dim(3)});
    SmallVector<IteratorType> iterators = {par, par, par, par, red};
    if (group)
      return generic(
          {a, kv}, filled(sizes, 0.0f),
          {aMap, map(5, {dim(0), dim(1), dim(kvRow), dim(kvCol)}), outMap},
          iterators, [&](OpBuilder &b, Location l, ValueRange x) {
            return multiplyAdd(b, l, x[0], x[1], x[2]);
          });
    return generic({a}, filled(sizes, 0.0f), {aMap, outMap}, iterators,
                   [&](OpBuilder &b, Location l, ValueRange x) {
                     Value n = linalg::IndexOp::create(b, l, 0);
                     Value h = linalg::IndexOp::create(b, l, 1);
                     Value g = arith::DivUIOp::create(b, l, h, dynamicGroup);
                     Value v = tensor::ExtractOp::create(
                         b, l, kv,
                         ValueRange{n, g, linalg::IndexOp::create(b, l, kvRow),
                                    linalg::IndexOp::create(b, l, kvCol)});
                     return multiplyAdd(b, l, x[0], v, x[1]);
                   });
  }
};

/// FP8 probabilities (fp8.attention with an FP8 value): the weights of
/// P V, w[j] = e4m3(exp(s[j] - M[t(j)]) * ps) * exp(M[t(j)] - m), with M[t]
/// the running max through key tile t of block_k keys. The masked scores
/// are padded with -inf to whole tiles, their tile maxima taken and a prefix
/// max over the tiles (sq x (sk / block_k)^2 work) gives M.
static Value fp8ValueWeights(AttentionMath &attn, AttentionOp op,
                             Value scores, Value rowMax) {
  PatternRewriter &rewriter = attn.rewriter;
  Location loc = attn.loc;
  Type f32 = attn.f32;
  const int64_t blockK = *op.getBlockK();
  const float probabilityScale = op.getProbabilityScale()->convertToFloat();
  auto par = attn.par, red = attn.red;
  auto dim = [&](unsigned i) { return attn.dim(i); };

  // s, masked and scaled, once.
  SmallVector<OpFoldResult> scoreSizes = attn.scoreSizes();
  SmallVector<AffineMap> maps = attn.maskedMaps();
  maps.push_back(attn.id4());
  Value masked = attn.generic(
      attn.maskedInputs(scores), attn.empty(scoreSizes, f32), maps,
      {par, par, par, par}, [&](OpBuilder &b, Location l, ValueRange a) {
        return attn.masked(b, l, a);
      });

  // [b, hq, sq, T, block_k], -inf past the last key.
  Value keys = getValueOrCreateConstantIndexOp(rewriter, loc, scoreSizes[3]);
  Value block = arith::ConstantIndexOp::create(rewriter, loc, blockK);
  Value tiles = arith::CeilDivUIOp::create(rewriter, loc, keys, block);
  Value padding = arith::SubIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, tiles, block), keys);
  OpFoldResult zero = rewriter.getIndexAttr(0);
  Value padded = tensor::PadOp::create(
      rewriter, loc, /*resultType=*/Type(), masked,
      SmallVector<OpFoldResult>(4, zero),
      SmallVector<OpFoldResult>{zero, zero, zero, padding},
      AttentionMath::constant(rewriter, loc, AttentionMath::negInfValue));
  SmallVector<OpFoldResult> tiledSizes(scoreSizes.begin(),
                                       scoreSizes.begin() + 3);
  tiledSizes.append({tiles, rewriter.getIndexAttr(blockK)});
  auto staticSizes = [](ArrayRef<OpFoldResult> sizes) {
    return llvm::map_to_vector(sizes, [](OpFoldResult size) {
      std::optional<int64_t> constant = getConstantIntValue(size);
      return constant ? *constant : ShapedType::kDynamic;
    });
  };
  Value tiled = tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(staticSizes(tiledSizes), f32),
      padded, SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}},
      tiledSizes);

  // Each tile's max, then the running max M[t] = max_{u <= t} tileMax[u].
  SmallVector<OpFoldResult> tileSizes(tiledSizes.begin(),
                                      tiledSizes.begin() + 4);
  AffineMap tile5 = attn.map(5, {dim(0), dim(1), dim(2), dim(3)});
  Value tileMax = attn.generic(
      tiled, attn.filled(tileSizes, AttentionMath::negInfValue),
      {rewriter.getMultiDimIdentityMap(5), tile5}, {par, par, par, par, red},
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::MaximumFOp::create(b, l, a[1], a[0]);
      });
  Value runningMax = attn.generic(
      tileMax, attn.filled(tileSizes, AttentionMath::negInfValue),
      {attn.map(5, {dim(0), dim(1), dim(2), dim(4)}), tile5},
      {par, par, par, par, red},
      [](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value earlier = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::ule, linalg::IndexOp::create(b, l, 4),
            linalg::IndexOp::create(b, l, 3));
        Value max = arith::MaximumFOp::create(b, l, a[1], a[0]);
        return arith::SelectOp::create(b, l, earlier, max, a[1]);
      });

  return attn.generic(
      {masked, rowMax}, attn.empty(scoreSizes, f32),
      {attn.id4(), attn.row4(), attn.id4()}, {par, par, par, par},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        SmallVector<Value> at = {
            linalg::IndexOp::create(b, l, 0), linalg::IndexOp::create(b, l, 1),
            linalg::IndexOp::create(b, l, 2),
            arith::DivUIOp::create(
                b, l, linalg::IndexOp::create(b, l, 3),
                arith::ConstantIndexOp::create(b, l, blockK))};
        Value tileRunningMax = tensor::ExtractOp::create(b, l, runningMax, at);
        // Keys before any visible one: p = 0, never exp(-inf - -inf).
        Value zeroF = AttentionMath::constant(b, l, 0.0f);
        Value base = arith::SelectOp::create(
            b, l,
            arith::CmpFOp::create(
                b, l, arith::CmpFPredicate::OEQ, tileRunningMax,
                AttentionMath::constant(b, l, AttentionMath::negInfValue)),
            zeroF, tileRunningMax);
        Value p = math::ExpOp::create(b, l,
                                      arith::SubFOp::create(b, l, a[0], base));
        Value scaled = arith::MulFOp::create(
            b, l, p, AttentionMath::constant(b, l, probabilityScale));
        Value e4m3 = arith::TruncFOp::create(
            b, l, b.getType<Float8E4M3FNType>(), scaled);
        Value p8 = arith::ExtFOp::create(b, l, f32, e4m3);
        Value rescale = math::ExpOp::create(
            b, l, arith::SubFOp::create(b, l, tileRunningMax, a[1]));
        return arith::MulFOp::create(b, l, p8, rescale);
      });
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
    // One that convert-fp8-attention-to-wgmma gave a flash kernel.
    if (op->hasAttr("fp8.wgmma_kernel"))
      return rewriter.notifyMatchFailure(op, "runs on its flash kernel");
    AttentionMath attn(rewriter, op);
    // FP8 scores: the query and key dequantized first (exact for the
    // power-of-two scales fp8-quantize makes; the op multiplies the sums).
    if (op.hasFP8Scores()) {
      attn.query = attn.dequantize(op.getQuery(), op.getQueryScaleInv());
      attn.key = attn.dequantize(op.getKey(), op.getKeyScaleInv());
    }
    Value key = attn.repeated(attn.key),
          value = attn.repeated(op.getValue());
    Type f32 = attn.f32;
    Type element =
        cast<RankedTensorType>(op.getValue().getType()).getElementType();
    Type outputElement = op.getOutput().getType().getElementType();
    auto par = attn.par, red = attn.red;
    AffineMap id4 = attn.id4(), row4 = attn.row4();

    Value scores = attn.contractRows(attn.query, key);
    SmallVector<Value> inputs = attn.maskedInputs(scores);
    SmallVector<AffineMap> maps = attn.maskedMaps();
    const size_t numMasked = attn.numMasked();

    // m = max_j s (NaN propagates, as in the written graph).
    SmallVector<OpFoldResult> scoreSizes = attn.scoreSizes();
    SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(),
                                       scoreSizes.begin() + 3);
    SmallVector<AffineMap> maxMaps(maps);
    maxMaps.push_back(row4);
    Value rowMax = attn.generic(
        inputs, attn.filled(rowSizes, AttentionMath::negInfValue), maxMaps,
        {par, par, par, red}, [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::MaximumFOp::create(b, l, attn.masked(b, l, a),
                                           a[numMasked])
              .getResult();
        });
    // E = exp(s - m): NaN on a fully masked row (-inf - -inf); rounded to
    // the element type when asked (then l sums the rounded values, so the
    // weights E / l of each row still sum to 1).
    const bool fp8Values = op.hasFP8Values();
    const bool rounded =
        roundProbabilities && attn.group && !element.isF32() && !fp8Values;
    Value exps = attn.shiftedExp(scores, rowMax, rounded ? element : f32);
    Value rowSum = attn.generic(
        {exps}, attn.filled(rowSizes, 0.0f), {id4, row4}, {par, par, par, red},
        [&](OpBuilder &b, Location l, ValueRange a) {
          return arith::AddFOp::create(b, l, a[1], attn.widen(b, l, a[0]))
              .getResult();
        });
    // O[n, h, i, c] = sum_j E[n, h, i, j] v[n, h / group, j, c], in f32.
    // With E in f32, V is widened first (an O(sk d) copy), so both operands
    // are f32: a contraction of one operand type, which the GPU route's GEMM
    // kernels take, where f32 x bf16 would be left to loops.
    if (attn.group && !rounded)
      value = attn.widened(value);
    // FP8 values: P V weighs by the E4M3 probabilities of each key tile.
    Value weighted = attn.contractKeys(
        fp8Values ? fp8ValueWeights(attn, op, scores, rowMax) : exps, value);
    SmallVector<OpFoldResult> outSizes = {scoreSizes[0], scoreSizes[1],
                                          scoreSizes[2], attn.size(value, 3)};
    Value output = attn.generic(
        {weighted, rowSum}, attn.empty(outSizes, outputElement),
        {id4, row4, id4}, {par, par, par, par},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value sum = a[0];
          if (fp8Values) {
            // Times value_scale_inv[n, h / group] / ps.
            Value h = linalg::IndexOp::create(b, l, 1);
            Value group =
                attn.group ? arith::ConstantIndexOp::create(b, l, *attn.group)
                           : attn.dynamicGroup;
            Value valueScaleInv = tensor::ExtractOp::create(
                b, l, op.getValueScaleInv(),
                ValueRange{linalg::IndexOp::create(b, l, 0),
                           arith::DivUIOp::create(b, l, h, group)});
            Value factor = arith::DivFOp::create(
                b, l, valueScaleInv,
                AttentionMath::constant(
                    b, l, op.getProbabilityScale()->convertToFloat()));
            sum = arith::MulFOp::create(b, l, sum, factor);
          }
          return AttentionMath::narrow(
              b, l, arith::DivFOp::create(b, l, sum, a[1]), outputElement);
        });

    SmallVector<Value> results = {output};
    if (op.getLse()) {
      // The log of an empty sum is -inf: a fully masked row's m is -inf and
      // its l NaN, so m + log(l) would be NaN.
      AffineMap id3 = attn.map(3, {attn.dim(0), attn.dim(1), attn.dim(2)});
      results.push_back(attn.generic(
          {rowMax, rowSum}, attn.empty(rowSizes, f32), {id3, id3, id3},
          {par, par, par}, [&](OpBuilder &b, Location l, ValueRange a) {
            Value negInf =
                AttentionMath::constant(b, l, AttentionMath::negInfValue);
            Value lse = arith::AddFOp::create(b, l, a[0],
                                              math::LogOp::create(b, l, a[1]));
            Value empty = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                                a[0], negInf);
            return arith::SelectOp::create(b, l, empty, negInf, lse)
                .getResult();
          }));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// fp8.attention_grad as its documented math: P recomputed from lse, all in
/// f32, the key and value gradients per query head and then summed over
/// each head group before their one rounding.
struct DecomposeAttentionGrad : OpRewritePattern<AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr("fp8.wgmma_kernel"))
      return rewriter.notifyMatchFailure(op, "runs on its flash kernel");
    AttentionMath attn(rewriter, op);
    auto par = attn.par, red = attn.red;
    AffineMap id4 = attn.id4(), row4 = attn.row4();
    SmallVector<OpFoldResult> scoreSizes = attn.scoreSizes();
    SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(),
                                       scoreSizes.begin() + 3);
    Value query = op.getQuery(), gradOutput = op.getGradOutput();
    Value key = attn.repeated(op.getKey()),
          value = attn.repeated(op.getValue());

    // P = exp(s - lse): 0 where masked, NaN on a fully masked row.
    Value scores = attn.contractRows(query, key);
    Value probs = attn.shiftedExp(scores, op.getLse(), attn.f32);

    // dS = P * (dP - D), dP = dO V^T, D = rowsum(dO * O).
    Value gradProbs = attn.contractRows(gradOutput, value);
    Value rowDot =
        attn.generic({gradOutput, op.getOutput()}, attn.filled(rowSizes, 0.0f),
                     {id4, id4, row4}, {par, par, par, red},
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       return attn.multiplyAdd(b, l, a[0], a[1], a[2]);
                     });
    Value gradScores = attn.generic(
        {probs, gradProbs, rowDot}, attn.empty(scoreSizes, attn.f32),
        {id4, id4, row4, id4}, {par, par, par, par},
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value centered = arith::SubFOp::create(b, l, a[1], a[2]);
          return arith::MulFOp::create(b, l, a[0], centered).getResult();
        });

    // Every operand of a contraction against an f32 one is widened first,
    // so that each contraction has one operand type (see the forward's E V).
    if (attn.group)
      key = attn.widened(key);
    Value gradQuery = scaledRounded(attn, attn.contractKeys(gradScores, key),
                                    op.getGradQuery().getType(), attn.scale);
    Value gradKey = scaledRounded(
        attn,
        groupSum(attn, transposedProduct(attn, gradScores, attn.widened(query)),
                 op.getKey()),
        op.getGradKey().getType(), attn.scale);
    Value gradValue = scaledRounded(
        attn,
        groupSum(attn, transposedProduct(attn, probs, attn.widened(gradOutput)),
                 op.getValue()),
        op.getGradValue().getType(), 1.0f);
    rewriter.replaceOp(op, {gradQuery, gradKey, gradValue});
    return success();
  }

private:
  /// out[n, h, j, c] = sum_i p[n, h, i, j] a[n, h, i, c] in f32, per query
  /// head (dK = dS^T Q, dV = P^T dO).
  static Value transposedProduct(const AttentionMath &attn, Value p, Value a) {
    SmallVector<OpFoldResult> sizes = {attn.size(a, 0), attn.size(a, 1),
                                       attn.size(p, 3), attn.size(a, 3)};
    AffineExpr n = attn.dim(0), h = attn.dim(1), j = attn.dim(2),
               c = attn.dim(3), i = attn.dim(4);
    return attn.generic({p, a}, attn.filled(sizes, 0.0f),
                        {attn.map(5, {n, h, i, j}), attn.map(5, {n, h, i, c}),
                         attn.map(5, {n, h, j, c})},
                        {attn.par, attn.par, attn.par, attn.par, attn.red},
                        [&](OpBuilder &b, Location l, ValueRange x) {
                          return attn.multiplyAdd(b, l, x[0], x[1], x[2]);
                        });
  }

  /// perHead [b, hq, s, e] summed, in f32, over the query heads that share
  /// each head of kv [b, hkv, s, e]: [b, hkv, group, s, e] reduced.
  static Value groupSum(const AttentionMath &attn, Value perHead, Value kv) {
    if (attn.group == 1)
      return perHead;
    PatternRewriter &rewriter = attn.rewriter;
    Location loc = attn.loc;
    auto type = cast<RankedTensorType>(perHead.getType());
    auto kvType = cast<RankedTensorType>(kv.getType());
    OpFoldResult groupSize =
        attn.group ? OpFoldResult(rewriter.getIndexAttr(*attn.group))
                   : OpFoldResult(attn.dynamicGroup);
    // A static hq split into dynamic factors needs a dynamic source dim.
    if (!attn.group && !type.isDynamicDim(1)) {
      SmallVector<int64_t> shape(type.getShape());
      shape[1] = ShapedType::kDynamic;
      perHead = tensor::CastOp::create(
          rewriter, loc, RankedTensorType::get(shape, attn.f32), perHead);
    }
    SmallVector<OpFoldResult> expandedSizes = {
        attn.size(perHead, 0), attn.size(kv, 1), groupSize,
        attn.size(perHead, 2), attn.size(perHead, 3)};
    SmallVector<int64_t> expandedShape = {
        type.getDimSize(0), kvType.getDimSize(1),
        attn.group ? *attn.group : ShapedType::kDynamic, type.getDimSize(2),
        type.getDimSize(3)};
    Value expanded = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(expandedShape, attn.f32), perHead,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}},
        expandedSizes);
    SmallVector<OpFoldResult> sizes = {expandedSizes[0], expandedSizes[1],
                                       expandedSizes[3], expandedSizes[4]};
    AffineExpr n = attn.dim(0), g = attn.dim(1), j = attn.dim(2),
               c = attn.dim(3), r = attn.dim(4);
    return attn.generic(
        {expanded}, attn.filled(sizes, 0.0f),
        {attn.map(5, {n, g, r, j, c}), attn.map(5, {n, g, j, c})},
        {attn.par, attn.par, attn.par, attn.par, attn.red},
        [&](OpBuilder &b, Location l, ValueRange x) {
          return arith::AddFOp::create(b, l, x[1], x[0]).getResult();
        });
  }

  /// round(factor * x) to the element type of `type`, the gradients' one
  /// rounding; cast to `type`, whose sizes may be static where the operands
  /// the sizes were taken from are not.
  static Value scaledRounded(const AttentionMath &attn, Value x, Type type,
                             float factor) {
    Type element = cast<RankedTensorType>(type).getElementType();
    Value rounded =
        attn.elementwise(x, element, [&](OpBuilder &b, Location l, Value v) {
          if (factor != 1.0f)
            v = arith::MulFOp::create(b, l, v,
                                      AttentionMath::constant(b, l, factor));
          return AttentionMath::narrow(b, l, v, element);
        });
    if (rounded.getType() == type)
      return rounded;
    return tensor::CastOp::create(attn.rewriter, attn.loc, type, rounded);
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
  patterns.add<DecomposeAttentionGrad>(patterns.getContext());
}
