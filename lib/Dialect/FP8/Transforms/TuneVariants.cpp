//===- TuneVariants.cpp - Per-GEMM precision chosen at run time -----------===//
//
// fp8-tune measures many choices of FP8 GEMMs and recipes; compiling the
// graph once per choice would make tuning a large model take hours. This
// pass keeps every version of every candidate GEMM behind a choice vector,
// so one compiled program runs any choice.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Recipes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TUNEVARIANTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct FP8TuneVariantsPass
    : fp8::impl::FP8TuneVariantsBase<FP8TuneVariantsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (Operation *existing = module.lookupSymbol(kTuneChoiceName)) {
      existing->emitError("the module already has @")
          << kTuneChoiceName << ": fp8-tune-variants ran on it before";
      return signalPassFailure();
    }
    auto emitError = [&] { return module.emitError(); };
    FailureOr<RecipeAttr> base =
        buildRecipe(emitError, context, scaling, format, history, algo,
                    margin, powerOfTwo, granularity, exactScales, wgradHigh);
    if (failed(base))
      return signalPassFailure();
    SmallVector<RecipeAttr> others;
    for (const std::string &name : alternatives) {
      FailureOr<RecipeAttr> other =
          deriveAlternativeRecipe(emitError, *base, name);
      if (failed(other))
        return signalPassFailure();
      if (*other == *base) {
        module.emitError("alternative '")
            << name << "' is the pipeline's recipe " << *base;
        return signalPassFailure();
      }
      others.push_back(*other);
    }

    GemmPolicy policy{fp8Attention,
                      keepFirstLast,
                      minFlops,
                      base->getWgradHigh(),
                      base->getGranularity() != Granularity::tensor,
                      llvm::to_vector(exclude)};
    FailureOr<SmallVector<GemmInfo, 0>> gemms = analyzeGemms(module, policy);
    if (failed(gemms))
      return signalPassFailure();
    SmallVector<const GemmInfo *> candidates;
    for (const GemmInfo &gemm : *gemms)
      if (gemm.isFP8())
        candidates.push_back(&gemm);
    if (candidates.empty()) {
      module.emitError("no GEMM goes to FP8 under this policy: there is "
                       "nothing to tune");
      return signalPassFailure();
    }

    auto choiceType = RankedTensorType::get(
        {static_cast<int64_t>(candidates.size())}, IntegerType::get(context, 32));
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    // Public: the runner writes it between calls, so nothing may fold it.
    ml_program::GlobalOp::create(
        builder, module.getLoc(), kTuneChoiceName, choiceType,
        /*is_mutable=*/true,
        DenseElementsAttr::get(choiceType,
                               builder.getI32IntegerAttr(kTuneBaseRecipe)),
        /*sym_visibility=*/StringAttr());

    auto fp8 = StringAttr::get(context, "fp8");
    auto high = StringAttr::get(context, "high");
    for (auto [index, gemm] : llvm::enumerate(candidates)) {
      Operation *op = gemm->op;
      Location loc = op->getLoc();
      // The versions: the pipeline's recipe, then each alternative that
      // makes a difference to this GEMM.
      SmallVector<int64_t> cases{kTuneBaseRecipe};
      SmallVector<RecipeAttr> recipes{nullptr};
      for (auto [k, other] : llvm::enumerate(others))
        if (quantizesDifferently(*gemm, *base, other)) {
          cases.push_back(kTuneFirstAlternative + k);
          recipes.push_back(other);
        }

      builder.setInsertionPoint(op);
      Value choices = ml_program::GlobalLoadOp::create(
          builder, loc, choiceType,
          SymbolRefAttr::get(context, kTuneChoiceName));
      Value position = arith::ConstantIndexOp::create(builder, loc, index);
      Value choice = tensor::ExtractOp::create(builder, loc, choices, position);
      Value selector = arith::IndexCastOp::create(
          builder, loc, builder.getIndexType(), choice);
      auto select = scf::IndexSwitchOp::create(
          builder, loc, op->getResultTypes(), selector, cases, cases.size());
      auto addVersion = [&](Region &region, StringAttr precision,
                            RecipeAttr recipe) {
        OpBuilder inCase = OpBuilder::atBlockBegin(&region.emplaceBlock());
        Operation *version = inCase.clone(*op);
        version->setAttr("fp8.precision", precision);
        if (recipe)
          version->setAttr("fp8.recipe", recipe);
        scf::YieldOp::create(inCase, loc, version->getResults());
      };
      for (auto [region, recipe] :
           llvm::zip_equal(select.getCaseRegions(), recipes))
        addVersion(region, fp8, recipe);
      addVersion(select.getDefaultRegion(), high, nullptr);
      if (remarks)
        op->emitRemark() << "version chosen by element " << index << " of @"
                         << kTuneChoiceName << ": " << cases.size()
                         << " FP8 version(s) and high precision";
      op->replaceAllUsesWith(select.getResults());
      op->erase();
    }
  }
};
} // namespace
