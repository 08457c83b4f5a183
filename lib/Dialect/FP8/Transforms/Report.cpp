//===- Report.cpp - Explaining GEMM decisions -----------------------------===//

#include "fp8/Dialect/FP8/Transforms/Report.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

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
    RecipeAttr gemmRecipe = gemm.getRecipe(recipe);
    remark << "FP8 (" << stringifyGemmReason(gemm.reason) << "): lhs "
           << stringifyOperandRole(gemm.lhs.role) << " as "
           << getOperandFloat8Type(context, gemmRecipe, gemm.lhs.role)
           << ", rhs " << stringifyOperandRole(gemm.rhs.role) << " as "
           << getOperandFloat8Type(context, gemmRecipe, gemm.rhs.role);
    if (gemm.ownRecipe)
      remark << ", under its own recipe " << gemm.ownRecipe;
  }
}

static std::string printLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static llvm::json::Value sizeToJson(int64_t size) {
  if (ShapedType::isDynamic(size))
    return nullptr;
  return size;
}

/// The shape and options of a fused attention (forward or backward).
template <typename OpTy>
static void describeAttention(OpTy attention, llvm::json::Object &record) {
  auto query = cast<RankedTensorType>(attention.getQuery().getType());
  auto key = cast<RankedTensorType>(attention.getKey().getType());
  auto value = cast<RankedTensorType>(attention.getValue().getType());
  // The attention's type is the value's (FP8 scores have an FP8 query and
  // key), or the output's when the value is FP8 too.
  Type elementType = value.getElementType();
  if (isa<Float8E4M3FNType, Float8E5M2Type>(elementType))
    elementType = cast<RankedTensorType>(attention.getOutput().getType())
                      .getElementType();
  std::string element;
  llvm::raw_string_ostream os(element);
  os << elementType;
  record["element_type"] = element;
  record["batch"] = sizeToJson(query.getDimSize(0));
  record["query_heads"] = sizeToJson(query.getDimSize(1));
  record["kv_heads"] = sizeToJson(key.getDimSize(1));
  record["query_length"] = sizeToJson(query.getDimSize(2));
  record["key_length"] = sizeToJson(key.getDimSize(2));
  record["head_dim"] = sizeToJson(query.getDimSize(3));
  record["value_head_dim"] = sizeToJson(value.getDimSize(3));
  record["scale"] = static_cast<double>(attention.getScale().convertToFloat());
  record["causal"] = attention.getCausal();
  if (attention.getCausal())
    record["causal_offset"] = attention.getCausalOffset();
  record["mask"] = !attention.getMask()        ? "none"
                   : attention.hasBooleanMask() ? "boolean"
                                                : "additive";
}

/// One record per attention: fused (an fp8.attention, with its shape and
/// options, and an fp8.attention_grad for a fused backward) or left as
/// written (the op fp8-fuse-attention marked, and why).
static llvm::json::Array buildAttentionReport(ModuleOp module) {
  llvm::json::Array records;
  module.walk([&](Operation *op) {
    bool fused = isa<AttentionOp, AttentionGradOp>(op);
    auto reason = op->getAttrOfType<StringAttr>(kAttentionReasonAttr);
    if (!fused && !reason)
      return;
    auto func = op->getParentOfType<FunctionOpInterface>();
    llvm::json::Object record{
        {"function", func ? func.getName().str() : ""},
        {"location", printLocation(op->getLoc())},
        {"op", op->getName().getStringRef().str()},
        {"fused", fused},
    };
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      describeAttention(attention, record);
      record["lse"] = attention.getLse() != nullptr;
      record["fp8_scores"] = attention.hasFP8Scores();
      record["fp8_values"] = attention.hasFP8Values();
    } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
      describeAttention(grad, record);
    } else {
      record["reason"] = reason.getValue().str();
    }
    records.push_back(std::move(record));
  });
  return records;
}

LogicalResult mlir::fp8::writeGemmReport(ModuleOp module, StringRef path,
                                         ArrayRef<GemmInfo> gemms,
                                         RecipeAttr recipe) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return module.emitError("cannot write the FP8 report to '")
           << path << "': " << error.message();
  llvm::json::Value report = buildGemmReport(gemms, recipe);
  report.getAsObject()->insert({"attention", buildAttentionReport(module)});
  os << llvm::formatv("{0:2}", report) << "\n";
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
