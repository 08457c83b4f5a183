//===- Report.h - Explaining GEMM decisions ---------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_REPORT_H
#define FP8_DIALECT_FP8_TRANSFORMS_REPORT_H

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"

namespace mlir::fp8 {

/// Emits one remark per GEMM saying what was decided and why.
void emitGemmRemarks(ArrayRef<GemmInfo> gemms, RecipeAttr recipe);

/// Writes buildGemmReport() to `path`; an error on `module` if it can't.
LogicalResult writeGemmReport(ModuleOp module, StringRef path,
                              ArrayRef<GemmInfo> gemms, RecipeAttr recipe);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_REPORT_H
