// RUN: fp8-opt %s --convert-fp8-to-linalg --split-input-file -verify-diagnostics

// Per-block ops are padded to whole blocks and split: their lowering needs
// static shapes, and says so where the op is.

func.func @dynamic_block_amax(%x: tensor<?x256xf32>) -> tensor<?x2xf32> {
  // expected-error @+2 {{'fp8.block_amax' op with per-block scales needs static shapes, got 'tensor<?x256xf32>'}}
  // expected-error @+1 {{failed to legalize operation 'fp8.block_amax'}}
  %a = fp8.block_amax %x block [1, 128] : tensor<?x256xf32> -> tensor<?x2xf32>
  return %a : tensor<?x2xf32>
}

// -----

func.func @dynamic_block_gemm(%a: tensor<?x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                              %sa: tensor<?x2xf32>, %sb: tensor<1x2xf32>) -> tensor<?x128xf32> {
  // expected-error @+2 {{'fp8.scaled_matmul' op with per-block scales needs static shapes, got 'tensor<?x256xf8E4M3FN>'}}
  // expected-error @+1 {{failed to legalize operation 'fp8.scaled_matmul'}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [128, 128] {transpose_rhs}
      : tensor<?x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
      scales tensor<?x2xf32>, tensor<1x2xf32> -> tensor<?x128xf32>
  return %y : tensor<?x128xf32>
}

// -----

func.func @dynamic_block_amax_result(%x: tensor<4x256xf32>) -> tensor<?x2xf32> {
  // expected-error @+2 {{'fp8.block_amax' op with per-block scales needs static shapes, got 'tensor<?x2xf32>'}}
  // expected-error @+1 {{failed to legalize operation 'fp8.block_amax'}}
  %a = fp8.block_amax %x block [1, 128] : tensor<4x256xf32> -> tensor<?x2xf32>
  return %a : tensor<?x2xf32>
}
