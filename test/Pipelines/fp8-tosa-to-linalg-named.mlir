// RUN: fp8-opt %s --pass-pipeline="builtin.module(func.func(fp8-tosa-to-linalg-named))" | FileCheck %s

// The named-op conversions (tosa.matmul here) around an op no conversion
// takes: the matmul becomes linalg.batch_matmul, tosa.custom and the
// element-wise ops (the next pass's) stay.

// CHECK-LABEL: func.func @matmul_around_custom
//       CHECK: %[[C:.+]] = tosa.custom %{{.+}} {domain_name = "vendor", implementation_attrs = "", operator_name = "fetch"}
//       CHECK: linalg.batch_matmul ins(%[[C]], %{{.+}} : tensor<1x4x8xf32>, tensor<1x8x2xf32>)
//       CHECK: tosa.add
//   CHECK-NOT: tosa.matmul
func.func @matmul_around_custom(%x: tensor<1x4x8xf32>, %w: tensor<1x8x2xf32>) -> tensor<1x4x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.custom %x {domain_name = "vendor", implementation_attrs = "", operator_name = "fetch"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %y = tosa.matmul %c, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %s = tosa.add %y, %y : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  return %s : tensor<1x4x2xf32>
}
