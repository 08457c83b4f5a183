// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma=whole-graph -split-input-file | FileCheck %s

// whole-graph (fp8-lower-to-gpu): what wgmma-invalid.mlir refuses in a
// GEMM-only program is planned in a whole one. An operand in the wrong
// orientation with no cast_transpose copy gets a transposed copy of its
// bytes (exact for FP8); the GEMM then names its kernel.

// CHECK-LABEL: func.func @rhs_n_major
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x32xf8E4M3FN>
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<32x64xf8E4M3FN>) outs(%[[E]] : tensor<64x32xf8E4M3FN>) permutation = [1, 0]
// CHECK: fp8.scaled_matmul %arg0, %[[T]] {{.*}} {fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_f32_64x128x128_s8, {{.*}}transpose_rhs}
func.func @rhs_n_major(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %s: f32) -> tensor<64x64xf32> {
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A batched lhs in [B, K, M]: the last two dimensions swapped, dynamic
// sizes carried.
// CHECK-LABEL: func.func @batched_lhs_m_major
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[M:.*]] = tensor.dim %arg0, %[[C2]]
// CHECK-DAG: %[[B:.*]] = tensor.dim %arg0, %{{.*}}
// CHECK-DAG: %[[K:.*]] = tensor.dim %arg0, %[[C1]]
// CHECK: %[[E:.*]] = tensor.empty(%[[B]], %[[M]], %[[K]]) : tensor<?x?x?xf8E4M3FN>
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<?x?x?xf8E4M3FN>) outs(%[[E]] : tensor<?x?x?xf8E4M3FN>) permutation = [0, 2, 1]
// CHECK: fp8.scaled_matmul %[[T]], %arg1 {{.*}}fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_128x128x128_s7
// CHECK-NOT: transpose_lhs
func.func @batched_lhs_m_major(%a: tensor<?x?x?xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %s: f32) -> tensor<?x?x64xbf16> {
  %0 = fp8.scaled_matmul %a, %b scales %s, %s {transpose_lhs, transpose_rhs}
      : tensor<?x?x?xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<?x?x64xbf16>
  return %0 : tensor<?x?x64xbf16>
}

// -----

// A block form no kernel applies is left as it is (it lowers with the rest
// of the program), without a diagnostic.
// CHECK-LABEL: func.func @k64_blocks
// CHECK: fp8.scaled_matmul {{.*}} blocks [1, 64], [1, 64] {transpose_rhs}
func.func @k64_blocks(%a: tensor<64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                      %sa: tensor<64x4xf32>, %sb: tensor<128x4xf32>) -> tensor<64x128xf32> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 64], [1, 64] {transpose_rhs}
      : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
      scales tensor<64x4xf32>, tensor<128x4xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
