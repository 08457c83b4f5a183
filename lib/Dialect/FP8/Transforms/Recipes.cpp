//===- Recipes.cpp - FP8 recipes from options, and their variants --------===//

#include "fp8/Dialect/FP8/Transforms/Recipes.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::fp8;

FailureOr<RecipeAttr>
mlir::fp8::buildRecipe(function_ref<InFlightDiagnostic()> emitError,
                       MLIRContext *context, StringRef scaling,
                       StringRef format, unsigned history, StringRef algo,
                       int margin, bool powerOfTwo, StringRef granularity,
                       bool exactScales, bool wgradHigh) {
  std::optional<Granularity> granularityKind =
      symbolizeGranularity(granularity);
  if (!granularityKind)
    return emitError() << "unknown granularity '" << granularity
                       << "' (expected tensor, row, block or mx)";
  bool perTensor = *granularityKind == Granularity::tensor;
  std::optional<Scaling> scalingKind =
      symbolizeScaling(scaling.empty() ? (perTensor ? "delayed" : "current")
                                       : scaling);
  if (!scalingKind)
    return emitError() << "unknown scaling '" << scaling
                       << "' (expected delayed or current)";
  std::optional<Format> formatKind = symbolizeFormat(
      format.empty() ? (perTensor ? "hybrid" : "e4m3") : format);
  if (!formatKind)
    return emitError() << "unknown format '" << format
                       << "' (expected hybrid or e4m3)";
  std::optional<AmaxAlgo> algoKind = symbolizeAmaxAlgo(algo);
  if (!algoKind)
    return emitError() << "unknown algo '" << algo
                       << "' (expected max or most_recent)";

  if (exactScales && (perTensor || *granularityKind == Granularity::mx))
    return emitError() << "exact-scales applies to granularity=row and "
                          "block (per-tensor scales are exact unless "
                          "power-of-two is set; MX scales are E8M0)";
  if (!perTensor) {
    if (*scalingKind != Scaling::current)
      return emitError() << "granularity=" << granularity
                         << " computes each scale from its block's own amax "
                            "(current scaling); scaling="
                         << scaling << " is not supported with it";
    if (margin != 0)
      return emitError()
             << "granularity=" << granularity
             << " follows TE's block and MX recipes, which have no margin";
    // Rows and blocks: TE's power-of-two scales unless exact-scales; MX
    // scales are powers of two by construction (E8M0).
    powerOfTwo = *granularityKind != Granularity::mx && !exactScales;
  }
  if (wgradHigh && *granularityKind != Granularity::row)
    return emitError() << "wgrad-high is torchao's rowwise_with_gw_hp: it "
                          "needs granularity=row";
  return RecipeAttr::getChecked(emitError, context, *formatKind, *scalingKind,
                                history, *algoKind, margin, powerOfTwo,
                                *granularityKind, wgradHigh);
}

RecipeAttr mlir::fp8::withFormat(RecipeAttr recipe, Format format) {
  return RecipeAttr::get(recipe.getContext(), format, recipe.getScaling(),
                         recipe.getHistory(), recipe.getAlgo(),
                         recipe.getMargin(), recipe.getPowerOfTwo(),
                         recipe.getGranularity(), recipe.getWgradHigh());
}

FailureOr<RecipeAttr>
mlir::fp8::deriveAlternativeRecipe(function_ref<InFlightDiagnostic()> emitError,
                                   RecipeAttr base, StringRef name) {
  MLIRContext *context = base.getContext();
  if (name == "row" || name == "block" || name == "mx")
    return buildRecipe(emitError, context, /*scaling=*/"", /*format=*/"",
                       base.getHistory(), /*algo=*/"max", /*margin=*/0,
                       /*powerOfTwo=*/false, name, /*exactScales=*/false,
                       /*wgradHigh=*/false);
  if (name == "e4m3")
    return withFormat(base, Format::e4m3);
  if (name == "current")
    return RecipeAttr::getChecked(
        emitError, context, base.getFormat(), Scaling::current,
        base.getHistory(), base.getAlgo(), base.getMargin(),
        base.getPowerOfTwo(), base.getGranularity(), base.getWgradHigh());
  return emitError() << "unknown alternative '" << name
                     << "' (expected row, block, mx, e4m3 or current)";
}

unsigned mlir::fp8::alternativePreference(StringRef name) {
  return llvm::StringSwitch<unsigned>(name)
      .Case("e4m3", 0)
      .Case("current", 1)
      .Case("row", 2)
      .Case("block", 3)
      .Case("mx", 4)
      .Default(5);
}

bool mlir::fp8::quantizesDifferently(const GemmInfo &gemm, RecipeAttr base,
                                     RecipeAttr alternative) {
  if (alternative == base)
    return false;
  if (alternative.getGranularity() != Granularity::tensor &&
      llvm::any_of(gemm.getSizes(), ShapedType::isDynamic))
    return false;
  bool weightGradient = gemm.lhs.role != OperandRole::Weight &&
                        gemm.rhs.role != OperandRole::Weight &&
                        (gemm.lhs.role == OperandRole::Gradient ||
                         gemm.rhs.role == OperandRole::Gradient);
  if (alternative.getWgradHigh() && weightGradient)
    return false;
  if (withFormat(alternative, base.getFormat()) != base)
    return true;
  MLIRContext *context = base.getContext();
  for (OperandRole role : {gemm.lhs.role, gemm.rhs.role})
    if (getOperandFloat8Type(context, base, role) !=
        getOperandFloat8Type(context, alternative, role))
      return true;
  return false;
}
