//===- Report.h - Explaining GEMM decisions ---------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_REPORT_H
#define FP8_DIALECT_FP8_TRANSFORMS_REPORT_H

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"

namespace mlir::fp8 {

/// The attribute fp8-fuse-attention leaves on the `P V` contraction of an
/// attention it found but did not fuse: why (a string).
inline constexpr llvm::StringLiteral kAttentionReasonAttr =
    "fp8.attention_reason";

/// Emits one remark per GEMM saying what was decided and why.
void emitGemmRemarks(ArrayRef<GemmInfo> gemms, RecipeAttr recipe);

/// Writes buildGemmReport() to `path`, with an "attention" array: one record
/// per fp8.attention in `module` (fused) and per attention that
/// fp8-fuse-attention left as written, with its reason; an error on
/// `module` if it can't.
LogicalResult writeGemmReport(ModuleOp module, StringRef path,
                              ArrayRef<GemmInfo> gemms, RecipeAttr recipe);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_REPORT_H
