//===- SplitReductions.cpp - fp8-split-reductions-for-gpu -----------------===//
//
// A linalg op whose every loop is a reduction (a loss, a whole-tensor sum)
// has nothing for convert-linalg-to-parallel-loops to put on threads: it
// would run as one loop nest in the host code, on one CPU thread over
// managed memory. Here it becomes a parallel partial reduction and a short
// final one on one GPU thread. The first keeps one of its loops parallel
// and reduces everything else into a vector of partial results
// (initialized with the combiner's neutral element); a rank-1 reduction is
// first viewed as [K / r, r] (r a power of two dividing K; a dynamic or odd
// K is padded to a multiple of r, and the padding masked out of the
// combination). The partials (after one more such split when there are
// more than 256) are reduced into the original init by an op with an added
// unit parallel loop: a one-thread kernel. A reduction that cannot be split
// (no neutral element, several results) runs there whole. Only the order
// of the combinations changes: max and min give the same bits, sums round
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

/// Whether every loop of `op` is a reduction into rank-0 results.
bool isFullReduction(linalg::LinalgOp op) {
  return op.getNumLoops() > 0 &&
         op.getNumReductionLoops() == op.getNumLoops() &&
         op.hasPureTensorSemantics() &&
         llvm::all_of(op.getDpsInits(), [](Value init) {
           return cast<ShapedType>(init.getType()).getRank() == 0;
         });
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

/// Whether the body of `op` reads a loop index.
bool usesIndex(linalg::LinalgOp op) {
  return op->getRegion(0)
      .walk([](linalg::IndexOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether every input of the rank-1 `op` is indexed by the identity.
bool hasIdentityInputs(linalg::LinalgOp op) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, op.getContext());
  return op.getNumDpsInputs() > 0 &&
         llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
           return op.getMatchingIndexingMap(input) == identity;
         });
}

/// The ratio a rank-1 full reduction is split by: its inputs indexed by
/// the identity, its static length K divisible by a power of two
/// (pickSplitRatio); 0 when it cannot be split so.
int64_t getRank1SplitRatio(linalg::LinalgOp op) {
  // The view renumbers the loop: linalg.index of it would change meaning.
  if (usesIndex(op) || !hasIdentityInputs(op))
    return 0;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[0]))
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

/// A linalg.generic reducing `input` into `init` with the combiner alone
/// (`init` element combined with `input` element).
linalg::GenericOp createCombination(RewriterBase &rewriter, Location loc,
                                    Value input, Value init,
                                    ArrayRef<AffineMap> maps,
                                    ArrayRef<utils::IteratorType> iterators,
                                    const Combiner &combiner) {
  Type element = getElementTypeOrSelf(init.getType());
  return linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{input},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        OperationState state(nested, combiner.op->getName());
        state.addOperands({args[1], args[0]});
        state.addTypes(element);
        state.addAttributes(combiner.op->getAttrs());
        Value combined = b.create(state)->getResult(0);
        linalg::YieldOp::create(b, nested, combined);
      });
}

/// A tensor filled with the combiner's neutral element.
Value createNeutral(RewriterBase &rewriter, Location loc,
                    ArrayRef<OpFoldResult> sizes, const Combiner &combiner) {
  Value neutral = arith::ConstantOp::create(rewriter, loc, combiner.neutral);
  Value empty = tensor::EmptyOp::create(rewriter, loc, sizes,
                                        combiner.neutral.getType());
  return linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
}

/// Lanes of a masked split (splitMasked).
constexpr int64_t kMaskedLanes = 256;

/// The rank-1 full reduction `op` over identity-indexed inputs of length K
/// (dynamic, or static without a power-of-two factor) as kMaskedLanes
/// partials: each input padded to R * r (R = ceil(K / r), r =
/// kMaskedLanes) and viewed as [R, r]; lane j folds elements i * r + j
/// with the original body, and an element at K or past it leaves the
/// accumulator as it was (the padding's value never reaches a result).
/// Returns the partials ([r]); linalg.index 0 of the body is i * r + j.
Value splitMasked(RewriterBase &rewriter, linalg::GenericOp op,
                  const Combiner &combiner) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  rewriter.setInsertionPoint(op);
  Value first = op.getDpsInputs()[0];
  Value length = rewriter.createOrFold<tensor::DimOp>(loc, first, 0);
  Value lanes = arith::ConstantIndexOp::create(rewriter, loc, kMaskedLanes);
  Value rows = rewriter.createOrFold<arith::CeilDivUIOp>(loc, length, lanes);
  Value padded = rewriter.createOrFold<arith::MulIOp>(loc, rows, lanes);
  OpFoldResult high = getAsOpFoldResult(
      rewriter.createOrFold<arith::SubIOp>(loc, padded, length));
  OpFoldResult rowCount = getAsOpFoldResult(rows);
  std::optional<int64_t> staticRows = getConstantIntValue(rowCount);
  int64_t rowsDim = staticRows ? *staticRows : ShapedType::kDynamic;

  int64_t paddedDim =
      staticRows ? *staticRows * kMaskedLanes : ShapedType::kDynamic;
  SmallVector<Value> inputs;
  for (Value input : op.getDpsInputs()) {
    Type element = getElementTypeOrSelf(input);
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    Value extended = tensor::PadOp::create(
        rewriter, loc, RankedTensorType::get({paddedDim}, element), input,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{high}, zero);
    inputs.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({rowsDim, kMaskedLanes}, element),
        extended, ArrayRef<ReassociationIndices>{{0, 1}},
        ArrayRef<OpFoldResult>{rowCount, rewriter.getIndexAttr(kMaskedLanes)}));
  }
  Value partialInit = createNeutral(
      rewriter, loc, OpFoldResult(rewriter.getIndexAttr(kMaskedLanes)),
      combiner);
  SmallVector<AffineMap> maps(inputs.size(),
                              AffineMap::getMultiDimIdentityMap(2, context));
  maps.push_back(AffineMap::get(2, 0, getAffineDimExpr(1, context), context));
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialInit.getType()}, inputs,
      ValueRange{partialInit}, maps,
      {utils::IteratorType::reduction, utils::IteratorType::parallel});
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().end());

  Block &body = partial.getRegion().front();
  SmallVector<linalg::IndexOp> indices;
  partial.getRegion().walk(
      [&](linalg::IndexOp index) { indices.push_back(index); });
  rewriter.setInsertionPointToStart(&body);
  Value row = linalg::IndexOp::create(rewriter, loc, 0);
  Value lane = linalg::IndexOp::create(rewriter, loc, 1);
  Value position = arith::AddIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, row, lanes), lane);
  Value inside = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                       position, length);
  for (linalg::IndexOp index : indices)
    rewriter.replaceOp(index, position);
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  rewriter.setInsertionPoint(yield);
  Value kept = arith::SelectOp::create(rewriter, loc, inside,
                                       yield.getOperand(0), body.getArguments().back());
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, kept); });
  return partial.getResult(0);
}

/// `op`, whose every loop is a reduction and every result rank 0, with a
/// unit parallel loop in front (results [1], viewed back as rank 0):
/// convert-linalg-to-parallel-loops makes it a parallel loop of one
/// iteration, which becomes a one-thread kernel instead of host code.
SmallVector<Value> runOnOneThread(RewriterBase &rewriter,
                                  linalg::GenericOp op) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  unsigned numLoops = op.getNumLoops() + 1;
  rewriter.setInsertionPoint(op);
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(input).shiftDims(1));
  SmallVector<Value> inits;
  for (Value init : op.getDpsInits()) {
    auto type = RankedTensorType::get({1}, getElementTypeOrSelf(init));
    inits.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc, type, init, ArrayRef<ReassociationIndices>{}));
    maps.push_back(
        AffineMap::get(numLoops, 0, getAffineDimExpr(0, context), context));
  }
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
  llvm::append_range(iterators, op.getIteratorTypesArray());
  auto unit = linalg::GenericOp::create(rewriter, loc, ValueRange(inits).getTypes(),
                                        op.getDpsInputs(), inits, maps,
                                        iterators);
  rewriter.inlineRegionBefore(op.getRegion(), unit.getRegion(),
                              unit.getRegion().end());
  // Loop d of `op` is loop d + 1 here.
  SmallVector<linalg::IndexOp> indices;
  unit.getRegion().walk([&](linalg::IndexOp index) { indices.push_back(index); });
  for (linalg::IndexOp index : indices) {
    rewriter.setInsertionPoint(index);
    rewriter.replaceOpWithNewOp<linalg::IndexOp>(index, index.getDim() + 1);
  }
  rewriter.setInsertionPointAfter(unit);
  SmallVector<Value> results;
  for (auto [result, init] : llvm::zip(unit.getResults(), op.getDpsInits()))
    results.push_back(tensor::CollapseShapeOp::create(
        rewriter, loc, init.getType(), result,
        ArrayRef<ReassociationIndices>{}));
  rewriter.replaceOp(op, results);
  return results;
}

/// At most this many partials are combined by one thread.
constexpr int64_t kOneThreadPartials = 256;

/// `values` ([P]) reduced into the rank-0 `init`: when P is static, above
/// kOneThreadPartials and a multiple of a power of two r from 32 to 256
/// with P / r >= 8, first into r partials by r threads (viewed as
/// [P / r, r]); when it is dynamic or above kOneThreadPartials otherwise,
/// first into kMaskedLanes partials by a masked split; the rest on one
/// thread.
Value reduceToScalar(RewriterBase &rewriter, Location loc, Value values,
                     Value init, const Combiner &combiner) {
  MLIRContext *context = rewriter.getContext();
  auto type = cast<RankedTensorType>(values.getType());
  int64_t length = type.getDimSize(0);
  int64_t ratio = 0;
  if (!ShapedType::isDynamic(length) && length > kOneThreadPartials)
    for (int64_t r = kOneThreadPartials; r >= 32 && !ratio; r /= 2)
      if (length % r == 0 && length / r >= 8)
        ratio = r;
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  AffineMap scalar = AffineMap::get(1, 0, {}, context);
  if (ratio) {
    Value rows = tensor::ExpandShapeOp::create(
        rewriter, loc,
        RankedTensorType::get({length / ratio, ratio}, type.getElementType()),
        values, ArrayRef<ReassociationIndices>{{0, 1}});
    AffineMap all = AffineMap::getMultiDimIdentityMap(2, context);
    AffineMap lane = AffineMap::get(2, 0, getAffineDimExpr(1, context), context);
    values = createCombination(
                 rewriter, loc, rows,
                 createNeutral(rewriter, loc, OpFoldResult(rewriter.getIndexAttr(ratio)),
                               combiner),
                 {all, lane},
                 {utils::IteratorType::reduction, utils::IteratorType::parallel},
                 combiner)
                 .getResult(0);
  }
  linalg::GenericOp total =
      createCombination(rewriter, loc, values, init, {identity, scalar},
                        {utils::IteratorType::reduction}, combiner);
  if (ShapedType::isDynamic(length) ||
      (length > kOneThreadPartials && !ratio)) {
    Value partial = splitMasked(rewriter, total, combiner);
    rewriter.setInsertionPoint(total);
    Value result = reduceToScalar(rewriter, loc, partial, init, combiner);
    rewriter.replaceOp(total, result);
    return result;
  }
  return runOnOneThread(rewriter, total).front();
}

/// `partial` ([outputs..., r]) reduced over its last dimension into `init`
/// ([outputs...]) with the combiner; into a rank-0 init by reduceToScalar.
Value reducePartials(RewriterBase &rewriter, Location loc, Value partial,
                     Value init, const Combiner &combiner) {
  auto initType = cast<RankedTensorType>(init.getType());
  unsigned rank = initType.getRank();
  if (rank == 0)
    return reduceToScalar(rewriter, loc, partial, init, combiner);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  AffineMap all =
      AffineMap::getMultiDimIdentityMap(rank + 1, rewriter.getContext());
  return createCombination(rewriter, loc, partial, init,
                           {all, all.getMajorSubMap(rank)}, iterators,
                           combiner)
      .getResult(0);
}

/// Splits a full reduction of rank >= 2 on `loop` (see the file comment).
void split(RewriterBase &rewriter, linalg::GenericOp op, unsigned loop,
           const Combiner &combiner) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  Value init = op.getDpsInits()[0];

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

  Value partialInit = createNeutral(rewriter, loc, extent, combiner);

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
  if (usesIndex(op))
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
  Value partialInit = createNeutral(rewriter, loc, partialSizes, combiner);
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

/// `op` as a linalg.generic: itself, or the generic a named op (a
/// linalg.reduce) is.
FailureOr<linalg::GenericOp> asGeneric(RewriterBase &rewriter,
                                       linalg::LinalgOp op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return generic;
  rewriter.setInsertionPoint(op);
  return linalg::generalizeNamedOp(rewriter, op);
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
      // Named reductions are generalized only when they will be split.
      if (!matchCombiner(candidate) || !getRowSplit(candidate))
        continue;
      FailureOr<linalg::GenericOp> op = asGeneric(rewriter, candidate);
      if (failed(op))
        continue;
      // The combiner of the op as it is now.
      if (std::optional<Combiner> combiner = matchCombiner(*op))
        (void)splitRowReduction(rewriter, *op, *combiner);
    }
    for (linalg::LinalgOp candidate : candidates)
      if (isFullReduction(candidate))
        splitFullReduction(rewriter, candidate);
    // Last, over what the splits made too.
    SmallVector<linalg::LinalgOp> all;
    getOperation()->walk([&](linalg::LinalgOp op) { all.push_back(op); });
    for (linalg::LinalgOp op : all)
      hoistParallelLoops(rewriter, op);
  }

  /// The parallel loops of `op` outermost, each group in its order:
  /// convert-linalg-to-parallel-loops nests the loops as they are, and a
  /// reduction loop outside a parallel one would stay in the host code,
  /// launching a kernel per iteration (a column sum, the partials above).
  void hoistParallelLoops(RewriterBase &rewriter, linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || isa<linalg::FillOp>(op))
      return;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order;
    for (auto kind : {utils::IteratorType::parallel,
                      utils::IteratorType::reduction})
      for (auto [loop, iterator] : llvm::enumerate(iterators))
        if (iterator == kind)
          order.push_back(loop);
    if (order.size() != iterators.size() ||
        llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
      return;
    FailureOr<linalg::GenericOp> generic = asGeneric(rewriter, op);
    if (succeeded(generic))
      (void)linalg::interchangeGenericOp(rewriter, *generic, order);
  }

  /// A full reduction as a parallel partial reduction and a short final
  /// one on one thread; whole on one thread when it cannot be split.
  void splitFullReduction(RewriterBase &rewriter, linalg::LinalgOp candidate) {
    FailureOr<linalg::GenericOp> generic = asGeneric(rewriter, candidate);
    if (failed(generic))
      return;
    linalg::GenericOp op = *generic;
    rewriter.setInsertionPoint(op);
    std::optional<Combiner> combiner = matchCombiner(op);
    if (!combiner) {
      runOnOneThread(rewriter, op);
      return;
    }
    if (op.getNumLoops() > 1) {
      split(rewriter, op, pickParallelLoop(op), *combiner);
      return;
    }
    if (int64_t ratio = getRank1SplitRatio(op)) {
      op = viewAsRank2(rewriter, op, ratio);
      // The combiner of the op as it is now.
      combiner = matchCombiner(op);
      rewriter.setInsertionPoint(op);
      split(rewriter, op, pickParallelLoop(op), *combiner);
      return;
    }
    int64_t length = op.getStaticLoopRanges()[0];
    if (!hasIdentityInputs(op) ||
        (!ShapedType::isDynamic(length) && length <= kOneThreadPartials)) {
      runOnOneThread(rewriter, op);
      return;
    }
    Value init = op.getDpsInits()[0];
    Value partial = splitMasked(rewriter, op, *combiner);
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, reduceToScalar(rewriter, op.getLoc(), partial,
                                          init, *combiner));
  }
};
} // namespace
