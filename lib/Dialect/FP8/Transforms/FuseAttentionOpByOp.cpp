//===- FuseAttentionOpByOp.cpp - attention as TOSA imports leave it -------===//
//
// fp8-fuse-attention's second matcher. TOSA exports write attention one op
// per step (tosa.matmul, reshape, mul, add, reduce_max, sub, exp,
// reduce_sum, reciprocal, mul, reshape, tosa.matmul), and the import keeps
// one linalg op per step, on a [batch..., sq, sk] score space of any rank
// with reshapes to and from the GEMMs' [B, sq, sk]:
//
//   S  = (Q K^T) * c (+ mask)        elementwise generics, c a constant
//   m  = reduce max over j of S      from -inf or the lowest finite float
//   E  = exp(S - m)                  one generic each, m broadcast on j
//   l  = reduce sum over j of E      from 0
//   P  = E * (1 / l)  or  E / l
//   O  = P V
//
// The softmax must be in f32. The chain becomes fp8.attention on [1, B, s,
// d] views, with the mask reshaped to [1, 1 or B, sq or 1, sk or 1].
//
//===----------------------------------------------------------------------===//

#include "FuseAttention.h"

#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::attention;

namespace {
/// The ops of one attention, from P V backwards.
struct Chain {
  llvm::SetVector<Operation *> ops;
  SmallVector<Operation *> inits; // fills etc., erased when left unused
  Value mask;
  AffineMap maskMap;
  // An i1 mask selecting -inf: where it is false (`keepWhere`), or true.
  bool booleanMask = false, keepWhere = true;
  float scale = 1.0f;
  int64_t rank = 0; // of the score space
};

/// `v` is computed from a batched GEMM's result through reshapes and the
/// first identity-mapped input of elementwise generics: the scores, where
/// an added mask is not.
bool reachesGemm(Value v) {
  for (int depth = 0; depth < 16; ++depth) {
    Operation *def = v.getDefiningOp();
    if (auto gemm = dyn_cast_or_null<linalg::LinalgOp>(def);
        gemm && (isMultiBatchContraction(gemm, /*transposedRhs=*/true) ||
                 isMultiBatchContraction(gemm, /*transposedRhs=*/false)))
      return true;
    if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    auto generic = dyn_cast_or_null<linalg::GenericOp>(def);
    if (!generic || generic.getNumReductionLoops() != 0)
      return false;
    Value next;
    for (OpOperand *input : generic.getDpsInputOperands())
      if (generic.getMatchingIndexingMap(input).isIdentity()) {
        next = input->get();
        break;
      }
    if (!next)
      return false;
    v = next;
  }
  return false;
}

/// `v` before any expand_shape / collapse_shape / tensor.cast (torch-mlir
/// casts each reduction's result to its type), which join the chain.
Value throughReshapes(Value v, Chain &chain) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
            def))
      break;
    chain.ops.insert(def);
    v = def->getOperand(0);
  }
  return v;
}

/// An elementwise generic over `rank` parallel loops computing one `OpTy`
/// of its block arguments (and constants), with an identity result map.
template <typename OpTy> OpTy elementwise(Value result, int64_t rank) {
  auto op = result.getDefiningOp<linalg::GenericOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || op.getNumLoops() != rank ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return {};
  Block *body = op.getBody();
  if (!llvm::hasSingleElement(body->without_terminator()))
    return {};
  auto inner = dyn_cast<OpTy>(&body->front());
  if (!inner || body->getTerminator()->getOperand(0) != inner->getResult(0))
    return {};
  return inner;
}

/// The input `arg` (a block argument of the generic) reads, and its map.
std::pair<Value, AffineMap> inputOf(Value arg) {
  auto blockArg = dyn_cast<BlockArgument>(arg);
  if (!blockArg)
    return {};
  auto generic =
      dyn_cast<linalg::GenericOp>(blockArg.getOwner()->getParentOp());
  if (!generic || blockArg.getArgNumber() >= generic.getNumDpsInputs())
    return {};
  OpOperand *operand = generic.getDpsInputOperand(blockArg.getArgNumber());
  return {operand->get(), generic.getMatchingIndexingMap(operand)};
}

/// A float constant: a scalar, or a splat tensor read by the generic.
std::optional<double> constantOf(Value arg) {
  FloatAttr scalar;
  if (matchPattern(arg, m_Constant(&scalar)))
    return scalar.getValueAsDouble();
  auto [input, map] = inputOf(arg);
  SplatElementsAttr splat;
  if (input && matchPattern(input, m_Constant(&splat)) &&
      isa<FloatType>(splat.getElementType()))
    return splat.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// (d0, ..., d[rank-2], 0) or (d0, ..., d[rank-2]): one value per row.
bool isRowMap(AffineMap map, int64_t rank) {
  if (map.getNumDims() != rank ||
      (map.getNumResults() != rank && map.getNumResults() != rank - 1))
    return false;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()))
      return false;
  return map.getNumResults() == rank - 1 ||
         map.getResult(rank - 1) == getAffineConstantExpr(0, map.getContext());
}

/// `row` is a reduction over the last axis of `input` from `init`,
/// combining with `CombineOp` (linalg.reduce or a reduction generic). A
/// max may come with the index of the maximum that nothing reads
/// (torch-mlir's max.dim): `allowIndex`.
template <typename... CombineOps>
bool isRowReduction(Value row, Value input, ArrayRef<float> inits,
                    Chain &chain, bool allowIndex = false) {
  auto op = row.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() ||
      cast<OpResult>(row).getResultNumber() != 0)
    return false;
  int64_t rank = cast<ShapedType>(input.getType()).getRank();
  Block *body = nullptr;
  if (auto reduce = dyn_cast<linalg::ReduceOp>(op.getOperation())) {
    if (reduce.getInputs().size() != 1 || reduce.getInputs()[0] != input ||
        reduce.getDimensions() != ArrayRef<int64_t>{rank - 1})
      return false;
    body = reduce.getBody();
  } else if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
    // The row [..., sq] or, keeping the key axis as 1, [..., sq, 1].
    auto isRowResult = [&](AffineMap map) { return isRowMap(map, rank); };
    if (generic.getNumDpsInputs() != 1 || generic.getDpsInputs()[0] != input ||
        generic.getNumReductionLoops() != 1 ||
        generic.getIteratorTypesArray().back() !=
            utils::IteratorType::reduction ||
        !generic.getIndexingMapsArray()[0].isIdentity() ||
        !llvm::all_of(
            ArrayRef<AffineMap>(generic.getIndexingMapsArray()).drop_front(),
            isRowResult))
      return false;
    body = generic.getBody();
  } else {
    return false;
  }
  bool combines;
  if (op.getNumDpsInits() == 1) {
    Operation &combine = body->front();
    combines = llvm::hasSingleElement(body->without_terminator()) &&
               isa<CombineOps...>(combine) &&
               body->getTerminator()->getOperand(0) == combine.getResult(0) &&
               llvm::is_contained(combine.getOperands(), body->getArgument(0)) &&
               llvm::is_contained(combine.getOperands(), body->getArgument(1));
  } else {
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    combines = allowIndex && isMaxReductionBody(generic);
  }
  Value init = op.getDpsInits()[0];
  if (!combines ||
      !llvm::any_of(inits, [&](float x) { return isFilledWith(init, x); }))
    return false;
  chain.ops.insert(op);
  for (Value each : op.getDpsInits())
    chain.inits.push_back(each.getDefiningOp());
  return true;
}

/// The softmax P = E * (1 / l) or E / l, back to its input S. Fails with
/// an empty reason when `probabilities` is no softmax.
FailureOr<Value> matchSoftmax(Value probabilities, Chain &chain,
                              std::string &reason) {
  int64_t rank = chain.rank;
  Value exps, sumRow;
  if (auto mul = elementwise<arith::MulFOp>(probabilities, rank)) {
    // One operand is E, the other 1 / l broadcast on j.
    for (auto [e, r] : {std::pair(mul.getLhs(), mul.getRhs()),
                        std::pair(mul.getRhs(), mul.getLhs())}) {
      auto [eInput, eMap] = inputOf(e);
      auto [rInput, rMap] = inputOf(r);
      if (!eInput || !rInput || !eMap.isIdentity() || !isRowMap(rMap, rank))
        continue;
      Chain probe = chain;
      Value reciprocalRow = throughReshapes(rInput, probe);
      auto div = elementwise<arith::DivFOp>(
          reciprocalRow, cast<ShapedType>(reciprocalRow.getType()).getRank());
      if (!div || constantOf(div.getLhs()) != 1.0)
        continue;
      auto [lInput, lMap] = inputOf(div.getRhs());
      if (!lInput || !lMap.isIdentity())
        continue;
      probe.ops.insert(div->getParentOp());
      chain = probe;
      exps = eInput;
      sumRow = throughReshapes(lInput, chain);
      break;
    }
  } else if (auto div = elementwise<arith::DivFOp>(probabilities, rank)) {
    auto [eInput, eMap] = inputOf(div.getLhs());
    auto [lInput, lMap] = inputOf(div.getRhs());
    if (eInput && lInput && eMap.isIdentity() && isRowMap(lMap, rank)) {
      exps = eInput;
      sumRow = throughReshapes(lInput, chain);
    }
  }
  if (!exps)
    return failure();
  auto exp = elementwise<math::ExpOp>(exps, rank);
  if (!exp)
    return failure();
  auto [dInput, dMap] = inputOf(exp.getOperand());
  auto sub = dInput ? elementwise<arith::SubFOp>(dInput, rank) : nullptr;
  if (!sub || !dMap.isIdentity())
    return failure();
  auto [sInput, sMap] = inputOf(sub.getLhs());
  auto [mInput, mMap] = inputOf(sub.getRhs());
  if (!sInput || !mInput || !sMap.isIdentity() || !isRowMap(mMap, rank))
    return failure();
  // From here on it is a softmax: what does not fit has a reason.
  chain.ops.insert(probabilities.getDefiningOp());
  chain.ops.insert(exps.getDefiningOp());
  chain.ops.insert(dInput.getDefiningOp());
  if (!getElementTypeOrSelf(sInput.getType()).isF32()) {
    reason = "the softmax is not computed in f32";
    return failure();
  }
  const float lowest = -std::numeric_limits<float>::max();
  Value maxRow = throughReshapes(mInput, chain);
  if (!isRowReduction<arith::MaximumFOp, arith::MaxNumFOp>(
          maxRow, sInput, {-std::numeric_limits<float>::infinity(), lowest},
          chain, /*allowIndex=*/true)) {
    reason = "the softmax's row max is not a max over the keys from -inf";
    return failure();
  }
  if (!isRowReduction<arith::AddFOp>(sumRow, exps, {0.0f}, chain)) {
    reason = "the softmax's sum is not a sum of exp(s - max) over the keys";
    return failure();
  }
  return sInput;
}

/// `v` is a softmax's result (through reshapes and a rounding): the named
/// linalg.softmax, the op-by-op chain, or the fused form's generic that
/// divides an exp.
bool isSoftmaxResult(Value v) {
  Chain probe;
  v = throughReshapes(v, probe);
  if (auto rounding = v.getDefiningOp<linalg::GenericOp>();
      rounding && isRounding(rounding))
    v = throughReshapes(rounding.getDpsInputs()[0], probe);
  if (v.getDefiningOp<linalg::SoftmaxOp>())
    return true;
  auto generic = v.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumReductionLoops() != 0)
    return false;
  probe.rank = generic.getNumLoops();
  std::string why;
  if (succeeded(matchSoftmax(v, probe, why)) || !why.empty())
    return true;
  Value yielded = generic.getBody()->getTerminator()->getOperand(0);
  if (auto trunc = yielded.getDefiningOp<arith::TruncFOp>())
    yielded = trunc.getIn();
  auto div = yielded.getDefiningOp<arith::DivFOp>();
  return div && div.getLhs().getDefiningOp<math::ExpOp>();
}

/// P V's `probabilities` are a softmax changed by an elementwise generic
/// (dropout's mask and 1 / (1 - p), or anything else the op does not
/// model) that P V alone reads, or that alone reads the softmax. (A
/// backward's dS = P (dP - D) reads P beside dV and D, and dQ and dK
/// read dS: no attention.)
bool isModifiedSoftmax(Value probabilities) {
  auto modifier = probabilities.getDefiningOp<linalg::GenericOp>();
  return modifier && modifier.getNumReductionLoops() == 0 &&
         !isRounding(modifier) &&
         llvm::any_of(modifier.getDpsInputs(), [&](Value input) {
           return (probabilities.hasOneUse() || input.hasOneUse()) &&
                  isSoftmaxResult(input);
         });
}

/// S back to Q K^T: constant multiplies (the scale) and at most one added
/// mask tensor, applied after the scale. Walking back, the ops come last
/// applied first: a scale seen before the mask was applied after it.
FailureOr<linalg::LinalgOp> matchScores(Value scores, Chain &chain,
                                        std::string &reason) {
  bool masked = false, scaled = false;
  // At most one mask, `m` read at `map` on the scores.
  auto takeMask = [&](Value m, AffineMap map) {
    if (masked) {
      reason = "more than one mask is applied to the scores";
      return false;
    }
    masked = true;
    chain.mask = m;
    chain.maskMap = map;
    return true;
  };
  while (true) {
    scores = throughReshapes(scores, chain);
    if (auto qk = scores.getDefiningOp<linalg::LinalgOp>();
        qk && (isMultiBatchContraction(qk, /*transposedRhs=*/true) ||
               isMultiBatchContraction(qk, /*transposedRhs=*/false))) {
      // -inf times the scale stays -inf, before or after it, when the
      // scale is positive.
      if (chain.booleanMask && !(chain.scale > 0.0f)) {
        reason = "the scores are selected to -inf and scaled by a "
                 "non-positive constant";
        return failure();
      }
      return qk;
    }
    int64_t rank = cast<ShapedType>(scores.getType()).getRank();
    Operation *step = nullptr;
    Value next;
    if (auto ext = elementwise<arith::ExtFOp>(scores, rank)) {
      // Q K^T in bf16 / f16 widened for an f32 softmax (the op keeps the
      // scores in f32: at least as accurate).
      auto [input, map] = inputOf(ext.getIn());
      if (input && map.isIdentity()) {
        next = input;
        step = ext;
      }
    } else if (auto mul = elementwise<arith::MulFOp>(scores, rank)) {
      for (auto [x, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                          std::pair(mul.getRhs(), mul.getLhs())}) {
        auto [input, map] = inputOf(x);
        std::optional<double> constant = constantOf(c);
        if (!input || !map.isIdentity() || !constant)
          continue;
        scaled = true;
        chain.scale *= float(*constant);
        next = input;
        step = mul;
        break;
      }
    } else if (auto div = elementwise<arith::DivFOp>(scores, rank)) {
      auto [input, map] = inputOf(div.getLhs());
      std::optional<double> constant = constantOf(div.getRhs());
      std::optional<double> factor =
          constant ? reciprocalFactor(*constant) : std::nullopt;
      if (input && map.isIdentity() && factor) {
        scaled = true;
        chain.scale *= float(*factor);
        next = input;
        step = div;
      }
    } else if (auto add = elementwise<arith::AddFOp>(scores, rank)) {
      auto [lhs, lhsMap] = inputOf(add.getLhs());
      auto [rhs, rhsMap] = inputOf(add.getRhs());
      // The scores are the operand with the full shape that leads back to
      // the GEMM; the other is the mask.
      for (auto [x, xMap, m, mMap, mArg] :
           {std::tuple(lhs, lhsMap, rhs, rhsMap, add.getRhs()),
            std::tuple(rhs, rhsMap, lhs, lhsMap, add.getLhs())}) {
        if (!x || !m || !xMap.isIdentity() || !isBroadcastMap(mMap, rank) ||
            constantOf(mArg) || !reachesGemm(x))
          continue;
        if (scaled && !masked) {
          reason = "the mask is added before the scores are scaled";
          return failure();
        }
        if (!takeMask(m, mMap))
          return failure();
        next = x;
        step = add;
        break;
      }
    } else if (auto select = elementwise<arith::SelectOp>(scores, rank)) {
      // A boolean mask: select(m, s, -inf) keeps where m is true,
      // select(m, -inf, s) where it is false.
      auto [cond, condMap] = inputOf(select.getCondition());
      for (auto [x, fill, keepWhere] :
           {std::tuple(select.getTrueValue(), select.getFalseValue(), true),
            std::tuple(select.getFalseValue(), select.getTrueValue(), false)}) {
        auto [input, map] = inputOf(x);
        std::optional<double> constant = constantOf(fill);
        if (!cond || !input || !map.isIdentity() ||
            !isBroadcastMap(condMap, rank) || !constant ||
            !std::isinf(*constant) || *constant > 0 || !reachesGemm(input))
          continue;
        if (!takeMask(cond, condMap))
          return failure();
        chain.booleanMask = true;
        chain.keepWhere = keepWhere;
        next = input;
        step = select;
        break;
      }
    }
    if (!step) {
      reason = "the scores are modified by something other than a constant "
               "scale, an added mask and a mask selecting -inf";
      return failure();
    }
    chain.ops.insert(step->getParentOp());
    scores = next;
  }
}

/// K [B, sk, d] when `keyT` [B, d, sk] is K transposed by the graph: a
/// linalg.transpose swapping the last two dimensions, maybe with its leading
/// dimensions collapsed into B afterwards (TOSA's 4-D transpose, then the
/// reshape for tosa.matmul). The transpose is left for erasure.
Value untransposed(RewriterBase &rewriter, Location loc, Value keyT,
                   Chain &chain) {
  auto collapse = keyT.getDefiningOp<tensor::CollapseShapeOp>();
  Value transposed = collapse ? collapse.getSrc() : keyT;
  Operation *transpose = transposed.getDefiningOp();
  int64_t rank = cast<ShapedType>(transposed.getType()).getRank();
  if (rank < 2)
    return {};
  SmallVector<int64_t> swapLast = llvm::to_vector(llvm::seq<int64_t>(rank));
  std::swap(swapLast[rank - 2], swapLast[rank - 1]);
  Value key;
  if (auto op = dyn_cast_or_null<linalg::TransposeOp>(transpose)) {
    if (op.getPermutation() == ArrayRef<int64_t>(swapLast))
      key = op.getInput();
  } else if (auto op = dyn_cast_or_null<linalg::GenericOp>(transpose)) {
    // The same as a copy (torch-mlir's transpose): out[.., i, j] = in[.., j,
    // i], nothing computed.
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1 &&
        op.getNumReductionLoops() == 0 && maps[1].isIdentity() &&
        maps[0] == AffineMap::getPermutationMap(swapLast, op.getContext()) &&
        op.getBody()->getTerminator()->getOperand(0) ==
            op.getBody()->getArgument(0))
      key = op.getDpsInputs()[0];
  }
  if (!key)
    return {};
  if (collapse) {
    // Only the leading (batch) dimensions may be merged.
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    if (groups.size() != 3 || groups[1].size() != 1 || groups[2].size() != 1)
      return {};
    key = tensor::CollapseShapeOp::create(rewriter, loc, key, groups);
    chain.inits.push_back(collapse);
  }
  chain.inits.push_back(transpose);
  return key;
}

/// Q or K (`operand` of Q K^T) without a constant multiply that only Q K^T
/// reads, through the reshapes and transposes between them (PyTorch's math
/// SDPA scales both by the square root of the scale): the constant joins
/// `chain.scale`, the views are rebuilt on the unscaled tensor and the
/// multiply is left for erasure. `operand` itself otherwise.
Value absorbOperandScale(RewriterBase &rewriter, Value operand, Chain &chain) {
  Value through = operand;
  SmallVector<Operation *> views; // from Q K^T's operand towards the multiply
  while (Operation *def = through.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             linalg::TransposeOp>(def) ||
        !through.hasOneUse())
      break;
    views.push_back(def);
    through = def->getOperand(0);
  }
  if (!through.hasOneUse())
    return operand;
  auto mul = elementwise<arith::MulFOp>(
      through, cast<ShapedType>(through.getType()).getRank());
  if (!mul)
    return operand;
  for (auto [x, c] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())}) {
    auto [input, map] = inputOf(x);
    std::optional<double> constant = constantOf(c);
    if (!input || !map.isIdentity() || !constant ||
        input.getType() != through.getType())
      continue;
    float combined = float(*constant * double(chain.scale));
    if (!std::isfinite(combined) || combined == 0.0f)
      continue;
    IRMapping mapping;
    mapping.map(through, input);
    Value rebuilt = input;
    for (Operation *view : llvm::reverse(views)) {
      rebuilt = rewriter.clone(*view, mapping)->getResult(0);
      mapping.map(view->getResult(0), rebuilt);
      chain.ops.insert(view);
    }
    chain.scale = combined;
    auto generic = cast<linalg::GenericOp>(mul->getParentOp());
    chain.ops.insert(generic);
    chain.inits.push_back(generic.getDpsInits()[0].getDefiningOp());
    return rebuilt;
  }
  return operand;
}

/// The grouping of [d0, ..., dr-1] (r >= 3) into [d0 * ... * dr-3, dr-2,
/// dr-1].
SmallVector<ReassociationIndices> batchesAsOne(int64_t rank) {
  ReassociationIndices batch =
      llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  return {batch, {rank - 2}, {rank - 1}};
}

/// `value` [d0, ..., dr-1] (r >= 3) as [d0 * ... * dr-3, dr-2, dr-1].
Value asBatchOfMatrices(RewriterBase &rewriter, Location loc, Value value) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  if (rank == 3)
    return value;
  return tensor::CollapseShapeOp::create(rewriter, loc, value,
                                         batchesAsOne(rank));
}

/// `value` [d0, ..., dr-1] (r >= 3) as [1, d0 * ... * dr-3, dr-2, dr-1].
Value asAttentionOperand(RewriterBase &rewriter, Location loc, Value value) {
  return addUnitBatch(rewriter, loc, asBatchOfMatrices(rewriter, loc, value));
}
/// The i1 tensor `mask` negated: the op's boolean mask keeps where true.
Value negated(RewriterBase &rewriter, Location loc, Value mask) {
  auto type = cast<RankedTensorType>(mask.getType());
  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, mask),
      type.getElementType());
  return linalg::GenericOp::create(
             rewriter, loc, type, ValueRange{mask}, ValueRange{empty},
             SmallVector<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [](OpBuilder &b, Location l, ValueRange args) {
               Value one = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
               linalg::YieldOp::create(
                   b, l, arith::XOrIOp::create(b, l, args[0], one).getResult());
             })
      .getResult(0);
}
} // namespace

FailureOr<OpByOpFusion> attention::fuseOpByOp(RewriterBase &rewriter,
                                              linalg::LinalgOp output,
                                              std::string &reason) {
  if (!isMultiBatchContraction(output, /*transposedRhs=*/false))
    return failure();
  Chain chain;
  Value probabilities = throughReshapes(output.getDpsInputs()[0], chain);
  // P rounded to the value's type for P V (the op does not round it: at
  // least as accurate).
  if (auto rounding = probabilities.getDefiningOp<linalg::GenericOp>();
      rounding && isRounding(rounding)) {
    chain.ops.insert(rounding);
    chain.inits.push_back(rounding.getDpsInits()[0].getDefiningOp());
    probabilities = throughReshapes(rounding.getDpsInputs()[0], chain);
  }
  auto spaceType = dyn_cast<RankedTensorType>(probabilities.getType());
  if (!spaceType || spaceType.getRank() < 3)
    return failure();
  chain.rank = spaceType.getRank();
  FailureOr<Value> scores = matchSoftmax(probabilities, chain, reason);
  if (failed(scores)) {
    if (reason.empty() && isModifiedSoftmax(probabilities))
      reason = "the probabilities are changed between the softmax and P V "
               "(dropout, or another modifier the op does not model)";
    return failure();
  }
  FailureOr<linalg::LinalgOp> qk = matchScores(*scores, chain, reason);
  if (failed(qk))
    return failure();
  chain.ops.insert(*qk);
  chain.inits.push_back(qk->getDpsInits()[0].getDefiningOp());
  chain.inits.push_back(output.getDpsInits()[0].getDefiningOp());

  // Reshapes may regroup the batch dimensions, nothing else.
  auto qkType = cast<RankedTensorType>((*qk)->getResult(0).getType());
  auto outType = cast<RankedTensorType>(output->getResult(0).getType());
  auto sameRows = [&](RankedTensorType a, RankedTensorType b) {
    return a.hasStaticShape() && b.hasStaticShape() &&
           a.getShape().take_back(2) == b.getShape().take_back(2) &&
           a.getNumElements() == b.getNumElements();
  };
  auto pvLhs = cast<RankedTensorType>(output.getDpsInputs()[0].getType());
  auto batches = [](RankedTensorType type) {
    return type.getNumElements() /
           (type.getDimSize(type.getRank() - 2) *
            type.getDimSize(type.getRank() - 1));
  };
  if (!sameRows(qkType, spaceType) || !sameRows(pvLhs, spaceType) ||
      !outType.hasStaticShape() || batches(qkType) != batches(outType)) {
    reason = "the reshapes between the GEMMs and the softmax change more "
             "than the batch dimensions (or shapes are dynamic)";
    return failure();
  }

  // Nothing outside the chain may read what the fusion removes.
  for (Operation *op : chain.ops)
    for (Operation *user : op->getUsers())
      if (!chain.ops.contains(user) && user != output) {
        reason = "the scores or probabilities have other users (saved for a "
                 "backward pass?)";
        return failure();
      }

  Value query = qk->getDpsInputs()[0];
  Value key = qk->getDpsInputs()[1];
  bool keyTransposed = !isMultiBatchContraction(*qk, /*transposedRhs=*/true);
  Value value = output.getDpsInputs()[1];
  Type element = getElementTypeOrSelf(query.getType());
  if (!isa<Float32Type, BFloat16Type, Float16Type>(element) ||
      getElementTypeOrSelf(key.getType()) != element ||
      getElementTypeOrSelf(value.getType()) != element ||
      outType.getElementType() != element) {
    reason = "Q, K, V and the output do not share one f32, bf16 or f16 "
             "element type";
    return failure();
  }
  // The mask: one batch view for every head, or one per batch index.
  ArrayRef<int64_t> space = spaceType.getShape();
  if (chain.mask) {
    auto maskType = cast<RankedTensorType>(chain.mask.getType());
    ArrayRef<int64_t> maskShape = maskType.getShape();
    bool perBatch = true, shared = true;
    for (int64_t d = 0; d + 2 < chain.rank; ++d) {
      shared &= maskShape[d] == 1;
      perBatch &= maskShape[d] == space[d];
    }
    // A dimension the map reads at 0 must be 1: the op broadcasts only those.
    for (int64_t d = 0; d < chain.rank; ++d)
      if (chain.maskMap.getResult(d) ==
              getAffineConstantExpr(0, chain.maskMap.getContext()) &&
          maskShape[d] != 1)
        shared = perBatch = false;
    Type maskElement = maskType.getElementType();
    if (!maskType.hasStaticShape() || (!shared && !perBatch) ||
        !(chain.booleanMask ? maskElement.isInteger(1)
                            : isa<Float32Type>(maskElement))) {
      reason = "the mask is not one f32 (added) or i1 (selecting) tensor for "
               "all heads or one per batch and head";
      return failure();
    }
  }

  Location loc = output.getLoc();
  rewriter.setInsertionPoint(output);
  query = absorbOperandScale(rewriter, query, chain);
  key = absorbOperandScale(rewriter, key, chain);
  if (keyTransposed) {
    if (Value k = untransposed(rewriter, loc, key, chain)) {
      key = k;
      keyTransposed = false;
    }
  }
  // Several batch dimensions (a 4-D contraction) as one.
  query = asBatchOfMatrices(rewriter, loc, query);
  key = asBatchOfMatrices(rewriter, loc, key);
  value = asBatchOfMatrices(rewriter, loc, value);
  if (keyTransposed) {
    // K^T [B, d, sk] back to [B, sk, d]: the op's layout (a copy of K, as
    // the graph's own transpose was).
    auto type = cast<RankedTensorType>(key.getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, key);
    std::swap(sizes[1], sizes[2]);
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    key = linalg::TransposeOp::create(rewriter, loc, key, empty,
                                      ArrayRef<int64_t>{0, 2, 1})
              ->getResult(0);
  }
  Value repeatedKey = key, repeatedValue = value;
  recoverGroupedKV(rewriter, loc, key, value);
  Value mask;
  if (chain.mask)
    mask = asAttentionOperand(rewriter, loc, chain.mask);
  if (chain.booleanMask && !chain.keepWhere)
    mask = negated(rewriter, loc, mask);
  Value q4 = addUnitBatch(rewriter, loc, query);
  Value k4 = addUnitBatch(rewriter, loc, key);
  Value v4 = addUnitBatch(rewriter, loc, value);
  int64_t outRank = outType.getRank();
  SmallVector<int64_t> shape = {1, batches(outType)};
  llvm::append_range(shape, outType.getShape().take_back(2));
  auto attention = AttentionOp::create(
      rewriter, loc, outType.clone(shape), /*lse=*/Type(), q4, k4, v4, mask,
      rewriter.getF32FloatAttr(chain.scale), UnitAttr(),
      rewriter.getI64IntegerAttr(0));
  // [1, B, sq, dv] back to the output's [b..., sq, dv].
  Value result = tensor::CollapseShapeOp::create(
      rewriter, loc, attention.getOutput(),
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  if (outRank > 3)
    result = tensor::ExpandShapeOp::create(rewriter, loc, outType, result,
                                           batchesAsOne(outRank));
  rewriter.replaceOp(output, result);
  // Users first: erase what nothing reads until nothing is left.
  llvm::SetVector<Operation *> dead = chain.ops;
  for (Operation *init : chain.inits)
    if (init)
      dead.insert(init);
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *op : dead)
      if (op->use_empty()) {
        dead.remove(op);
        rewriter.eraseOp(op);
        erased = true;
        break;
      }
  }
  if (key != repeatedKey) {
    eraseDeadProducers(rewriter, repeatedKey);
    eraseDeadProducers(rewriter, repeatedValue);
  }
  return OpByOpFusion{chain.scale, bool(chain.mask)};
}
