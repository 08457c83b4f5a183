// RUN: fp8-opt %s --convert-fp8-to-nvvm -split-input-file -verify-diagnostics -allow-unregistered-dialect

// The GEMM has its own pipeline (fp8-lower-gemm-to-nvvm): a located error,
// not a crash or a silent CPU path.
func.func @gemm(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %s: f32) -> tensor<64x64xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op is not lowered by fp8-lower-to-nvvm: the Hopper wgmma GEMM is fp8-lower-gemm-to-nvvm's}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// Other computation in a function with fp8 ops cannot run on the host side.
func.func @mixed(%x: tensor<16xf32>, %s: f32) -> tensor<16xf8E4M3FN> {
  // expected-error @+1 {{'arith.addf' op cannot run in a function lowered by fp8-lower-to-nvvm}}
  %y = arith.addf %x, %x : tensor<16xf32>
  %q = fp8.quantize %y, %s : tensor<16xf32> -> tensor<16xf8E4M3FN>
  return %q : tensor<16xf8E4M3FN>
}

// -----

// Element types without a GPU buffer type are a located error.
// expected-error @+1 {{'func.func' op argument #2 has type 'tensor<4xf64>', which the GPU lowering does not support}}
func.func @f64_argument(%x: tensor<16xf32>, %s: f32, %other: tensor<4xf64>) -> tensor<16xf8E4M3FN> {
  %q = fp8.quantize %x, %s : tensor<16xf32> -> tensor<16xf8E4M3FN>
  return %q : tensor<16xf8E4M3FN>
}

// -----

// expected-error @+1 {{'func.func' op result #1 has type 'tensor<16xi32>', which the GPU lowering does not support}}
func.func @i32_result(%x: tensor<16xf32>, %s: f32) -> (tensor<16xf8E4M3FN>, tensor<16xi32>) {
  %q = fp8.quantize %x, %s : tensor<16xf32> -> tensor<16xf8E4M3FN>
  %i = arith.constant dense<0> : tensor<16xi32>
  return %q, %i : tensor<16xf8E4M3FN>, tensor<16xi32>
}

// -----

// expected-error @+1 {{'func.func' op has control flow; fp8-lower-to-nvvm lowers straight-line functions only}}
func.func @branches(%x: tensor<16xf32>, %s: f32, %c: i1) -> f32 {
  cf.cond_br %c, ^a, ^b
^a:
  %a = fp8.amax %x : tensor<16xf32>
  return %a : f32
^b:
  return %s : f32
}

// -----

// An op of an unregistered dialect has no dialect object: reported, not a
// crash.
func.func @unregistered(%x: tensor<4xf32>, %s: f32) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{'foo.bar' op cannot run in a function lowered by fp8-lower-to-nvvm}}
  "foo.bar"() : () -> ()
  %q = fp8.quantize %x, %s : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

// Per-block scales (issue 12) have no GPU kernels yet: a located error.
func.func @block_quantize(%x: tensor<64x256xf32>) -> tensor<64x256xf8E4M3FN> {
  // expected-error @+1 {{'fp8.block_amax' op has per-block scales, which have no GPU kernels yet (the open part of issue 12); use fp8-lower-to-cpu}}
  %a = fp8.block_amax %x block [1, 128] : tensor<64x256xf32> -> tensor<64x2xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<64x2xf32> -> tensor<64x2xf32>, tensor<64x2xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<64x256xf32> scales tensor<64x2xf32> -> tensor<64x256xf8E4M3FN>
  return %q : tensor<64x256xf8E4M3FN>
}
