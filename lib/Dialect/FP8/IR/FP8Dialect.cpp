//===- FP8Dialect.cpp - fp8 dialect and attributes ------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Attrs.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

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
                                 int32_t margin, bool powerOfTwo) {
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
