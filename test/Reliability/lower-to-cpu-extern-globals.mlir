// C1 (found by the CI fuzz run of 2026-12-01): a global declared
// #ml_program.extern went through fp8-lower-to-cpu into a memref.global whose
// initial value was the extern attribute, IR that fails to verify (upstream
// One-Shot Bufferize copies the value as it is). It is now exported,
// mutable, uninitialized storage that the caller fills, and runs.
//
// RUN: fp8-opt %s --fp8-define-extern-globals | FileCheck %s --check-prefix=DEFINED
// RUN: fp8-opt %s --fp8-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// RUN: fp8-opt %s --fp8-lower-to-cpu | mlir-translate --mlir-to-llvmir -o /dev/null

// DEFINED: ml_program.global public mutable @weights(unit) : tensor<4xf32>
// DEFINED: ml_program.global private @bias(dense<1.000000e+00> : tensor<4xf32>)
// DEFINED: ml_program.global public mutable @table(unit) : tensor<4xf32>
// A constant load of a global the caller now writes is a plain load (found
// by CI's fuzz run too: the verifier rejects global_load_const of a mutable
// global).
// DEFINED-LABEL: func.func @affine
// DEFINED: ml_program.global_load @table

// LOWERED: llvm.mlir.global external @weights() {{.*}} : !llvm.array<4 x f32> {
// LOWERED-NEXT: llvm.mlir.undef
// LOWERED: llvm.mlir.global private constant @bias
ml_program.global private @weights(#ml_program.extern<tensor<4xf32>>) : tensor<4xf32>
ml_program.global private @bias(dense<1.0> : tensor<4xf32>) : tensor<4xf32>
ml_program.global private @table(#ml_program.extern<tensor<4xf32>>) : tensor<4xf32>

func.func @affine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = ml_program.global_load @weights : tensor<4xf32>
  %b = ml_program.global_load @bias : tensor<4xf32>
  %t = ml_program.global_load_const @table : tensor<4xf32>
  %p = arith.mulf %x, %w : tensor<4xf32>
  %q = arith.addf %p, %b : tensor<4xf32>
  %y = arith.addf %q, %t : tensor<4xf32>
  return %y : tensor<4xf32>
}
