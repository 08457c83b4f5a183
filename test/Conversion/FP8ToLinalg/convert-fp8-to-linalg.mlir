// RUN: fp8-opt %s --convert-fp8-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @amax
// CHECK-SAME: (%[[X:.+]]: tensor<4x?xbf16>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<f32>)
// CHECK: %[[RED:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction"]
// CHECK-SAME: ins(%[[X]] : tensor<4x?xbf16>) outs(%[[INIT]] : tensor<f32>)
// CHECK: ^bb0(%[[IN:.+]]: bf16, %[[ACC:.+]]: f32):
// CHECK:   %[[W:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:   %[[ABS:.+]] = math.absf %[[W]] : f32
// CHECK:   %[[MAX:.+]] = arith.maxnumf %[[ACC]], %[[ABS]] : f32
// CHECK:   linalg.yield %[[MAX]] : f32
// CHECK: %[[AMAX:.+]] = tensor.extract %[[RED]][] : tensor<f32>
// CHECK: return %[[AMAX]]
// CHECK-NOT: fp8.
func.func @amax(%x: tensor<4x?xbf16>) -> f32 {
  %a = fp8.amax %x : tensor<4x?xbf16>
  return %a : f32
}

// -----

// Delayed scaling: a new scale only from a finite positive amax, FLT_MAX
// for an infinite one, then the power-of-two mask.
// CHECK-LABEL: func.func @compute_scale_delayed
// CHECK-SAME: (%[[AMAX:.+]]: f32, %[[PREV:.+]]: f32)
// CHECK-DAG: %[[SMAX:.+]] = arith.constant 2.240000e+02 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: %[[POS:.+]] = arith.cmpf ogt, %[[AMAX]], %[[ZERO]] : f32
// CHECK: %[[FIN:.+]] = arith.cmpf olt, %[[AMAX]], %[[INF]] : f32
// CHECK: %[[OK:.+]] = arith.andi %[[POS]], %[[FIN]] : i1
// CHECK: %[[NEW:.+]] = arith.divf %[[SMAX]], %[[AMAX]] : f32
// CHECK: %[[S:.+]] = arith.select %[[OK]], %[[NEW]], %[[PREV]] : f32
// CHECK: %[[ABS:.+]] = math.absf %[[S]] : f32
// CHECK: %[[ISINF:.+]] = arith.cmpf oeq, %[[ABS]]
// CHECK: %[[S2:.+]] = arith.select %[[ISINF]], %{{.+}}, %[[S]] : f32
// CHECK: %[[BITS:.+]] = arith.bitcast %[[S2]] : f32 to i32
// CHECK: %[[MASK:.+]] = arith.constant -8388608 : i32
// CHECK: %[[M:.+]] = arith.andi %[[BITS]], %[[MASK]] : i32
// CHECK: %[[P2:.+]] = arith.bitcast %[[M]] : i32 to f32
// CHECK: return %[[P2]]
func.func @compute_scale_delayed(%amax: f32, %prev: f32) -> f32 {
  %s = fp8.compute_scale %amax, %prev for f8E4M3FN {margin = 1 : i32, power_of_two} : f32
  return %s : f32
}

// -----

// Current scaling: epsilon first, then 1 for amax 0, Inf or NaN.
// CHECK-LABEL: func.func @compute_scale_current
// CHECK-SAME: (%[[AMAX:.+]]: f32)
// CHECK-DAG: %[[SMAX:.+]] = arith.constant 5.734400e+04 : f32
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999996E-13 : f32
// CHECK: %[[BELOW:.+]] = arith.cmpf olt, %[[AMAX]], %[[EPS]] : f32
// CHECK: %[[A:.+]] = arith.select %[[BELOW]], %[[EPS]], %[[AMAX]] : f32
// CHECK: arith.cmpf uno, %[[A]], %[[A]] : f32
// CHECK: %[[DIV:.+]] = arith.divf %[[SMAX]], %[[A]] : f32
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[S:.+]] = arith.select %{{.+}}, %[[ONE]], %{{.+}} : f32
// CHECK: return %[[S]]
func.func @compute_scale_current(%amax: f32) -> f32 {
  %s = fp8.compute_scale %amax for f8E5M2 {epsilon = 1.0e-12 : f32} : f32
  return %s : f32
}

// -----

// CHECK-LABEL: func.func @compute_scale_history
// CHECK-SAME: (%[[H:.+]]: tensor<16xf32>, %[[PREV:.+]]: f32)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[FIRST:.+]] = tensor.extract %[[H]][%[[C0]]] : tensor<16xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[FIRST]] : f32)
// CHECK: %[[RED:.+]] = linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[H]] : tensor<16xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK:   arith.maxnumf
// CHECK: tensor.extract %[[RED]][] : tensor<f32>
// CHECK: %[[C0B:.+]] = arith.constant 0 : index
// CHECK: %[[RECENT:.+]] = tensor.extract %[[H]][%[[C0B]]] : tensor<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: arith.cmpf ogt, %[[RECENT]]
func.func @compute_scale_history(%h: tensor<16xf32>, %prev: f32) -> (f32, f32) {
  %m = fp8.compute_scale %h, %prev for f8E4M3FN : tensor<16xf32>
  %r = fp8.compute_scale %h, %prev for f8E4M3FN {algo = #fp8.amax_algo<most_recent>} : tensor<16xf32>
  return %m, %r : f32, f32
}

// -----

// CHECK-LABEL: func.func @record_and_roll
// CHECK-SAME: (%[[H:.+]]: tensor<4xf32>, %[[AMAX:.+]]: f32)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[ROW:.+]] = tensor.extract %[[H]][%[[C0]]]
// CHECK: %[[A1:.+]] = math.absf %[[ROW]]
// CHECK: %[[M1:.+]] = arith.maxnumf %{{.+}}, %[[A1]] : f32
// CHECK: %[[A2:.+]] = math.absf %[[AMAX]]
// CHECK: %[[M2:.+]] = arith.maxnumf %[[M1]], %[[A2]] : f32
// CHECK: %[[REC:.+]] = tensor.insert %[[M2]] into %[[H]][%[[C0]]]
// CHECK: %[[TAIL:.+]] = tensor.extract_slice %[[REC]][1] [3] [1] : tensor<4xf32> to tensor<3xf32>
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[SHIFTED:.+]] = tensor.insert_slice %[[TAIL]] into %[[EMPTY]][0] [3] [1]
// CHECK: %[[OLD0:.+]] = tensor.extract %[[REC]][%{{.+}}]
// CHECK: %[[C3:.+]] = arith.constant 3 : index
// CHECK: %[[BACK:.+]] = tensor.insert %[[OLD0]] into %[[SHIFTED]][%[[C3]]]
// CHECK: %[[ROLLED:.+]] = tensor.insert %{{.+}} into %[[BACK]][%{{.+}}]
// CHECK: return %[[REC]], %[[ROLLED]]
func.func @record_and_roll(%h: tensor<4xf32>, %amax: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = fp8.record_amax %h, %amax : tensor<4xf32>
  %o = fp8.roll_history %r : tensor<4xf32>
  return %r, %o : tensor<4xf32>, tensor<4xf32>
}

// -----

// A one-row history rolls to [0].
// CHECK-LABEL: func.func @roll_one
// CHECK-NOT: tensor.extract_slice
// CHECK: tensor.insert %{{.+}} into %{{.+}}[%{{.+}}] : tensor<1xf32>
func.func @roll_one(%h: tensor<1xf32>) -> tensor<1xf32> {
  %o = fp8.roll_history %h : tensor<1xf32>
  return %o : tensor<1xf32>
}

// -----

// The saturating cast: clamp (NaN kept), every NaN to 0x7FE00000, truncf.
// CHECK-LABEL: func.func @quantize
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf16>, %[[S:.+]]: f32)
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[D0]]) : tensor<?x8xf8E4M3FN>
// CHECK: %[[Q:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<?x8xf16>) outs(%[[EMPTY]] : tensor<?x8xf8E4M3FN>)
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f8E4M3FN):
// CHECK:   %[[W:.+]] = arith.extf %[[IN]] : f16 to f32
// CHECK:   %[[P:.+]] = arith.mulf %[[W]], %[[S]] : f32
// CHECK-DAG: %[[NMAX:.+]] = arith.constant -4.480000e+02 : f32
// CHECK-DAG: %[[MAX:.+]] = arith.constant 4.480000e+02 : f32
// CHECK:   %[[LO:.+]] = arith.minimumf %[[P]], %[[MAX]] : f32
// CHECK:   %[[CL:.+]] = arith.maximumf %[[LO]], %[[NMAX]] : f32
// CHECK:   %[[ISNAN:.+]] = arith.cmpf uno, %[[P]], %[[P]] : f32
// CHECK:   %[[NAN:.+]] = arith.constant 0x7FE00000 : f32
// CHECK:   %[[SEL:.+]] = arith.select %[[ISNAN]], %[[NAN]], %[[CL]] : f32
// CHECK:   %[[T:.+]] = arith.truncf %[[SEL]] : f32 to f8E4M3FN
// CHECK:   linalg.yield %[[T]] : f8E4M3FN
// The amax result is a separate reduction over the input.
// CHECK: %[[RED:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?x8xf16>)
// CHECK: %[[AMAX:.+]] = tensor.extract %[[RED]][]
// CHECK: return %[[Q]], %[[AMAX]]
// CHECK-NOT: fp8.
func.func @quantize(%x: tensor<?x8xf16>, %s: f32) -> (tensor<?x8xf8E4M3FN>, f32) {
  %q, %a = fp8.quantize %x, %s : tensor<?x8xf16> -> tensor<?x8xf8E4M3FN>, f32
  return %q, %a : tensor<?x8xf8E4M3FN>, f32
}

// -----

// CHECK-LABEL: func.func @quantize_e5m2
// CHECK: arith.constant 5.734400e+04 : f32
// CHECK: arith.constant -5.734400e+04 : f32
// CHECK: arith.truncf %{{.+}} : f32 to f8E5M2
func.func @quantize_e5m2(%x: tensor<8xf32>, %s: f32) -> tensor<8xf8E5M2> {
  %q = fp8.quantize %x, %s : tensor<8xf32> -> tensor<8xf8E5M2>
  return %q : tensor<8xf8E5M2>
}

// -----

// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: (%[[Q:.+]]: tensor<4x?xf8E5M2>, %[[S:.+]]: f32)
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[D1:.+]] = tensor.dim %[[Q]], %[[C1]]
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[D1]]) : tensor<4x?xbf16>
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[Q]] : tensor<4x?xf8E5M2>) outs(%[[EMPTY]] : tensor<4x?xbf16>)
// CHECK: ^bb0(%[[IN:.+]]: f8E5M2, %{{.+}}: bf16):
// CHECK:   %[[W:.+]] = arith.extf %[[IN]] : f8E5M2 to f32
// CHECK:   %[[P:.+]] = arith.mulf %[[W]], %[[S]] : f32
// To bf16 with integer ops, nearest even (subnormals kept, NaN quiet):
// bits + 0x7FFF + bit 16, then the high half; a NaN keeps its top half | 0x40.
// CHECK:   %[[B:.+]] = arith.bitcast %[[P]] : f32 to i32
// CHECK:   %[[C16:.+]] = arith.constant 16 : i32
// CHECK:   %[[HI:.+]] = arith.shrui %[[B]], %[[C16]] : i32
// CHECK:   %[[LSB:.+]] = arith.andi %[[HI]], %{{.+}} : i32
// CHECK:   %[[C7FFF:.+]] = arith.constant 32767 : i32
// CHECK:   %[[BIAS:.+]] = arith.addi %[[C7FFF]], %[[LSB]] : i32
// CHECK:   %[[SUM:.+]] = arith.addi %[[B]], %[[BIAS]] : i32
// CHECK:   %[[RND:.+]] = arith.shrui %[[SUM]], %[[C16]] : i32
// CHECK:   %[[C40:.+]] = arith.constant 64 : i32
// CHECK:   %[[QNAN:.+]] = arith.ori %{{.+}}, %[[C40]] : i32
// CHECK:   %[[ISNAN:.+]] = arith.cmpf uno, %[[P]], %[[P]] : f32
// CHECK:   %[[SEL:.+]] = arith.select %[[ISNAN]], %[[QNAN]], %[[RND]] : i32
// CHECK:   %[[H:.+]] = arith.trunci %[[SEL]] : i32 to i16
// CHECK:   %[[N:.+]] = arith.bitcast %[[H]] : i16 to bf16
// CHECK:   linalg.yield %[[N]] : bf16
// CHECK: return %[[R]]
func.func @dequantize(%q: tensor<4x?xf8E5M2>, %s: f32) -> tensor<4x?xbf16> {
  %x = fp8.dequantize %q, %s : tensor<4x?xf8E5M2> -> tensor<4x?xbf16>
  return %x : tensor<4x?xbf16>
}

// -----

// One generic writes both layouts.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[TR:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @cast_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<?x64xbf16>, %[[S:.+]]: f32)
// CHECK: %[[D0:.+]] = tensor.dim %[[X]], %{{.+}}
// CHECK: %[[E:.+]] = tensor.empty(%[[D0]]) : tensor<?x64xf8E4M3FN>
// CHECK: %[[ET:.+]] = tensor.empty(%[[D0]]) : tensor<64x?xf8E4M3FN>
// CHECK: %[[R:.+]]:2 = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[TR]]]
// CHECK-SAME: ins(%[[X]] : tensor<?x64xbf16>) outs(%[[E]], %[[ET]] : tensor<?x64xf8E4M3FN>, tensor<64x?xf8E4M3FN>)
// CHECK:   %[[T:.+]] = arith.truncf %{{.+}} : f32 to f8E4M3FN
// CHECK:   linalg.yield %[[T]], %[[T]] : f8E4M3FN, f8E4M3FN
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @cast_transpose(%x: tensor<?x64xbf16>, %s: f32) -> (tensor<?x64xf8E4M3FN>, tensor<64x?xf8E4M3FN>) {
  %q, %qt = fp8.cast_transpose %x, %s : tensor<?x64xbf16> -> tensor<?x64xf8E4M3FN>, tensor<64x?xf8E4M3FN>
  return %q, %qt : tensor<?x64xf8E4M3FN>, tensor<64x?xf8E4M3FN>
}

// -----

// TN GEMM with bias and result amax: each operand decoded to f32 once, f32
// accumulation from 0, then acc * (sa * sb) + bias, rounded to bf16.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @scaled_matmul
// CHECK-SAME: (%[[A:.+]]: tensor<?x32xf8E4M3FN>, %[[B:.+]]: tensor<16x32xf8E5M2>, %[[SA:.+]]: f32, %[[SB:.+]]: f32, %[[BIAS_V:.+]]: tensor<16xbf16>)
// CHECK: %[[AF:.+]] = linalg.generic
// CHECK-SAME: ins(%[[A]] : tensor<?x32xf8E4M3FN>) outs(%{{.+}} : tensor<?x32xf32>)
// CHECK:   arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: %[[BF:.+]] = linalg.generic
// CHECK-SAME: ins(%[[B]] : tensor<16x32xf8E5M2>) outs(%{{.+}} : tensor<16x32xf32>)
// CHECK:   arith.extf %{{.+}} : f8E5M2 to f32
// CHECK: %[[M:.+]] = tensor.dim %[[AF]], %{{.+}}
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.+]] = tensor.empty(%[[M]]) : tensor<?x16xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<?x16xf32>)
// CHECK: %[[ACCV:.+]] = linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[ACC]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[AF]], %[[BF]] : tensor<?x32xf32>, tensor<16x32xf32>) outs(%[[INIT]] : tensor<?x16xf32>)
// CHECK: ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %[[O:.+]]: f32):
// CHECK-NOT: arith.extf
// CHECK:   %[[P:.+]] = arith.mulf %[[L]], %[[R]] : f32
// CHECK:   %[[SUM:.+]] = arith.addf %[[O]], %[[P]] : f32
// CHECK:   linalg.yield %[[SUM]] : f32
// CHECK: %[[SCALE:.+]] = arith.mulf %[[SA]], %[[SB]] : f32
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #{{.+}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[ACCV]], %[[BIAS_V]] : tensor<?x16xf32>, tensor<16xbf16>)
// CHECK: ^bb0(%[[AV:.+]]: f32, %[[BV:.+]]: bf16, %{{.+}}: bf16):
// CHECK:   %[[SC:.+]] = arith.mulf %[[AV]], %[[SCALE]] : f32
// CHECK:   %[[BW:.+]] = arith.extf %[[BV]] : bf16 to f32
// CHECK:   %[[ADD:.+]] = arith.addf %[[SC]], %[[BW]] : f32
// Rounded to bf16 with integer ops, as in @dequantize.
// CHECK:   arith.bitcast %[[ADD]] : f32 to i32
// CHECK:   %[[N:.+]] = arith.bitcast %{{.+}} : i16 to bf16
// CHECK: %[[RED:.+]] = linalg.generic
// CHECK-SAME: ins(%[[OUT]] : tensor<?x16xbf16>)
// CHECK: %[[AMAX:.+]] = tensor.extract %[[RED]][]
// CHECK: return %[[OUT]], %[[AMAX]]
// CHECK-NOT: fp8.
func.func @scaled_matmul(%a: tensor<?x32xf8E4M3FN>, %b: tensor<16x32xf8E5M2>, %sa: f32, %sb: f32, %bias: tensor<16xbf16>) -> (tensor<?x16xbf16>, f32) {
  %y, %amax = fp8.scaled_matmul %a, %b scales %sa, %sb bias %bias : tensor<16xbf16> {transpose_rhs}
      : tensor<?x32xf8E4M3FN>, tensor<16x32xf8E5M2> -> tensor<?x16xbf16>, f32
  return %y, %amax : tensor<?x16xbf16>, f32
}

// -----

// Batched lhs stored [B, K, M] (transpose_lhs), rhs [K, N] shared by every
// batch: its map has no batch dimension.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[ACC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @scaled_matmul_batch
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[ACC]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<2x8x16xf32>)
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @scaled_matmul_batch(%a: tensor<2x32x8xf8E4M3FN>, %b: tensor<32x16xf8E4M3FN>, %sa: f32, %sb: f32) -> tensor<2x8x16xf32> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb {transpose_lhs}
      : tensor<2x32x8xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// Results only compatible with the input's shape (`?` against a static size)
// are built with the input's sizes and cast to the declared type.
// CHECK-LABEL: func.func @compatible_shapes
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32>, %[[Y:.+]]: tensor<8x4xf32>, %[[A:.+]]: tensor<8x32xf8E4M3FN>, %[[B:.+]]: tensor<32x16xf8E4M3FN>, %[[S:.+]]: f32)
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<?x4xf8E4M3FN>)
// CHECK: %[[QC:.+]] = tensor.cast %[[Q]] : tensor<?x4xf8E4M3FN> to tensor<4x4xf8E4M3FN>
// CHECK: %[[D:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x4xf32>)
// CHECK: %[[DC:.+]] = tensor.cast %[[D]] : tensor<4x4xf32> to tensor<?x?xf32>
// CHECK: %[[CT:.+]]:2 = linalg.generic {{.+}} outs(%{{.+}}, %{{.+}} : tensor<8x4xf8E4M3FN>, tensor<4x8xf8E4M3FN>)
// CHECK-DAG: %[[R:.+]] = tensor.cast %[[CT]]#0 : tensor<8x4xf8E4M3FN> to tensor<?x4xf8E4M3FN>
// CHECK-DAG: %[[T:.+]] = tensor.cast %[[CT]]#1 : tensor<4x8xf8E4M3FN> to tensor<4x?xf8E4M3FN>
// CHECK: %[[ACC:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<8x16xf32>)
// CHECK: %[[MM:.+]] = linalg.generic {{.+}} ins(%[[ACC]] : tensor<8x16xf32>) outs(%{{.+}} : tensor<8x16xf32>)
// CHECK: %[[MMC:.+]] = tensor.cast %[[MM]] : tensor<8x16xf32> to tensor<?x16xf32>
// CHECK: return %[[QC]], %[[DC]], %[[R]], %[[T]], %[[MMC]]
func.func @compatible_shapes(%x: tensor<?x4xf32>, %y: tensor<8x4xf32>,
                             %a: tensor<8x32xf8E4M3FN>,
                             %b: tensor<32x16xf8E4M3FN>, %s: f32)
    -> (tensor<4x4xf8E4M3FN>, tensor<?x?xf32>, tensor<?x4xf8E4M3FN>,
        tensor<4x?xf8E4M3FN>, tensor<?x16xf32>) {
  %q = fp8.quantize %x, %s : tensor<?x4xf32> -> tensor<4x4xf8E4M3FN>
  %d = fp8.dequantize %q, %s : tensor<4x4xf8E4M3FN> -> tensor<?x?xf32>
  %r, %t = fp8.cast_transpose %y, %s
      : tensor<8x4xf32> -> tensor<?x4xf8E4M3FN>, tensor<4x?xf8E4M3FN>
  %m = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<8x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<?x16xf32>
  return %q, %d, %r, %t, %m : tensor<4x4xf8E4M3FN>, tensor<?x?xf32>,
      tensor<?x4xf8E4M3FN>, tensor<4x?xf8E4M3FN>, tensor<?x16xf32>
}

// -----

// Per-block ops compute over a block view: the input padded with zeros to
// whole blocks (a gather, not tensor.pad) and split into (block, offset),
// so that a block's scale is reached by a projected permutation.

// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BLK:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @block_amax_and_quantize
// CHECK-SAME: (%[[X:.+]]: tensor<4x300xbf16>, %[[S:.+]]: tensor<4x3xf32>)
// CHECK: %[[PAD:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4x384xbf16>)
// CHECK: linalg.index 1
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : index
// CHECK: tensor.extract %[[X]]
// CHECK: %[[VIEW:.+]] = tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2]] output_shape [4, 3, 128]
// CHECK: linalg.generic {indexing_maps = [#[[ID3]], #[[BLK]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[VIEW]] : tensor<4x3x128xbf16>) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: math.absf
// CHECK: arith.maxnumf
// CHECK: %[[Q:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BLK]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.+}}, %[[S]] : tensor<4x3x128xbf16>, tensor<4x3xf32>) outs(%{{.+}} : tensor<4x3x128xf8E4M3FN>)
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.+}} : f32 to f8E4M3FN
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[Q]] {{\[}}[0], [1, 2]] : tensor<4x3x128xf8E4M3FN> into tensor<4x384xf8E4M3FN>
// CHECK: tensor.extract_slice %[[FLAT]][0, 0] [4, 300] [1, 1]
func.func @block_amax_and_quantize(%x: tensor<4x300xbf16>, %s: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<4x300xf8E4M3FN>) {
  %a = fp8.block_amax %x block [1, 128] : tensor<4x300xbf16> -> tensor<4x3xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<4x300xbf16> scales tensor<4x3xf32> -> tensor<4x300xf8E4M3FN>
  return %a, %q : tensor<4x3xf32>, tensor<4x300xf8E4M3FN>
}

// -----

// The block-scaled GEMM: a loop over the 128-deep K blocks, in order; in
// each, the block's partial sum from zero (a plain contraction over the K
// slice), then fma(partial, sa * sb, acc) element-wise, the weight's scale
// reached by n floordiv 128. Memory stays O(M N).

// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[SA:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[SB:.+]] = affine_map<(d0, d1) -> (d1 floordiv 128)>
// CHECK-LABEL: func.func @block_scaled_matmul
// CHECK-SAME: %[[SAV:[^:]+]]: tensor<16x2xf32>, %[[SBV:[^:]+]]: tensor<2x2xf32>
// CHECK: %[[ACC0:.+]] = linalg.fill {{.+}} -> tensor<16x200xf32>
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: scf.for %[[KB:[^ ]+]] = %{{[^ ]+}} to %[[C2]] step %{{[^ ]+}} iter_args(%[[ACC:[^ ]+]] = %[[ACC0]]) -> (tensor<16x200xf32>)
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: %[[K:.+]] = arith.muli %[[KB]], %[[C128]] : index
// CHECK: %[[A:.+]] = tensor.extract_slice %{{.+}}[0, %[[K]]] [16, 128] [1, 1] : tensor<16x256xf32> to tensor<16x128xf32>
// CHECK: %[[B:.+]] = tensor.extract_slice %{{.+}}[0, %[[K]]] [200, 128] [1, 1] : tensor<200x256xf32> to tensor<200x128xf32>
// CHECK: %[[PARTIAL:.+]] = linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] : {{.+}}) outs(%{{.+}} : tensor<16x200xf32>)
// The K block's scales: a slice that keeps its rank, then a collapse that
// names the dimension it drops (a rank-reducing slice of [1, M, 1] is
// ambiguous; docs/reliability.md B1).
// CHECK: %[[SAS:.+]] = tensor.extract_slice %[[SAV]][0, %[[KB]]] [16, 1] [1, 1] : tensor<16x2xf32> to tensor<16x1xf32>
// CHECK: %[[SAK:.+]] = tensor.collapse_shape %[[SAS]] {{\[}}[0, 1]] : tensor<16x1xf32> into tensor<16xf32>
// CHECK: %[[SBS:.+]] = tensor.extract_slice %[[SBV]][0, %[[KB]]] [2, 1] [1, 1] : tensor<2x2xf32> to tensor<2x1xf32>
// CHECK: %[[SBK:.+]] = tensor.collapse_shape %[[SBS]] {{\[}}[0, 1]] : tensor<2x1xf32> into tensor<2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[SA]], #[[SB]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PARTIAL]], %[[SAK]], %[[SBK]] : {{.+}}) outs(%[[ACC]] : tensor<16x200xf32>)
// CHECK: %[[SCALE:.+]] = arith.mulf
// CHECK: math.fma %{{.+}}, %[[SCALE]], %{{.+}} : f32
func.func @block_scaled_matmul(%a: tensor<16x256xf8E4M3FN>, %b: tensor<200x256xf8E4M3FN>,
                               %sa: tensor<16x2xf32>, %sb: tensor<2x2xf32>) -> tensor<16x200xbf16> {
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [128, 128] {transpose_rhs}
      : tensor<16x256xf8E4M3FN>, tensor<200x256xf8E4M3FN>
      scales tensor<16x2xf32>, tensor<2x2xf32> -> tensor<16x200xbf16>
  return %y : tensor<16x200xbf16>
}

// -----

// MX scales: the E8M0 code of scale_inv from integer operations on the
// bits of amax * (1 / 448) (0x3B124925), rounded up; the multiplier from
// 254 - code.

// CHECK-LABEL: func.func @mx_scales
// CHECK: linalg.generic {{.+}} outs(%{{.+}}, %{{.+}} : tensor<8x2xf32>, tensor<8x2xf8E8M0FNU>)
// CHECK: %[[V:.+]] = arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.bitcast %[[V]] : f32 to i32
// CHECK: arith.subi %{{.+}}, %{{.+}} : i32
// CHECK: arith.bitcast %{{.+}} : i8 to f8E8M0FNU
func.func @mx_scales(%a: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xf8E8M0FNU>) {
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<8x2xf32> -> tensor<8x2xf32>, tensor<8x2xf8E8M0FNU>
  return %s, %si : tensor<8x2xf32>, tensor<8x2xf8E8M0FNU>
}
