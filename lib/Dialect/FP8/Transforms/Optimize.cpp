//===- Optimize.cpp - Exact clean-ups of FP8 IR ---------------------------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8OPTIMIZE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

static bool isMatrixTranspose(linalg::TransposeOp op) {
  return op.getPermutation() == ArrayRef<int64_t>{1, 0};
}

/// Replaces `quantize` (rank 2) by a cast_transpose of the same input and
/// scale, and returns it; the caller redirects the transposed uses, whose
/// type is `transposedType`. Each result keeps the type of the value it
/// replaces: the two may know different static sizes of the same input.
static CastTransposeOp replaceWithCastTranspose(PatternRewriter &rewriter,
                                                QuantizeOp quantize,
                                                Type transposedType) {
  RankedTensorType type = quantize.getResult().getType();
  rewriter.setInsertionPoint(quantize);
  auto fused = CastTransposeOp::create(
      rewriter, quantize.getLoc(), type, transposedType,
      quantize.getAmax() ? quantize.getAmax().getType() : Type(),
      quantize.getInput(), quantize.getScale());
  SmallVector<Value> replacements = {fused.getResult()};
  if (quantize.getAmax())
    replacements.push_back(fused.getAmax());
  rewriter.replaceOp(quantize, replacements);
  return fused;
}

namespace {
/// transpose(quantize(x, s)) -> the second result of cast_transpose(x, s):
/// quantization is element-wise, so both orders give the same bytes.
struct FuseTransposeOfQuantize : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto quantize = transpose.getInput().getDefiningOp<QuantizeOp>();
    // Block scales run along one dimension: a transposed copy would carry
    // them along the other (triton#8839). Those are quantized again.
    if (!quantize || quantize.getBlockShape() ||
        !isMatrixTranspose(transpose) ||
        !transpose.hasPureTensorSemantics())
      return failure();
    CastTransposeOp fused = replaceWithCastTranspose(
        rewriter, quantize, transpose.getResult()[0].getType());
    rewriter.replaceOp(transpose, fused.getTransposed());
    return success();
  }
};

/// quantize(x, s) and quantize(transpose(x), s) -> one cast_transpose(x, s).
struct FuseQuantizeOfTranspose : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp quantizeT,
                                PatternRewriter &rewriter) const override {
    auto transpose = quantizeT.getInput().getDefiningOp<linalg::TransposeOp>();
    if (!transpose || !isMatrixTranspose(transpose) || quantizeT.getAmax() ||
        quantizeT.getBlockShape())
      return failure();
    Value x = transpose.getInput();
    QuantizeOp quantize;
    for (Operation *user : x.getUsers())
      if (auto candidate = dyn_cast<QuantizeOp>(user);
          candidate && candidate.getScale() == quantizeT.getScale() &&
          candidate.getResult().getType().getElementType() ==
              quantizeT.getResult().getType().getElementType())
        quantize = candidate;
    if (!quantize)
      return failure();
    // The fused op goes where both its input and scale are available and
    // before both uses: at the earlier of the two quantizations, provided
    // the scale dominates it.
    QuantizeOp first = quantize->isBeforeInBlock(quantizeT) ? quantize
                                                            : quantizeT;
    if (quantize->getBlock() != quantizeT->getBlock())
      return failure();
    if (Operation *scaleDef = quantize.getScale().getDefiningOp();
        scaleDef && scaleDef->getBlock() == first->getBlock() &&
        !scaleDef->isBeforeInBlock(first))
      return failure();
    if (quantize != first)
      rewriter.moveOpBefore(quantize, first);
    CastTransposeOp fused = replaceWithCastTranspose(
        rewriter, quantize, quantizeT.getResult().getType());
    rewriter.replaceOp(quantizeT, fused.getTransposed());
    return success();
  }
};

/// contraction(dequantize(qa, sa), dequantize(qb, sb)) from zero ->
/// scaled_matmul(qa, qb, sa, sb).
struct FoldDequantizeIntoGemm
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        !linalg::isaContractionOpInterface(op))
      return failure();
    GemmInfo info;
    // Grouped dimensions would need reshapes: fp8-quantize's business.
    if (failed(matchGemmLayout(op, info)) || info.isCollapsed() ||
        info.batchReduce || !isZeroFill(op.getDpsInitOperand(0)->get()))
      return failure();
    auto lhs = info.lhs.value.getDefiningOp<DequantizeOp>();
    auto rhs = info.rhs.value.getDefiningOp<DequantizeOp>();
    // Per-block dequantizes keep their GEMM (their blocks need not match).
    if (!lhs || !rhs || lhs.getBlockShape() || rhs.getBlockShape())
      return failure();
    Type resultType = op->getResult(0).getType();
    if (!isa<Float32Type, BFloat16Type, Float16Type>(
            getElementTypeOrSelf(resultType)))
      return failure();
    rewriter.replaceOpWithNewOp<ScaledMatmulOp>(
        op, resultType, /*result_amax=*/Type(), lhs.getInput(),
        rhs.getInput(), lhs.getScaleInv(), rhs.getScaleInv(),
        /*bias=*/Value(), info.lhs.transposed, info.rhs.transposed,
        /*accumulator_type=*/TypeAttr(), /*lhs_block=*/DenseI64ArrayAttr(),
        /*rhs_block=*/DenseI64ArrayAttr());
    return success();
  }
};

struct FP8OptimizePass : fp8::impl::FP8OptimizeBase<FP8OptimizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFP8OptimizePatterns(patterns);
    // Only these rewrites, and only on the ops they start from: the rest of
    // the program is not folded, simplified or stripped of dead code behind
    // the user's back (and that would cost more than the pass itself on
    // large graphs).
    auto readsFP8 = [](Operation *op) {
      return llvm::any_of(op->getOperands(), [](Value operand) {
        return isa_and_present<QuantizeOp, DequantizeOp>(
            operand.getDefiningOp());
      });
    };
    SmallVector<Operation *> roots;
    getOperation()->walk([&](Operation *op) {
      if (isa<QuantizeOp>(op) ||
          (isa<linalg::LinalgOp>(op) && readsFP8(op)))
        roots.push_back(op);
    });
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(roots, std::move(patterns), config)))
      signalPassFailure();
  }
};
} // namespace

void mlir::fp8::populateFP8OptimizePatterns(RewritePatternSet &patterns) {
  patterns.add<FuseTransposeOfQuantize, FuseQuantizeOfTranspose,
               FoldDequantizeIntoGemm>(patterns.getContext());
}
