//===- ExpandFloat8.h - FP8 casts as integer operations ---------*- C++ -*-===//
//
// Builders and patterns that rewrite conversions between f32 / f16 / bf16 and
// the FP8 types f8E4M3FN / f8E5M2 into integer `arith` operations on i8 and
// i32, bit-exact to the numerics library (fp8/Numerics/Float8.h), so that a
// target without FP8 support (LLVM on a CPU) runs them. FP8 values become i8
// holding the FP8 encoding.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_EXPANDFLOAT8_H
#define FP8_DIALECT_FP8_TRANSFORMS_EXPANDFLOAT8_H

#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::fp8 {

/// Converts FP8 scalars to i8 and shaped types of FP8 elements (tensors,
/// vectors, memrefs) to the same shape of i8; every other type is kept.
void populateFloat8ToI8TypeConversions(TypeConverter &converter);

/// The FP8 code of `value` (f32, f16 or bf16; a scalar, a vector or a
/// statically shaped tensor of them) in `float8Type`, as an i8 (or i8 shaped)
/// value. Rounds to nearest even once; overflow, infinities and NaN follow
/// `arith.truncf`, i.e. LLVM APFloat (numerics::Overflow::NonSaturating).
Value createTruncToFloat8(OpBuilder &builder, Location loc, Value value,
                          FloatType float8Type);

/// The exact value of the FP8 codes `code` (i8 or i8 shaped) of `float8Type`
/// in `resultType` (f32, f16 or bf16, or shaped of the same shape), as
/// `arith.extf` defines it.
Value createExtFromFloat8(OpBuilder &builder, Location loc, Value code,
                          FloatType float8Type, Type resultType);

/// Patterns that remove FP8 types: `arith.truncf` / `arith.extf` to and from
/// FP8 become integer operations, FP8 constants become i8 constants, and
/// every other op (function signatures, structured ops and their bodies,
/// `ml_program.global`s) is rebuilt with its FP8 types converted by
/// `converter`, which must hold populateFloat8ToI8TypeConversions.
void populateFP8ExpandFloat8Patterns(const TypeConverter &converter,
                                     RewritePatternSet &patterns);

/// Whether `op` mentions an FP8 type: in an operand, a result, a block
/// argument of one of its regions, or a type or typed attribute.
bool hasFloat8Types(Operation *op);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_EXPANDFLOAT8_H
