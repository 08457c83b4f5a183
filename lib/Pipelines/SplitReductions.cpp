//===- SplitReductions.cpp - fp8-split-reductions-for-gpu -----------------===//
//
// A linalg op whose every loop is a reduction (a loss, a whole-tensor sum)
// has nothing for convert-linalg-to-parallel-loops to put on threads: it
// would run as one loop nest in the host code, on one CPU thread over
// managed memory. Here it becomes two ops: the first keeps one of its loops
// parallel and reduces everything else into a vector of partial results
// (initialized with the combiner's neutral element), the second reduces
// that vector into the original init. A rank-1 reduction is first viewed as
// [K / r, r] (r a power of two dividing K). Only the order of the
// combinations changes: max and min give the same bits, sums round
// differently.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8SPLITREDUCTIONSFORGPU
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// The one combiner of a single-result reduction and its neutral element.
struct Combiner {
  Operation *op = nullptr;
  TypedAttr neutral;
};

std::optional<Combiner> matchCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<Operation *, 4> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return std::nullopt;
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners[0]);
  if (!neutral)
    return std::nullopt;
  return Combiner{combiners[0], *neutral};
}

/// Whether every loop of `op` is a reduction into a rank-0 result.
bool isFullReduction(linalg::LinalgOp op) {
  return op.getNumLoops() > 0 &&
         op.getNumReductionLoops() == op.getNumLoops() &&
         op.getNumDpsInits() == 1 &&
         cast<ShapedType>(op.getDpsInits()[0].getType()).getRank() == 0 &&
         op.hasPureTensorSemantics();
}

/// The loop that becomes parallel: the one the first input's innermost
/// dimension walks (adjacent threads read adjacent elements), unless it is
/// statically short, then the longest.
unsigned pickParallelLoop(linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto extent = [&](unsigned loop) {
    return ShapedType::isDynamic(ranges[loop]) ? INT64_MAX : ranges[loop];
  };
  unsigned inner = op.getNumLoops() - 1;
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (map.getNumResults() > 0)
    if (auto dim = dyn_cast<AffineDimExpr>(map.getResults().back()))
      inner = dim.getPosition();
  if (extent(inner) >= 32)
    return inner;
  unsigned best = 0;
  for (unsigned loop = 1; loop < op.getNumLoops(); ++loop)
    if (extent(loop) > extent(best))
      best = loop;
  return best;
}

/// The largest power of two up to 1024 that divides `k` and leaves at
/// least two rows, or 0.
int64_t pickSplitRatio(int64_t k) {
  for (int64_t r = 1024; r >= 32; r /= 2)
    if (k % r == 0 && k / r >= 2)
      return r;
  return 0;
}

/// The ratio a rank-1 full reduction is split by: its inputs indexed by
/// the identity, its static length K divisible by a power of two
/// (pickSplitRatio); 0 when it cannot be split.
int64_t getRank1SplitRatio(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[0]))
    return 0;
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input) != identity)
      return 0;
  return pickSplitRatio(ranges[0]);
}

/// A rank-1 full reduction as the same reduction over [K / ratio, ratio]
/// views of its inputs.
linalg::GenericOp viewAsRank2(RewriterBase &rewriter, linalg::GenericOp op,
                              int64_t ratio) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  SmallVector<Value> inputs;
  for (Value input : op.getDpsInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    auto viewType = RankedTensorType::get({ranges[0] / ratio, ratio},
                                          type.getElementType());
    inputs.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc, viewType, input, ArrayRef<ReassociationIndices>{{0, 1}}));
  }
  AffineMap rows = AffineMap::getMultiDimIdentityMap(2, context);
  SmallVector<AffineMap> maps(inputs.size(), rows);
  maps.push_back(AffineMap::get(2, 0, {}, context));
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::reduction);
  auto view = linalg::GenericOp::create(
      rewriter, loc, op.getResultTypes(), inputs, op.getDpsInits(), maps,
      iterators);
  rewriter.inlineRegionBefore(op.getRegion(), view.getRegion(),
                              view.getRegion().end());
  rewriter.replaceOp(op, view.getResults());
  return view;
}

/// Splits a full reduction of rank >= 2 on `loop` (see the file comment).
void split(RewriterBase &rewriter, linalg::GenericOp op, unsigned loop,
           const Combiner &combiner) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value init = op.getDpsInits()[0];
  Type element = cast<ShapedType>(init.getType()).getElementType();

  // The extent of `loop`, from the first operand dimension it indexes.
  OpFoldResult extent;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
      auto d = dyn_cast<AffineDimExpr>(expr);
      if (!d || d.getPosition() != loop)
        continue;
      extent = tensor::getMixedSize(rewriter, loc, input->get(), dim);
      break;
    }
    if (extent)
      break;
  }
  assert(extent && "the split loop indexes an input");

  Value neutral = arith::ConstantOp::create(rewriter, loc, combiner.neutral);
  Value empty = tensor::EmptyOp::create(rewriter, loc, {extent}, element);
  Value partialInit =
      linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(op.getNumLoops(), 0,
                               getAffineDimExpr(loop, context), context);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators[loop] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialInit.getType()}, op.getDpsInputs(),
      ValueRange{partialInit}, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().end());

  // The partial results into the original init, with the same combiner.
  AffineMap vector = AffineMap::getMultiDimIdentityMap(1, context);
  AffineMap scalar = AffineMap::get(1, 0, {}, context);
  auto total = linalg::GenericOp::create(
      rewriter, loc, op.getResultTypes(), partial.getResults(),
      ValueRange{init}, ArrayRef<AffineMap>{vector, scalar},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &b, Location nested, ValueRange args) {
        OperationState state(nested, combiner.op->getName());
        state.addOperands({args[1], args[0]});
        state.addTypes(element);
        state.addAttributes(combiner.op->getAttrs());
        Value combined = b.create(state)->getResult(0);
        linalg::YieldOp::create(b, nested, combined);
      });
  rewriter.replaceOp(op, total.getResults());
}

struct FP8SplitReductionsForGPUPass
    : fp8::impl::FP8SplitReductionsForGPUBase<FP8SplitReductionsForGPUPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.getNumLoops() > 0 &&
          op.getNumReductionLoops() == op.getNumLoops())
        candidates.push_back(op);
    });
    for (linalg::LinalgOp candidate : candidates) {
      std::optional<Combiner> combiner = matchCombiner(candidate);
      if (!combiner || !isFullReduction(candidate))
        continue;
      int64_t ratio = 0;
      if (candidate.getNumLoops() == 1 &&
          !(ratio = getRank1SplitRatio(candidate)))
        continue;
      // Named reductions (linalg.reduce) as the generic they are.
      rewriter.setInsertionPoint(candidate);
      auto op = dyn_cast<linalg::GenericOp>(candidate.getOperation());
      if (!op) {
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, candidate);
        if (failed(generic))
          continue;
        op = *generic;
      }
      if (ratio)
        op = viewAsRank2(rewriter, op, ratio);
      // The combiner of the op as it is now.
      combiner = matchCombiner(op);
      if (!combiner)
        continue;
      rewriter.setInsertionPoint(op);
      split(rewriter, op, pickParallelLoop(op), *combiner);
    }
  }
};
} // namespace
