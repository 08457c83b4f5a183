// RUN: fp8-opt %s -split-input-file --fp8-widen-accumulation | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-widen-accumulation --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A zero-filled bf16 GEMM: the same matmul reads the bf16 operands into a
// zero-filled f32 result, rounded once to bf16 (nearest even on the bits).
// CHECK-LABEL: func.func @matmul_bf16_zero_fill
// CHECK-SAME: %[[A:.+]]: tensor<16x64xbf16>, %[[B:.+]]: tensor<64x32xbf16>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : bf16
// CHECK-DAG: %[[E32:.+]] = tensor.empty() : tensor<16x32xf32>
// CHECK-DAG: %[[Z32:.+]] = arith.extf %[[ZERO]] : bf16 to f32
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[Z32]] : f32) outs(%[[E32]] : tensor<16x32xf32>)
// CHECK: %[[WIDE:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<16x64xbf16>, tensor<64x32xbf16>) outs(%[[FILL]] : tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[WIDE]] : tensor<16x32xf32>) outs(%{{.+}} : tensor<16x32xbf16>)
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.bitcast %{{.+}} : i16 to bf16
// CHECK: return %[[R]] : tensor<16x32xbf16>
// CHECK-NOT: linalg.fill
func.func @matmul_bf16_zero_fill(%a: tensor<16x64xbf16>, %b: tensor<64x32xbf16>) -> tensor<16x32xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<16x32xbf16>
  %c = linalg.fill ins(%z : bf16) outs(%e : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  %r = linalg.matmul ins(%a, %b : tensor<16x64xbf16>, tensor<64x32xbf16>) outs(%c : tensor<16x32xbf16>) -> tensor<16x32xbf16>
  return %r : tensor<16x32xbf16>
}

// -----

// The named op's body is linalg's mixed-type one: both operands extended,
// the multiply-add in f32. A non-zero init is extended to f32.
// CHECK-LABEL: func.func @matmul_bf16_accumulating
// CHECK-SAME: %[[A:.+]]: tensor<4x8xbf16>, %[[B:.+]]: tensor<8x4xbf16>, %[[C:.+]]: tensor<4x4xbf16>
// CHECK: %[[C32:.+]] = linalg.generic {{.+}} ins(%[[C]] : tensor<4x4xbf16>) outs(%{{.+}} : tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: f32):
// CHECK-NEXT: %[[EXT:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: linalg.yield %[[EXT]] : f32
// CHECK: %[[WIDE:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%[[C32]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: linalg.generic {{.+}} ins(%[[WIDE]] : tensor<4x4xf32>) outs(%{{.+}} : tensor<4x4xbf16>)
// GENERIC-LABEL: sym_name = "matmul_bf16_accumulating"
// GENERIC: "linalg.matmul"
// GENERIC-NEXT: ^bb0(%[[X:.+]]: bf16, %[[Y:.+]]: bf16, %[[ACC:.+]]: f32):
// GENERIC-NEXT: %[[XW:.+]] = "arith.extf"(%[[X]]) : (bf16) -> f32
// GENERIC-NEXT: %[[YW:.+]] = "arith.extf"(%[[Y]]) : (bf16) -> f32
// GENERIC-NEXT: %[[P:.+]] = "arith.mulf"(%[[XW]], %[[YW]])
// GENERIC-NEXT: %[[S:.+]] = "arith.addf"(%[[ACC]], %[[P]])
// GENERIC-NEXT: "linalg.yield"(%[[S]])
func.func @matmul_bf16_accumulating(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  return %r : tensor<4x4xbf16>
}

// -----

// f16, weights [N, K] (a transposed variant), dynamic M, accumulating: the
// maps stay, the rounding is arith.truncf (exact to f16 on every target).
// CHECK-DAG: #[[MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transpose_b_f16
// CHECK-SAME: %[[X:.+]]: tensor<?x64xf16>, %[[W:.+]]: tensor<32x64xf16>, %[[C:.+]]: tensor<?x32xf16>
// CHECK: %[[DIM:.+]] = tensor.dim %[[C]], %{{.+}} : tensor<?x32xf16>
// CHECK: %[[E:.+]] = tensor.empty(%[[DIM]]) : tensor<?x32xf32>
// CHECK: %[[C32:.+]] = linalg.generic {{.+}} ins(%[[C]] : tensor<?x32xf16>) outs(%[[E]] : tensor<?x32xf32>)
// CHECK: %[[WIDE:.+]] = linalg.matmul indexing_maps = [#[[MK]], #[[NK]], #[[MN]]] ins(%[[X]], %[[W]] : tensor<?x64xf16>, tensor<32x64xf16>) outs(%[[C32]] : tensor<?x32xf32>) -> tensor<?x32xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.+}} ins(%[[WIDE]] : tensor<?x32xf32>) outs(%{{.+}} : tensor<?x32xf16>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f16):
// CHECK-NEXT: %[[T:.+]] = arith.truncf %[[IN]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T]] : f16
// CHECK: return %[[R]]
func.func @matmul_transpose_b_f16(%x: tensor<?x64xf16>, %w: tensor<32x64xf16>, %c: tensor<?x32xf16>) -> tensor<?x32xf16> {
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<?x64xf16>, tensor<32x64xf16>) outs(%c : tensor<?x32xf16>) -> tensor<?x32xf16>
  return %r : tensor<?x32xf16>
}

// -----

// CHECK-LABEL: func.func @batch_matmul_bf16
// CHECK-SAME: %[[A:.+]]: tensor<2x4x8xbf16>, %[[B:.+]]: tensor<2x8x16xbf16>
// CHECK: %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x4x16xf32>)
// CHECK: %[[WIDE:.+]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%[[FILL]] : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
// CHECK: linalg.generic {{.+}} ins(%[[WIDE]] : tensor<2x4x16xf32>) outs(%{{.+}} : tensor<2x4x16xbf16>)
func.func @batch_matmul_bf16(%a: tensor<2x4x8xbf16>, %b: tensor<2x8x16xbf16>) -> tensor<2x4x16xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x4x16xbf16>
  %c = linalg.fill ins(%z : bf16) outs(%e : tensor<2x4x16xbf16>) -> tensor<2x4x16xbf16>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%c : tensor<2x4x16xbf16>) -> tensor<2x4x16xbf16>
  return %r : tensor<2x4x16xbf16>
}

// -----

// A contraction generic (X X^T, in a body of either operand order, with
// fast-math flags): the same generic with the mixed-type body.
// CHECK-DAG: #[[MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @contraction_generic
// CHECK-SAME: %[[X:.+]]: tensor<4x8xbf16>
// CHECK: %[[WIDE:.+]] = linalg.generic {indexing_maps = [#[[MK]], #[[NK]], #[[MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%{{.+}} : tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[P:.+]]: bf16, %[[Q:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK-NEXT: %[[PW:.+]] = arith.extf %[[P]] : bf16 to f32
// CHECK-NEXT: %[[QW:.+]] = arith.extf %[[Q]] : bf16 to f32
// CHECK-NEXT: %[[PROD:.+]] = arith.mulf %[[PW]], %[[QW]] fastmath<contract> : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[PROD]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK: linalg.generic {{.+}} ins(%[[WIDE]] : tensor<4x4xf32>) outs(%{{.+}} : tensor<4x4xbf16>)
func.func @contraction_generic(%x: tensor<4x8xbf16>) -> tensor<4x4xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x4xbf16>
  %c = linalg.fill ins(%z : bf16) outs(%e : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %x : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%c : tensor<4x4xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %acc: bf16):
    %prod = arith.mulf %q, %p fastmath<contract> : bf16
    %sum = arith.addf %prod, %acc : bf16
    linalg.yield %sum : bf16
  } -> tensor<4x4xbf16>
  return %r : tensor<4x4xbf16>
}

// -----

// Convolutions are multiply-add reductions too.
// CHECK-LABEL: func.func @conv_bf16
// CHECK: %[[WIDE:.+]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.+}}, %{{.+}} : tensor<1x8x8x4xbf16>, tensor<3x3x4x2xbf16>) outs(%{{.+}} : tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
// CHECK: linalg.generic {{.+}} ins(%[[WIDE]] : tensor<1x6x6x2xf32>) outs(%{{.+}} : tensor<1x6x6x2xbf16>)
func.func @conv_bf16(%i: tensor<1x8x8x4xbf16>, %f: tensor<3x3x4x2xbf16>, %c: tensor<1x6x6x2xbf16>) -> tensor<1x6x6x2xbf16> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%i, %f : tensor<1x8x8x4xbf16>, tensor<3x3x4x2xbf16>) outs(%c : tensor<1x6x6x2xbf16>) -> tensor<1x6x6x2xbf16>
  return %r : tensor<1x6x6x2xbf16>
}

// -----

// Left alone: f32 GEMMs, bf16 operands into f32 (they accumulate in f32
// already), FP8 operands, fp8 ops, GEMMs on buffers, bodies other than a
// multiply-add, ops that are not contractions, and GEMMs a wgmma kernel
// computes.
// CHECK-LABEL: func.func @unchanged
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x8xbf16>, %[[B:[^:]+]]: tensor<8x4xbf16>, %[[C:[^:]+]]: tensor<4x4xbf16>
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf32>, tensor<8x4xf32>) outs(%{{.+}} : tensor<4x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%{{.+}} : tensor<4x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN>) outs(%[[C]] : tensor<4x4xbf16>)
// CHECK-NEXT: fp8.scaled_matmul
// CHECK-NEXT: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x8xbf16>, memref<8x4xbf16>) outs(%{{.+}} : memref<4x4xbf16>)
// CHECK-NEXT: linalg.generic {{.+}} outs(%[[C]] : tensor<4x4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf %{{.+}}, %{{.+}} : bf16
// CHECK-NEXT: arith.subf %{{.+}}, %{{.+}} : bf16
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<4x4xbf16>
// CHECK-NEXT: linalg.generic {{.+}} outs(%[[C]] : tensor<4x4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf %{{.+}}, %{{.+}} : bf16
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<4x4xbf16>
// CHECK-NEXT: linalg.matmul {fp8.wgmma_kernel = @k} ins(%[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%[[C]] : tensor<4x4xbf16>)
// CHECK-NEXT: return
func.func @unchanged(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>, %c: tensor<4x4xbf16>,
                     %a32: tensor<4x8xf32>, %b32: tensor<8x4xf32>, %c32: tensor<4x4xf32>,
                     %a8: tensor<4x8xf8E4M3FN>, %b8: tensor<8x4xf8E4M3FN>, %s: f32,
                     %ma: memref<4x8xbf16>, %mb: memref<8x4xbf16>, %mc: memref<4x4xbf16>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>) {
  %0 = linalg.matmul ins(%a32, %b32 : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c32 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c32 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = linalg.matmul ins(%a8, %b8 : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN>) outs(%c : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  %3 = fp8.scaled_matmul %a8, %b8 scales %s, %s : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN> -> tensor<4x4xbf16>
  linalg.matmul ins(%ma, %mb : memref<4x8xbf16>, memref<8x4xbf16>) outs(%mc : memref<4x4xbf16>)
  %4 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c : tensor<4x4xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %acc: bf16):
    %prod = arith.mulf %p, %q : bf16
    %diff = arith.subf %acc, %prod : bf16
    linalg.yield %diff : bf16
  } -> tensor<4x4xbf16>
  %5 = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%c, %c : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%c : tensor<4x4xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %acc: bf16):
    %sum = arith.addf %p, %q : bf16
    linalg.yield %sum : bf16
  } -> tensor<4x4xbf16>
  %6 = linalg.matmul {fp8.wgmma_kernel = @k} ins(%a, %b : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xbf16>
}
