// Issue 36, item 20: a paged-attention export fetches its KV pages with
// tosa.custom, which no upstream conversion lowers. fp8-pipeline's TOSA
// import (upstream's full conversions) failed with "failed to legalize
// operation 'tosa.custom'". The import now leaves such an op exactly as it
// was (DESIGN.md decision 8), converts the rest, and the GEMM around it
// becomes FP8. The lowerings cannot run it: a located error naming it.
//
// RUN: fp8-opt %s -split-input-file --fp8-pipeline | FileCheck %s
// The op left is left alone on the next run too: fp8-pipeline on its own
// output changes nothing (the TOSA front end only runs where it converts).
// RUN: fp8-opt %s -split-input-file --fp8-pipeline -o %t.once.mlir
// RUN: fp8-opt %t.once.mlir -split-input-file --fp8-pipeline -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: fp8-opt %s -split-input-file --fp8-pipeline --fp8-lower-to-cpu -verify-diagnostics -o /dev/null
// RUN: fp8-opt %s -split-input-file --fp8-lower-to-gpu -verify-diagnostics -o /dev/null

// CHECK-LABEL: func.func @f
//  CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<4xi32>
//       CHECK: fp8.quantize
//       CHECK: %[[Y:.+]] = fp8.scaled_matmul {{.*}} : tensor<1x64x128xf8E4M3FN>, tensor<1x128x256xf8E4M3FN> -> tensor<1x64x256xf32>
//       CHECK: %[[Q:.+]] = tosa.custom %[[P]] {domain_name = "rocmlir", implementation_attrs = "", operator_name = "deref"} : (tensor<4xi32>) -> tensor<4xi32>
//       CHECK: return %[[Y]], %[[Q]]
//   CHECK-NOT: tosa.matmul
func.func @f(%x: tensor<1x64x128xf32>, %w: tensor<1x128x256xf32>, %p: tensor<4xi32>) -> (tensor<1x64x256xf32>, tensor<4xi32>) {
  %a_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b_zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %a_zp, %b_zp : (tensor<1x64x128xf32>, tensor<1x128x256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x256xf32>
  // expected-error @below {{'tosa.custom' op is left by the TOSA import (no conversion to linalg, arith or tensor takes it), and nothing lowers TOSA}}
  %q = tosa.custom %p {domain_name = "rocmlir", implementation_attrs = "", operator_name = "deref"} : (tensor<4xi32>) -> tensor<4xi32>
  return %y, %q : tensor<1x64x256xf32>, tensor<4xi32>
}

// -----

// A foreign op between two GEMMs: both are converted, the op stays
// between them.

// CHECK-LABEL: func.func @between
//       CHECK: %[[A:.+]] = fp8.scaled_matmul
//       CHECK: %[[C:.+]] = tosa.custom %[[A]] {domain_name = "vendor", implementation_attrs = "", operator_name = "gelu"}
//       CHECK: fp8.quantize %[[C]]
//       CHECK: fp8.scaled_matmul
//   CHECK-NOT: tosa.matmul
func.func @between(%x: tensor<1x64x128xf32>, %w1: tensor<1x128x256xf32>, %w2: tensor<1x256x128xf32>) -> tensor<1x64x128xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %a = tosa.matmul %x, %w1, %zp, %zp : (tensor<1x64x128xf32>, tensor<1x128x256xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x256xf32>
  // expected-error @below {{'tosa.custom' op is left by the TOSA import}}
  %c = tosa.custom %a {domain_name = "vendor", implementation_attrs = "", operator_name = "gelu"} : (tensor<1x64x256xf32>) -> tensor<1x64x256xf32>
  %b = tosa.matmul %c, %w2, %zp, %zp : (tensor<1x64x256xf32>, tensor<1x256x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x128xf32>
  return %b : tensor<1x64x128xf32>
}
