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

def FP8ReshapeDynamicExpands : Pass<"fp8-reshape-dynamic-expands"> {
  let summary = "Turn expand_shapes that split one dimension into several "
                "dynamic ones into tensor.reshape";
  let description = [{
    Part of `fp8-lower-to-cpu`, before bufferization. A `tensor.expand_shape`
    with two or more dynamic sizes in one reassociation group (`[?, 32]` to
    `[?, ?, 32]`: a batch and a sequence, both dynamic) makes upstream
    `expand-strided-metadata` crash in MLIR 22 (llvm#186830: it builds a
    `memref.reinterpret_cast` from a null static size). The same reshape as
    `tensor.reshape` with its output shape as a tensor lowers through
    `memref.reshape`, which needs no strided-metadata expansion. Other
    expand_shapes are left alone.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def FP8DefineExternGlobals : Pass<"fp8-define-extern-globals", "ModuleOp"> {
  let summary = "Give ml_program globals declared #ml_program.extern storage "
                "that the caller fills";
  let description = [{
    Part of `fp8-lower-to-cpu`, before bufferization. A global whose value is
    `#ml_program.extern` (weights that `fp8-gen --weights=globals` leaves to
    the caller) becomes a public, mutable global without an initial value
    (`unit`): exported, uninitialized storage that the program's user writes
    before the first call, as `fp8-run` does. Upstream One-Shot Bufferize
    would copy the extern attribute into a `memref.global`, which fails to
    verify (MLIR 22). Extern globals of other than a statically shaped tensor
    type are left alone; bufferization reports them.
  }];
}

def FP8LowerNestedModulesToCPU
    : Pass<"fp8-lower-nested-modules-to-cpu", "ModuleOp"> {
  let summary = "Run fp8-lower-to-cpu on every nested module, innermost first";
  let description = [{
    The first step of `fp8-lower-to-cpu`. Module passes act on the module
    they run on, but conversions reach into nested modules, so a function in
    a `module @m { ... }` would be half lowered. Each nested module is
    lowered completely, as its own unit (its globals, its functions), before
    the enclosing one.
  }];
}

#endif // FP8_PIPELINES_PASSES_TD
