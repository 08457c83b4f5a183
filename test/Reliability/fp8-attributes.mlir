// W6: `fp8.precision = "bogus"` was ignored and `fp8.role = "gradient"` (for
// "grad") silently made a gradient a weight, cast to E4M3 instead of E5M2.
// The dialect now verifies its discardable attributes, and the GEMM analysis
// checks them even when the fp8 dialect was not loaded while parsing (the
// file below has no fp8 op, so the parser's verifier never sees them).
//
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-classify
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-pipeline

func.func @bogus_precision(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-error @+1 {{'fp8.precision' must be one of "high", "fp8"; got "bogus"}}
  %y = linalg.matmul {fp8.precision = "bogus"} ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// expected-error @+1 {{argument #1: 'fp8.role' must be one of "weight", "activation", "grad"; got "gradient"}}
func.func @role_typo(%x: tensor<16x32xf32>, %w: tensor<32x16xf32> {fp8.role = "gradient"}) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// expected-error @+1 {{'fp8.backward' must be a unit attribute on a function}}
func.func @backward_value() attributes {fp8.backward = "yes"} {
  return
}

// -----

// expected-error @+1 {{result #0: 'fp8.state' must be a non-empty string naming the scaling state, got ""}}
func.func @empty_state(%x: tensor<f32>) -> (tensor<f32> {fp8.state = ""}) {
  return %x : tensor<f32>
}

// -----

func.func @role_on_op(%x: f32) -> f32 {
  // expected-error @+1 {{'fp8.role' belongs on a function argument, not on an op}}
  %y = arith.addf %x, %x {fp8.role = "grad"} : f32
  return %y : f32
}

// -----

// expected-error @+1 {{unknown fp8 attribute 'fp8.precison'}}
func.func @misspelt_name() attributes {fp8.precison = "high"} {
  return
}
