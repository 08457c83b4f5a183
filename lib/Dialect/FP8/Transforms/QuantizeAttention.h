//===- QuantizeAttention.h - FP8 scores inside fused attention --*- C++ -*-===//

#ifndef FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H
#define FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "fp8/Dialect/FP8/IR/FP8Ops.h"

namespace mlir::fp8 {

/// An fp8.attention's value as an FP8 tensor and its one (scalar f32)
/// scale_inv, quantized right before the op; failure has been reported.
using AttentionValueQuantizer =
    function_ref<FailureOr<std::pair<Value, Value>>(OpBuilder &, AttentionOp)>;

/// Where fp8-attention's scales of the query, key and value come from.
enum class AttentionScales {
  /// Query and key: one power-of-two scale per token from its own amax; the
  /// value: one delayed scale (`quantizeValue`). Every scale depends on its
  /// own token or on earlier steps only: causal (the default).
  token,
  /// Query, key and value: one power-of-two scale per batch and head from
  /// the amax over the whole sequence (current scaling, as Transformer
  /// Engine's fp8_dpa): a later token can change an earlier output through
  /// the scale (TransformerEngine#3248).
  head,
};
/// "token" or "head"; nothing for anything else.
std::optional<AttentionScales> parseAttentionScales(StringRef name);

/// Makes every fp8.attention FP8 inside: its query, key and value E4M3 with
/// the scales `scales` names (quantized right before it; the delayed value
/// by `quantizeValue`), P in E4M3 (scale kProbabilityScale, key tiles of
/// kAttentionBlockK). Attentions whose scores must stay high (a fused
/// backward reads the log-sum-exp, dynamic shapes) are left, with a remark
/// on request. Returns how many were converted.
FailureOr<unsigned> quantizeAttention(ModuleOp module,
                                      OpBuilder::Listener *listener,
                                      AttentionScales scales, bool remarks,
                                      AttentionValueQuantizer quantizeValue);

/// P's scale: P <= 1 becomes at most 256 in E4M3 (a power of two, so the
/// scaling is exact; 448 would use E4M3's top binade too, and is not one).
inline constexpr float kProbabilityScale = 256.0f;
/// The key tile P is rounded in: the Hopper flash kernel's (BN =
/// attention_abi::kBlockN; the CPU's flash lowering follows the op's).
inline constexpr int64_t kAttentionBlockK = 128;

} // namespace mlir::fp8

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H
