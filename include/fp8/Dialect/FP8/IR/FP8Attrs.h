//===- FP8Attrs.h - fp8 dialect attributes ----------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8ATTRS_H
#define FP8_DIALECT_FP8_IR_FP8ATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "fp8/Dialect/FP8/IR/FP8Enums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Attrs.h.inc"

#endif // FP8_DIALECT_FP8_IR_FP8ATTRS_H
