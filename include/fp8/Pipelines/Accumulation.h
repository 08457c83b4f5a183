//===- Accumulation.h - How 16-bit contractions accumulate ------*- C++ -*-===//
//
// The choice the lowerings offer for contractions whose operands and result
// are bf16 or f16 (DESIGN.md decision 15, docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_PIPELINES_ACCUMULATION_H
#define FP8_PIPELINES_ACCUMULATION_H

#include "llvm/Support/CommandLine.h"

namespace mlir::fp8 {

/// How a bf16 / f16 contraction left in high precision accumulates.
enum class Accumulation {
  /// In f32, rounded once to the result type (fp8-widen-accumulation), as
  /// the Hopper wgmma kernels, cuBLAS and PyTorch do: the default.
  F32,
  /// As linalg defines the op: every multiply-add rounded to the result
  /// type.
  AsWritten,
};

/// The spellings of Accumulation in options (`accumulation=f32|as-written`).
inline auto accumulationValues() {
  return llvm::cl::values(
      clEnumValN(Accumulation::F32, "f32",
                 "bf16/f16 contractions accumulate in f32 and round once "
                 "(the GPU's and cuBLAS' semantics)"),
      clEnumValN(Accumulation::AsWritten, "as-written",
                 "linalg's semantics: every multiply-add rounded to bf16/f16"));
}

/// The option spelling of `accumulation`.
inline const char *stringifyAccumulation(Accumulation accumulation) {
  return accumulation == Accumulation::F32 ? "f32" : "as-written";
}

} // namespace mlir::fp8

#endif // FP8_PIPELINES_ACCUMULATION_H
