// A weight that is already FP8 (stored quantized, dequantized for the GEMM
// as written) was quantized a second time: a second rounding, and a scale
// computed from the dequantized values. fp8-quantize now feeds the stored
// bytes and their scale_inv to the scaled GEMM; a different format (the
// E5M2 gradient side) is still quantized from the high-precision values.
//
// RUN: fp8-opt %s --fp8-pipeline="scaling=current" | FileCheck %s

// CHECK-LABEL: func.func @frozen_fp8_weight
// CHECK-SAME: (%[[X:.+]]: tensor<16x32xf32>, %[[WQ:.+]]: tensor<32x16xf8E4M3FN>, %[[WS:.+]]: f32)
// CHECK-NOT: fp8.dequantize
// CHECK: %[[XQ:.+]] = fp8.quantize %[[X]]
// CHECK-NOT: fp8.quantize
// CHECK: fp8.scaled_matmul %[[XQ]], %[[WQ]] scales %{{.+}}, %[[WS]]
func.func @frozen_fp8_weight(%x: tensor<16x32xf32>, %wq: tensor<32x16xf8E4M3FN>, %ws: f32) -> tensor<16x16xf32> {
  %w = fp8.dequantize %wq, %ws : tensor<32x16xf8E4M3FN> -> tensor<32x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
