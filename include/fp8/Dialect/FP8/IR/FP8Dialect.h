//===- FP8Dialect.h - fp8 dialect -------------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8DIALECT_H
#define FP8_DIALECT_FP8_IR_FP8DIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "fp8/Dialect/FP8/IR/FP8Dialect.h.inc"

namespace mlir::fp8 {
/// Checks every `fp8.*` discardable attribute under `root` (ops, function
/// arguments and results) with the dialect's verifiers. The verifier runs
/// them only when the fp8 dialect was loaded at parse time; passes that read
/// these attributes call this first so that a bad value is never ignored.
LogicalResult verifyFP8Attributes(Operation *root);
} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_IR_FP8DIALECT_H
