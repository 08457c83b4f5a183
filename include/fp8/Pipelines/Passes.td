//===- Passes.td - Passes of the fp8 pipelines -------------*- tablegen -*-===//

#ifndef FP8_PIPELINES_PASSES_TD
#define FP8_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8ImportTosa : Pass<"fp8-import-tosa", "ModuleOp"> {
  let summary = "Bring TOSA graphs to linalg on tensors, if there are any";
  let description = [{
    The front end of `fp8-pipeline`: when the module holds TOSA ops, runs
    upstream's TOSA to linalg / arith / tensor conversions (the sequence that
    converts real exports completely in MLIR 22, whose stock
    `tosa-to-linalg-pipeline` rejects `tosa.cast` i64 -> f32), then
    canonicalize and CSE. On a module without TOSA it does nothing, so linalg
    input pays nothing for it.
  }];
}

#endif // FP8_PIPELINES_PASSES_TD
