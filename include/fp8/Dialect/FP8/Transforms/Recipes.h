//===- Recipes.h - FP8 recipes from options, and their variants -*- C++ -*-===//
//
// fp8-quantize builds its recipe from its options; a GEMM may carry its own
// (`fp8.recipe` on the op). fp8-tune offers each GEMM other ways into FP8
// than the pipeline's recipe (finer scales, E4M3 gradients, current
// scaling), derived here so that the pass that builds the variants and the
// tuner that measures them agree on what each one is.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_RECIPES_H
#define FP8_DIALECT_FP8_TRANSFORMS_RECIPES_H

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Attrs.h"

namespace mlir::fp8 {

/// The recipe of fp8-quantize's options. Per tensor, scaling and format
/// default to TE's delayed and hybrid; a finer granularity implies current
/// scaling, E4M3 unless `format` is given, and power-of-two scales unless
/// `exactScales`; asking for delayed scaling with it is an error.
FailureOr<RecipeAttr> buildRecipe(function_ref<InFlightDiagnostic()> emitError,
                                  MLIRContext *context, StringRef scaling,
                                  StringRef format, unsigned history,
                                  StringRef algo, int margin, bool powerOfTwo,
                                  StringRef granularity, bool exactScales,
                                  bool wgradHigh);

/// `recipe` with another format.
RecipeAttr withFormat(RecipeAttr recipe, Format format);

/// An alternative to `base` by name: `row`, `block`, `mx` (the complete
/// recipes at that granularity, as buildRecipe makes them from the
/// granularity alone), `e4m3` (`base` with E4M3 gradients) or `current`
/// (`base` with current scaling). Errors on an unknown name.
FailureOr<RecipeAttr>
deriveAlternativeRecipe(function_ref<InFlightDiagnostic()> emitError,
                        RecipeAttr base, StringRef name);

/// Where an alternative stands in the order of preference, the cheapest to
/// run first: per-tensor scales (E4M3 gradients cost nothing, current
/// scaling one more pass over the tensor), then finer ones (more scales to
/// compute and apply; MX is emulated on Hopper). Unknown names come last.
unsigned alternativePreference(StringRef name);

/// Whether `gemm` (an FP8 candidate under `base`) is quantized differently
/// under `alternative`: false when the two are equal, when they differ in
/// format only and neither operand's FP8 type changes (no gradient
/// operand), and when `alternative` would keep the GEMM in high precision
/// (a finer granularity on dynamic sizes, wgrad-high on a weight gradient).
bool quantizesDifferently(const GemmInfo &gemm, RecipeAttr base,
                          RecipeAttr alternative);

/// fp8-tune-variants' choice vector: element i picks candidate i's version
/// (0: high precision, 1: the pipeline's recipe, 2 + k: alternative k).
inline constexpr llvm::StringLiteral kTuneChoiceName = "fp8.tune.choice";
inline constexpr int32_t kTuneHighPrecision = 0, kTuneBaseRecipe = 1,
                         kTuneFirstAlternative = 2;

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_RECIPES_H
