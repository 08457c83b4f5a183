//===- DecomposeAggregatedOps.cpp - linalg.softmax and kin ----------------===//
//
// Upstream has the decompositions (AggregatedOpInterface) but, in MLIR 22,
// no pass that applies them outside the transform dialect.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8DECOMPOSEAGGREGATEDOPS
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct DecomposeAggregatedOp
    : OpInterfaceRewritePattern<linalg::AggregatedOpInterface> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::AggregatedOpInterface op,
                                PatternRewriter &rewriter) const override {
    // The decompositions build tensor ops (tensor.empty): on buffers they
    // would not type-check.
    if (op->getNumResults() == 0 ||
        !llvm::all_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>))
      return rewriter.notifyMatchFailure(op, "not on ranked tensors");
    FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
    if (failed(results))
      return rewriter.notifyMatchFailure(op, "no decomposition");
    rewriter.replaceOp(op, *results);
    return success();
  }
};

struct FP8DecomposeAggregatedOpsPass
    : fp8::impl::FP8DecomposeAggregatedOpsBase<FP8DecomposeAggregatedOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeAggregatedOp>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
