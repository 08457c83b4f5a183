//===- FuseAttention.cpp - fp8-fuse-attention -----------------------------===//
//
// Finds scaled dot-product attention written out op by op (Q K^T, scale,
// causal mask, the softmax as max / exp-sum / normalize, P V) and replaces it
// by one fp8.attention, whose lowerings never materialize the scores. The
// match is strict: every op of the chain must be exactly the form below, and
// the scores and probabilities must have no other users; anything else is
// left as written, with the reason in a remark.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Report.h"

#include "FuseAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>
#include <limits>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSEATTENTION
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// The body's ops other than the terminator.
SmallVector<Operation *> bodyOps(linalg::GenericOp op) {
  SmallVector<Operation *> ops;
  for (Operation &nested : op.getBody()->without_terminator())
    ops.push_back(&nested);
  return ops;
}

Value yielded(linalg::GenericOp op) {
  return op.getBody()->getTerminator()->getOperand(0);
}

AffineMap map3(MLIRContext *context, ArrayRef<unsigned> dims, unsigned n) {
  SmallVector<AffineExpr> results;
  for (unsigned d : dims)
    results.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(n, 0, results, context);
}

} // namespace

bool attention::isFilledWith(Value init, float expected) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  FloatAttr value;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
    return false;
  return value.getValueAsDouble() == double(expected);
}

/// A batched contraction from zero over loops (b, m, n, k) -> [b, m, n],
/// its operands read at `lhs` and `rhs`.
static bool isContractionFromZero(linalg::LinalgOp op, ArrayRef<unsigned> lhs,
                                  ArrayRef<unsigned> rhs) {
  if (!op || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 4 || op.getNumReductionLoops() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return false;
  MLIRContext *context = op.getContext();
  SmallVector<AffineMap> expected = {map3(context, lhs, 4),
                                     map3(context, rhs, 4),
                                     map3(context, {0, 1, 2}, 4)};
  return op.getIndexingMapsArray() == expected &&
         attention::isFilledWith(op.getDpsInits()[0], 0.0f);
}

/// A batched contraction [b, m, k] x rhs -> [b, m, n] from zero, with the
/// rhs as [b, n, k] (`transposedRhs`) or [b, k, n]; f32 products summed.
bool attention::isBatchContraction(linalg::LinalgOp op, bool transposedRhs) {
  return isContractionFromZero(op, {0, 1, 3},
                               transposedRhs ? ArrayRef<unsigned>{0, 2, 3}
                                             : ArrayRef<unsigned>{0, 3, 2});
}

bool attention::isMultiBatchContraction(linalg::LinalgOp op,
                                        bool transposedRhs) {
  if (!op || op.getNumLoops() < 4)
    return false;
  unsigned loops = op.getNumLoops(), m = loops - 3, n = loops - 2,
           k = loops - 1;
  auto withBatch = [&](ArrayRef<unsigned> last) {
    SmallVector<unsigned> dims = llvm::to_vector(llvm::seq<unsigned>(0, m));
    llvm::append_range(dims, last);
    return map3(op.getContext(), dims, loops);
  };
  SmallVector<AffineMap> expected = {
      withBatch({m, k}),
      transposedRhs ? withBatch({n, k}) : withBatch({k, n}),
      withBatch({m, n})};
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         op.getNumReductionLoops() == 1 &&
         linalg::isaContractionOpInterface(op) &&
         op.getIndexingMapsArray() == expected &&
         attention::isFilledWith(op.getDpsInits()[0], 0.0f);
}

/// lhs^T rhs: [b, k, m] x [b, k, n] -> [b, m, n] from zero (the backward's
/// P^T dO and dS^T Q).
static bool isTransposedLhsContraction(linalg::LinalgOp op) {
  return isContractionFromZero(op, {0, 3, 1}, {0, 3, 2});
}

/// `value` transposed [b, m, n] -> [b, n, m] by a linalg.transpose that only
/// `user` reads, or null.
static linalg::TransposeOp transposeOf(Value value, Operation *user) {
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1} ||
      !transpose->getResult(0).hasOneUse() ||
      *transpose->getResult(0).getUsers().begin() != user)
    return {};
  return transpose;
}

/// `op` is lhs^T rhs for this `lhs`: by transposing indexing maps, or as a
/// plain contraction of lhs transposed by its own op (TOSA's form), which
/// is returned in `transpose`.
static bool isTransposedLhsProduct(linalg::LinalgOp op, Value lhs,
                                   Operation *&transpose) {
  if (isTransposedLhsContraction(op))
    return op.getDpsInputs()[0] == lhs;
  linalg::TransposeOp t = transposeOf(op.getDpsInputs()[0], op);
  if (!t || t.getInput() != lhs ||
      !attention::isBatchContraction(op, /*transposedRhs=*/false))
    return false;
  transpose = t;
  return true;
}

/// `op` is lhs rhs^T for this `rhs`: by transposing indexing maps, or with
/// rhs transposed by its own op (recorded in `transpose`).
static bool isTransposedRhsProduct(linalg::LinalgOp op, Value rhs,
                                   Operation *&transpose) {
  if (attention::isBatchContraction(op, /*transposedRhs=*/true))
    return op.getDpsInputs()[1] == rhs;
  linalg::TransposeOp t = transposeOf(op.getDpsInputs()[1], op);
  if (!t || t.getInput() != rhs ||
      !attention::isBatchContraction(op, /*transposedRhs=*/false))
    return false;
  transpose = t;
  return true;
}

/// An elementwise generic that only rounds its one input (the generic
/// form's truncf after an f32-accumulating contraction).
bool attention::isRounding(linalg::GenericOp op) {
  if (!op || op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  SmallVector<Operation *> ops = bodyOps(op);
  return ops.size() == 1 && isa<arith::TruncFOp>(ops[0]) &&
         ops[0]->getOperand(0) == op.getBody()->getArgument(0) &&
         yielded(op) == ops[0]->getResult(0);
}

bool attention::isMaxReductionBody(linalg::GenericOp op) {
  if (!op || op.getNumDpsInputs() != 1)
    return false;
  Block *body = op.getBody();
  Operation *max = yielded(op).getDefiningOp();
  if (!max || !isa<arith::MaximumFOp, arith::MaxNumFOp>(max) ||
      !llvm::is_contained(max->getOperands(), body->getArgument(0)) ||
      !llvm::is_contained(max->getOperands(), body->getArgument(1)))
    return false;
  if (op.getNumDpsInits() == 1)
    return bodyOps(op).size() == 1;
  // The rest of the body computes only the index, which nothing reads.
  return op.getNumDpsInits() == 2 && op->getResult(1).use_empty() &&
         getElementTypeOrSelf(op->getResult(1).getType()).isSignlessInteger();
}

std::optional<double> attention::reciprocalFactor(double c) {
  float factor = float(1.0 / c);
  if (!std::isfinite(c) || !std::isfinite(factor) || factor == 0.0f)
    return std::nullopt;
  return factor;
}

/// `value` [N, s, d] as [1, N, s, d].
Value attention::addUnitBatch(RewriterBase &rewriter, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, type.getShape());
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
  llvm::append_range(sizes, tensor::getMixedSizes(rewriter, loc, value));
  SmallVector<ReassociationIndices> groups = {{0, 1}, {2}, {3}};
  // A constant (a mask a model exports as a buffer) stays one, so that the
  // op's canonicalization sees it.
  if (matchPattern(value, m_Constant()))
    return rewriter.createOrFold<tensor::ExpandShapeOp>(
        loc, type.clone(shape), value, groups, sizes);
  return tensor::ExpandShapeOp::create(rewriter, loc, type.clone(shape), value,
                                       groups, sizes);
}

/// Each result i is d_i or 0: a tensor broadcast on the score space.
bool attention::isBroadcastMap(AffineMap map, int64_t rank) {
  if (map.getNumDims() != rank || map.getNumResults() != rank)
    return false;
  for (int64_t d = 0; d < rank; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()) &&
        map.getResult(d) != getAffineConstantExpr(0, map.getContext()))
      return false;
  return true;
}

namespace {
/// Where and how the graph repeated K or V (unrepeatedKV's doc).
struct KVRepeat {
  OpOperand *source;  // the repeat's input that is copied
  AffineMap map;      // its indexing map
  RankedTensorType type; // the repeat's result
  SmallVector<ReassociationIndices> groups; // result dims of each of 3 dims
  int64_t dim;        // the repeat dimension
};

std::optional<KVRepeat> findRepeat(Value kv) {
  // Through collapses, composing their groups: source dimensions of each of
  // the three result dimensions.
  SmallVector<ReassociationIndices> groups = {{0}, {1}, {2}};
  Value source = kv;
  while (auto collapse = source.getDefiningOp<tensor::CollapseShapeOp>()) {
    SmallVector<ReassociationIndices> inner =
        collapse.getReassociationIndices();
    for (ReassociationIndices &g : groups) {
      ReassociationIndices composed;
      for (int64_t d : g)
        llvm::append_range(composed, inner[d]);
      g = composed;
    }
    source = collapse.getSrc();
  }
  auto repeat = source.getDefiningOp<linalg::GenericOp>();
  auto type = dyn_cast<RankedTensorType>(source.getType());
  if (!repeat || !type || !type.hasStaticShape() || groups[0].size() < 2 ||
      groups[1].size() != 1 || groups[2].size() != 1 ||
      repeat.getNumDpsInits() != 1 || repeat.getNumReductionLoops() != 0 ||
      !repeat.getIndexingMapsArray().back().isIdentity())
    return std::nullopt;
  // The input that is copied (or has zeros added): the repeat's source.
  Block *body = repeat.getBody();
  Value copied = body->getTerminator()->getOperand(0);
  if (auto add = copied.getDefiningOp<arith::AddFOp>()) {
    auto isZeroInput = [&](Value v) {
      auto arg = dyn_cast<BlockArgument>(v);
      SplatElementsAttr splat;
      return arg && arg.getOwner() == body &&
             arg.getArgNumber() < repeat.getNumDpsInputs() &&
             matchPattern(repeat.getDpsInputs()[arg.getArgNumber()],
                          m_Constant(&splat)) &&
             splat.getSplatValue<APFloat>().isZero();
    };
    if (isZeroInput(add.getRhs()))
      copied = add.getLhs();
    else if (isZeroInput(add.getLhs()))
      copied = add.getRhs();
    else
      return std::nullopt;
  }
  auto arg = dyn_cast<BlockArgument>(copied);
  if (!arg || arg.getOwner() != body ||
      arg.getArgNumber() >= repeat.getNumDpsInputs() ||
      std::distance(body->begin(), body->end()) > 2)
    return std::nullopt;
  OpOperand *input = repeat.getDpsInputOperand(arg.getArgNumber());
  AffineMap map = repeat.getMatchingIndexingMap(input);
  // The repeat is the innermost batch dimension: flattened, head h of the
  // result is source head h / g.
  int64_t r = groups[0].back();
  if (type.getDimSize(r) < 2 || map.isFunctionOfDim(r) ||
      !map.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  return KVRepeat{input, map, type, groups, r};
}

/// The repeated tensor without its repeat: the same copy without loop r.
Value buildUnrepeated(RewriterBase &rewriter, Location loc,
                      const KVRepeat &repeat) {
  auto [input, map, type, groups, r] = repeat;
  MLIRContext *context = rewriter.getContext();
  int64_t loops = map.getNumDims();
  SmallVector<AffineExpr> results;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e))
      results.push_back(getAffineDimExpr(
          dim.getPosition() - (dim.getPosition() > unsigned(r)), context));
    else
      results.push_back(e);
  }
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + r);
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  SmallVector<AffineMap> maps = {
      AffineMap::get(loops - 1, 0, results, context),
      rewriter.getMultiDimIdentityMap(loops - 1)};
  SmallVector<utils::IteratorType> iterators(loops - 1,
                                             utils::IteratorType::parallel);
  Value copy = linalg::GenericOp::create(
                   rewriter, loc, empty.getType(), ValueRange{input->get()},
                   ValueRange{empty}, maps, iterators,
                   [](OpBuilder &b, Location l, ValueRange args) {
                     linalg::YieldOp::create(b, l, args[0]);
                   })
                   .getResult(0);
  // Groups over the new dimensions: r is gone, later ones move down.
  SmallVector<ReassociationIndices> reassociation;
  for (const ReassociationIndices &g : groups) {
    ReassociationIndices shifted;
    for (int64_t d : g)
      if (d != r)
        shifted.push_back(d - (d > r));
    reassociation.push_back(shifted);
  }
  return tensor::CollapseShapeOp::create(rewriter, loc, copy, reassociation);
}
} // namespace

void attention::eraseDeadProducers(RewriterBase &rewriter, Value value) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || !op->use_empty() || !isPure(op))
      continue;
    llvm::append_range(worklist, op->getOperands());
    rewriter.eraseOp(op);
  }
}

void attention::recoverGroupedKV(RewriterBase &rewriter, Location loc,
                                 Value &key, Value &value) {
  std::optional<KVRepeat> k = findRepeat(key), v = findRepeat(value);
  if (!k || !v || k->type.getDimSize(k->dim) != v->type.getDimSize(v->dim))
    return;
  key = buildUnrepeated(rewriter, loc, *k);
  value = buildUnrepeated(rewriter, loc, *v);
}

namespace {
using namespace mlir::fp8::attention;

/// `op`'s result as the graph reads it: through its rounding generic, if any.
Value readResult(linalg::LinalgOp op, Operation *rounding) {
  return rounding ? rounding->getResult(0) : op->getResult(0);
}

/// The backward of an attention written out, as fp8-gen's training step
/// writes it: dV = P^T dO, dP = dO V^T, D = rowsum(P dP), dS = P (dP - D) c
/// (c the forward's scale), dQ = dS K, dK = dS^T Q; each contraction
/// optionally rounded to the element type by a generic.
struct BackwardMatch {
  linalg::LinalgOp gradValue, gradProbabilities, gradQuery, gradKey;
  Operation *gradValueRounding = nullptr, *gradProbabilitiesRounding = nullptr,
            *gradQueryRounding = nullptr, *gradKeyRounding = nullptr;
  // TOSA's form transposes P, V and dS by their own ops.
  Operation *probabilitiesTranspose = nullptr, *valueTranspose = nullptr,
            *gradScoresTranspose = nullptr;
  linalg::GenericOp delta, gradScores;
  Value gradOutput;

  /// Every op of the backward, consumers first (the order to erase them).
  SmallVector<Operation *> ops() const {
    return {gradQueryRounding,  gradQuery,
            gradKeyRounding,    gradKey,
            gradScoresTranspose, gradScores,
            delta,              gradProbabilitiesRounding,
            gradProbabilities,  valueTranspose,
            gradValueRounding,  gradValue,
            probabilitiesTranspose};
  }
};

/// One attention found in the graph.
struct AttentionMatch {
  linalg::LinalgOp scores;        // Q K^T
  Operation *keyTranspose = nullptr;   // K [b, n, k] -> [b, k, n], TOSA form
  Operation *scoresRounding = nullptr; // truncf of Q K^T, generic form
  linalg::GenericOp scaled;       // scale and masks, in f32 (or none)
  // Q or K scaled before Q K^T (PyTorch's math SDPA scales both by the
  // square root of the scale), absorbed into `scale`.
  Operation *queryScale = nullptr, *keyScale = nullptr;
  linalg::GenericOp rowMax, rowSum, normalize;
  Operation *softmax = nullptr;        // the named linalg.softmax form
  Operation *probRounding = nullptr;   // truncf of its result
  linalg::LinalgOp output;        // P V
  Operation *outputRounding = nullptr; // truncf of P V, generic form
  Value query, key, value;
  Value mask;                     // [b or 1, i or 1, j or 1]: added or i1
  float scale = 1.0f;
  bool causal = false;
  int64_t causalOffset = 0; // keys j <= i + causalOffset are seen
  std::optional<BackwardMatch> backward; // P saved for it, in a training step
};





bool isIdentity3(AffineMap map) {
  return map.isIdentity() && map.getNumDims() == 3;
}
bool isRow3(AffineMap map) {
  return map == map3(map.getContext(), {0, 1}, 3);
}


/// `value`'s input if a rounding generic makes it (which is recorded in
/// `rounding`), else `value`.
Value throughRounding(Value value, Operation *&rounding) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || !isRounding(generic))
    return value;
  rounding = generic;
  return generic.getDpsInputs()[0];
}

/// `value` is exp(arg0 - arg1) of the generic's block arguments.
bool isExpOfDifference(Value value, Block *body) {
  auto exp = value.getDefiningOp<math::ExpOp>();
  if (!exp)
    return false;
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  return sub && sub.getLhs() == body->getArgument(0) &&
         sub.getRhs() == body->getArgument(1);
}

/// `select(j > i + p, -inf, s)` on the loop indices: the causal mask, with
/// an offset p (a constant: the length of a KV-cache prefix), 0 if absent.
LogicalResult matchCausal(arith::SelectOp select, AttentionMatch &match,
                        std::string &reason) {
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  FloatAttr masked;
  if (!cmp || !matchPattern(select.getTrueValue(), m_Constant(&masked)) ||
      !std::isinf(masked.getValueAsDouble()) ||
      masked.getValueAsDouble() > 0) {
    reason = "the scores are selected by something other than a causal "
             "-inf mask";
    return failure();
  }
  // The loop index `v` reads, plus a constant offset (`linalg.index d`
  // or `linalg.index d + c`, either order).
  auto index = [](Value v, int64_t &offset) -> int64_t {
    offset = 0;
    if (auto add = v.getDefiningOp<arith::AddIOp>()) {
      for (auto [x, c] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
        IntegerAttr constant;
        auto idx = x.getDefiningOp<linalg::IndexOp>();
        if (idx && matchPattern(c, m_Constant(&constant))) {
          offset = constant.getInt();
          return idx.getDim();
        }
      }
      return -1;
    }
    if (auto idx = v.getDefiningOp<linalg::IndexOp>())
      return idx.getDim();
    return -1;
  };
  int64_t lhsOffset = 0, rhsOffset = 0;
  int64_t lhs = index(cmp.getLhs(), lhsOffset),
          rhs = index(cmp.getRhs(), rhsOffset);
  using P = arith::CmpIPredicate;
  // j > i + p, or i + p < j: the key index carries no offset. Unsigned
  // comparisons are the same for the non-negative indices and offset.
  bool greater = cmp.getPredicate() == P::ugt || cmp.getPredicate() == P::sgt;
  bool less = cmp.getPredicate() == P::ult || cmp.getPredicate() == P::slt;
  bool unsignedCmp =
      cmp.getPredicate() == P::ugt || cmp.getPredicate() == P::ult;
  int64_t offset = 0;
  bool keyAfterQuery = false;
  if (greater && lhs == 2 && rhs == 1 && lhsOffset == 0) {
    keyAfterQuery = true;
    offset = rhsOffset;
  } else if (less && lhs == 1 && rhs == 2 && rhsOffset == 0) {
    keyAfterQuery = true;
    offset = lhsOffset;
  }
  if (!keyAfterQuery || (unsignedCmp && offset < 0)) {
    reason = "the -inf mask is not the causal j > i (+ a constant)";
    return failure();
  }
  match.causal = true;
  match.causalOffset = offset;
  return success();
}

/// `value` = x * c, c * x or x / c for a constant c (reciprocalFactor):
/// the factor (c, or 1 / c), with `x` set.
std::optional<double> constantScaleOf(Value value, Value &x) {
  FloatAttr constant;
  if (auto mul = value.getDefiningOp<arith::MulFOp>()) {
    for (auto [operand, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                                   std::pair(mul.getRhs(), mul.getLhs())})
      if (matchPattern(factor, m_Constant(&constant))) {
        x = operand;
        return constant.getValueAsDouble();
      }
  } else if (auto div = value.getDefiningOp<arith::DivFOp>()) {
    if (matchPattern(div.getRhs(), m_Constant(&constant)))
      if (std::optional<double> factor =
              attention::reciprocalFactor(constant.getValueAsDouble())) {
        x = div.getLhs();
        return factor;
      }
  }
  return std::nullopt;
}

/// The scale-and-mask generic: `s = f32(x) * c` (or `/ c` for a power of
/// two c), optionally a mask tensor (its second input, broadcast on the
/// scores) added to s or selecting -inf where false, and optionally
/// `select(j > i, -inf, s)` on the loop indices.
LogicalResult matchScaled(linalg::GenericOp op, AttentionMatch &match,
                          std::string &reason) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumDpsInputs() > 2 || op.getNumReductionLoops() != 0 ||
      !isIdentity3(maps.front()) || !isIdentity3(maps.back()) ||
      (op.getNumDpsInputs() == 2 && !isBroadcastMap(maps[1], 3))) {
    reason = "the scores are not scaled by one elementwise op (with at most "
             "a mask tensor broadcast on them)";
    return failure();
  }
  Block *body = op.getBody();
  Value score = body->getArgument(0);
  Value result = yielded(op);
  // A mask tensor, the second input: added after the scale, or selecting
  // -inf where it is false. Peeled with the causal select, in either order.
  Value maskArg = op.getNumDpsInputs() == 2 ? body->getArgument(1) : Value();
  auto isNegInf = [](Value v) {
    FloatAttr x;
    return matchPattern(v, m_Constant(&x)) &&
           std::isinf(x.getValueAsDouble()) && x.getValueAsDouble() < 0;
  };
  auto widened = [](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      return ext.getIn();
    return v;
  };
  while (maskArg && !match.mask) {
    bool selects = false;
    if (auto select = result.getDefiningOp<arith::SelectOp>();
        select && select.getCondition() == maskArg &&
        isNegInf(select.getFalseValue())) {
      result = select.getTrueValue();
      selects = true;
    } else if (auto add = result.getDefiningOp<arith::AddFOp>();
               add && (widened(add.getLhs()) == maskArg ||
                       widened(add.getRhs()) == maskArg)) {
      result = widened(add.getLhs()) == maskArg ? add.getRhs() : add.getLhs();
    } else if (auto select = result.getDefiningOp<arith::SelectOp>();
               select && !match.causal &&
               select.getCondition().getDefiningOp<arith::CmpIOp>()) {
      // A causal select outside the mask: peeled below, then the mask.
      if (failed(matchCausal(select, match, reason)))
        return failure();
      result = select.getFalseValue();
      continue;
    } else {
      reason = "the scores' second input is not a mask added after the "
               "scale or selecting -inf";
      return failure();
    }
    match.mask = op.getDpsInputs()[1];
    auto maskType = cast<RankedTensorType>(match.mask.getType());
    if (maskType.getElementType().isInteger(1) != selects) {
      reason = "the mask is not an i1 tensor selecting -inf or a float "
               "tensor added";
      return failure();
    }
    for (unsigned d = 0; d < 3; ++d)
      if (maps[1].getResult(d) ==
              getAffineConstantExpr(0, op.getContext()) &&
          maskType.getDimSize(d) != 1) {
        reason = "the mask is read at index 0 of a dimension it has more of";
        return failure();
      }
  }
  if (auto select = result.getDefiningOp<arith::SelectOp>();
      select && !match.causal) {
    if (failed(matchCausal(select, match, reason)))
      return failure();
    result = select.getFalseValue();
  }
  Value operand;
  if (std::optional<double> factor = constantScaleOf(result, operand))
    match.scale = float(*factor);
  if (!operand) {
    // No scale here: 1, or applied to Q or K before Q K^T (matchScores).
    Value plain = result;
    if (auto ext = plain.getDefiningOp<arith::ExtFOp>())
      plain = ext.getIn();
    if (plain == score)
      operand = result;
  }
  if (!operand) {
    // Something computed on the scaled scores that is neither the scale, an
    // added mask nor a select (soft-capping, ALiBi from the loop indices).
    Operation *modifier = result.getDefiningOp();
    if (modifier && modifier->getBlock() == op.getBody() &&
        !isa<arith::MulFOp, arith::DivFOp>(modifier))
      reason = ("a score modifier that is not modeled ('" +
                modifier->getName().getStringRef() + "')")
                   .str();
    else
      reason = "the scores are not scaled by a constant multiply or divide";
    return failure();
  }
  if (auto ext = operand.getDefiningOp<arith::ExtFOp>())
    operand = ext.getIn();
  if (operand != score) {
    reason = "the scale is applied to something other than Q K^T";
    return failure();
  }
  // Nothing else may happen to the scores.
  for (Operation *nested : bodyOps(op))
    if (!isa<arith::ExtFOp, arith::MulFOp, arith::DivFOp, arith::SelectOp,
             arith::CmpIOp, linalg::IndexOp, arith::AddIOp,
             arith::ConstantOp>(nested) &&
        !(match.mask && isa<arith::AddFOp>(nested))) {
      reason = "a score modifier that is not modeled ('" +
               nested->getName().getStringRef().str() + "')";
      return failure();
    }
  if (!getElementTypeOrSelf(op.getResult(0).getType()).isF32()) {
    reason = "the scaled scores are not f32 (the softmax is not in f32)";
    return failure();
  }
  return success();
}

/// The named form: P = linalg.softmax over the keys of the f32 scaled
/// scores, optionally rounded by a generic. Fails with an empty reason when
/// P is not a linalg.softmax.
FailureOr<Value> matchNamedSoftmax(linalg::LinalgOp output,
                                   AttentionMatch &match, std::string &reason) {
  Value probabilities =
      throughRounding(output.getDpsInputs()[0], match.probRounding);
  auto softmax = probabilities.getDefiningOp<linalg::SoftmaxOp>();
  if (!softmax) {
    match.probRounding = nullptr;
    return failure();
  }
  auto type = cast<ShapedType>(softmax.getInput().getType());
  if (type.getRank() != 3 || softmax.getDimension() != 2 ||
      !type.getElementType().isF32()) {
    reason = "the linalg.softmax is not over the last (key) axis of f32 "
             "[b, i, j] scores";
    return failure();
  }
  if (!isBatchContraction(output, /*transposedRhs=*/false)) {
    reason = "P V is not a batched [b, m, k] x [b, k, n] contraction from zero";
    return failure();
  }
  match.softmax = softmax;
  return softmax.getInput();
}

/// The softmax written out: P = exp(s - max) / sum as generics. Returns the
/// scaled scores it reads.
FailureOr<Value> matchSoftmaxChain(linalg::LinalgOp output,
                                   AttentionMatch &match, std::string &reason) {
  auto normalize =
      output.getDpsInputs()[0].getDefiningOp<linalg::GenericOp>();
  // Attention starts where a contraction consumes a softmax: exp / sum.
  if (!normalize || normalize.getNumDpsInputs() != 3 ||
      !normalize.getBody()->getArgument(0).getType().isF32())
    return failure();
  Value normalized = yielded(normalize);
  if (auto trunc = normalized.getDefiningOp<arith::TruncFOp>())
    normalized = trunc.getIn();
  auto div = normalized.getDefiningOp<arith::DivFOp>();
  Block *normBody = normalize.getBody();
  if (!div || !isExpOfDifference(div.getLhs(), normBody) ||
      div.getRhs() != normBody->getArgument(2))
    return failure();
  match.normalize = normalize;

  if (!isBatchContraction(output, /*transposedRhs=*/false)) {
    reason = "P V is not a batched [b, m, k] x [b, k, n] contraction from zero";
    return failure();
  }
  SmallVector<AffineMap> normMaps = normalize.getIndexingMapsArray();
  if (normMaps.size() != 4 || !isIdentity3(normMaps[0]) ||
      !isRow3(normMaps[1]) || !isRow3(normMaps[2]) ||
      !isIdentity3(normMaps[3]) || normalize.getNumReductionLoops() != 0) {
    reason = "the softmax is not over the last (key) axis";
    return failure();
  }
  Value scaledScores = normalize.getDpsInputs()[0];
  auto rowMax = normalize.getDpsInputs()[1].getDefiningOp<linalg::GenericOp>();
  auto rowSum = normalize.getDpsInputs()[2].getDefiningOp<linalg::GenericOp>();
  auto isRowReduction = [&](linalg::GenericOp op, unsigned inputs) {
    if (!op || op.getNumDpsInputs() != inputs ||
        op.getNumReductionLoops() != 1 ||
        op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
      return false;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    return isIdentity3(maps[0]) &&
           llvm::all_of(ArrayRef<AffineMap>(maps).drop_front(), isRow3) &&
           op.getDpsInputs()[0] == scaledScores;
  };
  if (!isRowReduction(rowMax, 1) ||
      !isFilledWith(rowMax.getDpsInits()[0],
                    -std::numeric_limits<float>::infinity())) {
    reason = "the softmax's row max is not a max over the keys from -inf";
    return failure();
  }
  if (!isMaxReductionBody(rowMax)) {
    reason = "the softmax's row max is not a plain max";
    return failure();
  }
  if (!isRowReduction(rowSum, 2) || rowSum.getDpsInputs()[1] != rowMax.getResult(0) ||
      normalize.getDpsInputs()[1] != rowMax.getResult(0) ||
      !isFilledWith(rowSum.getDpsInits()[0], 0.0f)) {
    reason = "the softmax's sum is not sum(exp(s - max)) over the keys";
    return failure();
  }
  {
    auto add = yielded(rowSum).getDefiningOp<arith::AddFOp>();
    Block *body = rowSum.getBody();
    Value acc = body->getArgument(2);
    if (!add || bodyOps(rowSum).size() != 3 ||
        !((add.getLhs() == acc && isExpOfDifference(add.getRhs(), body)) ||
          (add.getRhs() == acc && isExpOfDifference(add.getLhs(), body)))) {
      reason = "the softmax's sum is not sum(exp(s - max)) over the keys";
      return failure();
    }
  }
  if (bodyOps(normalize).size() > 4) {
    reason = "the softmax's normalization does more than exp(s - max) / sum";
    return failure();
  }
  match.rowMax = rowMax;
  match.rowSum = rowSum;
  return scaledScores;
}

/// The rest of the chain, from the softmax's input back to Q K^T, and the
/// checks on users and element types.
/// `value` = x * c (or x / c for a power of two c) elementwise, in x's
/// type (widened and rounded back for bf16 / f16), by a generic that only
/// `user` reads: returns the generic and sets `x` and `c`.
linalg::GenericOp matchOperandScale(Value value, Operation *user, Value &x,
                                    double &c) {
  auto op = value.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumDpsInputs() != 1 || op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      op.getDpsInputs()[0].getType() != value.getType() ||
      !llvm::all_of(value.getUsers(),
                    [&](Operation *u) { return u == user; }))
    return {};
  Block *body = op.getBody();
  Value result = yielded(op);
  if (auto trunc = result.getDefiningOp<arith::TruncFOp>())
    result = trunc.getIn();
  auto isInput = [&](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    return v == body->getArgument(0);
  };
  Value scaled;
  std::optional<double> factor = constantScaleOf(result, scaled);
  if (!factor || !isInput(scaled))
    return {};
  c = *factor;
  // Nothing else happens to the operand.
  for (Operation *nested : bodyOps(op))
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::MulFOp, arith::DivFOp,
             arith::ConstantOp>(nested))
      return {};
  if (!std::isfinite(c))
    return {};
  x = op.getDpsInputs()[0];
  return op;
}

bool onlyUsedBy(Value v, ArrayRef<Operation *> users) {
  return llvm::all_of(v.getUsers(), [&](Operation *user) {
    return llvm::is_contained(users, user);
  });
}

/// `op`'s result, or that of the rounding generic that is its only user
/// (recorded in `rounding`).
Value roundedResult(Operation *op, Operation *&rounding) {
  Value result = op->getResult(0);
  if (result.hasOneUse())
    if (auto generic = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
        generic && isRounding(generic)) {
      rounding = generic;
      return generic.getResult(0);
    }
  return result;
}

Value unwidened(Value value) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return value;
}

/// The body computes only with these ops (and constants).
template <typename... Ops>
bool bodyOnly(linalg::GenericOp op) {
  return llvm::all_of(bodyOps(op), [](Operation *nested) {
    return isa<Ops..., arith::ConstantOp>(nested);
  });
}

/// P's users other than P V as the written backward (BackwardMatch): fails
/// with an empty reason when they are not a backward at all, with the
/// reason it is not the modeled one otherwise.
FailureOr<BackwardMatch> matchBackward(Value probabilities,
                                       AttentionMatch &match,
                                       std::string &reason) {
  BackwardMatch bw;
  SmallVector<Operation *> users;
  for (Operation *user : probabilities.getUsers())
    if (user != match.output.getOperation() && !llvm::is_contained(users, user))
      users.push_back(user);
  if (users.size() != 3)
    return failure();
  for (Operation *user : users) {
    auto generic = dyn_cast<linalg::GenericOp>(user);
    // dV = P^T dO, P transposed by the contraction or by its own op.
    Operation *product = user;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(user);
        transpose && transpose->getResult(0).hasOneUse())
      product = *transpose->getResult(0).getUsers().begin();
    if (auto op = dyn_cast<linalg::LinalgOp>(product);
        op && isTransposedLhsProduct(op, probabilities,
                                     bw.probabilitiesTranspose))
      bw.gradValue = op;
    else if (generic && generic.getNumDpsInputs() == 3 &&
             generic.getNumReductionLoops() == 0)
      bw.gradScores = generic;
    else if (generic && generic.getNumDpsInputs() == 2 &&
             generic.getNumReductionLoops() == 1)
      bw.delta = generic;
  }
  if (!bw.gradValue || !bw.gradScores || !bw.delta)
    return failure();
  bw.gradOutput = bw.gradValue.getDpsInputs()[1];

  // dS = P (dP - D) c, elementwise over the scores, c the forward's scale.
  linalg::GenericOp ds = bw.gradScores;
  SmallVector<AffineMap> maps = ds.getIndexingMapsArray();
  Block *body = ds.getBody();
  auto isArg = [](Value v, Block *block, unsigned i) {
    return unwidened(v) == block->getArgument(i);
  };
  Value result = yielded(ds);
  if (auto trunc = result.getDefiningOp<arith::TruncFOp>())
    result = trunc.getIn();
  Value product = result;
  double factor = 1.0;
  if (std::optional<double> c = constantScaleOf(result, product))
    factor = *c;
  arith::SubFOp sub;
  if (auto mul = product.getDefiningOp<arith::MulFOp>()) {
    if (isArg(mul.getLhs(), body, 0))
      sub = mul.getRhs().getDefiningOp<arith::SubFOp>();
    else if (isArg(mul.getRhs(), body, 0))
      sub = mul.getLhs().getDefiningOp<arith::SubFOp>();
  }
  if (ds.getDpsInputs()[0] != probabilities || maps.size() != 4 ||
      !isIdentity3(maps[0]) || !isIdentity3(maps[1]) || !isRow3(maps[2]) ||
      !isIdentity3(maps[3]) || !sub || !isArg(sub.getLhs(), body, 1) ||
      sub.getRhs() != body->getArgument(2) ||
      !bodyOnly<arith::ExtFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
                arith::TruncFOp>(ds)) {
    reason = "the backward's dS is not P (dP - D) times the scale";
    return failure();
  }
  if (float(factor) != match.scale) {
    reason = "the backward's dS is scaled by " + std::to_string(factor) +
             ", not by the forward's scale";
    return failure();
  }

  // D = rowsum(P dP) from zero, over the keys.
  linalg::GenericOp delta = bw.delta;
  Value gradProbabilities = ds.getDpsInputs()[1];
  SmallVector<Value> deltaInputs(delta.getDpsInputs());
  maps = delta.getIndexingMapsArray();
  auto add = yielded(delta).getDefiningOp<arith::AddFOp>();
  Block *deltaBody = delta.getBody();
  auto isProduct = [&](Value v) {
    auto mul = v.getDefiningOp<arith::MulFOp>();
    return mul && ((isArg(mul.getLhs(), deltaBody, 0) &&
                    isArg(mul.getRhs(), deltaBody, 1)) ||
                   (isArg(mul.getLhs(), deltaBody, 1) &&
                    isArg(mul.getRhs(), deltaBody, 0)));
  };
  Value acc = deltaBody->getArgument(2);
  if (ds.getDpsInputs()[2] != delta.getResult(0) ||
      !((deltaInputs[0] == probabilities &&
         deltaInputs[1] == gradProbabilities) ||
        (deltaInputs[1] == probabilities &&
         deltaInputs[0] == gradProbabilities)) ||
      !isIdentity3(maps[0]) || !isIdentity3(maps[1]) || !isRow3(maps[2]) ||
      delta.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      !isFilledWith(delta.getDpsInits()[0], 0.0f) || !add ||
      !((add.getLhs() == acc && isProduct(add.getRhs())) ||
        (add.getRhs() == acc && isProduct(add.getLhs()))) ||
      !bodyOnly<arith::ExtFOp, arith::MulFOp, arith::AddFOp>(delta)) {
    reason = "the backward's D is not the row sum of P dP";
    return failure();
  }

  // dP = dO V^T.
  Value unrounded =
      throughRounding(gradProbabilities, bw.gradProbabilitiesRounding);
  auto dp = unrounded.getDefiningOp<linalg::LinalgOp>();
  if (!dp || dp.getNumDpsInputs() != 2 ||
      dp.getDpsInputs()[0] != bw.gradOutput ||
      !isTransposedRhsProduct(dp, match.value, bw.valueTranspose)) {
    reason = "the backward's dP is not dO V^T";
    return failure();
  }
  bw.gradProbabilities = dp;

  // dQ = dS K and dK = dS^T Q read dS, nothing else does.
  Value gradScores = ds.getResult(0);
  for (Operation *user : gradScores.getUsers()) {
    Operation *product = user;
    if (auto transpose = dyn_cast<linalg::TransposeOp>(user);
        transpose && transpose->getResult(0).hasOneUse())
      product = *transpose->getResult(0).getUsers().begin();
    auto op = dyn_cast<linalg::LinalgOp>(product);
    if (!op || op.getNumDpsInputs() != 2)
      continue;
    if (op.getDpsInputs()[0] == gradScores &&
        isBatchContraction(op, /*transposedRhs=*/false) &&
        op.getDpsInputs()[1] == match.key)
      bw.gradQuery = op;
    else if (op.getDpsInputs()[1] == match.query &&
             isTransposedLhsProduct(op, gradScores, bw.gradScoresTranspose))
      bw.gradKey = op;
  }
  Operation *dsReader =
      bw.gradScoresTranspose ? bw.gradScoresTranspose : bw.gradKey;
  if (!bw.gradQuery || !bw.gradKey ||
      !onlyUsedBy(gradScores, {bw.gradQuery, dsReader})) {
    reason = "the backward's dS is not read by dQ = dS K and dK = dS^T Q "
             "alone";
    return failure();
  }
  if (!onlyUsedBy(gradProbabilities, {delta, ds}) ||
      (bw.gradProbabilitiesRounding &&
       !onlyUsedBy(unrounded, {bw.gradProbabilitiesRounding})) ||
      !onlyUsedBy(delta.getResult(0), {ds})) {
    reason = "the backward's dP or D have other users";
    return failure();
  }
  roundedResult(bw.gradValue, bw.gradValueRounding);
  roundedResult(bw.gradQuery, bw.gradQueryRounding);
  roundedResult(bw.gradKey, bw.gradKeyRounding);
  return bw;
}

/// The backward's types and places: dO and the gradients in the forward's
/// element type, every op after the forward's last one in its block (where
/// the fused ops go).
LogicalResult checkBackward(AttentionMatch &match, Value forwardResult,
                            std::string &reason) {
  BackwardMatch &bw = *match.backward;
  Type element = getElementTypeOrSelf(match.query.getType());
  for (Value v : {bw.gradOutput, readResult(bw.gradQuery, bw.gradQueryRounding),
                  readResult(bw.gradKey, bw.gradKeyRounding),
                  readResult(bw.gradValue, bw.gradValueRounding)})
    if (getElementTypeOrSelf(v.getType()) != element) {
      reason = "the backward's dO or gradients are not in the forward's "
               "element type";
      return failure();
    }
  // The fused backward goes before the first of the two contractions
  // that read dO, which must follow the fused forward (at `last`).
  Operation *last = forwardResult.getDefiningOp();
  for (Operation *op : bw.ops())
    if (op && op->getBlock() != last->getBlock()) {
      reason = "the backward is not in the forward's block";
      return failure();
    }
  for (Operation *op : {bw.gradValue.getOperation(),
                        bw.gradProbabilities.getOperation()})
    if (!last->isBeforeInBlock(op)) {
      reason = "the backward reads dO before the forward's output";
      return failure();
    }
  return success();
}

FailureOr<AttentionMatch> matchScores(Value scaledScores, AttentionMatch &match,
                                      std::string &reason) {
  linalg::LinalgOp output = match.output;
  auto scaled = scaledScores.getDefiningOp<linalg::GenericOp>();
  Value scores = scaledScores;
  if (scaled && scaled.getNumReductionLoops() == 0) {
    if (failed(matchScaled(scaled, match, reason)))
      return failure();
    match.scaled = scaled;
    scores = throughRounding(scaled.getDpsInputs()[0], match.scoresRounding);
  } else {
    // The softmax reads Q K^T itself: f32 scores, nothing between.
    scaled = {};
    if (!getElementTypeOrSelf(scores.getType()).isF32()) {
      reason = "the softmax input is not computed by an elementwise scale";
      return failure();
    }
  }
  auto qk = scores.getDefiningOp<linalg::LinalgOp>();
  if (qk && isBatchContraction(qk, /*transposedRhs=*/true)) {
    match.key = qk.getDpsInputs()[1];
  } else if (auto transpose = qk ? qk.getDpsInputs()[1]
                                       .getDefiningOp<linalg::TransposeOp>()
                                 : linalg::TransposeOp();
             transpose && isBatchContraction(qk, /*transposedRhs=*/false) &&
             transpose.getPermutation() == ArrayRef<int64_t>{0, 2, 1}) {
    // TOSA's form: K [b, n, k] transposed by its own op, then [b, k, n].
    match.keyTranspose = transpose;
    match.key = transpose.getInput();
  } else {
    reason = "the scores are not Q K^T as a batched contraction from zero "
             "with K as [b, n, k] (or transposed to [b, k, n] by "
             "linalg.transpose)";
    return failure();
  }
  match.scores = qk;
  match.query = qk.getDpsInputs()[0];
  match.value = output.getDpsInputs()[1];
  // A scale on Q or K before Q K^T joins the op's scale (exact when it is
  // a power of two; otherwise the op scales the f32 scores, where the graph
  // rounded the scaled operand first).
  double factor = 1.0;
  Value unscaled;
  if (Operation *op = matchOperandScale(match.query, qk, unscaled, factor)) {
    match.queryScale = op;
    match.query = unscaled;
    match.scale = float(double(match.scale) * factor);
  }
  Operation *keyUser = match.keyTranspose ? match.keyTranspose
                                          : qk.getOperation();
  if (Operation *op = matchOperandScale(match.key, keyUser, unscaled, factor)) {
    match.keyScale = op;
    match.key = unscaled;
    match.scale = float(double(match.scale) * factor);
  }
  if (!std::isfinite(match.scale) || match.scale == 0.0f) {
    reason = "the combined scale is not a finite nonzero f32";
    return failure();
  }

  // Nothing else may read the intermediate tensors: they disappear. P may
  // be saved for the written backward, which then fuses too.
  Operation *scaledOp = scaled;
  bool softmaxPrivate;
  Value probabilities;
  if (match.softmax) {
    Operation *prob =
        match.probRounding ? match.probRounding : match.softmax;
    probabilities = prob->getResult(0);
    softmaxPrivate =
        onlyUsedBy(scaledScores, {match.softmax}) &&
        (!match.probRounding ||
         onlyUsedBy(match.softmax->getResult(0), {match.probRounding}));
  } else {
    Operation *rowMax = match.rowMax, *rowSum = match.rowSum,
              *normalize = match.normalize;
    probabilities = normalize->getResult(0);
    softmaxPrivate = onlyUsedBy(scaledScores, {rowMax, rowSum, normalize}) &&
                     onlyUsedBy(rowMax->getResult(0), {rowSum, normalize}) &&
                     onlyUsedBy(rowSum->getResult(0), {normalize});
  }
  if (softmaxPrivate && !onlyUsedBy(probabilities, {output})) {
    FailureOr<BackwardMatch> backward =
        matchBackward(probabilities, match, reason);
    if (failed(backward)) {
      if (!reason.empty())
        return failure();
      softmaxPrivate = false;
    } else if (match.causalOffset < 0) {
      reason = "the backward of a causal mask with a negative offset (rows "
               "that see no key) is not modeled";
      return failure();
    } else {
      // A scale absorbed from Q or K is exact for the backward too: the
      // backward matched reads the op's own (unscaled) operands with dS
      // scaled by the op's combined scale, so its dQ and dK are the op's
      // gradients. A backward through the scale reads the scaled operand,
      // which then has two users and was not absorbed.
      match.backward = *backward;
    }
  }
  if ((scaledOp &&
       !onlyUsedBy(qk->getResult(0), {match.scoresRounding
                                          ? match.scoresRounding
                                          : scaledOp})) ||
      (match.scoresRounding &&
       !onlyUsedBy(match.scoresRounding->getResult(0), {scaledOp})) ||
      !softmaxPrivate) {
    reason = "the scores or probabilities have other users (saved for a "
             "backward pass?)";
    return failure();
  }

  // One element type for Q, K, V and the result.
  Type element = getElementTypeOrSelf(match.query.getType());
  Value result = output->getResult(0);
  if (getElementTypeOrSelf(result.getType()) != element &&
      result.hasOneUse()) {
    auto rounding = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
    if (rounding && isRounding(rounding) &&
        getElementTypeOrSelf(rounding.getResult(0).getType()) == element) {
      match.outputRounding = rounding;
      result = rounding.getResult(0);
    }
  }
  if (match.mask) {
    Type maskElement = getElementTypeOrSelf(match.mask.getType());
    if (!maskElement.isInteger(1) && !maskElement.isF32() &&
        maskElement != element) {
      reason = "the mask's element type is neither f32, i1 nor the graph's";
      return failure();
    }
  }
  if (!isa<Float32Type, BFloat16Type, Float16Type>(element) ||
      getElementTypeOrSelf(match.key.getType()) != element ||
      getElementTypeOrSelf(match.value.getType()) != element ||
      getElementTypeOrSelf(result.getType()) != element) {
    reason = "Q, K, V and the output do not share one f32, bf16 or f16 "
             "element type";
    return failure();
  }
  if (match.backward && failed(checkBackward(match, result, reason)))
    return failure();
  return match;
}

/// The chain that ends at `output` (a P V candidate). Fails with an empty
/// reason when `output` is no attention at all, with the reason why it is
/// left as written otherwise.
FailureOr<AttentionMatch> matchAttention(linalg::LinalgOp output,
                                         std::string &reason) {
  AttentionMatch match;
  match.output = output;
  if (!output || output.getNumDpsInputs() != 2)
    return failure();
  FailureOr<Value> scaledScores = matchNamedSoftmax(output, match, reason);
  if (failed(scaledScores)) {
    if (!reason.empty())
      return failure();
    scaledScores = matchSoftmaxChain(output, match, reason);
    if (failed(scaledScores))
      return failure();
  }
  return matchScores(*scaledScores, match, reason);
}


/// `value` rounded (to nearest even) to `element` by an elementwise generic.
Value roundTo(RewriterBase &rewriter, Location loc, Value value,
              Type element) {
  auto type = cast<RankedTensorType>(value.getType());
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, value), element);
  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             rewriter, loc, empty.getType(), ValueRange{value},
             ValueRange{empty}, SmallVector<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   b, l,
                   arith::TruncFOp::create(b, l, element, args[0])
                       .getResult());
             })
      .getResult(0);
}

/// Erases the ops of a fused chain that nothing uses any more, consumers
/// first, with the fills and empties that were only their inits.
void eraseUnused(RewriterBase &rewriter, ArrayRef<Operation *> chain) {
  for (Operation *op : chain) {
    if (!op || !op->use_empty())
      continue;
    SmallVector<Value> inits;
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      for (OpOperand &init : dps.getDpsInitsMutable())
        inits.push_back(init.get());
    rewriter.eraseOp(op);
    for (Value init : inits)
      if (Operation *def = init.getDefiningOp();
          def && isa<linalg::FillOp, tensor::EmptyOp>(def))
        eraseDeadProducers(rewriter, init);
  }
}

/// The graph's sum of a gradient of repeated K or V over each group:
/// `grad` [B, s, d] expanded to the repeat's shape and reduced over its
/// repeat dimension from zero (in f32, the widened values) by a generic, as
/// fp8-gen writes GQA's backward. Returns that generic, or null.
linalg::GenericOp findGroupSum(Value grad, const KVRepeat &repeat) {
  if (!grad.hasOneUse())
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*grad.getUsers().begin());
  if (!expand || expand.getResultType().getShape() != repeat.type.getShape() ||
      expand.getReassociationIndices() != repeat.groups ||
      !expand.getResult().hasOneUse())
    return {};
  auto sum = dyn_cast<linalg::GenericOp>(*expand->getUsers().begin());
  if (!sum || sum.getNumDpsInputs() != 1 || sum.getNumDpsInits() != 1 ||
      sum.getNumReductionLoops() != 1 ||
      !isFilledWith(sum.getDpsInits()[0], 0.0f))
    return {};
  SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
  SmallVector<unsigned> reductions;
  sum.getReductionDims(reductions);
  if (!maps[0].isPermutation() ||
      maps[0].getResult(repeat.dim) !=
          getAffineDimExpr(reductions.front(), sum.getContext()) ||
      !maps[1].isProjectedPermutation())
    return {};
  // acc + (widened) x, nothing else.
  Block *body = sum.getBody();
  auto add = yielded(sum).getDefiningOp<arith::AddFOp>();
  auto isInput = [&](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    return v == body->getArgument(0);
  };
  if (!add || bodyOps(sum).size() > 2 ||
      !((add.getLhs() == body->getArgument(1) && isInput(add.getRhs())) ||
        (add.getRhs() == body->getArgument(1) && isInput(add.getLhs()))))
    return {};
  return sum;
}

/// Replaces the group sum `sum` by the op's unrepeated gradient `grad`
/// ([1, B / g, s, d], summed over the group in f32 and rounded once),
/// widened and laid out as the sum's result: the same generic without its
/// reduction loop, a copy.
void replaceGroupSum(RewriterBase &rewriter, linalg::GenericOp sum,
                     const KVRepeat &repeat, Value grad) {
  rewriter.setInsertionPoint(sum);
  Location loc = sum.getLoc();
  int64_t r = repeat.dim;
  SmallVector<int64_t> shape(repeat.type.getShape());
  shape.erase(shape.begin() + r);
  SmallVector<ReassociationIndices> groups;
  for (const ReassociationIndices &g : repeat.groups) {
    ReassociationIndices shifted;
    for (int64_t d : g)
      if (d != r)
        shifted.push_back(d - (d > r));
    groups.push_back(shifted);
  }
  auto gradType = cast<RankedTensorType>(grad.getType());
  Value unrepeated = tensor::CollapseShapeOp::create(
      rewriter, loc, grad, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  Value expanded = tensor::ExpandShapeOp::create(
      rewriter, loc, gradType.clone(shape), unrepeated, groups);
  SmallVector<unsigned> reductions;
  sum.getReductionDims(reductions);
  llvm::SmallBitVector dropped(sum.getNumLoops());
  dropped.set(reductions.front());
  SmallVector<AffineMap> maps = sum.getIndexingMapsArray();
  SmallVector<AffineMap> copyMaps = {
      compressDims(maps[0].dropResult(r), dropped),
      compressDims(maps[1], dropped)};
  Value init = sum.getDpsInits()[0];
  Type resultElement = getElementTypeOrSelf(init.getType());
  auto copy = linalg::GenericOp::create(
      rewriter, loc, init.getType(), ValueRange{expanded},
      ValueRange{tensor::EmptyOp::create(
          rewriter, loc, tensor::getMixedSizes(rewriter, loc, init),
          resultElement)},
      copyMaps,
      SmallVector<utils::IteratorType>(sum.getNumLoops() - 1,
                                       utils::IteratorType::parallel),
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value x = args[0];
        if (x.getType() != resultElement)
          x = arith::ExtFOp::create(b, l, resultElement, x);
        linalg::YieldOp::create(b, l, x);
      });
  Operation *expand = sum.getDpsInputs()[0].getDefiningOp();
  rewriter.replaceOp(sum, copy.getResult(0));
  eraseUnused(rewriter, {expand});
}

/// The written backward as one fp8.attention_grad of the fused forward,
/// placed before the backward's first op. When the forward reads K and V
/// unrepeated (GQA recovered) and the graph sums both gradients over each
/// group, the op reads them unrepeated too and its gradients replace the
/// sums; otherwise it reads K and V as the graph's backward does,
/// repeated, and the graph's own sums stay as written.
void fuseBackward(RewriterBase &rewriter, AttentionMatch &match,
                  AttentionOp forward, bool grouped) {
  BackwardMatch &bw = *match.backward;
  std::optional<KVRepeat> keyRepeat, valueRepeat;
  linalg::GenericOp keySum, valueSum;
  if (grouped) {
    keyRepeat = findRepeat(match.key);
    valueRepeat = findRepeat(match.value);
    if (keyRepeat && valueRepeat) {
      keySum = findGroupSum(readResult(bw.gradKey, bw.gradKeyRounding),
                            *keyRepeat);
      valueSum = findGroupSum(readResult(bw.gradValue, bw.gradValueRounding),
                              *valueRepeat);
    }
  }
  bool sumsFused = keySum && valueSum;
  // Before the first reader of dO: every gradient's users come after it.
  Operation *first = bw.gradValue;
  if (bw.gradProbabilities->isBeforeInBlock(first))
    first = bw.gradProbabilities;
  rewriter.setInsertionPoint(first);
  Location loc = bw.gradScores.getLoc();
  Value key = forward.getKey(), value = forward.getValue();
  if (grouped && !sumsFused) {
    key = addUnitBatch(rewriter, loc, match.key);
    value = addUnitBatch(rewriter, loc, match.value);
  }
  Value query = forward.getQuery();
  auto grad = AttentionGradOp::create(
      rewriter, loc, query.getType(), key.getType(), value.getType(), query,
      key, value, forward.getOutput(),
      addUnitBatch(rewriter, loc, bw.gradOutput), forward.getLse(),
      forward.getMask(), forward.getScaleAttr(), forward.getCausalAttr(),
      forward.getCausalOffsetAttr());
  auto replace = [&](linalg::LinalgOp op, Operation *rounding, Value with) {
    Value old = readResult(op, rounding);
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, old.getType(), with,
        SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
    rewriter.replaceAllUsesWith(old, collapsed);
  };
  replace(bw.gradQuery, bw.gradQueryRounding, grad.getGradQuery());
  if (sumsFused) {
    replaceGroupSum(rewriter, keySum, *keyRepeat, grad.getGradKey());
    replaceGroupSum(rewriter, valueSum, *valueRepeat, grad.getGradValue());
  } else {
    replace(bw.gradKey, bw.gradKeyRounding, grad.getGradKey());
    replace(bw.gradValue, bw.gradValueRounding, grad.getGradValue());
  }
  eraseUnused(rewriter, bw.ops());
}

void fuse(RewriterBase &rewriter, AttentionMatch &match) {
  Operation *last = match.outputRounding ? match.outputRounding
                                         : match.output.getOperation();
  rewriter.setInsertionPoint(last);
  Location loc = match.output.getLoc();
  Value key3 = match.key, value3 = match.value;
  recoverGroupedKV(rewriter, loc, key3, value3);
  Value query = addUnitBatch(rewriter, loc, match.query);
  Value key = addUnitBatch(rewriter, loc, key3);
  Value value = addUnitBatch(rewriter, loc, value3);
  Value mask = match.mask ? addUnitBatch(rewriter, loc, match.mask) : Value();
  auto resultType = cast<RankedTensorType>(last->getResult(0).getType());
  SmallVector<int64_t> shape = {1};
  llvm::append_range(shape, resultType.getShape());
  // A training step's forward keeps the log-sum-exp for the backward, and
  // its output in f32, from which the backward's D = rowsum(dO O) is exact
  // to f32 (from a bf16 output, D is 2^-9 off and dS no longer sums to 0);
  // the graph's own users get it rounded, the same bits as rounded inside.
  Type lseType, outputType = resultType.clone(shape);
  if (match.backward) {
    lseType = RankedTensorType::get(ArrayRef<int64_t>(shape).drop_back(),
                                    rewriter.getF32Type());
    outputType = resultType.clone(shape, rewriter.getF32Type());
  }
  auto attention = AttentionOp::create(
      rewriter, loc, outputType, lseType, query, key, value, mask,
      rewriter.getF32FloatAttr(match.scale),
      match.causal ? rewriter.getUnitAttr() : UnitAttr(),
      rewriter.getI64IntegerAttr(match.causalOffset));
  Value output = attention.getOutput();
  if (outputType != resultType.clone(shape))
    output = roundTo(rewriter, loc, output, resultType.getElementType());
  Value collapsed = tensor::CollapseShapeOp::create(
      rewriter, loc, resultType, output,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  rewriter.replaceOp(last, collapsed);
  if (match.backward)
    fuseBackward(rewriter, match, attention, /*grouped=*/key3 != match.key);
  // `last` is gone already.
  SmallVector<Operation *> chain = {match.output,   match.probRounding,
                                    match.softmax,  match.normalize,
                                    match.rowSum,   match.rowMax,
                                    match.scaled,   match.scoresRounding,
                                    match.scores,   match.keyTranspose,
                                    match.queryScale, match.keyScale};
  llvm::erase(chain, last);
  eraseUnused(rewriter, chain);
  // The graph's repeat of K and V, when the op reads them unrepeated.
  if (key3 != match.key) {
    eraseDeadProducers(rewriter, match.key);
    eraseDeadProducers(rewriter, match.value);
  }
}

struct FP8FuseAttentionPass
    : fp8::impl::FP8FuseAttentionBase<FP8FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
          op.getNumReductionLoops() == 1)
        candidates.push_back(op);
    });
    // Fusing a training step's attention erases its backward, whose
    // contractions are candidates after it: they are skipped.
    struct ErasedOps : RewriterBase::Listener {
      DenseSet<Operation *> ops;
      void notifyOperationErased(Operation *op) override { ops.insert(op); }
    } erased;
    IRRewriter rewriter(&getContext(), &erased);
    for (linalg::LinalgOp candidate : candidates) {
      if (erased.ops.contains(candidate))
        continue;
      std::string reason;
      FailureOr<AttentionMatch> match = matchAttention(candidate, reason);
      if (failed(match) && reason.empty()) {
        // Not the fused-generic form; maybe one op per step (TOSA's).
        Location loc = candidate->getLoc();
        FailureOr<OpByOpFusion> fused =
            fuseOpByOp(rewriter, candidate, reason);
        if (succeeded(fused)) {
          if (remarks)
            emitRemark(loc, "attention fused into fp8.attention (")
                << (fused->masked ? "mask, " : "") << "scale "
                << fused->scale << ")";
          continue;
        }
      }
      if (failed(match)) {
        if (reason.empty())
          continue;
        // The reason stays on the op for the JSON report (Report.cpp).
        candidate->setAttr(kAttentionReasonAttr,
                           rewriter.getStringAttr(reason));
        if (remarks)
          candidate->emitRemark("attention left as written: ") << reason;
        continue;
      }
      if (remarks)
        candidate->emitRemark("attention fused into fp8.attention (")
            << (match->causal ? "causal, " : "")
            << (match->causalOffset
                    ? "offset " + std::to_string(match->causalOffset) + ", "
                    : std::string())
            << (match->mask ? "mask, " : "") << "scale " << match->scale
            << ")"
            << (match->backward ? ", its backward into fp8.attention_grad"
                                : "");
      fuse(rewriter, *match);
    }
    // What fusion made, simplified exactly where it can be (a mask that
    // changes no score, a causal flag that masks nothing): the kernels
    // take an attention without a mask.
    SmallVector<Operation *> attentions;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, AttentionGradOp>(op))
        attentions.push_back(op);
    });
    RewritePatternSet patterns(&getContext());
    AttentionOp::getCanonicalizationPatterns(patterns, &getContext());
    AttentionGradOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(attentions, std::move(patterns), config);
  }
};
} // namespace
