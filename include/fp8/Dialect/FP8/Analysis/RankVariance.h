//===- RankVariance.h - What differs between data-parallel ranks -*- C++ -*-===//
//
// A data-parallel program is written per rank (SPMD): the arguments that
// carry `fp8.sharded = @grid` hold this rank's slice of a tensor split along
// its first dimension over every axis of that `shard.grid`; everything else
// (weights, optimizer state, the step) is the same on every rank. This
// analysis finds the values that may differ between ranks: everything
// computed from a sharded argument or a `shard.process_*` index, until a
// collective (`shard.all_reduce`, `shard.all_gather`) over the whole grid
// makes it the same everywhere again. Where it can, it also tracks which
// dimensions are split (through linalg indexing maps, reshapes and
// element-wise ops), which per-block scaling needs.
//
// fp8-quantize uses it to decide which amaxes must be reduced over the grid
// before a scale is computed from them: a scale computed from one rank's
// amax would quantize the same tensor differently on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_ANALYSIS_RANKVARIANCE_H
#define FP8_DIALECT_FP8_ANALYSIS_RANKVARIANCE_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fp8 {

/// The argument attribute that marks a data-parallel slice.
constexpr StringLiteral kShardedAttrName = "fp8.sharded";

/// How a value that differs between ranks is split: the dimensions along
/// which rank r holds the r-th contiguous chunk of the whole tensor (the
/// batch, tokens), when the analysis can tell.
struct ShardLayout {
  bool known = false;
  /// Bit d: dimension d is split over the ranks.
  uint64_t dims = 0;

  /// Dimensions past the 64th are not tracked: a layout that would split
  /// one is unknown.
  static constexpr int64_t kMaxDims = 64;

  static ShardLayout unknown() { return {}; }
  static ShardLayout splitAlong(uint64_t dims) { return {true, dims}; }
  bool isSplit(int64_t dim) const {
    return known && dim < kMaxDims && (dims >> dim) & 1;
  }
  /// Adds `dim` to `dims`; false when it cannot be tracked.
  static bool addDim(uint64_t &dims, int64_t dim) {
    if (dim < 0 || dim >= kMaxDims)
      return false;
    dims |= uint64_t(1) << dim;
    return true;
  }
  bool operator==(const ShardLayout &other) const {
    return known == other.known && dims == other.dims;
  }
};

class RankVariance {
public:
  /// Analyzes `func`. Fails, with a located error, when its sharded
  /// arguments name different grids or a grid that does not exist.
  static FailureOr<RankVariance> analyze(FunctionOpInterface func);

  /// The grid the function is sharded over; null when it is not sharded.
  FlatSymbolRefAttr getGrid() const { return grid; }
  /// Every axis of the grid: data parallelism spans the whole grid.
  ArrayRef<int16_t> getGridAxes() const { return axes; }

  /// Whether `value` may differ between ranks.
  bool isVarying(Value value) const { return varying.contains(value); }
  /// How a varying `value` is split (unknown when it is not varying).
  ShardLayout getLayout(Value value) const { return varying.lookup(value); }

private:
  FlatSymbolRefAttr grid;
  SmallVector<int16_t> axes;
  llvm::DenseMap<Value, ShardLayout> varying;
};

/// The layout of `tensor.collapse_shape` with `reassociation` applied to a
/// value of `layout`: a group is split when its outermost dimension is and
/// no other is (rank r's chunk stays contiguous).
ShardLayout collapseLayout(ShardLayout layout,
                           ArrayRef<ReassociationIndices> reassociation);

/// The op, if any, that would make a collective in `block` run a different
/// number of times on different ranks (TE hangs in that case): an enclosing
/// op, up to `func`, that is not a loop with constant bounds.
Operation *findNonUniformRegion(Block *block, FunctionOpInterface func);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_ANALYSIS_RANKVARIANCE_H
