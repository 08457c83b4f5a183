//===- QuantizeAttention.cpp - FP8 scores inside fused attention ----------===//
//
// fp8-quantize's `fp8-attention` for the fused op: the query and the key of
// every fp8.attention become E4M3 with one power-of-two scale per token
// (fp8.block_amax / fp8.compute_block_scales / fp8.quantize over blocks of
// one token's head dimension), the value E4M3 with a delayed scale (the
// caller's scaling state), and P E4M3 with a fixed scale per key tile, and
// the op takes them with their scales. A token's scale depends on that
// token alone, and a delayed scale on earlier steps only, so no later token
// changes an earlier output through a scale (TransformerEngine#3248 is the
// per-tensor amax over the whole sequence doing exactly that);
// power-of-two scales keep the dequantized products exact.
//
//===----------------------------------------------------------------------===//

#include "QuantizeAttention.h"

#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fp8;

/// Why `op`'s scores stay in high precision, or nothing.
static std::optional<StringRef> whyHighPrecision(AttentionOp op) {
  if (op.hasFP8Scores() || op.hasFP8Values())
    return "it is FP8 already";
  // The backward recomputes P from the high-precision Q and K against this
  // lse: FP8 scores here would make its rows no longer sum to one.
  if (op.getLse() && !op.getLse().use_empty())
    return "a fused backward reads its log-sum-exp (the backward recomputes "
           "the scores in high precision)";
  if (!op.getQuery().getType().hasStaticShape() ||
      !op.getKey().getType().hasStaticShape() ||
      !op.getValue().getType().hasStaticShape())
    return "per-token scales need static shapes";
  return std::nullopt;
}

/// `tokens` [b, h, s, d] in E4M3 with one power-of-two scale per token, and
/// the inverse scales [b, h, s].
static std::pair<Value, Value> quantizePerToken(OpBuilder &builder,
                                                Location loc, Value tokens) {
  auto type = cast<RankedTensorType>(tokens.getType());
  FloatType e4m3 = builder.getType<Float8E4M3FNType>();
  auto block = builder.getDenseI64ArrayAttr({1, 1, 1, type.getDimSize(3)});
  auto scaleType = RankedTensorType::get(
      getBlockScaleShape(type.getShape(), block.asArrayRef()),
      builder.getF32Type());
  Value amax = BlockAmaxOp::create(builder, loc, scaleType, tokens, block);
  auto scales = ComputeBlockScalesOp::create(builder, loc, scaleType,
                                             scaleType, amax, e4m3);
  scales.setPowerOfTwo(true);
  Value quantized =
      QuantizeOp::create(builder, loc, type.clone(e4m3), /*amax=*/Type(),
                         tokens, scales.getScale(), block)
          .getResult();
  Value scaleInv = tensor::CollapseShapeOp::create(
      builder, loc, scales.getScaleInv(),
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  return {quantized, scaleInv};
}

FailureOr<unsigned>
mlir::fp8::quantizeAttention(ModuleOp module, OpBuilder::Listener *listener,
                             bool remarks,
                             AttentionValueQuantizer quantizeValue) {
  SmallVector<AttentionOp> ops;
  module.walk([&](AttentionOp op) { ops.push_back(op); });
  unsigned count = 0;
  for (AttentionOp op : ops) {
    if (std::optional<StringRef> why = whyHighPrecision(op)) {
      if (remarks)
        op.emitRemark() << "attention kept in high precision: " << *why;
      continue;
    }
    OpBuilder builder(op, listener);
    Location loc = op.getLoc();
    auto [query, queryScaleInv] = quantizePerToken(builder, loc, op.getQuery());
    auto [key, keyScaleInv] = quantizePerToken(builder, loc, op.getKey());
    FailureOr<std::pair<Value, Value>> value = quantizeValue(builder, op);
    if (failed(value))
      return failure();
    // One scale for every head: [b, hkv] filled with it.
    auto valueType = cast<RankedTensorType>(value->first.getType());
    Value valueScaleInv =
        linalg::FillOp::create(
            builder, loc, value->second,
            tensor::EmptyOp::create(builder, loc,
                                    valueType.getShape().take_front(2),
                                    builder.getF32Type())
                .getResult())
            .getResult(0);
    auto fp8 = AttentionOp::create(
        builder, loc, op.getOutput().getType(),
        op.getLse() ? op.getLse().getType() : Type(), query, key, value->first,
        queryScaleInv, keyScaleInv, valueScaleInv, op.getMask(),
        op.getScaleAttr(), op.getCausalAttr(), op.getCausalOffsetAttr(),
        builder.getF32FloatAttr(kProbabilityScale),
        builder.getI64IntegerAttr(kAttentionBlockK));
    if (remarks)
      fp8.emitRemark() << "attention in FP8: query and key as "
                       << builder.getType<Float8E4M3FNType>()
                       << " with one power-of-two scale per token, the value "
                          "with a delayed scale, P with scale "
                       << kProbabilityScale << " per " << kAttentionBlockK
                       << " keys";
    op->replaceAllUsesWith(fp8);
    op.erase();
    ++count;
  }
  return count;
}
