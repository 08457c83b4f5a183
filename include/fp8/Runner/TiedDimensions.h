//===- TiedDimensions.h - Dynamic sizes a function ties together -*- C++ -*-===//
//
// A function with dynamic shapes is only defined for arguments whose sizes
// agree where its body requires it: the K of a matmul's two operands, the
// sizes of an elementwise op's operands. A runner that takes some arguments
// from files and draws the others must check the files against each other
// and draw the others to match; this analysis says which dimensions are tied.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_TIEDDIMENSIONS_H
#define FP8_RUNNER_TIEDDIMENSIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <tuple>

namespace mlir::fp8::runner {

/// An argument's shape known before the run (a .npy file's), and how
/// messages name where it comes from (e.g. "'x.npy'").
struct GivenShape {
  SmallVector<int64_t> shape;
  std::string source;
};

/// Classes of dimensions of a function's tensors that its body requires to
/// be equal at run time, found by unification over the body (regions
/// included, callees not):
/// - a linalg structured op's operands, through their indexing maps: two
///   dimensions read with the same loop dimension are equal;
/// - a destination-style op's results and their inits; tensor.cast; the
///   tensors of Elementwise ops and of ops whose operands and results have
///   the same shape or type (arith and math on tensors); the
///   single-dimension groups of expand/collapse_shape;
/// - tensor.dim, tensor.empty and expand_shape's output sizes with the index
///   values they give or take, and constant indices as static sizes.
/// What it does not see (loops, calls, broadcasting TOSA ops) ties nothing:
/// the classes are never larger than what the IR requires.
class TiedDimensions {
public:
  explicit TiedDimensions(func::FuncOp func);

  /// The shape of every argument (empty for scalars): `given[i]` where set
  /// (compatible with the argument's type), else the type's shape with each
  /// dynamic size taken from a given or static dimension it is tied to,
  /// else `dynamicSize`. Fails, with `error` naming both arguments and
  /// dimensions, when a given size differs from another given one or a
  /// static one of its class.
  FailureOr<SmallVector<SmallVector<int64_t>>>
  getArgumentShapes(ArrayRef<std::optional<GivenShape>> given,
                    int64_t dynamicSize, std::string &error) const;

  /// The shape of every result when the arguments have `argumentShapes`: a
  /// dynamic size tied to an argument's dimension or a static one is known,
  /// the others are `dynamicSize`.
  SmallVector<SmallVector<int64_t>>
  getResultShapes(ArrayRef<SmallVector<int64_t>> argumentShapes,
                  int64_t dynamicSize) const;

private:
  unsigned find(unsigned node) const;
  void unite(unsigned a, unsigned b);
  unsigned addNode(std::optional<int64_t> staticSize);
  /// Dimension `dim` of the ranked tensor `value`.
  unsigned getDimension(Value value, int64_t dim);
  /// The index `value` as a size.
  unsigned getIndex(Value value);
  /// Loop dimension `loop` of the linalg op `op`.
  unsigned getLoop(Operation *op, unsigned loop);
  void uniteShapes(Value a, Value b);
  void visit(Operation *op);

  std::string name;
  SmallVector<Type> resultTypes;
  using Key = std::tuple<unsigned, const void *, int64_t>;
  llvm::DenseMap<Key, unsigned> nodes;
  mutable SmallVector<unsigned> parent;
  /// Per class (at its root): a static size of one of its members.
  SmallVector<std::optional<int64_t>> staticSizes;
  /// Per argument and result: its dimensions' nodes (none for a scalar, or
  /// for the results of a function with several returns).
  SmallVector<SmallVector<unsigned>> argumentNodes, resultNodes;
};

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_TIEDDIMENSIONS_H
