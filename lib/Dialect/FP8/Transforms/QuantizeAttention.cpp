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
// `attention-scales=head` gives the query, key and value one scale per
// batch and head from their own amax instead (blocks of the whole
// sequence): current scaling as Transformer Engine's fp8_dpa, not causal.
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

/// `tokens` [b, h, s, d] in E4M3 with one power-of-two scale per block of
/// `blockTokens` tokens (1 or s), and the inverse scales [b, h, s /
/// blockTokens, 1].
static std::pair<Value, Value> quantizeBlocks(OpBuilder &builder, Location loc,
                                              Value tokens,
                                              int64_t blockTokens) {
  auto type = cast<RankedTensorType>(tokens.getType());
  FloatType e4m3 = builder.getType<Float8E4M3FNType>();
  auto block =
      builder.getDenseI64ArrayAttr({1, 1, blockTokens, type.getDimSize(3)});
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
  return {quantized, scales.getScaleInv()};
}

/// Per-token scales [b, h, s, 1] as the op takes them, [b, h, s].
static Value perTokenScales(OpBuilder &builder, Location loc, Value scales) {
  return tensor::CollapseShapeOp::create(
      builder, loc, scales,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// Per-head scales [b, h, 1, 1] as [b, h] (the value's).
static Value perHeadScales(OpBuilder &builder, Location loc, Value scales) {
  return tensor::CollapseShapeOp::create(
      builder, loc, scales, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
}

/// Per-head scales [b, h, 1, 1] repeated for every one of `tokens` tokens,
/// [b, h, tokens] (the query's and the key's).
static Value perHeadForEveryToken(OpBuilder &builder, Location loc,
                                  Value scales, int64_t tokens) {
  Value heads = perHeadScales(builder, loc, scales);
  auto type = cast<RankedTensorType>(heads.getType());
  Value init = tensor::EmptyOp::create(
      builder, loc,
      ArrayRef<int64_t>{type.getDimSize(0), type.getDimSize(1), tokens},
      builder.getF32Type());
  return linalg::BroadcastOp::create(builder, loc, heads, init,
                                     ArrayRef<int64_t>{2})
      ->getResult(0);
}

/// `scale` (a scalar f32) for every one of `heads` [b, hkv].
static Value fillHeads(OpBuilder &builder, Location loc, Value scale,
                       ArrayRef<int64_t> heads) {
  Value init =
      tensor::EmptyOp::create(builder, loc, heads, builder.getF32Type());
  return linalg::FillOp::create(builder, loc, scale, init).getResult(0);
}

std::optional<AttentionScales>
mlir::fp8::parseAttentionScales(StringRef name) {
  if (name == "token")
    return AttentionScales::token;
  if (name == "head")
    return AttentionScales::head;
  return std::nullopt;
}

FailureOr<unsigned>
mlir::fp8::quantizeAttention(ModuleOp module, OpBuilder::Listener *listener,
                             AttentionScales scales, bool remarks,
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
    ArrayRef<int64_t> queryShape = op.getQuery().getType().getShape();
    ArrayRef<int64_t> keyShape = op.getKey().getType().getShape();
    Value query, key, value, queryScaleInv, keyScaleInv, valueScaleInv;
    if (scales == AttentionScales::token) {
      std::tie(query, queryScaleInv) =
          quantizeBlocks(builder, loc, op.getQuery(), 1);
      queryScaleInv = perTokenScales(builder, loc, queryScaleInv);
      std::tie(key, keyScaleInv) = quantizeBlocks(builder, loc, op.getKey(), 1);
      keyScaleInv = perTokenScales(builder, loc, keyScaleInv);
      FailureOr<std::pair<Value, Value>> delayed = quantizeValue(builder, op);
      if (failed(delayed))
        return failure();
      // One scale for every head: [b, hkv] filled with it.
      value = delayed->first;
      valueScaleInv = fillHeads(builder, loc, delayed->second,
                                op.getValue().getType().getShape().take_front(2));
    } else {
      std::tie(query, queryScaleInv) =
          quantizeBlocks(builder, loc, op.getQuery(), queryShape[2]);
      queryScaleInv =
          perHeadForEveryToken(builder, loc, queryScaleInv, queryShape[2]);
      std::tie(key, keyScaleInv) =
          quantizeBlocks(builder, loc, op.getKey(), keyShape[2]);
      keyScaleInv = perHeadForEveryToken(builder, loc, keyScaleInv, keyShape[2]);
      std::tie(value, valueScaleInv) =
          quantizeBlocks(builder, loc, op.getValue(), keyShape[2]);
      valueScaleInv = perHeadScales(builder, loc, valueScaleInv);
    }
    auto fp8 = AttentionOp::create(
        builder, loc, op.getOutput().getType(),
        op.getLse() ? op.getLse().getType() : Type(), query, key, value,
        queryScaleInv, keyScaleInv, valueScaleInv, op.getMask(),
        op.getScaleAttr(), op.getCausalAttr(), op.getCausalOffsetAttr(),
        builder.getF32FloatAttr(kProbabilityScale),
        builder.getI64IntegerAttr(kAttentionBlockK));
    if (remarks)
      fp8.emitRemark() << "attention in FP8 ("
                       << builder.getType<Float8E4M3FNType>() << "): "
                       << (scales == AttentionScales::token
                               ? "query and key with one power-of-two scale "
                                 "per token, the value with a delayed scale"
                               : "query, key and value with one power-of-two "
                                 "scale per head from their own amax")
                       << ", P with scale " << kProbabilityScale << " per "
                       << kAttentionBlockK << " keys";
    op->replaceAllUsesWith(fp8);
    op.erase();
    ++count;
  }
  return count;
}
