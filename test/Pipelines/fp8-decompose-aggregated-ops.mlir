// RUN: fp8-opt %s -split-input-file --fp8-decompose-aggregated-ops | FileCheck %s

// linalg.softmax as upstream's decomposition: max, exp(x - max), sum,
// division, each a structured op the loop lowerings take.

// CHECK-LABEL: func.func @softmax
//  CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
//       CHECK: %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x3xf32>)
//       CHECK:   arith.maxnumf
//       CHECK: %[[EXP:.+]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<2x3xf32>, tensor<2xf32>)
//       CHECK:   arith.subf
//       CHECK:   math.exp
//       CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<2x3xf32>)
//       CHECK:   arith.addf
//       CHECK: %[[DIV:.+]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x3xf32>, tensor<2xf32>)
//       CHECK:   arith.divf
//       CHECK: return %[[DIV]]
//   CHECK-NOT: linalg.softmax
func.func @softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %p : tensor<2x3xf32>
}

// -----

// On buffers the decomposition (which builds tensors) does not apply: the
// op stays, and the lowering's check names it.

// CHECK-LABEL: func.func @softmax_on_buffers
//       CHECK: linalg.softmax
func.func @softmax_on_buffers(%x: memref<2x3xf32>, %y: memref<2x3xf32>) {
  linalg.softmax dimension(1) ins(%x : memref<2x3xf32>) outs(%y : memref<2x3xf32>)
  return
}
