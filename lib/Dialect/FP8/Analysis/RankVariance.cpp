//===- RankVariance.cpp - What differs between data-parallel ranks --------===//

#include "fp8/Dialect/FP8/Analysis/RankVariance.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fp8;

/// A collective over every axis of the grid leaves the same value on every
/// rank; one over some axes leaves it varying along the others.
static bool isReplicating(Operation *op, FlatSymbolRefAttr grid,
                          ArrayRef<int16_t> axes) {
  auto covers = [&](StringRef opGrid, ArrayRef<int16_t> opAxes) {
    return opGrid == grid.getValue() &&
           llvm::all_of(axes, [&](int16_t axis) {
             return llvm::is_contained(opAxes, axis);
           });
  };
  if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
    return covers(reduce.getGrid(), reduce.getGridAxes());
  if (auto gather = dyn_cast<shard::AllGatherOp>(op))
    return covers(gather.getGrid(), gather.getGridAxes());
  return false;
}

ShardLayout
mlir::fp8::collapseLayout(ShardLayout layout,
                          ArrayRef<ReassociationIndices> reassociation) {
  if (!layout.known)
    return layout;
  uint64_t dims = 0;
  for (auto [result, group] : llvm::enumerate(reassociation)) {
    unsigned split = llvm::count_if(
        group, [&](int64_t dim) { return layout.isSplit(dim); });
    if (split == 0)
      continue;
    if (split > 1 || !layout.isSplit(group.front()) ||
        !ShardLayout::addDim(dims, result))
      return ShardLayout::unknown();
  }
  return ShardLayout::splitAlong(dims);
}

/// fp8.attention and fp8.attention_grad compute each (batch, head) on its
/// own: split along batch or heads (dimensions 0 and 1), every varying
/// operand the same way, the results are split as the query is. The
/// backward's key and value gradients sum over the query rows, so the key
/// and value must be split as the query is (a rank's keys are its own
/// sequences' keys); a forward may read replicated keys.
template <typename LayoutOf>
static SmallVector<ShardLayout> inferAttentionLayouts(Operation *op,
                                                      LayoutOf layoutOf) {
  SmallVector<ShardLayout> unknown(op->getNumResults(), ShardLayout::unknown());
  Value query = op->getOperand(0);
  std::optional<ShardLayout> layout = layoutOf(query);
  if (!layout || !layout->known || (layout->dims & ~uint64_t(3)) != 0)
    return unknown;
  bool backward = isa<AttentionGradOp>(op);
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    std::optional<ShardLayout> other = layoutOf(operand);
    bool keyOrValue = i == 1 || i == 2;
    if (other ? !(*other == *layout) : (backward && keyOrValue))
      return unknown;
  }
  return SmallVector<ShardLayout>(op->getNumResults(), *layout);
}

/// The layout of `op`'s results from its varying operands' layouts.
static SmallVector<ShardLayout>
inferLayouts(Operation *op, const llvm::DenseMap<Value, ShardLayout> &varying) {
  SmallVector<ShardLayout> unknown(op->getNumResults(), ShardLayout::unknown());
  auto layoutOf = [&](Value value) -> std::optional<ShardLayout> {
    auto it = varying.find(value);
    if (it == varying.end())
      return std::nullopt;
    return it->second;
  };
  if (isa<AttentionOp, AttentionGradOp>(op))
    return inferAttentionLayouts(op, layoutOf);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    // The loops that run along a split dimension of some operand.
    llvm::SmallBitVector loops(linalgOp.getNumLoops());
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<ShardLayout> layout = layoutOf(operand.get());
      if (!layout)
        continue;
      if (!layout->known)
        return unknown;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      for (unsigned d = 0; d < map.getNumResults(); ++d) {
        if (!layout->isSplit(d))
          continue;
        auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
        if (!dim)
          return unknown;
        loops.set(dim.getPosition());
      }
    }
    SmallVector<ShardLayout> layouts;
    for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
      AffineMap map = linalgOp.getMatchingIndexingMap(&init);
      uint64_t dims = 0;
      for (unsigned d = 0; d < map.getNumResults(); ++d)
        if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
            dim && loops.test(dim.getPosition()) &&
            !ShardLayout::addDim(dims, d))
          return unknown;
      layouts.push_back(ShardLayout::splitAlong(dims));
    }
    return layouts;
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    std::optional<ShardLayout> layout = layoutOf(collapse.getSrc());
    return {collapseLayout(layout.value_or(ShardLayout::unknown()),
                           collapse.getReassociationIndices())};
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    std::optional<ShardLayout> layout = layoutOf(expand.getSrc());
    if (!layout || !layout->known)
      return unknown;
    uint64_t dims = 0;
    for (auto [source, group] :
         llvm::enumerate(expand.getReassociationIndices()))
      if (layout->isSplit(source) &&
          !ShardLayout::addDim(dims, group.front()))
        return unknown;
    return {ShardLayout::splitAlong(dims)};
  }
  if (op->hasTrait<OpTrait::Elementwise>()) {
    std::optional<ShardLayout> common;
    for (Value operand : op->getOperands()) {
      std::optional<ShardLayout> layout = layoutOf(operand);
      if (!layout)
        continue;
      if (common && !(*common == *layout))
        return unknown;
      common = layout;
    }
    return SmallVector<ShardLayout>(op->getNumResults(),
                                    common.value_or(ShardLayout::unknown()));
  }
  return unknown;
}

/// One pass over `region`'s ops; returns whether anything changed. Block
/// arguments vary (split in an unknown way) when the op that owns them has a
/// varying operand or anything varying inside (a loop carries it back to its
/// arguments).
static bool propagate(Operation *op, llvm::DenseMap<Value, ShardLayout> &varying,
                      FlatSymbolRefAttr grid, ArrayRef<int16_t> axes) {
  bool changed = false;
  auto mark = [&](Value value, ShardLayout layout) {
    auto [it, inserted] = varying.try_emplace(value, layout);
    if (inserted) {
      changed = true;
    } else if (!(it->second == layout) && it->second.known) {
      // Two ways to reach it: no longer known.
      it->second = ShardLayout::unknown();
      changed = true;
    }
  };
  bool inside = false;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block) {
        changed |= propagate(&nested, varying, grid, axes);
        inside |= llvm::any_of(nested.getResults(), [&](Value result) {
          return varying.contains(result);
        });
      }
  // A linalg body computes on its operands' elements: it varies through
  // them, unless it reads a varying value from above.
  if (isa<linalg::LinalgOp>(op)) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    inside = llvm::any_of(captured,
                          [&](Value value) { return varying.contains(value); });
  }
  if (isReplicating(op, grid, axes))
    return changed;
  bool source = isa<shard::ProcessLinearIndexOp, shard::ProcessMultiIndexOp>(op);
  bool fromOperands = llvm::any_of(op->getOperands(), [&](Value operand) {
    return varying.contains(operand);
  });
  if (!(source || fromOperands || inside))
    return changed;
  SmallVector<ShardLayout> layouts =
      source || inside ? SmallVector<ShardLayout>(op->getNumResults(),
                                                  ShardLayout::unknown())
                       : inferLayouts(op, varying);
  for (auto [result, layout] : llvm::zip_equal(op->getResults(), layouts))
    mark(result, layout);
  // Function bodies keep their arguments: only the sharded ones vary.
  if (!isa<FunctionOpInterface>(op))
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          mark(arg, ShardLayout::unknown());
  return changed;
}

FailureOr<RankVariance> RankVariance::analyze(FunctionOpInterface func) {
  RankVariance result;
  if (func.isExternal())
    return result;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    auto attr = func.getArgAttrOfType<FlatSymbolRefAttr>(i, kShardedAttrName);
    if (!attr)
      continue;
    if (result.grid && result.grid != attr)
      return func.emitError("arguments sharded over two grids, @")
             << result.grid.getValue() << " and @" << attr.getValue()
             << ": data parallelism over one grid is supported";
    result.grid = attr;
    // This rank's rows: the first dimension is split.
    result.varying[func.getArgument(i)] = ShardLayout::splitAlong(1);
  }
  if (!result.grid)
    return result;
  auto gridOp = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
      func, result.grid);
  if (!gridOp)
    return func.emitError("'fp8.sharded' names @")
           << result.grid.getValue() << ", which is not a shard.grid";
  for (int16_t axis = 0; axis < gridOp.getRank(); ++axis)
    result.axes.push_back(axis);
  while (propagate(func, result.varying, result.grid, result.axes)) {
  }
  return result;
}

Operation *mlir::fp8::findNonUniformRegion(Block *block,
                                           FunctionOpInterface func) {
  for (Operation *parent = block->getParentOp(); parent && parent != func;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      if (getConstantIntValue(loop.getLowerBound()) &&
          getConstantIntValue(loop.getUpperBound()) &&
          getConstantIntValue(loop.getStep()))
        continue;
    } else if (auto loop = dyn_cast<affine::AffineForOp>(parent)) {
      if (loop.hasConstantBounds())
        continue;
    }
    return parent;
  }
  return nullptr;
}
