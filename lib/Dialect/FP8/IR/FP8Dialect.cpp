//===- FP8Dialect.cpp - fp8 dialect and attributes ------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Attrs.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;

#include "fp8/Dialect/FP8/IR/FP8Dialect.cpp.inc"
#include "fp8/Dialect/FP8/IR/FP8Enums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Attrs.cpp.inc"

void FP8Dialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fp8/Dialect/FP8/IR/FP8Ops.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fp8/Dialect/FP8/IR/FP8Attrs.cpp.inc"
      >();
}

Operation *FP8Dialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// RecipeAttr
//===----------------------------------------------------------------------===//

LogicalResult RecipeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Format format, Scaling scaling,
                                 uint32_t history, AmaxAlgo algo,
                                 int32_t margin, bool powerOfTwo,
                                 Granularity granularity, bool wgradHigh) {
  if (granularity != Granularity::tensor && scaling != Scaling::current)
    return emitError() << "granularity " << stringifyGranularity(granularity)
                       << " computes every scale from its block's own amax: "
                          "it needs current scaling";
  if (granularity != Granularity::tensor && margin != 0)
    return emitError() << "granularity " << stringifyGranularity(granularity)
                       << " has no margin (TE's block and MX recipes)";
  if (wgradHigh && granularity != Granularity::row)
    return emitError() << "wgrad_high (torchao's rowwise_with_gw_hp) needs "
                          "granularity row";
  if (history == 0)
    return emitError() << "amax history length must be at least 1";
  if (margin < 0 || margin > 127)
    return emitError() << "margin must be in [0, 127], got " << margin;
  return success();
}

FloatType RecipeAttr::getElementType(MLIRContext *context,
                                     bool isGradient) const {
  if (isGradient && getFormat() == Format::hybrid)
    return Float8E5M2Type::get(context);
  return Float8E4M3FNType::get(context);
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

/// A string attribute whose value is one of `allowed`.
static LogicalResult verifyChoice(function_ref<InFlightDiagnostic()> emitError,
                                  NamedAttribute attr,
                                  ArrayRef<StringRef> allowed) {
  auto value = dyn_cast<StringAttr>(attr.getValue());
  if (value && llvm::is_contained(allowed, value.getValue()))
    return success();
  InFlightDiagnostic diag = emitError();
  diag << "'" << attr.getName().getValue() << "' must be one of ";
  llvm::interleave(
      allowed, [&](StringRef choice) { diag << "\"" << choice << "\""; },
      [&] { diag << ", "; });
  return diag << "; got " << attr.getValue();
}

static LogicalResult
verifyStateName(function_ref<InFlightDiagnostic()> emitError,
                NamedAttribute attr) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return emitError() << "'fp8.state' must be a non-empty string naming "
                          "the scaling state, got "
                       << attr.getValue();
  return success();
}

LogicalResult FP8Dialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto emitError = [&] { return op->emitError(); };
  if (name == "fp8.precision")
    return verifyChoice(emitError, attr, {"high", "fp8"});
  if (name == "fp8.decision")
    return verifyChoice(emitError, attr, {"fp8", "high_precision"});
  if (name == "fp8.reason") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError("'fp8.reason' must be a string");
    return success();
  }
  // fp8-fuse-attention's reason for leaving an attention as written.
  if (name == "fp8.attention_reason") {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError("'fp8.attention_reason' must be a string");
    return success();
  }
  if (name == "fp8.backward") {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError("'fp8.backward' must be a unit attribute on a "
                           "function");
    return success();
  }
  if (name == "fp8.recipe") {
    if (!isa<RecipeAttr>(attr.getValue()))
      return op->emitError("'fp8.recipe' must be a #fp8.recipe, got ")
             << attr.getValue();
    return success();
  }
  if (name == "fp8.wgmma_kernel") {
    if (!isa<SymbolRefAttr>(attr.getValue()))
      return op->emitError("'fp8.wgmma_kernel' must be a symbol reference");
    return success();
  }
  if (name == "fp8.wgmma_tile") {
    auto tile = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!tile || tile.size() != 4 ||
        llvm::any_of(tile.asArrayRef(), [](int64_t v) { return v <= 0; }))
      return op->emitError("'fp8.wgmma_tile' must be four positive integers "
                           "[BM, BN, threads, shared bytes]");
    return success();
  }
  if (name == "fp8.wgmma_pad_k") {
    // Elements of the GEMM's operands, the wider of the two: TMA rows are
    // 16-byte multiples, 16 FP8, 8 bf16 / f16 or 4 f32 (tf32) elements.
    auto padded = dyn_cast<IntegerAttr>(attr.getValue());
    unsigned width = 0;
    for (Value operand : op->getOperands().take_front(2))
      if (auto type = dyn_cast<ShapedType>(operand.getType());
          type && type.getElementType().isIntOrFloat())
        width = std::max(width, type.getElementTypeBitWidth());
    int64_t multiple = width == 8 || width == 16 ? 128 / width : 4;
    if (!padded || padded.getInt() <= 0 || padded.getInt() % multiple != 0)
      return op->emitError("'fp8.wgmma_pad_k' must be a positive multiple "
                           "of ")
             << multiple << " (16-byte rows)";
    return success();
  }
  if (name == "fp8.gpu_launcher") {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError("'fp8.gpu_launcher' must be a unit attribute on "
                           "a function");
    return success();
  }
  if (name == "fp8.train_step") {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError("'fp8.train_step' must be a unit attribute on a "
                           "function");
    return success();
  }
  if (name == "fp8.role" || name == "fp8.state" || name == "fp8.train" ||
      name == "fp8.init" || name == "fp8.sharded")
    return op->emitError("'")
           << name << "' belongs on a function argument"
           << (name == "fp8.state" || name == "fp8.train" ? " or result" : "")
           << ", not on an op";
  return op->emitError("unknown fp8 attribute '") << name << "'";
}

LogicalResult FP8Dialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto emitError = [&] {
    return op->emitError() << "argument #" << argIndex << ": ";
  };
  if (name == "fp8.role")
    return verifyChoice(emitError, attr, {"weight", "activation", "grad"});
  if (name == "fp8.state")
    return verifyStateName(emitError, attr);
  if (name == "fp8.train")
    return verifyChoice(emitError, attr,
                        {"tokens", "targets", "loss_scale", "step", "parameter",
                         "moment1", "moment2"});
  if (name == "fp8.init") {
    auto std = dyn_cast<FloatAttr>(attr.getValue());
    if (std && std.getValueAsDouble() > 0 &&
        std::isfinite(std.getValueAsDouble()))
      return success();
    auto choice = dyn_cast<StringAttr>(attr.getValue());
    if (choice && (choice.getValue() == "zeros" || choice.getValue() == "ones"))
      return success();
    return emitError() << "'fp8.init' must be \"zeros\", \"ones\" or a "
                          "positive standard deviation, got "
                       << attr.getValue();
  }
  if (name == "fp8.sharded") {
    // This rank's slice along the first dimension, over a shard.grid (the
    // grid itself is looked up by the passes that use it).
    if (!isa<FlatSymbolRefAttr>(attr.getValue()))
      return emitError() << "'fp8.sharded' must name a shard.grid, got "
                         << attr.getValue();
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto type = func ? dyn_cast<RankedTensorType>(func.getArgumentTypes()[argIndex])
                     : RankedTensorType();
    if (!type || type.getRank() == 0)
      return emitError() << "'fp8.sharded' needs a ranked tensor of rank >= 1 "
                            "(its first dimension is split over the ranks)";
    return success();
  }
  return emitError() << "unknown fp8 argument attribute '" << name << "'";
}

LogicalResult FP8Dialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto emitError = [&] {
    return op->emitError() << "result #" << resultIndex << ": ";
  };
  if (name == "fp8.state")
    return verifyStateName(emitError, attr);
  if (name == "fp8.train")
    return verifyChoice(emitError, attr,
                        {"loss", "parameter", "moment1", "moment2",
                         "grad_norm"});
  return op->emitError() << "result #" << resultIndex
                         << ": unknown fp8 result attribute '" << name << "'";
}

LogicalResult mlir::fp8::verifyFP8Attributes(Operation *root) {
  auto *dialect = root->getContext()->getOrLoadDialect<FP8Dialect>();
  auto isFP8 = [](NamedAttribute attr) {
    return attr.getName().getValue().starts_with("fp8.");
  };
  WalkResult result = root->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (isFP8(attr) && failed(dialect->verifyOperationAttribute(op, attr)))
        return WalkResult::interrupt();
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!func)
      return WalkResult::advance();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      for (NamedAttribute attr : func.getArgAttrs(i))
        if (isFP8(attr) &&
            failed(dialect->verifyRegionArgAttribute(op, 0, i, attr)))
          return WalkResult::interrupt();
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      for (NamedAttribute attr : func.getResultAttrs(i))
        if (isFP8(attr) &&
            failed(dialect->verifyRegionResultAttribute(op, 0, i, attr)))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
