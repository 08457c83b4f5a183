//===- Passes.h - fp8 dialect passes ----------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_H
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fp8 {

#define GEN_PASS_DECL
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"

/// fp8-optimize's rewrites, for reuse in other pipelines.
void populateFP8OptimizePatterns(RewritePatternSet &patterns);

/// fp8-decompose-attention's rewrite: fp8.attention as whole-tensor linalg;
/// `roundProbabilities`: exp(S - max) rounded to the element type (the
/// pass's round-probabilities option).
void populateFP8DecomposeAttentionPatterns(RewritePatternSet &patterns,
                                           bool roundProbabilities = false);

#define GEN_PASS_REGISTRATION
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_H
