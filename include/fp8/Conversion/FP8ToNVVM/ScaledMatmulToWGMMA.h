//===- ScaledMatmulToWGMMA.h - fp8.scaled_matmul to a wgmma kernel -*- C++ -*-===//

#ifndef FP8_CONVERSION_FP8TONVVM_SCALEDMATMULTOWGMMA_H
#define FP8_CONVERSION_FP8TONVVM_SCALEDMATMULTOWGMMA_H

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::fp8 {

/// What convert-fp8-scaled-matmul-to-wgmma records on an fp8.scaled_matmul:
/// the kernel (a symbol reference into @fp8_gemm_kernels), its launch shape
/// [BM, BN, threads, dynamic shared bytes], and, when K is not a multiple of
/// 16, the K the operand rows are padded to.
inline constexpr llvm::StringLiteral kWgmmaKernelAttr = "fp8.wgmma_kernel";
inline constexpr llvm::StringLiteral kWgmmaTileAttr = "fp8.wgmma_tile";
inline constexpr llvm::StringLiteral kWgmmaPadKAttr = "fp8.wgmma_pad_k";

/// The Hopper FP8 GEMM kernel of `config` (GemmKernelABI.h) in `module`,
/// built on first use: TMA + mbarrier pipeline, a producer warpgroup and
/// BM/64 consumer warpgroups running nvvm.wgmma.mma_async, persistent.
LLVM::LLVMFuncOp getOrBuildWgmmaGemmKernel(gpu::GPUModuleOp module,
                                           const gemm_abi::GemmConfig &config);

} // namespace mlir::fp8

#endif // FP8_CONVERSION_FP8TONVVM_SCALEDMATMULTOWGMMA_H
