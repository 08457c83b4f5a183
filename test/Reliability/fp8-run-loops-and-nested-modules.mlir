// Programs the probe found fp8-lower-to-cpu / fp8-run refusing:
// - a loop that carries a tensor through a GEMM (one-shot bufferize refused
//   a loop yielding a new buffer each iteration: "Yield operand #0 is not
//   equivalent to the corresponding iter bbArg");
// - a function in a nested module (the state went to the top module, the
//   CPU lowering half-lowered nested modules, fp8-run did not find it).
// Weights N(0, 1/K): each iteration keeps the scale of h.
//
// RUN: split-file %s %t
// RUN: fp8-run -O0 %t/loop.mlir --arg=1:normal:0.177 --steps=2 --json > %t.loop.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.loop.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= 18' 'steps.1.outputs.0.sqnr_db >= 18'
// RUN: fp8-run -O0 %t/loop.mlir --arg=1:normal:0.177 --fp8-pipeline=scaling=current --json > %t.loop-current.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.loop-current.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= 18'
//
// RUN: fp8-opt %t/nested.mlir --fp8-pipeline | FileCheck %s --check-prefix=STATE
// STATE: module @inner
// STATE: ml_program.global public mutable @fp8.f.arg0.scale
// STATE: func.func @f
// RUN: fp8-opt %t/nested.mlir --fp8-pipeline --fp8-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// LOWERED: module @inner
// LOWERED-NOT: func.func
// LOWERED-NOT: ml_program
// LOWERED: llvm.func @f(
// RUN: fp8-run -O0 %t/nested.mlir --arg=1:normal:0.177 --json > %t.nested.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.nested.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= 25' \
// RUN:   'steps.0.quantized[tensor=fp8.f.arg0].next_scale > 0'

//--- loop.mlir
// h <- h W, three times.
func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>) -> tensor<16x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> tensor<16x32xf32> {
    %e = tensor.empty() : tensor<16x32xf32>
    %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    %y = linalg.matmul ins(%h, %w : tensor<16x32xf32>, tensor<32x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
    scf.yield %y : tensor<16x32xf32>
  }
  return %r : tensor<16x32xf32>
}

//--- nested.mlir
module {
  module @inner {
    func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<16x16xf32>
      %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
      %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
      return %y : tensor<16x16xf32>
    }
  }
}
