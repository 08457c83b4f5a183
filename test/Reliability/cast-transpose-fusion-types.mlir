// V1: fp8-optimize fused quantize(x) and quantize(transpose(x)) into one
// cast_transpose whose transposed type it rebuilt from the first result's
// static sizes, so it disagreed with the value it replaced (the verifier
// failed after the pass). Each result now keeps the type of the value it
// replaces.
//
// RUN: fp8-opt %s --fp8-optimize | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>, %[[S:.+]]: f32)
// CHECK: %[[Q:.+]], %[[QT:.+]] = fp8.cast_transpose %[[X]], %[[S]] : tensor<?x8xf32> -> tensor<4x8xf8E4M3FN>, tensor<8x?xf8E4M3FN>
// CHECK-NOT: fp8.quantize
// CHECK: return %[[Q]], %[[QT]] : tensor<4x8xf8E4M3FN>, tensor<8x?xf8E4M3FN>
func.func @f(%x: tensor<?x8xf32>, %s: f32) -> (tensor<4x8xf8E4M3FN>, tensor<8x?xf8E4M3FN>) {
  %q = fp8.quantize %x, %s : tensor<?x8xf32> -> tensor<4x8xf8E4M3FN>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%d) : tensor<8x?xf32>
  %xt = linalg.transpose ins(%x : tensor<?x8xf32>) outs(%e : tensor<8x?xf32>) permutation = [1, 0]
  %qt = fp8.quantize %xt, %s : tensor<8x?xf32> -> tensor<8x?xf8E4M3FN>
  return %q, %qt : tensor<4x8xf8E4M3FN>, tensor<8x?xf8E4M3FN>
}
