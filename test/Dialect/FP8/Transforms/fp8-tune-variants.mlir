// fp8-tune-variants: every FP8 candidate GEMM behind element i of
// @fp8.tune.mask, FP8 in the then branch and high precision in the else
// branch; GEMMs that are no candidates untouched; then fp8-pipeline quantizes
// exactly the then branches.
//
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants="keep-first-last" -verify-diagnostics | FileCheck %s --check-prefix=FIRSTLAST
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants --fp8-pipeline -verify-diagnostics | FileCheck %s --check-prefix=PIPELINE

// CHECK: ml_program.global public mutable @fp8.tune.mask(dense<true> : tensor<4xi1>) : tensor<4xi1>
// CHECK-LABEL: func.func @mlp
// CHECK: %[[M0:.+]] = ml_program.global_load @fp8.tune.mask : tensor<4xi1>
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[B0:.+]] = tensor.extract %[[M0]][%[[C0]]] : tensor<4xi1>
// CHECK-NEXT: %[[H0:.+]] = scf.if %[[B0]] -> (tensor<64x128xf32>) {
// CHECK-NEXT: %[[F0:.+]] = linalg.matmul {fp8.precision = "fp8"} ins(%{{.+}}, %arg1 :
// CHECK-NEXT: scf.yield %[[F0]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[P0:.+]] = linalg.matmul {fp8.precision = "high"} ins(%{{.+}}, %arg1 :
// CHECK-NEXT: scf.yield %[[P0]]
// CHECK: %[[M1:.+]] = ml_program.global_load @fp8.tune.mask : tensor<4xi1>
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[B1:.+]] = tensor.extract %[[M1]][%[[C1]]] : tensor<4xi1>
// CHECK-NEXT: %[[H1:.+]] = scf.if %[[B1]]
// CHECK: linalg.matmul {fp8.precision = "fp8"} ins(%[[H0]], %arg2 :
// CHECK: linalg.matmul {fp8.precision = "high"} ins(%[[H0]], %arg2 :
// CHECK: %[[M2:.+]] = ml_program.global_load @fp8.tune.mask : tensor<4xi1>
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[B2:.+]] = tensor.extract %[[M2]][%[[C2]]] : tensor<4xi1>
// CHECK-NEXT: %[[H2:.+]] = scf.if %[[B2]]
// CHECK: linalg.matmul {fp8.precision = "fp8"} ins(%[[H1]], %arg3 :
// CHECK: linalg.matmul {fp8.precision = "high"} ins(%[[H1]], %arg3 :
// CHECK: return %[[H2]]

// keep-first-last: the first GEMM of @mlp and the projection of @kept (the
// module's first and last candidates) are left as written; mask elements 0
// and 1 are @mlp's second and third GEMMs.
// FIRSTLAST: ml_program.global public mutable @fp8.tune.mask(dense<true> : tensor<2xi1>) : tensor<2xi1>
// FIRSTLAST-LABEL: func.func @mlp
// FIRSTLAST: %[[H0:.+]] = linalg.matmul ins(%{{.+}}, %arg1 :
// FIRSTLAST: arith.constant 0 : index
// FIRSTLAST: scf.if
// FIRSTLAST-NEXT: linalg.matmul {fp8.precision = "fp8"} ins(%[[H0]], %arg2 :
// FIRSTLAST: linalg.matmul {fp8.precision = "high"} ins(%[[H0]], %arg2 :
// FIRSTLAST: arith.constant 1 : index
// FIRSTLAST: scf.if
// FIRSTLAST-LABEL: func.func @kept
// FIRSTLAST-NOT: scf.if
// FIRSTLAST: return

// PIPELINE-LABEL: func.func @mlp
// PIPELINE-NOT: linalg.matmul
// PIPELINE: scf.if
// PIPELINE-NEXT: fp8.scaled_matmul
// PIPELINE: } else {
// PIPELINE-NEXT: linalg.matmul {fp8.precision = "high"}
// PIPELINE-NOT: linalg.matmul
// PIPELINE: scf.if
// PIPELINE-NEXT: fp8.scaled_matmul
// PIPELINE: } else {
// PIPELINE-NEXT: linalg.matmul {fp8.precision = "high"}
// PIPELINE-NOT: linalg.matmul
// PIPELINE: scf.if
// PIPELINE-NEXT: fp8.scaled_matmul
// PIPELINE: } else {
// PIPELINE-NEXT: linalg.matmul {fp8.precision = "high"}
// PIPELINE-NOT: linalg.matmul

func.func @mlp(%x: tensor<64x64xf32>, %w0: tensor<64x128xf32>, %w1: tensor<128x32xf32>, %w2: tensor<32x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %a = math.tanh %x : tensor<64x64xf32>
  %e0 = tensor.empty() : tensor<64x128xf32>
  %c0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %h0 = linalg.matmul ins(%a, %w0 : tensor<64x64xf32>, tensor<64x128xf32>) outs(%c0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x32xf32>
  %c1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<64x256xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %h2 = linalg.matmul ins(%h1, %w2 : tensor<64x32xf32>, tensor<32x256xf32>) outs(%c2 : tensor<64x256xf32>) -> tensor<64x256xf32> loc("down_proj")
  return %h2 : tensor<64x256xf32>
}

// A GEMM the user keeps in high precision, and an activation x activation
// GEMM (attention scores), are no candidates: only the projection is.
// CHECK-LABEL: func.func @kept
// CHECK: %[[K:.+]] = linalg.matmul {fp8.precision = "high"} ins(%arg0, %arg1 :
// CHECK-NEXT: %[[T:.+]] = math.tanh %arg2
// CHECK-NEXT: %[[S:.+]] = linalg.matmul ins(%[[K]], %[[T]] :
// CHECK: scf.if
// CHECK-NEXT: linalg.matmul {fp8.precision = "fp8"} ins(%[[S]], %arg3 :
// CHECK: linalg.matmul {fp8.precision = "high"} ins(%[[S]], %arg3 :
// PIPELINE-LABEL: func.func @kept
// PIPELINE-COUNT-1: fp8.scaled_matmul
// PIPELINE-NOT: fp8.scaled_matmul
func.func @kept(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>, %kt: tensor<64x32xf32>, %wo: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %es = tensor.empty() : tensor<32x32xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<32x32xf32>) -> tensor<32x32xf32>
  %k = linalg.matmul {fp8.precision = "high"} ins(%x, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  %t = math.tanh %kt : tensor<64x32xf32>
  %s = linalg.matmul ins(%k, %t : tensor<32x64xf32>, tensor<64x32xf32>) outs(%zs : tensor<32x32xf32>) -> tensor<32x32xf32>
  %es2 = tensor.empty() : tensor<32x64xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%es2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %p = linalg.matmul ins(%s, %wo : tensor<32x32xf32>, tensor<32x64xf32>) outs(%z2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %p : tensor<32x64xf32>
}

// -----

// expected-error @+1 {{no GEMM goes to FP8 under this policy: there is nothing to tune}}
module {
  func.func @none(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>) -> tensor<32x64xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<32x64xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
    %y = linalg.matmul {fp8.precision = "high"} ins(%x, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
    return %y : tensor<32x64xf32>
  }
}

// -----

module {
  // expected-error @+1 {{the module already has @fp8.tune.mask: fp8-tune-variants ran on it before}}
  ml_program.global public mutable @fp8.tune.mask(dense<true> : tensor<1xi1>) : tensor<1xi1>
}
