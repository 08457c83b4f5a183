// fp8-quantize="fp8-attention": the query and key of every fused attention
// become E4M3 with one power-of-two scale per token (blocks of one token's
// head dimension), the value E4M3 with a delayed scale (TE's state: an
// amax history and a scale, whatever the GEMMs' recipe), and P E4M3 with
// scale 256 per key tile of 128; the attention takes them with their
// inverse scales. Attentions that must stay high are left, with the
// reason.
//
// RUN: fp8-opt %s -split-input-file --fp8-quantize="fp8-attention" | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-quantize="fp8-attention remarks" -verify-diagnostics -o /dev/null
// RUN: fp8-opt %s -split-input-file --fp8-quantize | FileCheck %s --check-prefix=OFF
// RUN: fp8-opt %s -split-input-file --fp8-quantize="fp8-attention" | fp8-opt -split-input-file --fp8-verify -o /dev/null
// attention-scales=head: Q, K and V each one power-of-two scale per batch
// and head from the amax of the whole sequence (blocks [1, 1, s, d]); no
// state.
// RUN: fp8-opt %s -split-input-file --fp8-quantize="fp8-attention attention-scales=head" | FileCheck %s --check-prefix=HEAD
// RUN: fp8-opt %s -split-input-file --fp8-quantize="fp8-attention attention-scales=head" | fp8-opt -split-input-file --fp8-verify -o /dev/null
// RUN: not fp8-opt %s -split-input-file --fp8-quantize="fp8-attention attention-scales=tensor" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: unknown attention-scales 'tensor' (expected token or head)

// CHECK: ml_program.global public mutable @fp8.prefill.attention0.value.amax_history(dense<0.000000e+00> : tensor<1024xf32>)
// CHECK: ml_program.global public mutable @fp8.prefill.attention0.value.scale(dense<1.000000e+00> : tensor<f32>)
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x8x128x64xbf16>, %[[K:[^:]+]]: tensor<1x2x128x64xbf16>, %[[V:[^:]+]]: tensor<1x2x128x32xbf16>)
// CHECK-DAG: %[[QA:.+]] = fp8.block_amax %[[Q]] block [1, 1, 1, 64] : tensor<1x8x128x64xbf16> -> tensor<1x8x128x1xf32>
// CHECK-DAG: %[[QS:.+]], %[[QSI:.+]] = fp8.compute_block_scales %[[QA]] for f8E4M3FN {power_of_two} : tensor<1x8x128x1xf32> -> tensor<1x8x128x1xf32>, tensor<1x8x128x1xf32>
// CHECK-DAG: %[[Q8:.+]] = fp8.quantize %[[Q]], %[[QS]] block [1, 1, 1, 64] : tensor<1x8x128x64xbf16> scales tensor<1x8x128x1xf32> -> tensor<1x8x128x64xf8E4M3FN>
// CHECK-DAG: %[[QSI3:.+]] = tensor.collapse_shape %[[QSI]] {{\[}}[0], [1], [2, 3]] : tensor<1x8x128x1xf32> into tensor<1x8x128xf32>
// CHECK-DAG: %[[KA:.+]] = fp8.block_amax %[[K]] block [1, 1, 1, 64] : tensor<1x2x128x64xbf16> -> tensor<1x2x128x1xf32>
// CHECK-DAG: %[[K8:.+]] = fp8.quantize %[[K]], %{{.+}} block [1, 1, 1, 64] : tensor<1x2x128x64xbf16> scales tensor<1x2x128x1xf32> -> tensor<1x2x128x64xf8E4M3FN>
// CHECK-DAG: %[[KSI3:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x2x128x1xf32> into tensor<1x2x128xf32>
// CHECK: %[[HIST:.+]] = ml_program.global_load @fp8.prefill.attention0.value.amax_history
// CHECK: %[[VSC:.+]] = ml_program.global_load @fp8.prefill.attention0.value.scale
// CHECK: %[[VS:.+]] = tensor.extract %[[VSC]][]
// CHECK: %[[V8:.+]], %[[VA:.+]] = fp8.quantize %[[V]], %[[VS]] : tensor<1x2x128x32xbf16>  -> tensor<1x2x128x32xf8E4M3FN>, f32
// CHECK: %[[REC:.+]] = fp8.record_amax %[[HIST]], %[[VA]]
// CHECK: fp8.compute_scale %[[REC]], %[[VS]] for f8E4M3FN
// CHECK: ml_program.global_store @fp8.prefill.attention0.value.amax_history
// CHECK: ml_program.global_store @fp8.prefill.attention0.value.scale
// CHECK: %[[VSI:.+]] = arith.divf %{{.+}}, %[[VS]] : f32
// CHECK: %[[VSIH:.+]] = linalg.fill ins(%[[VSI]] : f32) outs(%{{.+}} : tensor<1x2xf32>)
// CHECK: %[[O:.+]] = fp8.attention %[[Q8]], %[[K8]], %[[V8]] scales %[[QSI3]], %[[KSI3]] : tensor<1x8x128xf32>, tensor<1x2x128xf32> value_scale %[[VSIH]] : tensor<1x2xf32> scale 1.250000e-01 {block_k = 128 : i64, causal, probability_scale = 2.560000e+02 : f32} : tensor<1x8x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x32xf8E4M3FN> -> tensor<1x8x128x32xbf16>
// CHECK: return %[[O]]
// HEAD-NOT: ml_program.global
// HEAD-LABEL: func.func @prefill
// HEAD-SAME: (%[[Q:[^:]+]]: tensor<1x8x128x64xbf16>, %[[K:[^:]+]]: tensor<1x2x128x64xbf16>, %[[V:[^:]+]]: tensor<1x2x128x32xbf16>)
// HEAD: %[[QA:.+]] = fp8.block_amax %[[Q]] block [1, 1, 128, 64] : tensor<1x8x128x64xbf16> -> tensor<1x8x1x1xf32>
// HEAD: %[[QS:.+]], %[[QSI:.+]] = fp8.compute_block_scales %[[QA]] for f8E4M3FN {power_of_two}
// HEAD: %[[Q8:.+]] = fp8.quantize %[[Q]], %[[QS]] block [1, 1, 128, 64]
// HEAD: %[[QH:.+]] = tensor.collapse_shape %[[QSI]] {{\[}}[0], [1, 2, 3]] : tensor<1x8x1x1xf32> into tensor<1x8xf32>
// HEAD: %[[QT:.+]] = linalg.broadcast ins(%[[QH]] : tensor<1x8xf32>) outs(%{{.+}} : tensor<1x8x128xf32>) dimensions = [2]
// HEAD: fp8.block_amax %[[K]] block [1, 1, 128, 64] : tensor<1x2x128x64xbf16> -> tensor<1x2x1x1xf32>
// HEAD: %[[KT:.+]] = linalg.broadcast ins(%{{.+}} : tensor<1x2xf32>) outs(%{{.+}} : tensor<1x2x128xf32>) dimensions = [2]
// HEAD: fp8.block_amax %[[V]] block [1, 1, 128, 32] : tensor<1x2x128x32xbf16> -> tensor<1x2x1x1xf32>
// HEAD: %[[VH:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2, 3]] : tensor<1x2x1x1xf32> into tensor<1x2xf32>
// HEAD: fp8.attention %[[Q8]], %{{.+}}, %{{.+}} scales %[[QT]], %[[KT]] : tensor<1x8x128xf32>, tensor<1x2x128xf32> value_scale %[[VH]] : tensor<1x2xf32> scale 1.250000e-01 {block_k = 128 : i64, causal, probability_scale = 2.560000e+02 : f32}
// OFF-LABEL: func.func @prefill
// OFF-NOT: fp8.quantize
// OFF: fp8.attention %arg0, %arg1, %arg2 scale
func.func @prefill(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x32xbf16>) -> tensor<1x8x128x32xbf16> {
  // expected-remark @+1 {{attention in FP8 ('f8E4M3FN'): query and key with one power-of-two scale per token, the value with a delayed scale, P with scale 2.560000e+02 per 128 keys}}
  %o = fp8.attention %q, %k, %v scale 0.125 {causal}
      : tensor<1x8x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x32xbf16> -> tensor<1x8x128x32xbf16>
  return %o : tensor<1x8x128x32xbf16>
}

// -----

// A training step's forward: its backward recomputes the scores in high
// precision against this log-sum-exp, so both stay high.
// CHECK-LABEL: func.func @train
// CHECK-NOT: fp8.quantize
// CHECK: fp8.attention %arg0, %arg1, %arg2 scale
func.func @train(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>, %do: tensor<1x2x16x8xf32>)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
  // expected-remark @+1 {{attention kept in high precision: a fused backward reads its log-sum-exp (the backward recomputes the scores in high precision)}}
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5 {causal}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16xf32>
  return %o, %dq, %dk, %dv : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: fp8.quantize
func.func @dynamic(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-remark @+1 {{attention kept in high precision: per-token scales need static shapes}}
  %o = fp8.attention %q, %k, %v scale 0.5
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
