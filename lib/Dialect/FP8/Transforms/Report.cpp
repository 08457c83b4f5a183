//===- Report.cpp - Explaining GEMM decisions -----------------------------===//

#include "fp8/Dialect/FP8/Transforms/Report.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;

void mlir::fp8::emitGemmRemarks(ArrayRef<GemmInfo> gemms, RecipeAttr recipe) {
  for (const GemmInfo &gemm : gemms) {
    InFlightDiagnostic remark = gemm.op->emitRemark();
    if (!gemm.isFP8()) {
      remark << "kept in high precision: " << stringifyGemmReason(gemm.reason);
      continue;
    }
    MLIRContext *context = gemm.op->getContext();
    remark << "FP8 (" << stringifyGemmReason(gemm.reason) << "): lhs "
           << stringifyOperandRole(gemm.lhs.role) << " as "
           << getOperandFloat8Type(context, recipe, gemm.lhs.role) << ", rhs "
           << stringifyOperandRole(gemm.rhs.role) << " as "
           << getOperandFloat8Type(context, recipe, gemm.rhs.role);
  }
}

LogicalResult mlir::fp8::writeGemmReport(ModuleOp module, StringRef path,
                                         ArrayRef<GemmInfo> gemms,
                                         RecipeAttr recipe) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return module.emitError("cannot write the FP8 report to '")
           << path << "': " << error.message();
  os << llvm::formatv("{0:2}", buildGemmReport(gemms, recipe)) << "\n";
  // A full disk shows only when the data is flushed; an unchecked error
  // would abort the process from the stream's destructor.
  os.close();
  if (os.has_error()) {
    std::string message = os.error().message();
    os.clear_error();
    return module.emitError("cannot write the FP8 report to '")
           << path << "': " << message;
  }
  return success();
}
