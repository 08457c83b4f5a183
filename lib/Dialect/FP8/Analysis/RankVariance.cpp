//===- RankVariance.cpp - What differs between data-parallel ranks --------===//

#include "fp8/Dialect/FP8/Analysis/RankVariance.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

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

/// One pass over `region`'s ops; returns whether anything became varying.
/// Block arguments vary when the op that owns them has a varying operand or
/// anything varying inside (a loop carries it back to its arguments).
static bool propagate(Operation *op, llvm::DenseSet<Value> &varying,
                      FlatSymbolRefAttr grid, ArrayRef<int16_t> axes) {
  bool changed = false;
  auto mark = [&](Value value) { changed |= varying.insert(value).second; };
  bool inside = false;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block) {
        changed |= propagate(&nested, varying, grid, axes);
        inside |= llvm::any_of(nested.getResults(), [&](Value result) {
          return varying.contains(result);
        });
      }
  if (isReplicating(op, grid, axes))
    return changed;
  bool source = isa<shard::ProcessLinearIndexOp, shard::ProcessMultiIndexOp>(op);
  bool fromOperands = llvm::any_of(op->getOperands(), [&](Value operand) {
    return varying.contains(operand);
  });
  if (!(source || fromOperands || inside))
    return changed;
  for (Value result : op->getResults())
    mark(result);
  // Function bodies keep their arguments: only the sharded ones vary.
  if (!isa<FunctionOpInterface>(op))
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          mark(arg);
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
    result.varying.insert(func.getArgument(i));
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
