// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma -split-input-file -verify-diagnostics
// RUN: not fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma=chip=sm_90 -split-input-file 2>&1 | FileCheck %s --check-prefix=CHIP

// CHIP: error: the FP8 wgmma GEMM needs chip sm_90a (wgmma and setmaxnreg are sm_90a features), not 'sm_90'

// An rhs in [K, N] with no transposed copy in the graph: located error.
func.func @rhs_n_major(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %s: f32) -> tensor<64x64xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op has rhs in [K, N] layout, but FP8 wgmma reads both operands K-major ([N, K], transpose_rhs) and no [N, K] copy exists}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A batched lhs in [B, K, M]: cast_transpose is rank 2, so no copy can be
// planned.
func.func @batched_lhs_m_major(%a: tensor<2x32x64xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %s: f32) -> tensor<2x64x64xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op has lhs in [K, M] layout (transpose_lhs), but FP8 wgmma reads both operands K-major and no [M, K] copy exists}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s {transpose_lhs, transpose_rhs}
      : tensor<2x32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<2x64x64xbf16>
  return %0 : tensor<2x64x64xbf16>
}

// -----

// Block-scaled forms no wgmma kernel applies: located errors naming the
// blocks. 64-deep K blocks:
func.func @k64_blocks(%a: tensor<64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                      %sa: tensor<64x4xf32>, %sb: tensor<128x4xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op has block scales [1, 64], [1, 64] that no wgmma kernel applies: they take lhs [M, K] and rhs [N, K] (transpose_rhs) with f32 scales in 1x128 lhs blocks and 128x128 or 1x128 rhs blocks, or one per row along all of K (row-wise), or E8M0 scales in 1x32 blocks (MX); other blocks and layouts run with fp8-lower-to-cpu}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 64], [1, 64] {transpose_rhs}
      : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
      scales tensor<64x4xf32>, tensor<128x4xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

// 128x128 weight blocks in [K, N] (the data gradient's layout): no
// block-scaled transposed copy is made.
func.func @rhs_k_major_blocks(%a: tensor<64x256xf8E4M3FN>, %b: tensor<256x128xf8E4M3FN>,
                              %sa: tensor<64x2xf32>, %sb: tensor<2x1xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op has block scales [1, 128], [128, 128] that no wgmma kernel applies}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [128, 128]
      : tensor<64x256xf8E4M3FN>, tensor<256x128xf8E4M3FN>
      scales tensor<64x2xf32>, tensor<2x1xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
