// W6, at parse time: with an fp8 op in the file the fp8 dialect is loaded
// and the verifier reports a bad discardable attribute before any pass.
//
// RUN: fp8-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4xf32>, %s: f32) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{'fp8.precision' must be one of "high", "fp8"; got "low"}}
  %q = fp8.quantize %x, %s {fp8.precision = "low"} : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

// Valid values round-trip.
func.func @g(%x: tensor<4xf32>, %w: tensor<4xf32> {fp8.role = "grad"}, %s: f32)
    -> (tensor<4xf8E4M3FN>, tensor<f32> {fp8.state = "fp8.g.arg0.scale"})
    attributes {fp8.backward} {
  %q = fp8.quantize %x, %s {fp8.precision = "high"} : tensor<4xf32> -> tensor<4xf8E4M3FN>
  %t = tensor.from_elements %s : tensor<f32>
  return %q, %t : tensor<4xf8E4M3FN>, tensor<f32>
}
