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

/// Makes every fp8.attention FP8 inside: its query and key E4M3 with one
/// power-of-two scale per token, quantized right before it, and its value
/// by `quantizeValue` with P in E4M3 (scale kProbabilityScale, key tiles of
/// kAttentionBlockK). Attentions whose scores must stay high (a fused
/// backward reads the log-sum-exp, dynamic shapes) are left, with a remark
/// on request. Returns how many were converted.
FailureOr<unsigned> quantizeAttention(ModuleOp module,
                                      OpBuilder::Listener *listener,
                                      bool remarks,
                                      AttentionValueQuantizer quantizeValue);

/// P's scale: P <= 1 becomes at most 256 in E4M3 (a power of two, so the
/// scaling is exact; 448 would use E4M3's top binade too, and is not one).
inline constexpr float kProbabilityScale = 256.0f;
/// The key tile P is rounded in: the Hopper flash kernel's (BN =
/// attention_abi::kBlockN; the CPU's flash lowering follows the op's).
inline constexpr int64_t kAttentionBlockK = 128;

} // namespace mlir::fp8

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H
