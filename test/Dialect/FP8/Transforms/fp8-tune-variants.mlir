// fp8-tune-variants: every FP8 candidate GEMM behind element i of
// @fp8.tune.choice: case 1 the GEMM in FP8 under the pipeline's recipe,
// case 2 + k under alternative k where it changes the GEMM, default high
// precision; GEMMs that are no candidates untouched; then fp8-pipeline
// quantizes exactly the FP8 cases, each under its recipe.
//
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants="keep-first-last" -verify-diagnostics | FileCheck %s --check-prefix=FIRSTLAST
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants --fp8-pipeline -verify-diagnostics | FileCheck %s --check-prefix=PIPELINE
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants="alternatives=row,e4m3,mx" -verify-diagnostics | FileCheck %s --check-prefix=ALT
// RUN: fp8-opt %s -split-input-file --fp8-tune-variants="alternatives=row,e4m3,mx" --fp8-pipeline -verify-diagnostics | FileCheck %s --check-prefix=ALTPIPE
// RUN: not fp8-opt %s -split-input-file --fp8-tune-variants="alternatives=rows" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fp8-opt %s -split-input-file --fp8-tune-variants="granularity=row alternatives=row" 2>&1 | FileCheck %s --check-prefix=SAME
// UNKNOWN: error: unknown alternative 'rows' (expected row, block, mx, e4m3 or current)
// SAME: error: alternative 'row' is the pipeline's recipe #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = row>

// CHECK: ml_program.global public mutable @fp8.tune.choice(dense<1> : tensor<4xi32>) : tensor<4xi32>
// CHECK-LABEL: func.func @mlp
// CHECK: %[[M0:.+]] = ml_program.global_load @fp8.tune.choice : tensor<4xi32>
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[E0:.+]] = tensor.extract %[[M0]][%[[C0]]] : tensor<4xi32>
// CHECK-NEXT: %[[I0:.+]] = arith.index_cast %[[E0]] : i32 to index
// CHECK-NEXT: %[[H0:.+]] = scf.index_switch %[[I0]] -> tensor<64x128xf32>
// CHECK-NEXT: case 1 {
// CHECK-NEXT: %[[F0:.+]] = linalg.matmul {fp8.precision = "fp8"} ins(%{{.+}}, %arg1 :
// CHECK-NEXT: scf.yield %[[F0]]
// CHECK-NEXT: }
// CHECK-NEXT: default {
// CHECK-NEXT: %[[P0:.+]] = linalg.matmul {fp8.precision = "high"} ins(%{{.+}}, %arg1 :
// CHECK-NEXT: scf.yield %[[P0]]
// CHECK: %[[M1:.+]] = ml_program.global_load @fp8.tune.choice : tensor<4xi32>
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[E1:.+]] = tensor.extract %[[M1]][%[[C1]]] : tensor<4xi32>
// CHECK-NEXT: %[[I1:.+]] = arith.index_cast %[[E1]]
// CHECK-NEXT: %[[H1:.+]] = scf.index_switch %[[I1]]
// CHECK: linalg.matmul {fp8.precision = "fp8"} ins(%[[H0]], %arg2 :
// CHECK: linalg.matmul {fp8.precision = "high"} ins(%[[H0]], %arg2 :
// CHECK: %[[M2:.+]] = ml_program.global_load @fp8.tune.choice : tensor<4xi32>
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[E2:.+]] = tensor.extract %[[M2]][%[[C2]]] : tensor<4xi32>
// CHECK-NEXT: %[[I2:.+]] = arith.index_cast %[[E2]]
// CHECK-NEXT: %[[H2:.+]] = scf.index_switch %[[I2]]
// CHECK: linalg.matmul {fp8.precision = "fp8"} ins(%[[H1]], %arg3 :
// CHECK: linalg.matmul {fp8.precision = "high"} ins(%[[H1]], %arg3 :
// CHECK: return %[[H2]]

// keep-first-last: the first GEMM of @mlp and the projection of @kept (the
// module's first and last candidates) are left as written; choice elements
// 0 and 1 are @mlp's second and third GEMMs.
// FIRSTLAST: ml_program.global public mutable @fp8.tune.choice(dense<1> : tensor<2xi32>) : tensor<2xi32>
// FIRSTLAST-LABEL: func.func @mlp
// FIRSTLAST: %[[H0:.+]] = linalg.matmul ins(%{{.+}}, %arg1 :
// FIRSTLAST: arith.constant 0 : index
// FIRSTLAST: scf.index_switch
// FIRSTLAST-NEXT: case 1 {
// FIRSTLAST-NEXT: linalg.matmul {fp8.precision = "fp8"} ins(%[[H0]], %arg2 :
// FIRSTLAST: linalg.matmul {fp8.precision = "high"} ins(%[[H0]], %arg2 :
// FIRSTLAST: arith.constant 1 : index
// FIRSTLAST: scf.index_switch
// FIRSTLAST-LABEL: func.func @kept
// FIRSTLAST-NOT: scf.index_switch
// FIRSTLAST: return

// PIPELINE-LABEL: func.func @mlp
// PIPELINE-NOT: linalg.matmul
// PIPELINE: case 1 {
// PIPELINE-NEXT: fp8.scaled_matmul
// PIPELINE: default {
// PIPELINE-NEXT: linalg.matmul {fp8.precision = "high"}
// PIPELINE-NOT: linalg.matmul
// PIPELINE: case 1 {
// PIPELINE-NEXT: fp8.scaled_matmul
// PIPELINE: default {
// PIPELINE-NEXT: linalg.matmul {fp8.precision = "high"}
// PIPELINE-NOT: linalg.matmul
// PIPELINE: case 1 {
// PIPELINE-NEXT: fp8.scaled_matmul
// PIPELINE: default {
// PIPELINE-NEXT: linalg.matmul {fp8.precision = "high"}
// PIPELINE-NOT: linalg.matmul

// Rows and MX blocks are offered to every GEMM, E4M3 gradients to none of
// @mlp's (no gradient operand: the case would be the pipeline's recipe
// again).
// ALT: ml_program.global public mutable @fp8.tune.choice(dense<1> : tensor<4xi32>)
// ALT-LABEL: func.func @mlp
// ALT: scf.index_switch
// ALT-NEXT: case 1 {
// ALT-NEXT: linalg.matmul {fp8.precision = "fp8"} ins(
// ALT: case 2 {
// ALT-NEXT: linalg.matmul {fp8.precision = "fp8", fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = row>}
// ALT-NOT: case 3
// ALT: case 4 {
// ALT-NEXT: linalg.matmul {fp8.precision = "fp8", fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, granularity = mx>}
// ALT: default {
// ALT-NEXT: linalg.matmul {fp8.precision = "high"}

// Each case quantized under its own recipe: per tensor (delayed, the
// module's), one scale per row, E8M0 scales per 32 along K.
// ALTPIPE-LABEL: func.func @mlp
// ALTPIPE: case 1 {
// ALTPIPE-NEXT: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<64x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> -> tensor<64x128xf32>
// ALTPIPE: case 2 {
// ALTPIPE-NEXT: fp8.scaled_matmul {{.+}} blocks [1, 64], [64, 1]
// ALTPIPE: case 4 {
// ALTPIPE-NEXT: fp8.scaled_matmul {{.+}} blocks [1, 32], [32, 1] : tensor<64x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> scales tensor<64x2xf8E8M0FNU>, tensor<2x128xf8E8M0FNU>
// ALTPIPE: default {
// ALTPIPE-NEXT: linalg.matmul {fp8.precision = "high"}
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
// CHECK: scf.index_switch
// CHECK-NEXT: case 1 {
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
  // expected-error @+1 {{the module already has @fp8.tune.choice: fp8-tune-variants ran on it before}}
  ml_program.global public mutable @fp8.tune.choice(dense<1> : tensor<1xi32>) : tensor<1xi32>
}

// -----

// A linear layer's backward under the hybrid default: E4M3 gradients are an
// alternative for the two GEMMs with a gradient operand (dx = dy w and
// dw = dy^T x: E5M2 dy under the pipeline's recipe), not for the forward.
// ALT-LABEL: func.func @backward
// ALT: scf.index_switch
// ALT-NOT: case 3
// ALT: default
// ALT: scf.index_switch
// ALT: case 3 {
// ALT-NEXT: linalg.matmul {fp8.precision = "fp8", fp8.recipe = #fp8.recipe<format = e4m3>}
// ALT: scf.index_switch
// ALT: case 3 {
// ALT-NEXT: linalg.matmul indexing_maps = [{{.+}}] {fp8.precision = "fp8", fp8.recipe = #fp8.recipe<format = e4m3>} ins(%arg2, %arg0
// PIPELINE-LABEL: func.func @backward
// ALTPIPE-LABEL: func.func @backward
// ALTPIPE: case 1 {
// ALTPIPE-NEXT: fp8.scaled_matmul {{.+}} {transpose_rhs} : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
// ALTPIPE: case 1 {
// ALTPIPE-NEXT: fp8.scaled_matmul %{{.+}}, %{{.+}} scales {{.+}} : tensor<64x128xf8E5M2>, tensor<128x256xf8E4M3FN>
// ALTPIPE: case 3 {
// ALTPIPE-NEXT: fp8.scaled_matmul %{{.+}}, %{{.+}} scales {{.+}} : tensor<64x128xf8E4M3FN>, tensor<128x256xf8E4M3FN>
// ALTPIPE: case 1 {
// ALTPIPE-NEXT: fp8.scaled_matmul %{{.+}}, %{{.+}} scales {{.+}} {transpose_lhs} : tensor<64x128xf8E5M2>, tensor<64x256xf8E4M3FN>
// ALTPIPE: case 3 {
// ALTPIPE-NEXT: fp8.scaled_matmul %{{.+}}, %{{.+}} scales {{.+}} {transpose_lhs} : tensor<64x128xf8E4M3FN>, tensor<64x256xf8E4M3FN>
func.func @backward(%x: tensor<64x256xbf16> {fp8.role = "activation"}, %w: tensor<128x256xbf16>, %dy: tensor<64x128xbf16> {fp8.role = "grad"}) -> (tensor<64x128xbf16>, tensor<64x256xbf16>, tensor<128x256xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %ey = tensor.empty() : tensor<64x128xbf16>
  %cy = linalg.fill ins(%zero : bf16) outs(%ey : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%cy : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %ex = tensor.empty() : tensor<64x256xbf16>
  %cx = linalg.fill ins(%zero : bf16) outs(%ex : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %dx = linalg.matmul ins(%dy, %w : tensor<64x128xbf16>, tensor<128x256xbf16>) outs(%cx : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %ew = tensor.empty() : tensor<128x256xbf16>
  %cw = linalg.fill ins(%zero : bf16) outs(%ew : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  %dw = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : tensor<64x128xbf16>, tensor<64x256xbf16>) outs(%cw : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  return %y, %dx, %dw : tensor<64x128xbf16>, tensor<64x256xbf16>, tensor<128x256xbf16>
}
