//===- Classify.cpp - Report which GEMMs go to FP8 ------------------------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Report.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8CLASSIFY
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct FP8ClassifyPass : fp8::impl::FP8ClassifyBase<FP8ClassifyPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GemmPolicy policy{fp8Attention, keepFirstLast, minFlops,
                      /*wgradHigh=*/false, /*requireStaticShapes=*/false,
                      llvm::to_vector(exclude)};
    FailureOr<SmallVector<GemmInfo, 0>> gemms = analyzeGemms(module, policy);
    if (failed(gemms))
      return signalPassFailure();

    // The formats in remarks and the report follow the module's recipe, if
    // fp8-quantize already recorded one, else Transformer Engine's default.
    auto recipe = module->getAttrOfType<RecipeAttr>("fp8.recipe");
    if (!recipe)
      recipe = RecipeAttr::get(&getContext());

    MLIRContext *context = &getContext();
    for (const GemmInfo &gemm : *gemms) {
      gemm.op->setAttr("fp8.decision",
                       StringAttr::get(context, gemm.isFP8() ? "fp8"
                                                             : "high_precision"));
      gemm.op->setAttr("fp8.reason", StringAttr::get(
                                         context,
                                         stringifyGemmReason(gemm.reason)));
    }
    if (remarks)
      emitGemmRemarks(*gemms, recipe);
    if (!report.empty() &&
        failed(writeGemmReport(module, report, *gemms, recipe)))
      return signalPassFailure();
  }
};
} // namespace
