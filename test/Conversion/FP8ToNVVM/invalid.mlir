// RUN: fp8-opt %s --convert-fp8-to-nvvm -split-input-file -verify-diagnostics -allow-unregistered-dialect

// The GEMM has its own pipeline (fp8-lower-gemm-to-nvvm): a located error,
// not a crash or a silent CPU path.
func.func @gemm(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %s: f32) -> tensor<64x64xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op is not lowered by fp8-lower-to-nvvm: the Hopper wgmma GEMM is fp8-lower-gemm-to-nvvm's, and a whole graph (GEMMs and every other op) is fp8-lower-to-gpu's}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// Other computation in a function with fp8 ops cannot run on the host side;
// the message names the whole-program pipeline (issue 36, item 6).
func.func @mixed(%x: tensor<16xf32>, %s: f32) -> tensor<16xf8E4M3FN> {
  // expected-error @+1 {{'arith.addf' op cannot run in a function lowered by fp8-lower-to-nvvm: only fp8 ops and f32 constants become GPU kernels; --fp8-lower-to-gpu lowers a whole program (every op) to the GPU}}
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

// Block shapes no kernel takes, and blocks across a batch dimension:
// located errors naming the shape.
func.func @odd_block(%x: tensor<64x300xf32>) -> tensor<64x3xf32> {
  // expected-error @+1 {{'fp8.block_amax' op has blocks of 1x100 elements, which no GPU kernel takes (1xN with N a power of two from 4 to 128, or MxN with N a power of two from 4 to 1024 and M*N a multiple of 1024 up to 16384, such as 1x32, 1x128 and 128x128)}}
  %a = fp8.block_amax %x block [1, 100] : tensor<64x300xf32> -> tensor<64x3xf32>
  return %a : tensor<64x3xf32>
}

// -----

func.func @batch_block(%q: tensor<4x8x128xf8E4M3FN>, %si: tensor<2x8x1xf32>) -> tensor<4x8x128xf32> {
  // expected-error @+1 {{'fp8.dequantize' op has blocks of 2 elements along dimension 0; the GPU block kernels take blocks over the last two dimensions only}}
  %y = fp8.dequantize %q, %si block [2, 1, 128]
      : tensor<4x8x128xf8E4M3FN> scales tensor<2x8x1xf32> -> tensor<4x8x128xf32>
  return %y : tensor<4x8x128xf32>
}

// -----

func.func @dynamic_blocks(%x: tensor<?x256xf32>, %s: tensor<?x2xf32>) -> tensor<?x256xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op with per-block scales needs static shapes, got 'tensor<?x256xf32>'}}
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<?x256xf32> scales tensor<?x2xf32> -> tensor<?x256xf8E4M3FN>
  return %q : tensor<?x256xf8E4M3FN>
}

// -----

func.func @dynamic_scales(%a: tensor<?x2xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{'fp8.compute_block_scales' op with per-block scales needs static shapes, got 'tensor<?x2xf32>'}}
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<?x2xf32> -> tensor<?x2xf32>, tensor<?x2xf32>
  return %si : tensor<?x2xf32>
}

// -----

// 256x256 blocks: 64 runs per thread would not stay in registers.
func.func @huge_block(%x: tensor<256x256xf32>) -> tensor<1x1xf32> {
  // expected-error @+1 {{'fp8.block_amax' op has blocks of 256x256 elements, which no GPU kernel takes}}
  %a = fp8.block_amax %x block [256, 256] : tensor<256x256xf32> -> tensor<1x1xf32>
  return %a : tensor<1x1xf32>
}
