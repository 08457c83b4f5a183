//===- FP8Dialect.h - fp8 dialect -------------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8DIALECT_H
#define FP8_DIALECT_FP8_IR_FP8DIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "fp8/Dialect/FP8/IR/FP8Dialect.h.inc"

#endif // FP8_DIALECT_FP8_IR_FP8DIALECT_H
