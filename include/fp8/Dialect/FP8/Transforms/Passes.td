//===- Passes.td - fp8 dialect passes ----------------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8Verify : Pass<"fp8-verify", "ModuleOp"> {
  let summary = "Prove that FP8 is used only where it is safe";
  let description = [{
    A lint over IR produced by the fp8 passes or by anyone else. It fails,
    with a located error per violation, on the pitfalls of FP8 training:

    - a cast to an FP8 type that is not an `fp8.quantize` /
      `fp8.cast_transpose` (an `arith.truncf` to f8 has no scale: values
      outside the tiny FP8 range collapse or overflow);
    - an FP8 value reaching anything but FP8-aware ops and pure data
      movement: norms, softmax, reductions, residual adds, losses and any
      other arithmetic must see high-precision values;
    - FP8 accumulation: a contraction whose accumulator (and so result) is
      FP8, or FP8 operands reaching a contraction other than
      `fp8.scaled_matmul`, which would drop their scales;
    - FP8 master weights or optimizer state: a mutable global, or a value
      written back to one, of FP8 type.
  }];
}

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
