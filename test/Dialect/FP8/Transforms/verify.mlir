// RUN: fp8-opt %s -split-input-file -fp8-verify -verify-diagnostics -allow-unregistered-dialect | FileCheck %s

// fp8-verify: IR that uses FP8 safely passes untouched (checked with
// FileCheck); each pitfall is reported where it happens (checked with
// -verify-diagnostics), every one of them in a single run.

//===----------------------------------------------------------------------===//
// Clean IR
//===----------------------------------------------------------------------===//

// A delayed-scaling linear layer: every FP8 value comes from a scaled cast
// and goes only to fp8 ops.

// CHECK-LABEL: func.func @clean_linear
// CHECK: fp8.compute_scale
// CHECK: %[[X:.+]], %[[AMAX:.+]] = fp8.quantize
// CHECK: %[[W:.+]], %[[WT:.+]] = fp8.cast_transpose
// CHECK: %[[Y:.+]] = fp8.scaled_matmul %[[X]], %[[WT]]
// CHECK: fp8.record_amax
// CHECK: fp8.roll_history
// CHECK: fp8.dequantize %[[W]]
func.func @clean_linear(%x: tensor<128x64xbf16>, %w: tensor<64x32xf32>,
                        %history: tensor<16xf32>, %prev: f32)
    -> (tensor<128x32xbf16>, tensor<16xf32>, tensor<64x32xf32>) {
  %s = fp8.compute_scale %history, %prev for f8E4M3FN : tensor<16xf32>
  %xq, %amax = fp8.quantize %x, %s
      : tensor<128x64xbf16> -> tensor<128x64xf8E4M3FN>, f32
  %wq, %wt = fp8.cast_transpose %w, %s
      : tensor<64x32xf32> -> tensor<64x32xf8E4M3FN>, tensor<32x64xf8E4M3FN>
  %y = fp8.scaled_matmul %xq, %wt scales %s, %s {transpose_rhs}
      : tensor<128x64xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<128x32xbf16>
  %h1 = fp8.record_amax %history, %amax : tensor<16xf32>
  %h2 = fp8.roll_history %h1 : tensor<16xf32>
  %back = fp8.dequantize %wq, %s : tensor<64x32xf8E4M3FN> -> tensor<64x32xf32>
  return %y, %h2, %back : tensor<128x32xbf16>, tensor<16xf32>, tensor<64x32xf32>
}

// -----

// FP8 values may be reshaped and transposed (pure data movement) on their
// way into fp8.scaled_matmul; the linalg.transpose body's linalg.yield of an
// FP8 element is not a use.

// CHECK-LABEL: func.func @clean_data_movement
// CHECK: %[[Q:.+]] = fp8.quantize
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[Q]]
// CHECK: %[[WQ:.+]] = fp8.quantize
// CHECK: %[[WT:.+]] = linalg.transpose ins(%[[WQ]]
// CHECK: fp8.scaled_matmul %[[FLAT]], %[[WT]]
func.func @clean_data_movement(%x: tensor<2x64x32xf32>, %w: tensor<16x32xf32>,
                               %s: f32) -> tensor<128x16xf32> {
  %q = fp8.quantize %x, %s : tensor<2x64x32xf32> -> tensor<2x64x32xf8E4M3FN>
  %flat = tensor.collapse_shape %q [[0, 1], [2]]
      : tensor<2x64x32xf8E4M3FN> into tensor<128x32xf8E4M3FN>
  %wq = fp8.quantize %w, %s : tensor<16x32xf32> -> tensor<16x32xf8E4M3FN>
  %init = tensor.empty() : tensor<32x16xf8E4M3FN>
  %wt = linalg.transpose ins(%wq : tensor<16x32xf8E4M3FN>)
      outs(%init : tensor<32x16xf8E4M3FN>) permutation = [1, 0]
  %y = fp8.scaled_matmul %flat, %wt scales %s, %s
      : tensor<128x32xf8E4M3FN>, tensor<32x16xf8E4M3FN> -> tensor<128x16xf32>
  return %y : tensor<128x16xf32>
}

// -----

// FP8 carried through calls and loops is still only moved; the callee's
// body is checked where it is.

// CHECK-LABEL: func.func @clean_control_flow
// CHECK: scf.for
// CHECK: func.call @consume
func.func private @consume(%q: tensor<4x4xf8E5M2>) {
  return
}

func.func @clean_control_flow(%g: tensor<4x4xf32>, %s: f32)
    -> tensor<4x4xf8E5M2> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %q = fp8.quantize %g, %s : tensor<4x4xf32> -> tensor<4x4xf8E5M2>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %q)
      -> (tensor<4x4xf8E5M2>) {
    func.call @consume(%acc) : (tensor<4x4xf8E5M2>) -> ()
    scf.yield %acc : tensor<4x4xf8E5M2>
  }
  return %r : tensor<4x4xf8E5M2>
}

// -----

// Immutable FP8 globals (frozen, pre-quantized weights) are fine.

// CHECK: ml_program.global private @frozen(dense<1.000000e+00> : tensor<8x4xf8E4M3FN>) : tensor<8x4xf8E4M3FN>
// CHECK: memref.global "private" constant @table : memref<2xf8E5M2> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK-LABEL: func.func @clean_frozen_weight
// CHECK: %[[W:.+]] = ml_program.global_load_const @frozen
// CHECK: fp8.scaled_matmul %{{.+}}, %[[W]]
ml_program.global private @frozen(dense<1.0> : tensor<8x4xf8E4M3FN>)
    : tensor<8x4xf8E4M3FN>
memref.global "private" constant @table : memref<2xf8E5M2> = dense<[1.0, 2.0]>

func.func @clean_frozen_weight(%x: tensor<16x8xf32>, %s: f32, %sw: f32)
    -> tensor<16x4xbf16> {
  %q = fp8.quantize %x, %s : tensor<16x8xf32> -> tensor<16x8xf8E4M3FN>
  %w = ml_program.global_load_const @frozen : tensor<8x4xf8E4M3FN>
  %y = fp8.scaled_matmul %q, %w scales %s, %sw
      : tensor<16x8xf8E4M3FN>, tensor<8x4xf8E4M3FN> -> tensor<16x4xbf16>
  return %y : tensor<16x4xbf16>
}

// -----

// High-precision casts and math around the FP8 islands are not FP8.

// CHECK-LABEL: func.func @clean_high_precision
// CHECK: arith.truncf
// CHECK: arith.extf
// CHECK: linalg.softmax
func.func @clean_high_precision(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %b = arith.truncf %x : tensor<2x4xf32> to tensor<2x4xbf16>
  %f = arith.extf %b : tensor<2x4xbf16> to tensor<2x4xf32>
  %init = tensor.empty() : tensor<2x4xf32>
  %sm = linalg.softmax dimension(1) ins(%f : tensor<2x4xf32>)
      outs(%init : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %sm : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// One error per pitfall
//===----------------------------------------------------------------------===//

// -----

func.func @truncf_to_fp8(%x: tensor<4xf32>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{cast to 'f8E4M3FN' without a scale; use fp8.quantize (or fp8.cast_transpose)}}
  %0 = arith.truncf %x : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

func.func @truncf_scalar_to_e5m2(%x: f32) -> f8E5M2 {
  // expected-error @+1 {{cast to 'f8E5M2' without a scale}}
  %0 = arith.truncf %x : f32 to f8E5M2
  return %0 : f8E5M2
}

// -----

// Both the input and the init are FP8: one error for the op.

func.func @softmax_of_fp8(%x: tensor<2x4xf32>, %s: f32) -> tensor<2x4xf8E4M3FN> {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<2x4xf32> -> tensor<2x4xf8E4M3FN>
  %init = tensor.empty() : tensor<2x4xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches softmax, which must run in high precision}}
  %sm = linalg.softmax dimension(1) ins(%q : tensor<2x4xf8E4M3FN>)
      outs(%init : tensor<2x4xf8E4M3FN>) -> tensor<2x4xf8E4M3FN>
  return %sm : tensor<2x4xf8E4M3FN>
}

// -----

// A row sum over FP8 elements (a norm's reduction): reported once, at the
// linalg.generic, not again at the arith.extf in its body.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reduction_of_fp8(%x: tensor<4x8xf32>, %s: f32) -> tensor<4xf32> {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{FP8 value reaches a reduction (norm, softmax, loss or sum), which must run in high precision}}
  %sum = linalg.generic {indexing_maps = [#id, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%q : tensor<4x8xf8E4M3FN>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %w = arith.extf %in : f8E4M3FN to f32
    %a = arith.addf %w, %out : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// linalg.reduce with an FP8 input and an FP8 init: one error, with a note on
// the first FP8 value met.

func.func @reduce_of_fp8(%x: tensor<4x8xf32>, %s: f32) -> tensor<4xf8E4M3FN> {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<4x8xf32> -> tensor<4x8xf8E4M3FN>
  %init = tensor.empty() : tensor<4xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches a reduction (norm, softmax, loss or sum), which must run in high precision}}
  %r = linalg.reduce ins(%q : tensor<4x8xf8E4M3FN>)
      outs(%init : tensor<4xf8E4M3FN>) dimensions = [1]
    (%in: f8E4M3FN, %out: f8E4M3FN) {
      %m = arith.maximumf %in, %out : f8E4M3FN
      linalg.yield %m : f8E4M3FN
    }
  return %r : tensor<4xf8E4M3FN>
}

// -----

// A residual add with an FP8 operand, as a linalg.generic.

#map = affine_map<(d0) -> (d0)>
func.func @residual_add_generic(%x: tensor<8xf32>, %res: tensor<8xf32>,
                                %s: f32) -> tensor<8xf32> {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<8xf32> -> tensor<8xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches an addition (residual add), which must run in high precision}}
  %sum = linalg.generic {indexing_maps = [#map, #map, #map],
                         iterator_types = ["parallel"]}
      ins(%q, %res : tensor<8xf8E4M3FN>, tensor<8xf32>)
      outs(%res : tensor<8xf32>) {
  ^bb0(%a: f8E4M3FN, %b: f32, %out: f32):
    %w = arith.extf %a : f8E4M3FN to f32
    %r = arith.addf %w, %b : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}

// -----

// The same on tensors with arith.addf: one error although the value is
// used twice.

func.func @residual_add_arith(%x: tensor<8xf32>, %s: f32) -> tensor<8xf8E4M3FN> {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<8xf32> -> tensor<8xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches an addition (residual add), which must run in high precision}}
  %sum = arith.addf %q, %q : tensor<8xf8E4M3FN>
  return %sum : tensor<8xf8E4M3FN>
}

// -----

func.func @extf_of_fp8(%x: tensor<8xf32>, %s: f32) -> tensor<8xf32> {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<8xf32> -> tensor<8xf8E5M2>
  // expected-error @+1 {{FP8 value reaches a widening cast that drops its scale (use fp8.dequantize), which must run in high precision}}
  %w = arith.extf %q : tensor<8xf8E5M2> to tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

// Any other op is high precision too; the note points at a block argument.

// expected-note @+1 {{FP8 value defined here}}
func.func @mulf_of_fp8_argument(%q: tensor<8xf8E4M3FN>) -> tensor<8xf8E4M3FN> {
  // expected-error @+1 {{FP8 value reaches a high-precision op, which must run in high precision}}
  %p = arith.mulf %q, %q : tensor<8xf8E4M3FN>
  return %p : tensor<8xf8E4M3FN>
}

// -----

func.func @matmul_accumulates_in_fp8(%a: tensor<16x32xbf16>,
                                     %b: tensor<32x8xbf16>)
    -> tensor<16x8xf8E4M3FN> {
  %init = tensor.empty() : tensor<16x8xf8E4M3FN>
  // expected-error @+1 {{accumulates in FP8 ('f8E4M3FN'); GEMMs must accumulate in f32}}
  %c = linalg.matmul ins(%a, %b : tensor<16x32xbf16>, tensor<32x8xbf16>)
      outs(%init : tensor<16x8xf8E4M3FN>) -> tensor<16x8xf8E4M3FN>
  return %c : tensor<16x8xf8E4M3FN>
}

// -----

func.func @matmul_with_fp8_inputs(%x: tensor<16x32xf32>, %s: f32,
                                  %w: tensor<32x8xf8E4M3FN>)
    -> tensor<16x8xf32> {
  %q = fp8.quantize %x, %s : tensor<16x32xf32> -> tensor<16x32xf8E4M3FN>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<16x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
  // expected-error @+1 {{FP8 operand #0 reaches a contraction that is not fp8.scaled_matmul: its scale is lost}}
  %c = linalg.matmul ins(%q, %w : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN>)
      outs(%acc : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %c : tensor<16x8xf32>
}

// -----

func.func @batch_matmul_rhs_fp8(%x: tensor<2x16x32xf32>,
                                %w: tensor<2x32x8xf8E5M2>)
    -> tensor<2x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<2x16x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  // expected-error @+1 {{FP8 operand #1 reaches a contraction that is not fp8.scaled_matmul: its scale is lost}}
  %c = linalg.batch_matmul
      ins(%x, %w : tensor<2x16x32xf32>, tensor<2x32x8xf8E5M2>)
      outs(%acc : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
  return %c : tensor<2x16x8xf32>
}

// -----

// expected-error @+1 {{mutable FP8 global: master weights and optimizer state must stay in high precision}}
ml_program.global private mutable @master(dense<0.0> : tensor<4xf8E4M3FN>)
    : tensor<4xf8E4M3FN>

// -----

// expected-error @+1 {{mutable FP8 global: master weights and optimizer state must stay in high precision}}
memref.global "private" @adam_m : memref<4xf8E5M2> = uninitialized

//===----------------------------------------------------------------------===//
// Several violations in one run
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{mutable FP8 global: master weights and optimizer state must stay in high precision}}
ml_program.global private mutable @state(dense<0.0> : tensor<2x4xf8E4M3FN>)
    : tensor<2x4xf8E4M3FN>

func.func @many(%x: tensor<2x4xf32>, %s: f32) -> (tensor<2x4xf8E4M3FN>, tensor<2x4xf32>) {
  // expected-error @+2 {{cast to 'f8E4M3FN' without a scale}}
  // expected-note @+1 {{FP8 value defined here}}
  %t = arith.truncf %x : tensor<2x4xf32> to tensor<2x4xf8E4M3FN>
  %init = tensor.empty() : tensor<2x4xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches softmax}}
  %sm = linalg.softmax dimension(1) ins(%t : tensor<2x4xf8E4M3FN>)
      outs(%init : tensor<2x4xf8E4M3FN>) -> tensor<2x4xf8E4M3FN>
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<2x4xf32> -> tensor<2x4xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches a widening cast}}
  %w = arith.extf %q : tensor<2x4xf8E4M3FN> to tensor<2x4xf32>
  ml_program.global_store @state = %q : tensor<2x4xf8E4M3FN>
  return %sm, %w : tensor<2x4xf8E4M3FN>, tensor<2x4xf32>
}

// -----

// An op of an unregistered dialect (no dialect object) is not known to be
// FP8-safe: reported, not a crash.

func.func @unregistered_user(%x: tensor<4xf32>, %s: f32) {
  // expected-note @+1 {{FP8 value defined here}}
  %q = fp8.quantize %x, %s : tensor<4xf32> -> tensor<4xf8E4M3FN>
  // expected-error @+1 {{FP8 value reaches a high-precision op, which must run in high precision}}
  "foo.bar"(%q) : (tensor<4xf8E4M3FN>) -> ()
  return
}
