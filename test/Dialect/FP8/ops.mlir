// RUN: fp8-opt %s -split-input-file | fp8-opt -split-input-file | FileCheck %s
// RUN: fp8-opt %s -split-input-file -mlir-print-op-generic | fp8-opt -split-input-file | FileCheck %s

// Round trip of every op and attribute form, through the custom and the
// generic syntax.

// CHECK-LABEL: func.func @amax
// CHECK-SAME: (%[[F32:.+]]: tensor<128x64xf32>, %[[BF16:.+]]: tensor<?x4096xbf16>, %[[F16:.+]]: tensor<8xf16>)
// CHECK: %[[A:.+]] = fp8.amax %[[F32]] : tensor<128x64xf32>
// CHECK: %[[B:.+]] = fp8.amax %[[BF16]] : tensor<?x4096xbf16>
// CHECK: %[[C:.+]] = fp8.amax %[[F16]] : tensor<8xf16>
// CHECK: return %[[A]], %[[B]], %[[C]] : f32, f32, f32
func.func @amax(%x: tensor<128x64xf32>, %y: tensor<?x4096xbf16>,
                %z: tensor<8xf16>) -> (f32, f32, f32) {
  %a = fp8.amax %x : tensor<128x64xf32>
  %b = fp8.amax %y : tensor<?x4096xbf16>
  %c = fp8.amax %z : tensor<8xf16>
  return %a, %b, %c : f32, f32, f32
}

// -----

// CHECK-LABEL: func.func @compute_scale
// CHECK-SAME: (%[[AMAX:.+]]: f32, %[[HIST:.+]]: tensor<16xf32>, %[[PREV:.+]]: f32)
// CHECK: fp8.compute_scale %[[AMAX]] for f8E4M3FN : f32
// CHECK: fp8.compute_scale %[[AMAX]] for f8E5M2 {epsilon = 9.99999996E-13 : f32, power_of_two} : f32
// CHECK: fp8.compute_scale %[[AMAX]], %[[PREV]] for f8E4M3FN {margin = 2 : i32} : f32
// CHECK: fp8.compute_scale %[[HIST]], %[[PREV]] for f8E4M3FN : tensor<16xf32>
// CHECK: fp8.compute_scale %[[HIST]], %[[PREV]] for f8E5M2 {algo = #fp8.amax_algo<most_recent>, margin = 1 : i32, power_of_two} : tensor<16xf32>
// CHECK: fp8.compute_scale %[[HIST]] for f8E4M3FN {algo = #fp8.amax_algo<most_recent>, epsilon = 0.00999999977 : f32} : tensor<16xf32>
func.func @compute_scale(%amax: f32, %history: tensor<16xf32>, %prev: f32)
    -> (f32, f32, f32, f32, f32, f32) {
  %0 = fp8.compute_scale %amax for f8E4M3FN : f32
  %1 = fp8.compute_scale %amax for f8E5M2 {power_of_two, epsilon = 1.0e-12 : f32} : f32
  %2 = fp8.compute_scale %amax, %prev for f8E4M3FN {margin = 2 : i32} : f32
  %3 = fp8.compute_scale %history, %prev for f8E4M3FN : tensor<16xf32>
  %4 = fp8.compute_scale %history, %prev for f8E5M2
      {algo = #fp8.amax_algo<most_recent>, margin = 1 : i32, power_of_two}
      : tensor<16xf32>
  %5 = fp8.compute_scale %history for f8E4M3FN
      {algo = #fp8.amax_algo<most_recent>, epsilon = 0.01 : f32}
      : tensor<16xf32>
  return %0, %1, %2, %3, %4, %5 : f32, f32, f32, f32, f32, f32
}

// -----

// Defaults are elided: algo = max, margin = 0, epsilon = 0.

// CHECK-LABEL: func.func @compute_scale_defaults
// CHECK: fp8.compute_scale %{{.+}} for f8E4M3FN : tensor<4xf32>{{$}}
func.func @compute_scale_defaults(%history: tensor<4xf32>) -> f32 {
  %0 = fp8.compute_scale %history for f8E4M3FN
      {algo = #fp8.amax_algo<max>, margin = 0 : i32, epsilon = 0.0 : f32}
      : tensor<4xf32>
  return %0 : f32
}

// -----

// CHECK-LABEL: func.func @history
// CHECK-SAME: (%[[HIST:.+]]: tensor<1024xf32>, %[[AMAX:.+]]: f32)
// CHECK: %[[REC:.+]] = fp8.record_amax %[[HIST]], %[[AMAX]] : tensor<1024xf32>
// CHECK: %[[ROLL:.+]] = fp8.roll_history %[[REC]] : tensor<1024xf32>
// CHECK: return %[[ROLL]]
func.func @history(%history: tensor<1024xf32>, %amax: f32) -> tensor<1024xf32> {
  %0 = fp8.record_amax %history, %amax : tensor<1024xf32>
  %1 = fp8.roll_history %0 : tensor<1024xf32>
  return %1 : tensor<1024xf32>
}

// -----

// CHECK-LABEL: func.func @quantize
// CHECK-SAME: (%[[X:.+]]: tensor<64x64xf32>, %[[Y:.+]]: tensor<?x?xbf16>, %[[Z:.+]]: tensor<8xf16>, %[[S:.+]]: f32)
// CHECK: %[[Q0:.+]] = fp8.quantize %[[X]], %[[S]] : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
// CHECK: %[[Q1:.+]], %[[A1:.+]] = fp8.quantize %[[X]], %[[S]] : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>, f32
// CHECK: %[[Q2:.+]] = fp8.quantize %[[Y]], %[[S]] : tensor<?x?xbf16> -> tensor<?x?xf8E5M2>
// CHECK: %[[Q3:.+]], %[[A3:.+]] = fp8.quantize %[[Z]], %[[S]] : tensor<8xf16> -> tensor<8xf8E5M2>, f32
// CHECK: return %[[Q0]], %[[Q1]], %[[A1]], %[[Q2]], %[[Q3]], %[[A3]]
func.func @quantize(%x: tensor<64x64xf32>, %y: tensor<?x?xbf16>,
                    %z: tensor<8xf16>, %s: f32)
    -> (tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, f32,
        tensor<?x?xf8E5M2>, tensor<8xf8E5M2>, f32) {
  %q0 = fp8.quantize %x, %s : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
  %q1, %a1 = fp8.quantize %x, %s
      : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>, f32
  %q2 = fp8.quantize %y, %s : tensor<?x?xbf16> -> tensor<?x?xf8E5M2>
  %q3, %a3 = fp8.quantize %z, %s : tensor<8xf16> -> tensor<8xf8E5M2>, f32
  return %q0, %q1, %a1, %q2, %q3, %a3
      : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, f32,
        tensor<?x?xf8E5M2>, tensor<8xf8E5M2>, f32
}

// -----

// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: (%[[Q:.+]]: tensor<64x64xf8E4M3FN>, %[[G:.+]]: tensor<?x32xf8E5M2>, %[[S:.+]]: f32)
// CHECK: fp8.dequantize %[[Q]], %[[S]] : tensor<64x64xf8E4M3FN> -> tensor<64x64xbf16>
// CHECK: fp8.dequantize %[[Q]], %[[S]] : tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
// CHECK: fp8.dequantize %[[G]], %[[S]] : tensor<?x32xf8E5M2> -> tensor<?x32xf16>
func.func @dequantize(%q: tensor<64x64xf8E4M3FN>, %g: tensor<?x32xf8E5M2>,
                      %s: f32)
    -> (tensor<64x64xbf16>, tensor<64x64xf32>, tensor<?x32xf16>) {
  %0 = fp8.dequantize %q, %s : tensor<64x64xf8E4M3FN> -> tensor<64x64xbf16>
  %1 = fp8.dequantize %q, %s : tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
  %2 = fp8.dequantize %g, %s : tensor<?x32xf8E5M2> -> tensor<?x32xf16>
  return %0, %1, %2 : tensor<64x64xbf16>, tensor<64x64xf32>, tensor<?x32xf16>
}

// -----

// CHECK-LABEL: func.func @cast_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<128x64xbf16>, %[[D:.+]]: tensor<?x64xf32>, %[[S:.+]]: f32)
// CHECK: %[[R0:.+]], %[[T0:.+]] = fp8.cast_transpose %[[X]], %[[S]] : tensor<128x64xbf16> -> tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>
// CHECK: %[[R1:.+]], %[[T1:.+]], %[[A1:.+]] = fp8.cast_transpose %[[D]], %[[S]] : tensor<?x64xf32> -> tensor<?x64xf8E5M2>, tensor<64x?xf8E5M2>, f32
// CHECK: return %[[R0]], %[[T0]], %[[R1]], %[[T1]], %[[A1]]
func.func @cast_transpose(%x: tensor<128x64xbf16>, %d: tensor<?x64xf32>,
                          %s: f32)
    -> (tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>,
        tensor<?x64xf8E5M2>, tensor<64x?xf8E5M2>, f32) {
  %r0, %t0 = fp8.cast_transpose %x, %s
      : tensor<128x64xbf16> -> tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>
  %r1, %t1, %a1 = fp8.cast_transpose %d, %s
      : tensor<?x64xf32> -> tensor<?x64xf8E5M2>, tensor<64x?xf8E5M2>, f32
  return %r0, %t0, %r1, %t1, %a1
      : tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>,
        tensor<?x64xf8E5M2>, tensor<64x?xf8E5M2>, f32
}

// -----

// CHECK-LABEL: func.func @scaled_matmul_2d
// CHECK-SAME: (%[[A:.+]]: tensor<128x256xf8E4M3FN>, %[[B:.+]]: tensor<256x64xf8E4M3FN>, %[[SA:.+]]: f32, %[[SB:.+]]: f32)
// CHECK: fp8.scaled_matmul %[[A]], %[[B]] scales %[[SA]], %[[SB]] : tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xf32>
// CHECK: fp8.scaled_matmul %[[A]], %[[B]] scales %[[SA]], %[[SB]] {accumulator_type = f32} : tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xbf16>
// CHECK: %[[R:.+]], %[[RA:.+]] = fp8.scaled_matmul %[[A]], %[[B]] scales %[[SA]], %[[SB]] : tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xf16>, f32
// CHECK: return {{.*}}%[[R]], %[[RA]]
func.func @scaled_matmul_2d(%a: tensor<128x256xf8E4M3FN>,
                            %b: tensor<256x64xf8E4M3FN>, %sa: f32, %sb: f32)
    -> (tensor<128x64xf32>, tensor<128x64xbf16>, tensor<128x64xf16>, f32) {
  %0 = fp8.scaled_matmul %a, %b scales %sa, %sb
      : tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xf32>
  %1 = fp8.scaled_matmul %a, %b scales %sa, %sb {accumulator_type = f32}
      : tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xbf16>
  %2, %amax = fp8.scaled_matmul %a, %b scales %sa, %sb
      : tensor<128x256xf8E4M3FN>, tensor<256x64xf8E4M3FN>
      -> tensor<128x64xf16>, f32
  return %0, %1, %2, %amax
      : tensor<128x64xf32>, tensor<128x64xbf16>, tensor<128x64xf16>, f32
}

// -----

// Transpose flags: lhs [K, M] with transpose_lhs, rhs [N, K] with
// transpose_rhs (the TN layout).

// CHECK-LABEL: func.func @scaled_matmul_transposes
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} {transpose_lhs} : tensor<256x128xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xbf16>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} {transpose_rhs} : tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN> -> tensor<128x64xbf16>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} {transpose_lhs, transpose_rhs} : tensor<256x128xf8E4M3FN>, tensor<64x256xf8E4M3FN> -> tensor<128x64xbf16>
func.func @scaled_matmul_transposes(
    %a: tensor<128x256xf8E4M3FN>, %at: tensor<256x128xf8E4M3FN>,
    %b: tensor<256x64xf8E4M3FN>, %bt: tensor<64x256xf8E4M3FN>,
    %s: f32) -> (tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>) {
  %0 = fp8.scaled_matmul %at, %b scales %s, %s {transpose_lhs}
      : tensor<256x128xf8E4M3FN>, tensor<256x64xf8E4M3FN> -> tensor<128x64xbf16>
  %1 = fp8.scaled_matmul %a, %bt scales %s, %s {transpose_rhs}
      : tensor<128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN> -> tensor<128x64xbf16>
  %2 = fp8.scaled_matmul %at, %bt scales %s, %s {transpose_lhs, transpose_rhs}
      : tensor<256x128xf8E4M3FN>, tensor<64x256xf8E4M3FN> -> tensor<128x64xbf16>
  return %0, %1, %2 : tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>
}

// -----

// Bias of the result element type or f32, with and without result amax.

// CHECK-LABEL: func.func @scaled_matmul_bias
// CHECK-SAME: (%[[A:.+]]: tensor<16x32xf8E4M3FN>, %[[B:.+]]: tensor<8x32xf8E4M3FN>, %[[S:.+]]: f32, %[[BF:.+]]: tensor<8xf32>, %[[BB:.+]]: tensor<8xbf16>)
// CHECK: fp8.scaled_matmul %[[A]], %[[B]] scales %[[S]], %[[S]] bias %[[BF]] : tensor<8xf32> {transpose_rhs} : tensor<16x32xf8E4M3FN>, tensor<8x32xf8E4M3FN> -> tensor<16x8xbf16>
// CHECK: fp8.scaled_matmul %[[A]], %[[B]] scales %[[S]], %[[S]] bias %[[BB]] : tensor<8xbf16> {accumulator_type = f32, transpose_rhs} : tensor<16x32xf8E4M3FN>, tensor<8x32xf8E4M3FN> -> tensor<16x8xbf16>, f32
func.func @scaled_matmul_bias(%a: tensor<16x32xf8E4M3FN>,
                              %b: tensor<8x32xf8E4M3FN>, %s: f32,
                              %bf: tensor<8xf32>, %bb: tensor<8xbf16>)
    -> (tensor<16x8xbf16>, tensor<16x8xbf16>, f32) {
  %0 = fp8.scaled_matmul %a, %b scales %s, %s bias %bf : tensor<8xf32>
      {transpose_rhs}
      : tensor<16x32xf8E4M3FN>, tensor<8x32xf8E4M3FN> -> tensor<16x8xbf16>
  %1, %amax = fp8.scaled_matmul %a, %b scales %s, %s bias %bb : tensor<8xbf16>
      {transpose_rhs, accumulator_type = f32}
      : tensor<16x32xf8E4M3FN>, tensor<8x32xf8E4M3FN> -> tensor<16x8xbf16>, f32
  return %0, %1, %amax : tensor<16x8xbf16>, tensor<16x8xbf16>, f32
}

// -----

// Batch dimensions, a rank-2 rhs shared across the batch, and dynamic sizes.

// CHECK-LABEL: func.func @scaled_matmul_batch
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<4x128x256xf8E4M3FN>, tensor<4x256x64xf8E4M3FN> -> tensor<4x128x64xf32>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} {transpose_rhs} : tensor<4x128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN> -> tensor<4x128x64xbf16>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<2x3x8x16xf8E4M3FN>, tensor<2x3x16x4xf8E4M3FN> -> tensor<2x3x8x4xf32>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<?x?x?xf8E4M3FN>, tensor<?x64xf8E4M3FN> -> tensor<?x?x64xbf16>
func.func @scaled_matmul_batch(
    %a: tensor<4x128x256xf8E4M3FN>, %b: tensor<4x256x64xf8E4M3FN>,
    %w: tensor<64x256xf8E4M3FN>, %c: tensor<2x3x8x16xf8E4M3FN>,
    %d: tensor<2x3x16x4xf8E4M3FN>, %e: tensor<?x?x?xf8E4M3FN>,
    %f: tensor<?x64xf8E4M3FN>, %s: f32)
    -> (tensor<4x128x64xf32>, tensor<4x128x64xbf16>, tensor<2x3x8x4xf32>,
        tensor<?x?x64xbf16>) {
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<4x128x256xf8E4M3FN>, tensor<4x256x64xf8E4M3FN>
      -> tensor<4x128x64xf32>
  %1 = fp8.scaled_matmul %a, %w scales %s, %s {transpose_rhs}
      : tensor<4x128x256xf8E4M3FN>, tensor<64x256xf8E4M3FN>
      -> tensor<4x128x64xbf16>
  %2 = fp8.scaled_matmul %c, %d scales %s, %s
      : tensor<2x3x8x16xf8E4M3FN>, tensor<2x3x16x4xf8E4M3FN>
      -> tensor<2x3x8x4xf32>
  %3 = fp8.scaled_matmul %e, %f scales %s, %s
      : tensor<?x?x?xf8E4M3FN>, tensor<?x64xf8E4M3FN> -> tensor<?x?x64xbf16>
  return %0, %1, %2, %3 : tensor<4x128x64xf32>, tensor<4x128x64xbf16>,
      tensor<2x3x8x4xf32>, tensor<?x?x64xbf16>
}

// -----

// Mixed formats: E5M2 gradients times E4M3 activations, both ways.

// CHECK-LABEL: func.func @scaled_matmul_mixed
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<64x32xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<64x16xbf16>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} {transpose_lhs} : tensor<32x64xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<64x16xf32>
func.func @scaled_matmul_mixed(%g: tensor<64x32xf8E5M2>,
                               %x: tensor<32x16xf8E4M3FN>,
                               %xt: tensor<32x64xf8E4M3FN>,
                               %g2: tensor<32x16xf8E5M2>, %s: f32)
    -> (tensor<64x16xbf16>, tensor<64x16xf32>) {
  %0 = fp8.scaled_matmul %g, %x scales %s, %s
      : tensor<64x32xf8E5M2>, tensor<32x16xf8E4M3FN> -> tensor<64x16xbf16>
  %1 = fp8.scaled_matmul %xt, %g2 scales %s, %s {transpose_lhs}
      : tensor<32x64xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<64x16xf32>
  return %0, %1 : tensor<64x16xbf16>, tensor<64x16xf32>
}

// -----

// The recipe attribute with every field, with defaults (elided when
// printed), and the enum attributes on their own.

// CHECK-LABEL: func.func @recipes
// CHECK-SAME: test.all = #fp8.recipe<format = e4m3, scaling = current, history = 16, algo = most_recent, margin = 2, power_of_two = true>
// CHECK-SAME: test.default = #fp8.recipe<>
// CHECK-SAME: test.explicit_defaults = #fp8.recipe<>
// CHECK-SAME: test.partial = #fp8.recipe<history = 16>
// CHECK-SAME: test.wide_margin = #fp8.recipe<margin = 127>
func.func @recipes() attributes {
    test.all = #fp8.recipe<format = e4m3, scaling = current, history = 16,
                          algo = most_recent, margin = 2, power_of_two = true>,
    test.default = #fp8.recipe<>,
    test.explicit_defaults = #fp8.recipe<format = hybrid, scaling = delayed,
                                        history = 1024, algo = max, margin = 0,
                                        power_of_two = false>,
    test.partial = #fp8.recipe<scaling = delayed, history = 16>,
    test.wide_margin = #fp8.recipe<margin = 127>} {
  return
}

// -----

// CHECK-LABEL: func.func @enums
// CHECK-SAME: a0 = #fp8.format<hybrid>
// CHECK-SAME: a1 = #fp8.format<e4m3>
// CHECK-SAME: a2 = #fp8.scaling<delayed>
// CHECK-SAME: a3 = #fp8.scaling<current>
// CHECK-SAME: a4 = #fp8.amax_algo<max>
// CHECK-SAME: a5 = #fp8.amax_algo<most_recent>
func.func @enums() attributes {
    a0 = #fp8.format<hybrid>, a1 = #fp8.format<e4m3>,
    a2 = #fp8.scaling<delayed>, a3 = #fp8.scaling<current>,
    a4 = #fp8.amax_algo<max>, a5 = #fp8.amax_algo<most_recent>} {
  return
}

// -----

// A recipe on the module, as the passes read it.

// CHECK: module attributes {fp8.recipe = #fp8.recipe<scaling = current, history = 1>}
// CHECK-LABEL: func.func @module_recipe
module attributes {fp8.recipe = #fp8.recipe<scaling = current, history = 1>} {
  func.func @module_recipe() {
    return
  }
}

// -----

// Per-block forms: rows, 1x128 / 128x128 blocks (partial last ones), MX.

// CHECK-LABEL: func.func @block_scaling
// CHECK: %[[A:.+]] = fp8.block_amax %{{.+}} block [1, 128] : tensor<64x300xbf16> -> tensor<64x3xf32>
// CHECK: %[[S:.+]], %[[SI:.+]] = fp8.compute_block_scales %[[A]] for f8E4M3FN {power_of_two} : tensor<64x3xf32> -> tensor<64x3xf32>, tensor<64x3xf32>
// CHECK: %[[Q:.+]] = fp8.quantize %{{.+}}, %[[S]] block [1, 128] : tensor<64x300xbf16> scales tensor<64x3xf32> -> tensor<64x300xf8E4M3FN>
// CHECK: %[[WA:.+]] = fp8.block_amax %{{.+}} block [128, 128] : tensor<200x300xf32> -> tensor<2x3xf32>
// CHECK: %[[WS:.+]], %[[WSI:.+]] = fp8.compute_block_scales %[[WA]] for f8E4M3FN : tensor<2x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: %[[WQ:.+]] = fp8.quantize %{{.+}}, %[[WS]] block [128, 128] : tensor<200x300xf32> scales tensor<2x3xf32> -> tensor<200x300xf8E4M3FN>
// CHECK: fp8.scaled_matmul %[[Q]], %[[WQ]] scales %[[SI]], %[[WSI]] blocks [1, 128], [128, 128] {transpose_rhs} : tensor<64x300xf8E4M3FN>, tensor<200x300xf8E4M3FN> scales tensor<64x3xf32>, tensor<2x3xf32> -> tensor<64x200xbf16>
// CHECK: fp8.dequantize %[[Q]], %[[SI]] block [1, 128] : tensor<64x300xf8E4M3FN> scales tensor<64x3xf32> -> tensor<64x300xf32>
func.func @block_scaling(%x: tensor<64x300xbf16>, %w: tensor<200x300xf32>)
    -> (tensor<64x200xbf16>, tensor<64x300xf32>) {
  %a = fp8.block_amax %x block [1, 128] : tensor<64x300xbf16> -> tensor<64x3xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<64x3xf32> -> tensor<64x3xf32>, tensor<64x3xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<64x300xbf16> scales tensor<64x3xf32> -> tensor<64x300xf8E4M3FN>
  %wa = fp8.block_amax %w block [128, 128] : tensor<200x300xf32> -> tensor<2x3xf32>
  %ws, %wsi = fp8.compute_block_scales %wa for f8E4M3FN
      : tensor<2x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  %wq = fp8.quantize %w, %ws block [128, 128]
      : tensor<200x300xf32> scales tensor<2x3xf32> -> tensor<200x300xf8E4M3FN>
  %y = fp8.scaled_matmul %q, %wq scales %si, %wsi blocks [1, 128], [128, 128]
      {transpose_rhs} : tensor<64x300xf8E4M3FN>, tensor<200x300xf8E4M3FN>
      scales tensor<64x3xf32>, tensor<2x3xf32> -> tensor<64x200xbf16>
  %d = fp8.dequantize %q, %si block [1, 128]
      : tensor<64x300xf8E4M3FN> scales tensor<64x3xf32> -> tensor<64x300xf32>
  return %y, %d : tensor<64x200xbf16>, tensor<64x300xf32>
}

// -----

// CHECK-LABEL: func.func @mx
// CHECK: fp8.compute_block_scales %{{.+}} for f8E4M3FN : tensor<16x2xf32> -> tensor<16x2xf32>, tensor<16x2xf8E8M0FNU>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 32], [32, 1] : tensor<16x64xf8E4M3FN>, tensor<64x32xf8E4M3FN> scales tensor<16x2xf8E8M0FNU>, tensor<2x32xf8E8M0FNU> -> tensor<16x32xf32>
// CHECK: fp8.dequantize %{{.+}}, %{{.+}} block [1, 32] : tensor<16x64xf8E4M3FN> scales tensor<16x2xf8E8M0FNU> -> tensor<16x64xbf16>
func.func @mx(%a: tensor<16x2xf32>, %x: tensor<16x64xf8E4M3FN>,
              %w: tensor<64x32xf8E4M3FN>, %ws: tensor<2x32xf8E8M0FNU>)
    -> (tensor<16x2xf32>, tensor<16x32xf32>, tensor<16x64xbf16>) {
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<16x2xf32> -> tensor<16x2xf32>, tensor<16x2xf8E8M0FNU>
  %y = fp8.scaled_matmul %x, %w scales %si, %ws blocks [1, 32], [32, 1]
      : tensor<16x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>
      scales tensor<16x2xf8E8M0FNU>, tensor<2x32xf8E8M0FNU> -> tensor<16x32xf32>
  %d = fp8.dequantize %x, %si block [1, 32]
      : tensor<16x64xf8E4M3FN> scales tensor<16x2xf8E8M0FNU> -> tensor<16x64xbf16>
  return %s, %y, %d : tensor<16x2xf32>, tensor<16x32xf32>, tensor<16x64xbf16>
}

// -----

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<1x8x16x64xbf16>, %[[K:.+]]: tensor<1x2x16x64xbf16>, %[[V:.+]]: tensor<1x2x16x32xbf16>, %[[M:.+]]: tensor<1x1x16x16xf32>, %[[B:.+]]: tensor<1x1x1x16xi1>)
// CHECK: %[[O:.+]] = fp8.attention %[[Q]], %[[K]], %[[V]] scale 1.250000e-01 {causal} : tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x32xbf16> -> tensor<1x8x16x32xbf16>
// CHECK: %{{.+}}, %{{.+}} = fp8.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] : tensor<1x1x16x16xf32> scale 1.000000e+00 : tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x32xbf16> -> tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>
// CHECK: fp8.attention %[[Q]], %[[K]], %[[V]] mask %[[B]] : tensor<1x1x1x16xi1> scale 5.000000e-01 {causal, causal_offset = 4 : i64} : tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x32xbf16> -> tensor<1x8x16x32xbf16>
func.func @attention(%q: tensor<1x8x16x64xbf16>, %k: tensor<1x2x16x64xbf16>,
                     %v: tensor<1x2x16x32xbf16>, %m: tensor<1x1x16x16xf32>,
                     %keep: tensor<1x1x1x16xi1>)
    -> (tensor<1x8x16x32xbf16>, tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>,
        tensor<1x8x16x32xbf16>) {
  %o = fp8.attention %q, %k, %v scale 0.125 {causal}
      : tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x32xbf16>
      -> tensor<1x8x16x32xbf16>
  %o2, %lse = fp8.attention %q, %k, %v mask %m : tensor<1x1x16x16xf32> scale 1.0
      : tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x32xbf16>
      -> tensor<1x8x16x32xbf16>, tensor<1x8x16xf32>
  %o3 = fp8.attention %q, %k, %v mask %keep : tensor<1x1x1x16xi1> scale 0.5
      {causal, causal_offset = 4}
      : tensor<1x8x16x64xbf16>, tensor<1x2x16x64xbf16>, tensor<1x2x16x32xbf16>
      -> tensor<1x8x16x32xbf16>
  return %o, %o2, %lse, %o3 : tensor<1x8x16x32xbf16>, tensor<1x8x16x32xbf16>,
      tensor<1x8x16xf32>, tensor<1x8x16x32xbf16>
}

// -----

// FP8 scores: E4M3 query and key, one scale per token, with a mask.
// CHECK-LABEL: func.func @attention_fp8_scores
// CHECK: fp8.attention %arg0, %arg1, %arg2 scales %arg3, %arg4 : tensor<1x8x16xf32>, tensor<1x2x16xf32> mask %arg5 : tensor<1x1x1x16xi1> scale 1.250000e-01 {causal} : tensor<1x8x16x64xf8E4M3FN>, tensor<1x2x16x64xf8E4M3FN>, tensor<1x2x16x32xbf16> -> tensor<1x8x16x32xbf16>
func.func @attention_fp8_scores(%q: tensor<1x8x16x64xf8E4M3FN>, %k: tensor<1x2x16x64xf8E4M3FN>,
                                %v: tensor<1x2x16x32xbf16>, %qs: tensor<1x8x16xf32>,
                                %ks: tensor<1x2x16xf32>, %keep: tensor<1x1x1x16xi1>)
    -> tensor<1x8x16x32xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x8x16xf32>, tensor<1x2x16xf32>
      mask %keep : tensor<1x1x1x16xi1> scale 0.125 {causal}
      : tensor<1x8x16x64xf8E4M3FN>, tensor<1x2x16x64xf8E4M3FN>, tensor<1x2x16x32xbf16>
      -> tensor<1x8x16x32xbf16>
  return %o : tensor<1x8x16x32xbf16>
}

// FP8 probabilities and values: an E4M3 value with a scale per head, P in
// E4M3 per key tile.
// CHECK-LABEL: func.func @attention_fp8_values
// CHECK: fp8.attention %arg0, %arg1, %arg2 scales %arg3, %arg4 : tensor<1x8x16xf32>, tensor<1x2x16xf32> value_scale %arg5 : tensor<1x2xf32> scale 1.250000e-01 {block_k = 64 : i64, causal, probability_scale = 2.560000e+02 : f32} : tensor<1x8x16x64xf8E4M3FN>, tensor<1x2x16x64xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN> -> tensor<1x8x16x32xbf16>
func.func @attention_fp8_values(%q: tensor<1x8x16x64xf8E4M3FN>, %k: tensor<1x2x16x64xf8E4M3FN>,
                                %v: tensor<1x2x16x32xf8E4M3FN>, %qs: tensor<1x8x16xf32>,
                                %ks: tensor<1x2x16xf32>, %vs: tensor<1x2xf32>)
    -> tensor<1x8x16x32xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks : tensor<1x8x16xf32>, tensor<1x2x16xf32>
      value_scale %vs : tensor<1x2xf32> scale 0.125
      {block_k = 64, causal, probability_scale = 256.0 : f32}
      : tensor<1x8x16x64xf8E4M3FN>, tensor<1x2x16x64xf8E4M3FN>, tensor<1x2x16x32xf8E4M3FN>
      -> tensor<1x8x16x32xbf16>
  return %o : tensor<1x8x16x32xbf16>
}

// -----

// Dynamic batch and lengths, decode (one query row) against a cache.
// CHECK-LABEL: func.func @attention_dynamic
// CHECK: fp8.attention %{{.+}}, %{{.+}}, %{{.+}} scale 1.250000e-01 {causal, causal_offset = 127 : i64} : tensor<?x4x1x64xf32>, tensor<?x1x?x64xf32>, tensor<?x1x?x64xf32> -> tensor<?x4x1x64xf32>, tensor<?x4x1xf32>
func.func @attention_dynamic(%q: tensor<?x4x1x64xf32>, %k: tensor<?x1x?x64xf32>,
                             %v: tensor<?x1x?x64xf32>)
    -> (tensor<?x4x1x64xf32>, tensor<?x4x1xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.125 {causal, causal_offset = 127}
      : tensor<?x4x1x64xf32>, tensor<?x1x?x64xf32>, tensor<?x1x?x64xf32>
      -> tensor<?x4x1x64xf32>, tensor<?x4x1xf32>
  return %o, %lse : tensor<?x4x1x64xf32>, tensor<?x4x1xf32>
}

// -----

// The backward: GQA, causal with a prefix, a boolean mask; the gradients
// take their operands' types.
// CHECK-LABEL: func.func @attention_grad
// CHECK: %{{.+}}, %{{.+}}, %{{.+}} = fp8.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale 1.250000e-01 {causal, causal_offset = 2 : i64} : tensor<2x8x16x64xbf16>, tensor<2x2x18x64xbf16>, tensor<2x2x18x32xbf16>, tensor<2x8x16x32xbf16>, tensor<2x8x16xf32>
// CHECK: fp8.attention_grad %{{.+}} mask %{{.+}} : tensor<2x1x1x18xi1> scale 5.000000e-01 : tensor<2x8x16x64xbf16>, tensor<2x2x18x64xbf16>, tensor<2x2x18x32xbf16>, tensor<2x8x16x32xbf16>, tensor<2x8x16xf32>
func.func @attention_grad(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x2x18x64xbf16>,
                          %v: tensor<2x2x18x32xbf16>, %o: tensor<2x8x16x32xbf16>,
                          %do: tensor<2x8x16x32xbf16>, %lse: tensor<2x8x16xf32>,
                          %keep: tensor<2x1x1x18xi1>)
    -> (tensor<2x8x16x64xbf16>, tensor<2x2x18x64xbf16>, tensor<2x2x18x32xbf16>,
        tensor<2x8x16x64xbf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.125
      {causal, causal_offset = 2}
      : tensor<2x8x16x64xbf16>, tensor<2x2x18x64xbf16>, tensor<2x2x18x32xbf16>,
        tensor<2x8x16x32xbf16>, tensor<2x8x16xf32>
  %dq2, %dk2, %dv2 = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      mask %keep : tensor<2x1x1x18xi1> scale 0.5
      : tensor<2x8x16x64xbf16>, tensor<2x2x18x64xbf16>, tensor<2x2x18x32xbf16>,
        tensor<2x8x16x32xbf16>, tensor<2x8x16xf32>
  return %dq, %dk, %dv, %dq2 : tensor<2x8x16x64xbf16>, tensor<2x2x18x64xbf16>,
      tensor<2x2x18x32xbf16>, tensor<2x8x16x64xbf16>
}

// -----

// A training step's forward keeps its output in f32 for the backward; the
// backward's dO is in the inputs' type, its spelling implied.
// CHECK-LABEL: func.func @attention_f32_output
// CHECK: %[[O:.+]], %[[L:.+]] = fp8.attention %{{.+}} scale 2.500000e-01 {causal} : tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
// CHECK: fp8.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %[[O]], %{{.+}}, %[[L]] scale 2.500000e-01 {causal} : tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
func.func @attention_f32_output(%q: tensor<1x4x8x16xbf16>, %k: tensor<1x2x8x16xbf16>,
                                %v: tensor<1x2x8x16xbf16>, %do: tensor<1x4x8x16xbf16>)
    -> (tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.25 {causal}
      : tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>
      -> tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.25 {causal}
      : tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>,
        tensor<1x4x8x16xf32>, tensor<1x4x8xf32>
  return %dq, %dk, %dv : tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>
}
