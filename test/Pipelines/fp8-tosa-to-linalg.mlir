// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tosa-to-linalg))" | FileCheck %s

// Upstream's tosa-to-linalg fails the module on a TOSA op it cannot convert
// ("failed to legalize operation 'tosa.custom'"); here the op stays as it
// was and everything around it is converted.

// CHECK-LABEL: func.func @foreign_op_between
//  CHECK-SAME: (%[[P:.+]]: tensor<4xi32>, %[[X:.+]]: tensor<8xf32>)
//       CHECK: %[[Q:.+]] = tosa.custom %[[P]] {domain_name = "rocmlir", implementation_attrs = "", operator_name = "deref"} : (tensor<4xi32>) -> tensor<4xi32>
//       CHECK: linalg.generic {{.*}} ins(%[[Q]], %[[Q]] : tensor<4xi32>, tensor<4xi32>)
//       CHECK:   arith.addi
//       CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>)
//       CHECK:   math.exp
//   CHECK-NOT: tosa.add
//   CHECK-NOT: tosa.exp
func.func @foreign_op_between(%p: tensor<4xi32>, %x: tensor<8xf32>) -> (tensor<4xi32>, tensor<8xf32>) {
  %q = tosa.custom %p {domain_name = "rocmlir", implementation_attrs = "", operator_name = "deref"} : (tensor<4xi32>) -> tensor<4xi32>
  %r = tosa.add %q, %q : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %e = tosa.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  return %r, %e : tensor<4xi32>, tensor<8xf32>
}

// -----

// What upstream leaves to tosa-to-arith and tosa-to-tensor is left to them.

// CHECK-LABEL: func.func @later_passes
//       CHECK: tosa.const
//       CHECK: tosa.reshape
func.func @later_passes(%x: tensor<2x4xf32>) -> tensor<8xf32> {
  %shape = tosa.const_shape {values = dense<8> : tensor<1xindex>} : () -> !tosa.shape<1>
  %r = tosa.reshape %x, %shape : (tensor<2x4xf32>, !tosa.shape<1>) -> tensor<8xf32>
  %c = "tosa.const"() <{values = dense<1.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %s = tosa.add %r, %c : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
