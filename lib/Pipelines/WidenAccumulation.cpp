//===- WidenAccumulation.cpp - fp8-widen-accumulation ---------------------===//
//
// bf16 and f16 contractions accumulate in f32 and round once (DESIGN.md
// decision 15): the semantics of the Hopper wgmma kernels, cuBLAS and
// PyTorch, on every path. The pass description in Passes.td gives the
// rewrite and what it leaves alone.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/ScaledMatmulToWGMMA.h"
#include "fp8/Conversion/ScaleArith.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8WIDENACCUMULATION
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

/// The multiply-add of a contraction body, `yield(acc + a * b)`.
struct MultiplyAdd {
  arith::MulFOp mul;
  arith::AddFOp add;
};

/// The body of `op` if it is exactly `yield(acc + a * b)` on its block
/// arguments (either order of each operation): what the f32 op repeats.
/// Anything else (casts, a negation, a use of linalg.index) is not known to
/// keep its meaning in f32.
static std::optional<MultiplyAdd> matchMultiplyAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 3 || body->getOperations().size() != 3)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if (add.getLhs() != acc && add.getRhs() != acc)
    return std::nullopt;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  Value a = body->getArgument(0), b = body->getArgument(1);
  if (!((mul.getLhs() == a && mul.getRhs() == b) ||
        (mul.getLhs() == b && mul.getRhs() == a)))
    return std::nullopt;
  return MultiplyAdd{mul, add};
}

/// Whether `op` is a contraction or convolution of bf16 (or f16) operands
/// into a result of the same type, on tensors, with a plain multiply-add
/// body, that no wgmma kernel computes.
static bool accumulatesInSixteenBits(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->hasAttr(fp8::kWgmmaKernelAttr))
    return false;
  if (!linalg::isaContractionOpInterface(op) &&
      !linalg::isaConvolutionOpInterface(op))
    return false;
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  if (!element.isBF16() && !element.isF16())
    return false;
  for (Value input : op.getDpsInputs())
    if (getElementTypeOrSelf(input.getType()) != element)
      return false;
  return matchMultiplyAdd(op).has_value();
}

/// A parallel linalg.generic applying `body` to each element of the tensor
/// `input`, into a new tensor of its sizes with element type `element`.
static Value
mapElements(OpBuilder &builder, Location loc, Value input, Type element,
            function_ref<Value(OpBuilder &, Location, Value)> body) {
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Value empty = tensor::EmptyOp::create(
      builder, loc, tensor::getMixedSizes(builder, loc, input), element);
  return linalg::GenericOp::create(
             builder, loc, empty.getType(), input, empty,
             SmallVector<AffineMap>(2, builder.getMultiDimIdentityMap(rank)),
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location l, ValueRange args) {
               linalg::YieldOp::create(b, l, body(b, l, args[0]));
             })
      .getResult(0);
}

/// `value` (a bf16 / f16 scalar or tensor) in f32: exact.
static Value extendToF32(OpBuilder &builder, Location loc, Value value) {
  Type f32 = builder.getF32Type();
  if (!isa<RankedTensorType>(value.getType()))
    return arith::ExtFOp::create(builder, loc, f32, value);
  return mapElements(builder, loc, value, f32,
                     [&](OpBuilder &b, Location l, Value element) {
                       return arith::ExtFOp::create(b, l, f32, element);
                     });
}

/// The init `init` in f32. A fill of a value of the element type stays a
/// fill (of the same value in f32): GEMM recognition downstream sees a
/// zero-filled GEMM as one.
static Value extendInitToF32(OpBuilder &builder, Location loc, Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || fill.getInputs()[0].getType() != getElementTypeOrSelf(init))
    return extendToF32(builder, loc, init);
  Value empty = tensor::EmptyOp::create(
      builder, loc, tensor::getMixedSizes(builder, loc, init),
      builder.getF32Type());
  return linalg::FillOp::create(builder, loc,
                                extendToF32(builder, loc, fill.getInputs()[0]),
                                empty)
      .getResult(0);
}

/// Replaces `op` by the same op reading its operands as f32 into an f32
/// init, its result rounded once to the original type.
static void widen(RewriterBase &rewriter, linalg::LinalgOp op) {
  MultiplyAdd body = *matchMultiplyAdd(op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value init = op.getDpsInits()[0];
  Value wideInit = extendInitToF32(rewriter, loc, init);

  // The op itself (named ops keep their name and indexing maps) on the same
  // operands, its body rebuilt as linalg's named ops build a mixed-type
  // one: each operand extended (exact), the multiply-add in f32. The
  // operands are not copied into f32 tensors: reading them as they are
  // keeps the GEMM's memory traffic at 16 bits, and the CPU's register
  // tiles extend each vector they load (512^3 ran 4.5x slower with f32
  // copies, bench/bf16-gemm.sh).
  Type f32 = rewriter.getF32Type();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  Type wideType = resultType.clone(f32);
  SmallVector<Value> operands(op.getDpsInputs());
  operands.push_back(wideInit);
  Operation *wide =
      clone(rewriter, op.getOperation(), TypeRange{wideType}, operands);
  Region &region = wide->getRegion(0);
  Block *oldBody = &region.front();
  SmallVector<Type> argumentTypes = {oldBody->getArgument(0).getType(),
                                     oldBody->getArgument(1).getType(), f32};
  SmallVector<Location> argumentLocs = llvm::map_to_vector(
      oldBody->getArguments(), [](BlockArgument arg) { return arg.getLoc(); });
  Block *newBody =
      rewriter.createBlock(&region, region.end(), argumentTypes, argumentLocs);
  rewriter.eraseBlock(oldBody);
  Value lhs = arith::ExtFOp::create(rewriter, body.mul.getLoc(), f32,
                                    newBody->getArgument(0));
  Value rhs = arith::ExtFOp::create(rewriter, body.mul.getLoc(), f32,
                                    newBody->getArgument(1));
  Value product = arith::MulFOp::create(rewriter, body.mul.getLoc(), lhs, rhs,
                                        body.mul.getFastmathAttr());
  Value sum = arith::AddFOp::create(rewriter, body.add.getLoc(),
                                    newBody->getArgument(2), product,
                                    body.add.getFastmathAttr());
  linalg::YieldOp::create(rewriter, loc, sum);

  rewriter.setInsertionPointAfter(wide);
  Type element = resultType.getElementType();
  Value rounded =
      mapElements(rewriter, loc, wide->getResult(0), element,
                  [&](OpBuilder &b, Location l, Value value) {
                    return fp8::createTruncFFromF32(b, l, value, element);
                  });
  rewriter.replaceOp(op, rounded);
  if (auto fill = init.getDefiningOp<linalg::FillOp>();
      fill && fill->use_empty())
    rewriter.eraseOp(fill);
}

namespace {
struct FP8WidenAccumulationPass
    : fp8::impl::FP8WidenAccumulationBase<FP8WidenAccumulationPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (accumulatesInSixteenBits(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      widen(rewriter, op);
  }
};
} // namespace
