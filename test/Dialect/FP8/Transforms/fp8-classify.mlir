// RUN: fp8-opt %s -split-input-file --fp8-classify=remarks -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-classify="fp8-attention" | FileCheck %s --check-prefix=ATTN

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A projection: a computed activation times a weight argument.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.matmul {fp8.decision = "fp8", fp8.reason = "weight_gemm"}
func.func @matmul(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %a = math.tanh %x : tensor<64x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  // expected-remark @below {{FP8 (weight_gemm): lhs activation as 'f8E4M3FN', rhs weight as 'f8E4M3FN'}}
  %y = linalg.matmul ins(%a, %w : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}

// -----

// x W^T spelled with indexing_maps (MLIR 22 has no matmul_transpose_b), a
// weight from a global, bf16.
// CHECK-LABEL: func.func @matmul_transpose_b
// CHECK: linalg.matmul {{.*}}fp8.decision = "fp8", fp8.reason = "weight_gemm"
ml_program.global private @w(dense<0.5> : tensor<256x128xbf16>) : tensor<256x128xbf16>
func.func @matmul_transpose_b(%x: tensor<64x128xbf16>) -> tensor<64x256xbf16> {
  %a = math.tanh %x : tensor<64x128xbf16>
  %w = ml_program.global_load_const @w : tensor<256x128xbf16>
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x256xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<64x128xbf16>, tensor<256x128xbf16>) outs(%c : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  return %y : tensor<64x256xbf16>
}

// -----

// torch-mlir's spelling: a transposed weight broadcast to 1xKxN and a
// batch_matmul (the shared accelgen Llama FFN).
// CHECK-LABEL: func.func @batch_matmul_broadcast_weight
// CHECK: linalg.batch_matmul {fp8.decision = "fp8", fp8.reason = "weight_gemm"}
func.func @batch_matmul_broadcast_weight(%x: tensor<1x32x64xbf16>, %w: tensor<128x64xbf16>) -> tensor<1x32x128xbf16> {
  %e0 = tensor.empty() : tensor<64x128xbf16>
  %t = linalg.transpose ins(%w : tensor<128x64xbf16>) outs(%e0 : tensor<64x128xbf16>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<1x64x128xbf16>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%t : tensor<64x128xbf16>) outs(%e1 : tensor<1x64x128xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<1x64x128xbf16>
  %zero = arith.constant 0.0 : bf16
  %e2 = tensor.empty() : tensor<1x32x128xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<1x32x128xbf16>) -> tensor<1x32x128xbf16>
  // expected-remark @below {{FP8 (weight_gemm): lhs activation as 'f8E4M3FN', rhs weight as 'f8E4M3FN'}}
  %y = linalg.batch_matmul ins(%x, %b : tensor<1x32x64xbf16>, tensor<1x64x128xbf16>) outs(%c : tensor<1x32x128xbf16>) -> tensor<1x32x128xbf16>
  return %y : tensor<1x32x128xbf16>
}

// -----

// buddy-mlir's and torch-mlir's spelling: every weight sliced out of one
// flat argument, transposed by a generic whose permutation is on its
// output map. Still a weight, and still read untransposed (fp8-quantize).
// CHECK-LABEL: func.func @packed_weight_output_permuted
// CHECK: linalg.matmul {fp8.decision = "fp8", fp8.reason = "weight_gemm"}
func.func @packed_weight_output_permuted(%x: tensor<32x64xf32>, %weights: tensor<16384xf32>) -> tensor<32x128xf32> {
  %slice = tensor.extract_slice %weights[8192] [8192] [1] : tensor<16384xf32> to tensor<8192xf32>
  %w = tensor.expand_shape %slice [[0, 1]] output_shape [128, 64] : tensor<8192xf32> into tensor<128x64xf32>
  %e0 = tensor.empty() : tensor<64x128xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
       ins(%w : tensor<128x64xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x128xf32>
  %a = math.tanh %x : tensor<32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  // expected-remark @below {{FP8 (weight_gemm): lhs activation as 'f8E4M3FN', rhs weight as 'f8E4M3FN'}}
  %y = linalg.matmul ins(%a, %t : tensor<32x64xf32>, tensor<64x128xf32>) outs(%c : tensor<32x128xf32>) -> tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}

// -----

// A unit dimension indexed by 0 in a copy's input map (torch-mlir's
// broadcast of a 1xKxN weight to the batch): still a copy, so the weight is
// found.
// CHECK-LABEL: func.func @unit_dim_zero_index
// CHECK: linalg.batch_matmul {fp8.decision = "fp8", fp8.reason = "weight_gemm"}
func.func @unit_dim_zero_index(%x: tensor<1x32x64xf32>, %w: tensor<1x64x128xf32>) -> tensor<1x32x128xf32> {
  %e0 = tensor.empty() : tensor<1x64x128xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
       ins(%w : tensor<1x64x128xf32>) outs(%e0 : tensor<1x64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x64x128xf32>
  %a = math.tanh %x : tensor<1x32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x32x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.batch_matmul ins(%a, %v : tensor<1x32x64xf32>, tensor<1x64x128xf32>) outs(%c : tensor<1x32x128xf32>) -> tensor<1x32x128xf32>
  return %y : tensor<1x32x128xf32>
}

// -----

// A generic contraction with widening casts on its operands.
// CHECK-LABEL: func.func @generic_contraction
// CHECK: linalg.generic {{.*}}fp8.decision = "fp8", fp8.reason = "weight_gemm"
func.func @generic_contraction(%x: tensor<16x32xbf16>, %w: tensor<32x48xbf16>) -> tensor<16x48xf32> {
  %a = math.tanh %x : tensor<16x32xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x48xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x48xf32>) -> tensor<16x48xf32>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]}
       ins(%a, %w : tensor<16x32xbf16>, tensor<32x48xbf16>) outs(%c : tensor<16x48xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<16x48xf32>
  return %y : tensor<16x48xf32>
}

// -----

// linalg.contract, dynamic M.
// CHECK-LABEL: func.func @contract_dynamic
// CHECK: linalg.contract {{.*}}fp8.decision = "fp8", fp8.reason = "weight_gemm"
func.func @contract_dynamic(%x: tensor<?x64xf16>, %w: tensor<64x32xf16>) -> tensor<?x32xf16> {
  %a = math.tanh %x : tensor<?x64xf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf16>
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty(%m) : tensor<?x32xf16>
  %c = linalg.fill ins(%zero : f16) outs(%e : tensor<?x32xf16>) -> tensor<?x32xf16>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%a, %w : tensor<?x64xf16>, tensor<64x32xf16>) outs(%c : tensor<?x32xf16>) -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}

// -----

// Attention scores: Q K^T with Q and K computed (or passed in with batch
// dimensions) stays in high precision unless fp8-attention is set.
// CHECK-LABEL: func.func @attention_scores
// CHECK: linalg.batch_matmul {fp8.decision = "high_precision", fp8.reason = "activation_x_activation"}
// ATTN-LABEL: func.func @attention_scores
// ATTN: linalg.batch_matmul {fp8.decision = "fp8", fp8.reason = "activation_gemm_enabled"}
func.func @attention_scores(%q: tensor<4x32x64xf32>, %kt: tensor<4x64x32xf32>) -> tensor<4x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  // expected-remark @below {{kept in high precision: activation_x_activation}}
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x32x64xf32>, tensor<4x64x32xf32>) outs(%c : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  return %s : tensor<4x32x32xf32>
}

// -----

// Per-op control, both ways.
// CHECK-LABEL: func.func @forced
// CHECK: linalg.matmul {fp8.decision = "high_precision", fp8.precision = "high", fp8.reason = "forced_high_precision"}
// CHECK: linalg.matmul {fp8.decision = "fp8", fp8.precision = "fp8", fp8.reason = "forced_fp8"}
func.func @forced(%x: tensor<64x128xf32>, %w: tensor<128x8xf32>) -> (tensor<64x8xf32>, tensor<64x8xf32>) {
  %a = math.tanh %x : tensor<64x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x8xf32>) -> tensor<64x8xf32>
  // expected-remark @below {{kept in high precision: forced_high_precision}}
  %y0 = linalg.matmul {fp8.precision = "high"} ins(%a, %w : tensor<64x128xf32>, tensor<128x8xf32>) outs(%c : tensor<64x8xf32>) -> tensor<64x8xf32>
  // N = 8 is not a multiple of 16, but the user asked for FP8.
  // expected-remark @below {{FP8 (forced_fp8)}}
  %y1 = linalg.matmul {fp8.precision = "fp8"} ins(%a, %w : tensor<64x128xf32>, tensor<128x8xf32>) outs(%c : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %y0, %y1 : tensor<64x8xf32>, tensor<64x8xf32>
}

// -----

// K = 40 is not a multiple of 16: Hopper's FP8 tiles need it.
// CHECK-LABEL: func.func @unaligned
// CHECK: fp8.reason = "k_or_n_not_multiple_of_16"
func.func @unaligned(%x: tensor<64x40xf32>, %w: tensor<40x64xf32>) -> tensor<64x64xf32> {
  %a = math.tanh %x : tensor<64x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-remark @below {{kept in high precision: k_or_n_not_multiple_of_16}}
  %y = linalg.matmul ins(%a, %w : tensor<64x40xf32>, tensor<40x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}

// -----

// Integer GEMMs are recognised and left alone.
// CHECK-LABEL: func.func @integer
// CHECK: fp8.reason = "unsupported_element_type"
func.func @integer(%x: tensor<16x32xi8>, %w: tensor<32x16xi8>) -> tensor<16x16xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<16x16xi32>
  %c = linalg.fill ins(%zero : i32) outs(%e : tensor<16x16xi32>) -> tensor<16x16xi32>
  // expected-remark @below {{kept in high precision: unsupported_element_type}}
  %y = linalg.matmul ins(%x, %w : tensor<16x32xi8>, tensor<32x16xi8>) outs(%c : tensor<16x16xi32>) -> tensor<16x16xi32>
  return %y : tensor<16x16xi32>
}

// -----

// Convolutions are reported, never converted.
// CHECK-LABEL: func.func @convolution
// CHECK: fp8.reason = "convolution"
func.func @convolution(%x: tensor<1x8x8x16xf32>, %w: tensor<3x3x16x16xf32>) -> tensor<1x6x6x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x6x6x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  // expected-remark @below {{kept in high precision: convolution}}
  %y = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x8x8x16xf32>, tensor<3x3x16x16xf32>) outs(%c : tensor<1x6x6x16xf32>) -> tensor<1x6x6x16xf32>
  return %y : tensor<1x6x6x16xf32>
}

// -----

// C += A B: the accumulator is a live tensor, not a zero fill; still a GEMM
// (fp8-quantize adds C to the scaled product).
// CHECK-LABEL: func.func @accumulate
// CHECK: fp8.reason = "weight_gemm"
func.func @accumulate(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>, %acc: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = math.tanh %x : tensor<32x32xf32>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.matmul ins(%a, %w : tensor<32x32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %y : tensor<32x32xf32>
}

// -----

// An empty dimension: nothing to compute.
// CHECK-LABEL: func.func @zero_sized
// CHECK: fp8.reason = "zero_sized"
func.func @zero_sized(%x: tensor<0x32xf32>, %w: tensor<32x32xf32>) -> tensor<0x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<0x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<0x32xf32>) -> tensor<0x32xf32>
  // expected-remark @below {{kept in high precision: zero_sized}}
  %y = linalg.matmul ins(%x, %w : tensor<0x32xf32>, tensor<32x32xf32>) outs(%c : tensor<0x32xf32>) -> tensor<0x32xf32>
  return %y : tensor<0x32xf32>
}

// -----

// linalg on buffers is left to whoever bufferized it.
// CHECK-LABEL: func.func @buffers
// CHECK: fp8.reason = "buffer_semantics"
func.func @buffers(%x: memref<32x32xf32>, %w: memref<32x32xf32>, %y: memref<32x32xf32>) {
  // expected-remark @below {{kept in high precision: buffer_semantics}}
  linalg.matmul ins(%x, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%y : memref<32x32xf32>)
  return
}

// -----

// batch_reduce_matmul sums over the batch too: a GEMM over K' = 4 * 32
// (fp8-quantize reshapes its operands).
// CHECK-LABEL: func.func @batch_reduce
// CHECK: fp8.reason = "weight_gemm"
func.func @batch_reduce(%x: tensor<4x16x32xf32>, %w: tensor<4x32x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.batch_reduce_matmul ins(%x, %w : tensor<4x16x32xf32>, tensor<4x32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// Gradients: derived from an argument marked fp8.role = "grad" they are
// E5M2 under the hybrid format (dX = dY W^T).
// CHECK-LABEL: func.func @dgrad
// CHECK: fp8.decision = "fp8"
func.func @dgrad(%dy: tensor<64x256xf32> {fp8.role = "grad"}, %w: tensor<128x256xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  // expected-remark @below {{FP8 (weight_gemm): lhs gradient as 'f8E5M2', rhs weight as 'f8E4M3FN'}}
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
          ins(%dy, %w : tensor<64x256xf32>, tensor<128x256xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %dx : tensor<64x128xf32>
}

// -----

// Several contraction dimensions, contiguous and in the same order in both
// operands: one GEMM over K = 4 * 8 (fp8-quantize-grouped.mlir converts it).
// CHECK-LABEL: func.func @two_k_dims
// CHECK: fp8.reason = "weight_gemm"
func.func @two_k_dims(%x: tensor<16x4x8xf32>, %w: tensor<4x8x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @below {{FP8 (weight_gemm)}}
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>, affine_map<(m, n, k1, k2) -> (k1, k2, n)>, affine_map<(m, n, k1, k2) -> (m, n)>]
         ins(%x, %w : tensor<16x4x8xf32>, tensor<4x8x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// The same two K dimensions in different orders in the two operands: a
// GEMM only after a transposing copy, which the rewrite does not make.
// CHECK-LABEL: func.func @k_dims_permuted
// CHECK: fp8.reason = "unsupported_layout"
func.func @k_dims_permuted(%x: tensor<16x4x8xf32>, %w: tensor<8x4x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  // expected-remark @below {{kept in high precision: unsupported_layout}}
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>, affine_map<(m, n, k1, k2) -> (k2, k1, n)>, affine_map<(m, n, k1, k2) -> (m, n)>]
         ins(%x, %w : tensor<16x4x8xf32>, tensor<8x4x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// A row-wise dot product (softmax backward's sum_j P_ij dP_ij) is a
// contraction but not a GEMM: not classified, not reported.
// CHECK-LABEL: func.func @row_dot
// CHECK-NOT: fp8.decision
func.func @row_dot(%p: tensor<8x16xf32>, %dp: tensor<8x16xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
       ins(%p, %dp : tensor<8x16xf32>, tensor<8x16xf32>) outs(%c : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}
