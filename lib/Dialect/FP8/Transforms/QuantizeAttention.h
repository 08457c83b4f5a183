//===- QuantizeAttention.h - FP8 scores inside fused attention --*- C++ -*-===//

#ifndef FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H
#define FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::fp8 {

/// Makes the scores of every fp8.attention FP8: its query and key E4M3 with
/// one power-of-two scale per token, quantized right before it. Attentions
/// whose scores must stay high (a fused backward reads the log-sum-exp,
/// dynamic shapes) are left, with a remark on request. Returns how many
/// were converted.
unsigned quantizeAttentionScores(ModuleOp module,
                                 OpBuilder::Listener *listener, bool remarks);

} // namespace mlir::fp8

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZEATTENTION_H
