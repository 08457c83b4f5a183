// W7: the delayed-scaling state is named @fp8.<function>.<tensor>.{scale,
// amax_history}, a contract that fp8-run and users read the state by. A
// symbol of that name already in the module made the pipeline rename its
// state silently (fp8-run then read the user's globals as the state). A
// clash is now a located error pointing at both.
//
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-pipeline
// RUN: not fp8-run -O0 %s 2>&1 | FileCheck %s --check-prefix=RUNNER
// RUNNER-NOT: SQNR
// RUNNER: fp8-run: error: fp8-pipeline failed on

// expected-note @+1 {{existing symbol here}}
ml_program.global public mutable @"fp8.f.arg1.amax_history"(dense<7.0> : tensor<16xf32>) : tensor<16xf32>
func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-error @+1 {{cannot create the FP8 scaling state @fp8.f.arg1.amax_history: the module already has a symbol of that name}}
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
