//===- FuseAttention.h - fp8-fuse-attention's shared matchers ---*- C++ -*-===//
//
// Private to lib/Dialect/FP8/Transforms: the helpers the two matchers of
// fp8-fuse-attention share (the fused-generic form in FuseAttention.cpp, the
// op-by-op form of TOSA imports in FuseAttentionOpByOp.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_TRANSFORMS_FUSEATTENTION_H
#define FP8_LIB_DIALECT_FP8_TRANSFORMS_FUSEATTENTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::fp8::attention {

/// `init` is a linalg.fill of the constant `expected`.
bool isFilledWith(Value init, float expected);

/// A batched contraction [b, m, k] x rhs -> [b, m, n] from zero, with the
/// rhs as [b, n, k] (`transposedRhs`) or [b, k, n].
bool isBatchContraction(linalg::LinalgOp op, bool transposedRhs);

/// The same with one or more batch loops first: loops (b..., m, n, k), the
/// lhs [b..., m, k], the rhs [b..., n, k] or [b..., k, n], the result
/// [b..., m, n] (a 4-D generic contraction, as StableHLO's dot_general with
/// batch dimensions [0, 1] lowers).
bool isMultiBatchContraction(linalg::LinalgOp op, bool transposedRhs);

/// Each of the map's `rank` results is d_i or 0: a tensor broadcast on a
/// loop space of that rank (a mask on the scores).
bool isBroadcastMap(AffineMap map, int64_t rank);

/// An elementwise generic that only rounds (truncf) its one input.
bool isRounding(linalg::GenericOp op);

/// The reduction generic `op` (one input) yields max(input, accumulator)
/// as its first result: alone, or beside the index of the maximum as a
/// second, integer result that nothing reads (torch-mlir's max.dim).
bool isMaxReductionBody(linalg::GenericOp op);

/// `c` as the factor of a division by it (x / c as x * (1 / c)): 1 / c in
/// f32 when that is finite and nonzero. Exact when c is a power of two;
/// otherwise the scores differ from the graph's by at most one f32
/// rounding, the same order as the flash algorithm's own reassociation of
/// the softmax's sums.
std::optional<double> reciprocalFactor(double c);

/// `value` [N, s, d] as [1, N, s, d].
Value addUnitBatch(RewriterBase &rewriter, Location loc, Value value);

/// K and V [B, s, d] as the graph repeated them for grouped-query
/// attention: a collapse of [..., hkv, g, s, d] whose last batch dimension
/// g is a broadcast (a copy generic, or an add of zeros, that does not read
/// it). When both were repeated by the same g, they are replaced by the
/// same tensors without the repeat, [B / g, s, d], built before the
/// rewriter's insertion point; query head h then reads KV head h / g, which
/// is what the repeat meant. No change otherwise.
void recoverGroupedKV(RewriterBase &rewriter, Location loc, Value &key,
                      Value &value);

/// Erases `value`'s producer if nothing uses it and it has no side effect,
/// and so on up its operands.
void eraseDeadProducers(RewriterBase &rewriter, Value value);

/// What the op-by-op matcher fused, for the remark.
struct OpByOpFusion {
  float scale = 1.0f;
  bool masked = false;
};

/// Attention written one op per step, as TOSA's import leaves it: Q K^T,
/// reshapes, a multiply by a constant, an added mask tensor, the softmax as
/// reduce max / sub / exp / reduce sum / reciprocal-multiply (or divide),
/// reshapes, P V. `output` is the P V candidate. Fuses it into
/// fp8.attention and returns success; fails with an empty `reason` when
/// `output` is no such attention, with the reason it is left otherwise.
FailureOr<OpByOpFusion> fuseOpByOp(RewriterBase &rewriter,
                                   linalg::LinalgOp output,
                                   std::string &reason);

} // namespace mlir::fp8::attention

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_FUSEATTENTION_H
