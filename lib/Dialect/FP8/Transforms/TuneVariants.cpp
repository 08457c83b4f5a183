//===- TuneVariants.cpp - Per-GEMM precision chosen at run time -----------===//
//
// fp8-tune measures many subsets of FP8 GEMMs; compiling the graph once per
// subset would make tuning a large model take hours. This pass keeps both
// versions of every candidate GEMM behind a mask global, so one compiled
// program runs any subset.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

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

static constexpr llvm::StringLiteral kMaskName = "fp8.tune.mask";

namespace {
struct FP8TuneVariantsPass
    : fp8::impl::FP8TuneVariantsBase<FP8TuneVariantsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (Operation *existing = module.lookupSymbol(kMaskName)) {
      existing->emitError("the module already has @")
          << kMaskName << ": fp8-tune-variants ran on it before";
      return signalPassFailure();
    }
    if (granularity != "tensor" && granularity != "row" &&
        granularity != "block" && granularity != "mx") {
      module.emitError("unknown granularity '")
          << granularity << "' (expected tensor, row, block or mx)";
      return signalPassFailure();
    }
    GemmPolicy policy{fp8Attention,
                      keepFirstLast,
                      minFlops,
                      wgradHigh,
                      /*requireStaticShapes=*/granularity != "tensor",
                      llvm::to_vector(exclude)};
    FailureOr<SmallVector<GemmInfo, 0>> gemms = analyzeGemms(module, policy);
    if (failed(gemms))
      return signalPassFailure();
    SmallVector<Operation *> candidates;
    for (const GemmInfo &gemm : *gemms)
      if (gemm.isFP8())
        candidates.push_back(gemm.op);
    if (candidates.empty()) {
      module.emitError("no GEMM goes to FP8 under this policy: there is "
                       "nothing to tune");
      return signalPassFailure();
    }

    MLIRContext *context = &getContext();
    auto maskType = RankedTensorType::get(
        {static_cast<int64_t>(candidates.size())}, IntegerType::get(context, 1));
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    // Public: the runner writes it between calls, so nothing may fold it.
    ml_program::GlobalOp::create(
        builder, module.getLoc(), kMaskName, maskType, /*is_mutable=*/true,
        DenseElementsAttr::get(maskType, true), /*sym_visibility=*/StringAttr());

    auto fp8 = StringAttr::get(context, "fp8");
    auto high = StringAttr::get(context, "high");
    for (auto [index, op] : llvm::enumerate(candidates)) {
      Location loc = op->getLoc();
      builder.setInsertionPoint(op);
      Value mask = ml_program::GlobalLoadOp::create(
          builder, loc, maskType, SymbolRefAttr::get(context, kMaskName));
      Value position = arith::ConstantIndexOp::create(builder, loc, index);
      Value isFP8 = tensor::ExtractOp::create(builder, loc, mask, position);
      auto branch = scf::IfOp::create(builder, loc, op->getResultTypes(),
                                      isFP8, /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      for (auto [block, precision] :
           {std::pair(branch.thenBlock(), fp8),
            std::pair(branch.elseBlock(), high)}) {
        OpBuilder inBranch = OpBuilder::atBlockBegin(block);
        Operation *version = inBranch.clone(*op);
        version->setAttr("fp8.precision", precision);
        scf::YieldOp::create(inBranch, loc, version->getResults());
      }
      if (remarks)
        op->emitRemark() << "FP8 or high precision by element " << index
                         << " of @" << kMaskName;
      op->replaceAllUsesWith(branch.getResults());
      op->erase();
    }
  }
};
} // namespace
