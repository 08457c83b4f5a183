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
