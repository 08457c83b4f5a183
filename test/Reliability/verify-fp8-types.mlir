// W5: fp8-verify knew two FP8 types and let the others through; it missed
// bitcasts and TOSA casts into FP8 and FP8 passed to external functions,
// and it rejected a valid fill with an FP8 constant. It now knows every
// float type of 8 bits or fewer that MLIR has.
//
// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-verify

func.func @truncf_e4m3(%x: tensor<4xf32>) -> tensor<4xf8E4M3> {
  // expected-error @+1 {{cast to 'f8E4M3' without a scale; use fp8.quantize (or fp8.cast_transpose)}}
  %q = arith.truncf %x : tensor<4xf32> to tensor<4xf8E4M3>
  return %q : tensor<4xf8E4M3>
}

// -----

func.func @truncf_every_narrow_float(%x: f32) {
  // expected-error @+1 {{cast to 'f8E4M3FNUZ' without a scale}}
  %a = arith.truncf %x : f32 to f8E4M3FNUZ
  // expected-error @+1 {{cast to 'f8E4M3B11FNUZ' without a scale}}
  %b = arith.truncf %x : f32 to f8E4M3B11FNUZ
  // expected-error @+1 {{cast to 'f8E5M2FNUZ' without a scale}}
  %c = arith.truncf %x : f32 to f8E5M2FNUZ
  // expected-error @+1 {{cast to 'f8E3M4' without a scale}}
  %d = arith.truncf %x : f32 to f8E3M4
  // expected-error @+1 {{cast to 'f6E2M3FN' without a scale}}
  %e = arith.truncf %x : f32 to f6E2M3FN
  // expected-error @+1 {{cast to 'f6E3M2FN' without a scale}}
  %f = arith.truncf %x : f32 to f6E3M2FN
  // expected-error @+1 {{cast to 'f4E2M1FN' without a scale}}
  %g = arith.truncf %x : f32 to f4E2M1FN
  // expected-error @+1 {{cast to 'f8E5M2' without a scale}}
  %h = arith.truncf %x : f32 to f8E5M2
  return
}

// -----

func.func @bitcast_into_fp8(%x: tensor<4xi8>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{bitcast to 'f8E4M3FN' without a scale}}
  %q = arith.bitcast %x : tensor<4xi8> to tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

func.func @tosa_cast_to_fp8(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{cast to 'f8E4M3FN' without a scale}}
  %q = tosa.cast %x : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

func.func private @sink(tensor<4xf8E4M3FN>) -> tensor<4xf32>
func.func @escapes_to_external_call(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %q = fp8.quantize %x, %s : tensor<4xf32> -> tensor<4xf8E4M3FN>
  // expected-error @+1 {{FP8 value passed to external function @sink, where its scale is lost and its use cannot be verified}}
  %r = func.call @sink(%q) : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func private @source() -> tensor<4xf8E5M2>
func.func @comes_from_external_call() -> tensor<4xf8E5M2> {
  // expected-error @+1 {{FP8 value returned by external function @source, with no scale: it did not come from fp8.quantize}}
  %q = func.call @source() : () -> tensor<4xf8E5M2>
  return %q : tensor<4xf8E5M2>
}

// -----

// expected-error @+1 {{mutable FP8 global: master weights and optimizer state must stay in high precision}}
ml_program.global private mutable @g(dense<0.0> : tensor<4xf8E4M3FNUZ>) : tensor<4xf8E4M3FNUZ>

// -----

// Filling with an FP8 constant moves bytes; nothing is computed in FP8.
func.func @fill_with_fp8_constant(%o: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %z = arith.constant 1.0 : f8E4M3FN
  %c = linalg.fill ins(%z : f8E4M3FN) outs(%o : tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %c : tensor<4xf8E4M3FN>
}

// -----

// FP8 passed to a function of the module: the callee's body is checked.
// expected-note @+1 {{FP8 value defined here}}
func.func private @callee(%q: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  // expected-error @+1 {{FP8 value reaches a widening cast that drops its scale (use fp8.dequantize), which must run in high precision}}
  %w = arith.extf %q : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %w : tensor<4xf32>
}
func.func @calls_module_function(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  %q = fp8.quantize %x, %s : tensor<4xf32> -> tensor<4xf8E4M3FN>
  %r = func.call @callee(%q) : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
