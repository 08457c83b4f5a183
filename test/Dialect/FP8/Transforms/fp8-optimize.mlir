// RUN: fp8-opt %s -split-input-file --fp8-optimize | FileCheck %s

// A transposed copy of a quantized matrix comes from the same pass over x.
// CHECK-LABEL: func.func @transpose_of_quantize
// CHECK-SAME: (%[[X:.+]]: tensor<32x64xbf16>, %[[S:.+]]: f32)
// CHECK: %[[Q:.+]], %[[QT:.+]], %[[AMAX:.+]] = fp8.cast_transpose %[[X]], %[[S]] : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, f32
// CHECK-NOT: linalg.transpose
// CHECK: return %[[Q]], %[[QT]], %[[AMAX]]
func.func @transpose_of_quantize(%x: tensor<32x64xbf16>, %s: f32) -> (tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, f32) {
  %q, %amax = fp8.quantize %x, %s : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, f32
  %e = tensor.empty() : tensor<64x32xf8E4M3FN>
  %qt = linalg.transpose ins(%q : tensor<32x64xf8E4M3FN>) outs(%e : tensor<64x32xf8E4M3FN>) permutation = [1, 0]
  return %q, %qt, %amax : tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>, f32
}

// -----

// Quantizing x and its transpose with one scale: one cast_transpose.
// CHECK-LABEL: func.func @quantize_of_transpose
// CHECK: %[[Q:.+]], %[[QT:.+]] = fp8.cast_transpose %arg0, %arg1 : tensor<16x48xf32> -> tensor<16x48xf8E5M2>, tensor<48x16xf8E5M2>
// CHECK-NOT: fp8.quantize
// CHECK: return %[[Q]], %[[QT]]
func.func @quantize_of_transpose(%x: tensor<16x48xf32>, %s: f32) -> (tensor<16x48xf8E5M2>, tensor<48x16xf8E5M2>) {
  %e = tensor.empty() : tensor<48x16xf32>
  %xt = linalg.transpose ins(%x : tensor<16x48xf32>) outs(%e : tensor<48x16xf32>) permutation = [1, 0]
  %qt = fp8.quantize %xt, %s : tensor<48x16xf32> -> tensor<48x16xf8E5M2>
  %q = fp8.quantize %x, %s : tensor<16x48xf32> -> tensor<16x48xf8E5M2>
  return %q, %qt : tensor<16x48xf8E5M2>, tensor<48x16xf8E5M2>
}

// -----

// Different scales or formats are different casts: nothing to fuse.
// CHECK-LABEL: func.func @different_scales
// CHECK-COUNT-2: fp8.quantize
// CHECK-NOT: fp8.cast_transpose
func.func @different_scales(%x: tensor<16x48xf32>, %s: f32, %s2: f32) -> (tensor<16x48xf8E4M3FN>, tensor<48x16xf8E4M3FN>) {
  %e = tensor.empty() : tensor<48x16xf32>
  %xt = linalg.transpose ins(%x : tensor<16x48xf32>) outs(%e : tensor<48x16xf32>) permutation = [1, 0]
  %qt = fp8.quantize %xt, %s2 : tensor<48x16xf32> -> tensor<48x16xf8E4M3FN>
  %q = fp8.quantize %x, %s : tensor<16x48xf32> -> tensor<16x48xf8E4M3FN>
  return %q, %qt : tensor<16x48xf8E4M3FN>, tensor<48x16xf8E4M3FN>
}

// -----

// Pre-quantized FP8 weights imported with dequantize + matmul (x W^T): the
// GEMM runs on the FP8 operands with their scale_invs.
// CHECK-LABEL: func.func @dequantized_gemm
// CHECK-SAME: (%[[A:.+]]: tensor<32x64xf8E4M3FN>, %[[SA:.+]]: f32, %[[W:.+]]: tensor<128x64xf8E4M3FN>, %[[SW:.+]]: f32)
// CHECK: %[[Y:.+]] = fp8.scaled_matmul %[[A]], %[[W]] scales %[[SA]], %[[SW]] {transpose_rhs} : tensor<32x64xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<32x128xbf16>
// CHECK: return %[[Y]]
func.func @dequantized_gemm(%a: tensor<32x64xf8E4M3FN>, %sa: f32, %w: tensor<128x64xf8E4M3FN>, %sw: f32) -> tensor<32x128xbf16> {
  %ad = fp8.dequantize %a, %sa : tensor<32x64xf8E4M3FN> -> tensor<32x64xbf16>
  %wd = fp8.dequantize %w, %sw : tensor<128x64xf8E4M3FN> -> tensor<128x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<32x128xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%ad, %wd : tensor<32x64xbf16>, tensor<128x64xbf16>) outs(%c : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  return %y : tensor<32x128xbf16>
}

// -----

// Accumulating into live data, or one operand not dequantized: left alone.
// CHECK-LABEL: func.func @not_foldable
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: fp8.scaled_matmul
func.func @not_foldable(%a: tensor<32x64xf8E4M3FN>, %sa: f32, %w: tensor<64x128xbf16>, %acc: tensor<32x128xbf16>) -> (tensor<32x128xbf16>, tensor<32x128xbf16>) {
  %ad = fp8.dequantize %a, %sa : tensor<32x64xf8E4M3FN> -> tensor<32x64xbf16>
  %y0 = linalg.matmul ins(%ad, %w : tensor<32x64xbf16>, tensor<64x128xbf16>) outs(%acc : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<32x128xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  %y1 = linalg.matmul ins(%ad, %w : tensor<32x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  return %y0, %y1 : tensor<32x128xbf16>, tensor<32x128xbf16>
}
