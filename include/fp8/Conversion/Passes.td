//===- Passes.td - fp8 conversion passes -------------------*- tablegen -*-===//

#ifndef FP8_CONVERSION_PASSES_TD
#define FP8_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// FP8ToLinalg
//===----------------------------------------------------------------------===//

def ConvertFP8ToLinalg : Pass<"convert-fp8-to-linalg"> {
  let summary = "Lower the fp8 dialect to linalg, tensor, arith and math";
  let description = [{
    Rewrites every `fp8` op into target-independent ops on tensors, with the
    exact semantics of the op descriptions and folders:

    - `fp8.amax`: a `linalg.generic` reduction of `|x|` with `arith.maxnumf`
      (NaN ignored) from 0;
    - `fp8.compute_scale`: scalar `arith` with Transformer Engine's guards
      (amax 0 / Inf / NaN, infinite scale to FLT_MAX, power-of-two scales by
      masking the f32 encoding), the history reduced by a `linalg.generic`;
    - `fp8.record_amax`, `fp8.roll_history`: `tensor.extract` / `insert` /
      `extract_slice` / `insert_slice`;
    - `fp8.quantize`, `fp8.cast_transpose`: element-wise `linalg.generic`s
      that widen to f32, multiply by the scale and cast saturating: clamp to
      the finite range, NaN to the canonical positive NaN, then
      `arith.truncf` (equal to `cvt.rn.satfinite` bit for bit);
    - `fp8.dequantize`: widen, multiply, round to the result type;
    - `fp8.scaled_matmul`: a `linalg.generic` contraction accumulating
      `f32(lhs) * f32(rhs)` in f32 (transposes and a shared rank-2 rhs in its
      indexing maps), then the scales and the bias.

    Dynamic shapes are supported. FP8 element types remain; run
    `fp8-expand-float8` to lower them for a CPU.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // FP8_CONVERSION_PASSES_TD
