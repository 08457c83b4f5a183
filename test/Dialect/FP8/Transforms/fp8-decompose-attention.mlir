// RUN: fp8-opt %s -split-input-file --fp8-decompose-attention | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-decompose-attention=round-probabilities \
// RUN:   | FileCheck %s --check-prefix=ROUND

// GQA by repeating K and V (query head h reads key/value head h / 2), as
// graphs write it, so both contractions are plain batched GEMMs; products
// and sums in f32 (V widened before P V), the causal mask from linalg.index, the softmax
// in f32 and one rounding of the output; lse is -inf on a fully masked row.

// CHECK-DAG: #[[REP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @causal_gqa(
// CHECK-SAME: %[[Q:.+]]: tensor<1x4x70x4xbf16>, %[[KT:.+]]: tensor<1x2x133x4xbf16>, %[[VT:.+]]: tensor<1x2x133x3xbf16>)
// CHECK-NOT: fp8.attention
// CHECK: %[[KR:.+]] = linalg.generic {indexing_maps = [#[[REP]], {{.+}} ins(%[[KT]] : tensor<1x2x133x4xbf16>) outs({{.+}} : tensor<1x2x2x133x4xbf16>)
// CHECK: %[[K4:.+]] = tensor.collapse_shape %[[KR]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x133x4xbf16> into tensor<1x4x133x4xbf16>
// CHECK: %[[VR:.+]] = linalg.generic {indexing_maps = [#[[REP]], {{.+}} ins(%[[VT]] : tensor<1x2x133x3xbf16>)
// CHECK: %[[V4:.+]] = tensor.collapse_shape %[[VR]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x133x3xbf16> into tensor<1x4x133x3xbf16>
// CHECK: %[[S:.+]] = linalg.generic {{.+}} ins(%[[Q]], %[[K4]] : {{.+}}) outs({{.+}} : tensor<1x4x70x133xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// The scale and causal mask are recomputed in the row max and in E, which
// read S itself: no masked copy of the scores.
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[S]] : tensor<1x4x70x133xf32>) outs({{.+}} : tensor<1x4x70xf32>)
// CHECK: %[[SC:.+]] = arith.mulf %{{.+}}, %[[SCALE:.+]] : f32
// CHECK: %[[I:.+]] = linalg.index 2
// CHECK: %[[J:.+]] = linalg.index 3
// CHECK: %[[LAST:.+]] = arith.addi %[[I]], %c63
// CHECK: %[[HIDDEN:.+]] = arith.cmpi sgt, %[[J]], %[[LAST]]
// CHECK: %[[MS:.+]] = arith.select %[[HIDDEN]], %{{.+}}, %[[SC]]
// CHECK: arith.maximumf %[[MS]]
// CHECK: %[[E:.+]] = linalg.generic {{.+}} ins(%[[S]], %[[MAX]] :
// CHECK: arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK: arith.cmpi sgt
// CHECK: %[[ME:.+]] = arith.select
// CHECK: arith.subf %[[ME]]
// CHECK: math.exp
// CHECK: %[[L:.+]] = linalg.generic {{.+}} ins(%[[E]] : tensor<1x4x70x133xf32>) outs({{.+}} : tensor<1x4x70xf32>)
// V widened to f32, so that P V has one operand type (a GEMM kernel's).
// CHECK: %[[VW:.+]] = linalg.generic {{.+}} ins(%[[V4]] : tensor<1x4x133x3xbf16>) outs({{.+}} : tensor<1x4x133x3xf32>)
// CHECK-NEXT: ^bb0(%[[VIN:.+]]: bf16,
// CHECK-NEXT: arith.extf %[[VIN]] : bf16 to f32
// CHECK: %[[O:.+]] = linalg.generic {{.+}} ins(%[[E]], %[[VW]] : tensor<1x4x70x133xf32>, tensor<1x4x133x3xf32>) outs({{.+}} : tensor<1x4x70x3xf32>)
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[O]], %[[L]] :
// CHECK: arith.divf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: %[[LSE:.+]] = linalg.generic {{.+}} ins(%[[MAX]], %[[L]] :
// CHECK: math.log
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: return %[[OUT]], %[[LSE]]
// round-probabilities (the GPU route): E = exp(S - max) rounded to bf16 in
// the generic that computes it, l the f32 sum of the rounded values, and
// E V on the bf16 E and the bf16 V as they are (no widened copy of V).
// ROUND-LABEL: func.func @causal_gqa(
// ROUND: %[[MAX:.+]] = linalg.generic {{.+}} outs({{.+}} : tensor<1x4x70xf32>)
// ROUND: arith.maximumf
// ROUND: %[[E:.+]] = linalg.generic {{.+}} ins(%{{.+}}, %[[MAX]] : {{.+}}) outs({{.+}} : tensor<1x4x70x133xbf16>)
// ROUND: %[[X:.+]] = math.exp
// ROUND-NEXT: %[[R:.+]] = arith.truncf %[[X]] : f32 to bf16
// ROUND-NEXT: linalg.yield %[[R]] : bf16
// ROUND: %[[L:.+]] = linalg.generic {{.+}} ins(%[[E]] : tensor<1x4x70x133xbf16>) outs({{.+}} : tensor<1x4x70xf32>)
// ROUND-NEXT: ^bb0(%[[EIN:.+]]: bf16, %[[ACC:.+]]: f32):
// ROUND-NEXT: %[[EW:.+]] = arith.extf %[[EIN]] : bf16 to f32
// ROUND-NEXT: arith.addf %[[ACC]], %[[EW]] : f32
// ROUND-NOT: tensor<1x4x133x3xf32>
// ROUND: %[[O:.+]] = linalg.generic {{.+}} ins(%[[E]], %{{.+}} : tensor<1x4x70x133xbf16>, tensor<1x4x133x3xbf16>) outs({{.+}} : tensor<1x4x70x3xf32>)
// ROUND: arith.extf
// ROUND: arith.extf
// ROUND: arith.mulf
// ROUND: arith.addf
// ROUND: linalg.generic {{.+}} ins(%[[O]], %[[L]] :
// ROUND: arith.divf
func.func @causal_gqa(%q: tensor<1x4x70x4xbf16>, %k: tensor<1x2x133x4xbf16>,
                      %v: tensor<1x2x133x3xbf16>)
    -> (tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>
      -> tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
  return %o, %lse : tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
}

// -----

// A boolean mask broadcast over batch and heads selects -inf where false.

// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-LABEL: func.func @boolean_mask(
// CHECK-NOT: fp8.attention
// CHECK: linalg.generic {{.+}}#[[MASK]]
// CHECK: ^bb0(%[[S:.+]]: f32, %[[KEEP:.+]]: i1, %{{.+}}: f32):
// CHECK: %[[SCALED:.+]] = arith.mulf %[[S]]
// CHECK: %[[KEPT:.+]] = arith.select %[[KEEP]], %[[SCALED]], %cst
// CHECK: arith.maximumf %[[KEPT]]
// CHECK: linalg.generic {{.+}}#[[MASK]]
// CHECK: ^bb0(%[[S2:.+]]: f32, %[[KEEP2:.+]]: i1, %{{.+}}: f32, %{{.+}}: f32):
// CHECK: %[[SCALED2:.+]] = arith.mulf %[[S2]]
// CHECK: arith.select %[[KEEP2]], %[[SCALED2]], %cst
func.func @boolean_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>,
                        %v: tensor<2x4x8x16xf32>, %m: tensor<1x1x8x8xi1>)
    -> tensor<2x4x8x16xf32> {
  %o = fp8.attention %q, %k, %v mask %m : tensor<1x1x8x8xi1> scale 0.25
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
      -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Heads known only at run time: K and V are read at h / (hq / hkv).

// CHECK-LABEL: func.func @dynamic_heads(
// CHECK-SAME: %[[Q:.+]]: tensor<?x?x?x?xf32>, %[[K:.+]]: tensor<?x?x?x?xf32>, %[[V:.+]]: tensor<?x?x?x?xf32>)
// CHECK-NOT: fp8.attention
// CHECK: %[[HQ:.+]] = tensor.dim %[[Q]], %c1
// CHECK: %[[HKV:.+]] = tensor.dim %[[K]], %c1
// CHECK: %[[G:.+]] = arith.divui %[[HQ]], %[[HKV]]
// CHECK: linalg.generic {{.+}} ins(%[[Q]] :
// CHECK: %[[H:.+]] = linalg.index 1
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[G]]
// CHECK: tensor.extract %[[K]][%{{.+}}, %[[KVH]], %{{.+}}, %{{.+}}]
// CHECK: tensor.extract %[[V]]
func.func @dynamic_heads(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                         %v: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %o = fp8.attention %q, %k, %v scale 0.5 {causal}
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
      -> tensor<?x?x?x?xf32>
  return %o : tensor<?x?x?x?xf32>
}

// -----

// The backward, causal GQA: K and V repeated as for the forward, S = Q K^T,
// P = exp(S - lse) with the forward's scale and causal mask, dP = dO V^T,
// D = rowsum(dO * O), dS = P * (dP - D), all in f32; dQ = scale * dS K,
// and dS^T Q, P^T dO per query head, summed in f32 over each pair of query
// heads before the one scale and rounding of dK and dV.

// CHECK-DAG: #[[REP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[GROUP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2, d3)>
// CHECK-LABEL: func.func @grad_causal_gqa(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x4x70x4xbf16>, %[[KT:[^:]+]]: tensor<1x2x133x4xbf16>, %[[VT:[^:]+]]: tensor<1x2x133x3xbf16>, %[[O:[^:]+]]: tensor<1x4x70x3xbf16>, %[[DO:[^:]+]]: tensor<1x4x70x3xbf16>, %[[LSE:[^:]+]]: tensor<1x4x70xf32>)
// CHECK-NOT: fp8.attention_grad
// CHECK-NOT: arith.truncf
// CHECK: %[[KR:.+]] = linalg.generic {indexing_maps = [#[[REP]], {{.+}} ins(%[[KT]] :
// CHECK: %[[K4:.+]] = tensor.collapse_shape %[[KR]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x133x4xbf16> into tensor<1x4x133x4xbf16>
// CHECK: %[[VR:.+]] = linalg.generic {indexing_maps = [#[[REP]], {{.+}} ins(%[[VT]] :
// CHECK: %[[V4:.+]] = tensor.collapse_shape %[[VR]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x2x133x3xbf16> into tensor<1x4x133x3xbf16>
// CHECK: %[[S:.+]] = linalg.generic {{.+}} ins(%[[Q]], %[[K4]] : {{.+}}) outs({{.+}} : tensor<1x4x70x133xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[P:.+]] = linalg.generic {{.+}} ins(%[[S]], %[[LSE]] : tensor<1x4x70x133xf32>, tensor<1x4x70xf32>) outs({{.+}} : tensor<1x4x70x133xf32>)
// CHECK: %[[SC:.+]] = arith.mulf %{{.+}}, %[[SCALE:.+]] : f32
// CHECK: %[[I:.+]] = linalg.index 2
// CHECK: %[[J:.+]] = linalg.index 3
// CHECK: %[[LAST:.+]] = arith.addi %[[I]], %c63
// CHECK: %[[HIDDEN:.+]] = arith.cmpi sgt, %[[J]], %[[LAST]]
// CHECK: %[[MS:.+]] = arith.select %[[HIDDEN]], %{{.+}}, %[[SC]]
// CHECK: %[[D:.+]] = arith.subf %[[MS]], %{{.+}} : f32
// CHECK: %[[E:.+]] = math.exp %[[D]]
// CHECK: linalg.yield %[[E]] : f32
// CHECK: %[[DP:.+]] = linalg.generic {{.+}} ins(%[[DO]], %[[V4]] : {{.+}}) outs({{.+}} : tensor<1x4x70x133xf32>)
// CHECK: %[[ROWDOT:.+]] = linalg.generic {{.+}} ins(%[[DO]], %[[O]] : {{.+}}) outs({{.+}} : tensor<1x4x70xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[DS:.+]] = linalg.generic {{.+}} ins(%[[P]], %[[DP]], %[[ROWDOT]] :
// CHECK-NEXT: ^bb0(%[[PIN:.+]]: f32, %[[DPIN:.+]]: f32, %[[DIN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[CENTERED:.+]] = arith.subf %[[DPIN]], %[[DIN]] : f32
// CHECK-NEXT: arith.mulf %[[PIN]], %[[CENTERED]] : f32
// dQ = round(scale * dS K), K widened so that both operands are f32.
// CHECK: %[[KW:.+]] = linalg.generic {{.+}} ins(%[[K4]] : tensor<1x4x133x4xbf16>) outs({{.+}} : tensor<1x4x133x4xf32>)
// CHECK: %[[DQ:.+]] = linalg.generic {{.+}} ins(%[[DS]], %[[KW]] : {{.+}}) outs({{.+}} : tensor<1x4x70x4xf32>)
// CHECK: %[[DQR:.+]] = linalg.generic {{.+}} ins(%[[DQ]] : tensor<1x4x70x4xf32>) outs({{.+}} : tensor<1x4x70x4xbf16>)
// CHECK: %[[DQS:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK-NEXT: arith.truncf %[[DQS]] : f32 to bf16
// dK: dS^T Q per query head, the pairs of heads summed in f32, then scaled
// and rounded once.
// CHECK-NOT: arith.truncf
// CHECK: %[[QW:.+]] = linalg.generic {{.+}} ins(%[[Q]] : tensor<1x4x70x4xbf16>) outs({{.+}} : tensor<1x4x70x4xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[DKH:.+]] = linalg.generic {{.+}} ins(%[[DS]], %[[QW]] : {{.+}}) outs({{.+}} : tensor<1x4x133x4xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[DKE:.+]] = tensor.expand_shape %[[DKH]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 133, 4] : tensor<1x4x133x4xf32> into tensor<1x2x2x133x4xf32>
// CHECK-NOT: arith.truncf
// CHECK: %[[DK:.+]] = linalg.generic {indexing_maps = [#[[GROUP]], {{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[DKE]] : tensor<1x2x2x133x4xf32>) outs({{.+}} : tensor<1x2x133x4xf32>)
// CHECK-NEXT: ^bb0(%[[HEAD:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT: arith.addf %[[ACC]], %[[HEAD]] : f32
// CHECK-NOT: arith.truncf
// CHECK: %[[DKR:.+]] = linalg.generic {{.+}} ins(%[[DK]] : tensor<1x2x133x4xf32>) outs({{.+}} : tensor<1x2x133x4xbf16>)
// CHECK: %[[DKS:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK-NEXT: arith.truncf %[[DKS]] : f32 to bf16
// dV: P^T dO per query head, summed over the pairs, rounded once (no scale).
// CHECK-NOT: arith.truncf
// CHECK: %[[DOW:.+]] = linalg.generic {{.+}} ins(%[[DO]] : tensor<1x4x70x3xbf16>) outs({{.+}} : tensor<1x4x70x3xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[DVH:.+]] = linalg.generic {{.+}} ins(%[[P]], %[[DOW]] : {{.+}}) outs({{.+}} : tensor<1x4x133x3xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[DVE:.+]] = tensor.expand_shape %[[DVH]] {{.+}} into tensor<1x2x2x133x3xf32>
// CHECK-NOT: arith.truncf
// CHECK: %[[DV:.+]] = linalg.generic {indexing_maps = [#[[GROUP]], {{.+}} ins(%[[DVE]] : tensor<1x2x2x133x3xf32>) outs({{.+}} : tensor<1x2x133x3xf32>)
// CHECK: arith.addf
// CHECK-NOT: arith.truncf
// CHECK: %[[DVR:.+]] = linalg.generic {{.+}} ins(%[[DV]] : tensor<1x2x133x3xf32>) outs({{.+}} : tensor<1x2x133x3xbf16>)
// CHECK-NEXT: ^bb0(%[[DVIN:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT: arith.truncf %[[DVIN]] : f32 to bf16
// CHECK: return %[[DQR]], %[[DKR]], %[[DVR]]
// round-probabilities leaves the backward in f32: the same P.
// ROUND-LABEL: func.func @grad_causal_gqa(
// ROUND: math.exp
// ROUND-NOT: arith.truncf
// ROUND: outs({{.+}} : tensor<1x4x70x4xbf16>)
func.func @grad_causal_gqa(%q: tensor<1x4x70x4xbf16>, %k: tensor<1x2x133x4xbf16>,
                           %v: tensor<1x2x133x3xbf16>, %o: tensor<1x4x70x3xbf16>,
                           %do: tensor<1x4x70x3xbf16>, %lse: tensor<1x4x70xf32>)
    -> (tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5
      {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>,
        tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
  return %dq, %dk, %dv
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>
}

// -----

// The backward with a boolean mask, one key/value head per query head, f32:
// the mask selects -inf in P; no group sum and no rounding.

// CHECK-DAG: #[[MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-LABEL: func.func @grad_boolean_mask(
// CHECK-SAME: %[[LSE:[^:]+]]: tensor<2x4x8xf32>, %[[KEEP:[^:]+]]: tensor<1x1x8x8xi1>)
// CHECK-NOT: fp8.attention_grad
// CHECK: linalg.generic {{.+}}#[[MASK]]{{.+}} ins(%{{.+}}, %[[KEEP]], %[[LSE]] : tensor<2x4x8x8xf32>, tensor<1x1x8x8xi1>, tensor<2x4x8xf32>)
// CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %[[K:.+]]: i1, %[[L:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[S]]
// CHECK: %[[KEPT:.+]] = arith.select %[[K]], %[[SCALED]], %cst
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[KEPT]], %[[L]]
// CHECK-NEXT: math.exp %[[D]]
// CHECK-NOT: tensor.expand_shape
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @grad_boolean_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>,
                             %v: tensor<2x4x8x16xf32>, %o: tensor<2x4x8x16xf32>,
                             %do: tensor<2x4x8x16xf32>, %lse: tensor<2x4x8xf32>,
                             %m: tensor<1x1x8x8xi1>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      mask %m : tensor<1x1x8x8xi1> scale 0.25
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>,
        tensor<2x4x8x16xf32>, tensor<2x4x8xf32>
  return %dq, %dk, %dv
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// The backward with heads known only at run time: K and V read at
// h / (hq / hkv), the per-head gradients split as [b, hkv, hq / hkv, s, d]
// for the group sum.

// CHECK-LABEL: func.func @grad_dynamic_heads(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x4x70x4xf32>, %[[K:[^:]+]]: tensor<1x?x133x4xf32>
// CHECK-NOT: fp8.attention_grad
// CHECK: %[[HKV:.+]] = tensor.dim %[[K]], %c1
// CHECK: %[[G:.+]] = arith.divui %c4, %[[HKV]]
// CHECK: linalg.generic {{.+}} ins(%[[Q]] :
// CHECK: %[[H:.+]] = linalg.index 1
// CHECK: %[[KVH:.+]] = arith.divui %[[H]], %[[G]]
// CHECK: tensor.extract %[[K]][%{{.+}}, %[[KVH]], %{{.+}}, %{{.+}}]
// CHECK: %[[DKH:.+]] = tensor.cast %{{.+}} : tensor<1x4x133x4xf32> to tensor<1x?x133x4xf32>
// CHECK: %[[HKV2:.+]] = tensor.dim %[[K]], %c1
// CHECK: tensor.expand_shape %[[DKH]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, %[[HKV2]], %[[G]], 133, 4] : tensor<1x?x133x4xf32> into tensor<1x?x?x133x4xf32>
func.func @grad_dynamic_heads(%q: tensor<1x4x70x4xf32>, %k: tensor<1x?x133x4xf32>,
                              %v: tensor<1x?x133x3xf32>, %o: tensor<1x4x70x3xf32>,
                              %do: tensor<1x4x70x3xf32>, %lse: tensor<1x4x70xf32>)
    -> (tensor<1x4x70x4xf32>, tensor<1x?x133x4xf32>, tensor<1x?x133x3xf32>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x?x133x4xf32>, tensor<1x?x133x3xf32>,
        tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  return %dq, %dk, %dv
      : tensor<1x4x70x4xf32>, tensor<1x?x133x4xf32>, tensor<1x?x133x3xf32>
}
