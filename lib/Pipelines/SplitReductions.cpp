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
  // The view renumbers the loop: linalg.index of it would change meaning.
  if (!op->getRegion(0).getOps<linalg::IndexOp>().empty())
    return 0;
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

/// `partial` ([outputs..., r]) reduced over its last dimension into `init`
/// ([outputs...]) with the combiner.
Value reducePartials(RewriterBase &rewriter, Location loc, Value partial,
                     Value init, const Combiner &combiner) {
  MLIRContext *context = rewriter.getContext();
  auto initType = cast<RankedTensorType>(init.getType());
  unsigned rank = initType.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  AffineMap all = AffineMap::getMultiDimIdentityMap(rank + 1, context);
  AffineMap outer = rank > 0 ? all.getMajorSubMap(rank)
                             : AffineMap::get(1, 0, {}, context);
  auto total = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, ValueRange{partial},
      ValueRange{init}, ArrayRef<AffineMap>{all, outer}, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        OperationState state(nested, combiner.op->getName());
        state.addOperands({args[1], args[0]});
        state.addTypes(initType.getElementType());
        state.addAttributes(combiner.op->getAttrs());
        Value combined = b.create(state)->getResult(0);
        linalg::YieldOp::create(b, nested, combined);
      });
  return total.getResult(0);
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

  rewriter.replaceOp(op, reducePartials(rewriter, loc, partial.getResult(0),
                                         init, combiner));
}

/// The ratio a reduction along rows is split by: `r` lanes per row reading
/// adjacent elements (32, a warp; 128 when the rows are few), when the
/// row's static length is a multiple of it at least 8 times over; 0 when
/// it is not split.
int64_t getRowSplitRatio(int64_t length, int64_t rows) {
  if (ShapedType::isDynamic(length) || length < 256)
    return 0;
  int64_t ratio = rows < 4096 && length % 128 == 0 && length >= 1024 ? 128 : 32;
  return length % ratio == 0 ? ratio : 0;
}

/// A reduction along rows: parallel loops and one reduction loop k that
/// every input indexing it walks as its innermost dimension, into a result
/// without it (softmax's max and sum, a norm's sum of squares). One thread
/// per row would read its row alone (adjacent threads 4 KiB apart, one
/// cache line per thread and load). It becomes, with k = k1 * r + k2 and
/// inputs viewed as [..., K / r, r]: partial[rows, k2] = reduce over k1
/// (k2 parallel: r adjacent threads per row, reading adjacent elements),
/// then the r partials of each row into the original init. Failure (and
/// nothing changed) when the op is not of that form.
/// The ratio `op`, a reduction along rows, is split by; 0 when it is not
/// one or too short (splitRowReduction says what it must be).
int64_t getRowSplit(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() != 1 || op.getNumParallelLoops() == 0 ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics())
    return 0;
  // linalg.index of k would change meaning.
  if (!op->getRegion(0).getOps<linalg::IndexOp>().empty())
    return 0;
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  unsigned k = reductionDims[0];
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isFunctionOfDim(k))
      continue;
    ArrayRef<AffineExpr> results = map.getResults();
    if (results.back() != getAffineDimExpr(k, op.getContext()) ||
        llvm::count_if(results, [&](AffineExpr e) {
          return e.isFunctionOfDim(k);
        }) != 1)
      return 0;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = 1;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    if (loop != k)
      rows = ShapedType::isDynamic(ranges[loop]) || rows > (int64_t(1) << 40)
                 ? (int64_t(1) << 40)
                 : rows * ranges[loop];
  return getRowSplitRatio(ranges[k], rows);
}

LogicalResult splitRowReduction(RewriterBase &rewriter, linalg::GenericOp op,
                                const Combiner &combiner) {
  int64_t ratio = getRowSplit(op);
  if (!ratio)
    return failure();
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  unsigned k = reductionDims[0];
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  MLIRContext *context = op.getContext();
  unsigned numLoops = op.getNumLoops(), k2 = numLoops;
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  SmallVector<AffineMap> maps;
  SmallVector<bool> expand;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    SmallVector<AffineExpr> results(map.getResults());
    bool usesK = map.isFunctionOfDim(k);
    if (usesK)
      results.push_back(dim(k2));
    expand.push_back(usesK);
    maps.push_back(AffineMap::get(numLoops + 1, 0, results, context));
  }
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<AffineExpr> outputResults(outputMap.getResults());
  outputResults.push_back(dim(k2));
  maps.push_back(AffineMap::get(numLoops + 1, 0, outputResults, context));

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs;
  for (auto [input, viewed] : llvm::zip(op.getDpsInputs(), expand)) {
    if (!viewed) {
      inputs.push_back(input);
      continue;
    }
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> shape(type.getShape());
    shape.back() = ranges[k] / ratio;
    shape.push_back(ratio);
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d + 1 < rank; ++d)
      groups.push_back({d});
    groups.push_back({rank - 1, rank});
    inputs.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        input, groups));
  }
  Value init = op.getDpsInits()[0];
  SmallVector<OpFoldResult> partialSizes =
      tensor::getMixedSizes(rewriter, loc, init);
  partialSizes.push_back(rewriter.getIndexAttr(ratio));
  Type element = getElementTypeOrSelf(init.getType());
  Value neutral = arith::ConstantOp::create(rewriter, loc, combiner.neutral);
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialSizes, element);
  Value partialInit =
      linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialInit.getType()}, inputs,
      ValueRange{partialInit}, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().end());
  rewriter.replaceOp(op, reducePartials(rewriter, loc, partial.getResult(0),
                                         init, combiner));
  return success();
}

struct FP8SplitReductionsForGPUPass
    : fp8::impl::FP8SplitReductionsForGPUBase<FP8SplitReductionsForGPUPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> candidates, rowReductions;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.getNumLoops() > 0 &&
          op.getNumReductionLoops() == op.getNumLoops())
        candidates.push_back(op);
      else if (op.getNumReductionLoops() == 1 &&
               !linalg::isaContractionOpInterface(op))
        rowReductions.push_back(op);
    });
    for (linalg::LinalgOp candidate : rowReductions) {
      std::optional<Combiner> combiner = matchCombiner(candidate);
      auto op = dyn_cast<linalg::GenericOp>(candidate.getOperation());
      // Named reductions are generalized only when they will be split.
      if (!combiner)
        continue;
      if (!getRowSplit(candidate))
        continue;
      if (!op) {
        rewriter.setInsertionPoint(candidate);
        FailureOr<linalg::GenericOp> generic =
            linalg::generalizeNamedOp(rewriter, candidate);
        if (failed(generic))
          continue;
        op = *generic;
        combiner = matchCombiner(op);
        if (!combiner)
          continue;
      }
      (void)splitRowReduction(rewriter, op, *combiner);
    }
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
