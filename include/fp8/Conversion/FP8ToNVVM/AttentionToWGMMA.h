//===- AttentionToWGMMA.h - fp8.attention to a Hopper flash kernel -*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TONVVM_ATTENTIONTOWGMMA_H
#define FP8_CONVERSION_FP8TONVVM_ATTENTIONTOWGMMA_H

#include "fp8/Conversion/FP8ToNVVM/AttentionKernelABI.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <optional>
#include <string>

namespace mlir::fp8 {

class AttentionOp;
class AttentionGradOp;

/// The flash attention kernel of `config` (AttentionKernelABI.h) in
/// `module`, built on first use.
LLVM::LLVMFuncOp
getOrBuildFlashAttentionKernel(gpu::GPUModuleOp module,
                               const attention_abi::AttentionConfig &config);

/// The kernel configuration that computes `op`, or why none does (then
/// fp8-decompose-attention takes it).
FailureOr<attention_abi::AttentionConfig>
planFlashAttention(AttentionOp op, std::string &whyNot);

/// The backward kernel of `config` (AttentionKernelABI.h, "The backward")
/// in `module`, built on first use.
LLVM::LLVMFuncOp getOrBuildFlashAttentionGradKernel(
    gpu::GPUModuleOp module, const attention_abi::AttentionGradConfig &config);

/// The backward kernel configuration that computes `op`, or why none does.
FailureOr<attention_abi::AttentionGradConfig>
planFlashAttentionGrad(AttentionGradOp op, std::string &whyNot);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TONVVM_ATTENTIONTOWGMMA_H
