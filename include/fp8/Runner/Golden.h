//===- Golden.h - The graph evaluated in wider floats ------------*- C++ -*-===//
//
// fp8-run's golden reference: the same program with every float narrower
// than the golden type (bf16, f16; f32 too for an f64 golden) widened to it,
// so that a bf16 graph that accumulates in bf16 is measured against what it
// means, not against its own rounding. FP8 types are left alone (the golden
// is made from the graph as written, which has none).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_GOLDEN_H
#define FP8_RUNNER_GOLDEN_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::fp8::runner {

/// `type` in the golden run: floats wider than FP8 and narrower than
/// `target` become `target`, in scalars, shaped and function types.
Type getGoldenType(Type type, FloatType target);

/// Widens `module` in place to `target` (f32 or f64): types of values,
/// block arguments, functions and globals, float constants (converted
/// exactly), and drops the extf/truncf that widening makes identities.
/// Returns whether anything changed; fails, with `error`, when the result
/// does not verify (a bitcast of a bf16, say): the module is then unusable.
FailureOr<bool> widenFloats(ModuleOp module, FloatType target,
                            std::string &error);

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_GOLDEN_H
