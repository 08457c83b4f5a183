//===- FP8ToLinalg.h - fp8 to linalg conversion -----------------*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TOLINALG_FP8TOLINALG_H
#define FP8_CONVERSION_FP8TOLINALG_FP8TOLINALG_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp8 {

/// Patterns that rewrite every fp8 op into linalg, tensor, arith and math
/// ops on tensors (see convert-fp8-to-linalg).
void populateFP8ToLinalgPatterns(RewritePatternSet &patterns);

/// The pattern that lowers `fp8.attention` to the FlashAttention-2 forward
/// algorithm: scf.forall over (batch, head, query tile), scf.for over key
/// tiles, linalg ops on tiles (part of populateFP8ToLinalgPatterns).
void populateFP8AttentionToLinalgPatterns(RewritePatternSet &patterns);

/// The pattern that lowers `fp8.attention_grad` to FlashAttention-2's
/// backward by tiles: one scf.forall over key tiles for dK and dV, one over
/// query tiles for dQ, P recomputed from lse (part of
/// populateFP8ToLinalgPatterns).
void populateFP8AttentionGradToLinalgPatterns(RewritePatternSet &patterns);

/// `value` (f32, a scalar or a statically shaped vector/tensor) converted to
/// `float8Type` as Hopper's `cvt.rn.satfinite` does: clamped to the finite
/// range, NaN replaced by the positive NaN whose FP8 encoding is 0x7F in both
/// formats, then an ordinary nearest-even `arith.truncf`.
Value createSaturatingTruncF(OpBuilder &builder, Location loc, Value value,
                             FloatType float8Type);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TOLINALG_FP8TOLINALG_H
