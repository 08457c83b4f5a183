//===- FP8Ops.h - fp8 dialect operations ------------------------*- C++ -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8OPS_H
#define FP8_DIALECT_FP8_IR_FP8OPS_H

#include "fp8/Dialect/FP8/IR/FP8Attrs.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fp8/Numerics/Float8.h"

namespace mlir::fp8 {
/// The numerics-library format of a builtin float8 type; nullopt for any
/// other type.
std::optional<numerics::Format> getNumericsFormat(Type type);

/// The shape of the per-block scales of a tensor of `shape` with `block`:
/// ceil(size / block) in each dimension (dynamic stays dynamic).
SmallVector<int64_t> getBlockScaleShape(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> block);

/// Whether an attention mask changes no score: a constant boolean splat of
/// true, or an additive constant splat of +0 or -0 (fp8.attention's
/// canonicalization drops it; a kernel may ignore it).
bool isNeutralAttentionMask(Value mask);
} // namespace mlir::fp8

#define GET_OP_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Ops.h.inc"

#endif // FP8_DIALECT_FP8_IR_FP8OPS_H
