// RUN: fp8-opt %s -split-input-file -canonicalize | FileCheck %s
// RUN: fp8-opt %s -split-input-file -canonicalize -mlir-print-elementsattrs-with-hex-if-larger=0 | FileCheck %s --check-prefix=HEX

// The folders. Every expected value is derived by hand from the format
// definitions and Transformer Engine's formulas:
//   E4M3FN: bias 7, 3 mantissa bits, max 448 (S.1111.111 is NaN, no Inf),
//           min normal 2^-6, min subnormal 2^-9;
//           binade [2^e, 2^(e+1)) has step 2^(e-3).
//   E5M2:   bias 15, 2 mantissa bits, max 57344 = 1.75 * 2^15,
//           min normal 2^-14, min subnormal 2^-16.
//   quantize: q = sat_rne(f32(x * scale)); ties to the even code; overflow
//             and +-Inf clamp to +-max; any NaN gives the NaN code 0x7F.
//   scale = f32(fp8_max * 2^-margin / amax).
// f32 hex patterns quoted below were computed with Python's struct module.

//===----------------------------------------------------------------------===//
// fp8.quantize
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @quantize_saturate_e4m3
// 1000 -> 448 (saturated); -1000 -> -448; 464 is the tie between 448 and
// 480 (not representable: that code is NaN) -> 448; 465 -> 448 (saturated);
// 17 is the tie 16 | 18 in [16, 32) (step 2) -> 16 (even mantissa 000);
// 19 is the tie 18 | 20 -> 20 (mantissa 010); +-Inf -> +-448.
// CHECK: %[[Q:.+]] = arith.constant dense<[4.480000e+02, -4.480000e+02, 4.480000e+02, 4.480000e+02, 1.600000e+01, 2.000000e+01, 4.480000e+02, -4.480000e+02]> : tensor<8xf8E4M3FN>
// CHECK-NOT: fp8.quantize
// CHECK: return %[[Q]]
// Codes (S.EEEE.MMM): 448 = 1.75 * 2^8 -> 0.1111.110 = 0x7E, -448 = 0xFE,
// 16 = 2^4 -> 0.1011.000 = 0x58, 20 = 1.25 * 2^4 -> 0.1011.010 = 0x5A.
// HEX-LABEL: func.func @quantize_saturate_e4m3
// HEX: dense<"0x7EFE7E7E585A7EFE"> : tensor<8xf8E4M3FN>
func.func @quantize_saturate_e4m3() -> tensor<8xf8E4M3FN> {
  %x = arith.constant dense<[1000.0, -1000.0, 464.0, 465.0, 17.0, 19.0,
                             0x7F800000, 0xFF800000]> : tensor<8xf32>
  %s = arith.constant 1.0 : f32
  %q = fp8.quantize %x, %s : tensor<8xf32> -> tensor<8xf8E4M3FN>
  return %q : tensor<8xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @quantize_saturate_e5m2
// -1e6 -> -57344 and 1e6 -> 57344 (saturated, not Inf); 61440 is the tie
// 57344 | 65536 (65536 = 2^16 overflows) -> 57344; +Inf -> 57344;
// 3e-5 = 1.97 * 2^-16 -> 2 * 2^-16 = 3.0517578125e-05 (a subnormal);
// 5 is exact in [4, 8) (step 1).
// CHECK: %[[Q:.+]] = arith.constant dense<[-5.734400e+04, 5.734400e+04, 5.734400e+04, 5.734400e+04, 3.051760e-05, 5.000000e+00]> : tensor<6xf8E5M2>
// CHECK: return %[[Q]]
// Codes (S.EEEEE.MM): -57344 = 1.11110.11 = 0xFB, 57344 = 0x7B,
// 2 * 2^-16 = 0.00000.10 = 0x02, 5 = 1.25 * 2^2 -> 0.10001.01 = 0x45.
// HEX-LABEL: func.func @quantize_saturate_e5m2
// HEX: dense<"0xFB7B7B7B0245"> : tensor<6xf8E5M2>
func.func @quantize_saturate_e5m2() -> tensor<6xf8E5M2> {
  %x = arith.constant dense<[-1.0e6, 1.0e6, 61440.0, 0x7F800000, 3.0e-5, 5.0]>
      : tensor<6xf32>
  %s = arith.constant 1.0 : f32
  %q = fp8.quantize %x, %s : tensor<6xf32> -> tensor<6xf8E5M2>
  return %q : tensor<6xf8E5M2>
}

// -----

// Any NaN, of either sign, becomes the positive NaN code 0x7F (Hopper's
// cvt.rn.satfinite); in E5M2 0x7F is a NaN too (exponent 11111, mantissa 11).

// CHECK-LABEL: func.func @quantize_nan
// CHECK-DAG: %[[A:.+]] = arith.constant dense<[0x7F, 0x7F, 1.000000e+00]> : tensor<3xf8E4M3FN>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[0x7F, 0x7F, 1.000000e+00]> : tensor<3xf8E5M2>
// CHECK: return %[[A]], %[[B]]
// 1.0 is 0.0111.000 = 0x38 in E4M3, 0.01111.00 = 0x3C in E5M2.
// HEX-LABEL: func.func @quantize_nan
// HEX-DAG: dense<"0x7F7F38"> : tensor<3xf8E4M3FN>
// HEX-DAG: dense<"0x7F7F3C"> : tensor<3xf8E5M2>
func.func @quantize_nan() -> (tensor<3xf8E4M3FN>, tensor<3xf8E5M2>) {
  %x = arith.constant dense<[0x7FC00000, 0xFFC00000, 1.0]> : tensor<3xf32>
  %s = arith.constant 1.0 : f32
  %a = fp8.quantize %x, %s : tensor<3xf32> -> tensor<3xf8E4M3FN>
  %b = fp8.quantize %x, %s : tensor<3xf32> -> tensor<3xf8E5M2>
  return %a, %b : tensor<3xf8E4M3FN>, tensor<3xf8E5M2>
}

// -----

// E4M3 subnormals, in units of 2^-9 = 0.001953125:
// 0.0029296875 = 1.5 units, tie -> 2 units = 2^-8 = 0.00390625;
// 0.0009765625 = 0.5 units, tie -> 0;
// 0.001 = 0.512 units -> 1 unit = 0.001953125;
// -0.0146484375 = -7.5 units, tie 7 | 8 -> 8 units = -2^-6 (the smallest
// normal: rounding up from the largest subnormal);
// 1e-10 -> 0.

// CHECK-LABEL: func.func @quantize_subnormal
// CHECK: %[[Q:.+]] = arith.constant dense<[3.906250e-03, 0.000000e+00, 1.953130e-03, -1.562500e-02, 0.000000e+00]> : tensor<5xf8E4M3FN>
// CHECK: return %[[Q]]
// Codes: 2 units = 0x02, 1 unit = 0x01, -2^-6 = 1.0001.000 = 0x88.
// HEX-LABEL: func.func @quantize_subnormal
// HEX: dense<"0x0200018800"> : tensor<5xf8E4M3FN>
func.func @quantize_subnormal() -> tensor<5xf8E4M3FN> {
  %x = arith.constant dense<[0.0029296875, 0.0009765625, 0.001, -0.0146484375,
                             1.0e-10]> : tensor<5xf32>
  %s = arith.constant 1.0 : f32
  %q = fp8.quantize %x, %s : tensor<5xf32> -> tensor<5xf8E4M3FN>
  return %q : tensor<5xf8E4M3FN>
}

// -----

// The seeds' example: a tensor in [-0.02, 0.03] with scale 448 / 0.03
// (f32 14933.334, 0x46695556). The products, rounded in E4M3:
//   -0.02  * s = -298.67, in [256, 512) step 32 -> -288
//   -0.01  * s = -149.33, in [128, 256) step 16 -> -144
//    0.001 * s =   14.93, in [8, 16) step 1    ->   15
//    0.015 * s =  224.00                       ->  224
//    0.03  * s =  448.00                       ->  448
// The values now fill [-288, 448]. amax = f32(0.03).

// CHECK-LABEL: func.func @quantize_seed_scaled
// CHECK-DAG: %[[Q:.+]] = arith.constant dense<[-2.880000e+02, -1.440000e+02, 0.000000e+00, 1.500000e+01, 2.240000e+02, 4.480000e+02]> : tensor<6xf8E4M3FN>
// CHECK-DAG: %[[A:.+]] = arith.constant 3.000000e-02 : f32
// CHECK: return %[[Q]], %[[A]]
// Codes: -288 = -1.125 * 2^8 -> 1.1111.001 = 0xF9, -144 -> 1.1110.001 = 0xF1,
// 15 = 1.875 * 2^3 -> 0.1010.111 = 0x57, 224 = 1.75 * 2^7 -> 0.1110.110 = 0x76,
// 448 -> 0x7E.
// HEX-LABEL: func.func @quantize_seed_scaled
// HEX: dense<"0xF9F10057767E"> : tensor<6xf8E4M3FN>
func.func @quantize_seed_scaled() -> (tensor<6xf8E4M3FN>, f32) {
  %x = arith.constant dense<[-0.02, -0.01, 0.0, 0.001, 0.015, 0.03]>
      : tensor<6xf32>
  %s = arith.constant 14933.334 : f32
  %q, %amax = fp8.quantize %x, %s : tensor<6xf32> -> tensor<6xf8E4M3FN>, f32
  return %q, %amax : tensor<6xf8E4M3FN>, f32
}

// -----

// The same tensor without a scale lands on a handful of codes near the
// bottom of the range (units of 2^-9 below 2^-5):
//   -0.02  -> 10.24 units -> -10 * 2^-9 = -0.01953125
//   -0.01  ->  5.12 units ->  -5 * 2^-9 = -0.009765625 (subnormal)
//    0.001 ->  0.51 units ->   1 * 2^-9 =  0.001953125 (subnormal)
//    0.015 ->  7.68 units ->   8 * 2^-9 =  0.015625
//    0.03  -> 15.36 units ->  15 * 2^-9 =  0.029296875

// CHECK-LABEL: func.func @quantize_seed_unscaled
// CHECK: %[[Q:.+]] = arith.constant dense<[-1.953130e-02, -9.765620e-03, 0.000000e+00, 1.953130e-03, 1.562500e-02, 2.929690e-02]> : tensor<6xf8E4M3FN>
// CHECK: return %[[Q]]
func.func @quantize_seed_unscaled() -> tensor<6xf8E4M3FN> {
  %x = arith.constant dense<[-0.02, -0.01, 0.0, 0.001, 0.015, 0.03]>
      : tensor<6xf32>
  %s = arith.constant 1.0 : f32
  %q = fp8.quantize %x, %s : tensor<6xf32> -> tensor<6xf8E4M3FN>
  return %q : tensor<6xf8E4M3FN>
}

// -----

// The whole current-scaling recipe folds: amax 0.03 -> scale -> cast.

// CHECK-LABEL: func.func @quantize_seed_recipe
// CHECK-DAG: %[[Q:.+]] = arith.constant dense<[-2.880000e+02, 4.480000e+02]> : tensor<2xf8E4M3FN>
// CHECK-DAG: %[[S:.+]] = arith.constant 14933.334 : f32
// CHECK-NOT: fp8.
// CHECK: return %[[Q]], %[[S]]
func.func @quantize_seed_recipe() -> (tensor<2xf8E4M3FN>, f32) {
  %x = arith.constant dense<[-0.02, 0.03]> : tensor<2xf32>
  %amax = fp8.amax %x : tensor<2xf32>
  %s = fp8.compute_scale %amax for f8E4M3FN : f32
  %q = fp8.quantize %x, %s : tensor<2xf32> -> tensor<2xf8E4M3FN>
  return %q, %s : tensor<2xf8E4M3FN>, f32
}

// -----

// A splat stays a splat: 1000 * 1 -> 448; its amax is 1000.

// CHECK-LABEL: func.func @quantize_splat
// CHECK-DAG: %[[Q:.+]] = arith.constant dense<4.480000e+02> : tensor<2x3xf8E4M3FN>
// CHECK-DAG: %[[A:.+]] = arith.constant 1.000000e+03 : f32
// CHECK: return %[[Q]], %[[A]]
func.func @quantize_splat() -> (tensor<2x3xf8E4M3FN>, f32) {
  %x = arith.constant dense<1000.0> : tensor<2x3xf32>
  %s = arith.constant 1.0 : f32
  %q, %amax = fp8.quantize %x, %s : tensor<2x3xf32> -> tensor<2x3xf8E4M3FN>, f32
  return %q, %amax : tensor<2x3xf8E4M3FN>, f32
}

// -----

// bf16 input, widened exactly: bf16(0.1) = 0.10009765625, * 2 = 0.2001953125,
// in [0.125, 0.25) step 2^-6 -> 13 * 2^-6 = 0.203125; 300 * 2 = 600 -> 448;
// bf16(-0.3) = -0.30078125, * 2 = -0.6015625, in [0.5, 1) step 2^-4 -> -0.625.
// amax = 300.

// CHECK-LABEL: func.func @quantize_bf16
// CHECK-DAG: %[[Q:.+]] = arith.constant dense<[2.031250e-01, 4.480000e+02, -6.250000e-01]> : tensor<3xf8E4M3FN>
// CHECK-DAG: %[[A:.+]] = arith.constant 3.000000e+02 : f32
// CHECK: return %[[Q]], %[[A]]
func.func @quantize_bf16() -> (tensor<3xf8E4M3FN>, f32) {
  %x = arith.constant dense<[0.1, 300.0, -0.3]> : tensor<3xbf16>
  %s = arith.constant 2.0 : f32
  %q, %amax = fp8.quantize %x, %s : tensor<3xbf16> -> tensor<3xf8E4M3FN>, f32
  return %q, %amax : tensor<3xf8E4M3FN>, f32
}

// -----

// Nothing to fold: a scale that is not constant, a dynamic result.

// CHECK-LABEL: func.func @quantize_no_fold
// CHECK: fp8.quantize %{{.+}}, %{{.+}} : tensor<2xf32> -> tensor<2xf8E4M3FN>
// CHECK: fp8.quantize %{{.+}}, %{{.+}} : tensor<2xf32> -> tensor<?xf8E4M3FN>
func.func @quantize_no_fold(%s: f32) -> (tensor<2xf8E4M3FN>, tensor<?xf8E4M3FN>) {
  %x = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %one = arith.constant 1.0 : f32
  %a = fp8.quantize %x, %s : tensor<2xf32> -> tensor<2xf8E4M3FN>
  %b = fp8.quantize %x, %one : tensor<2xf32> -> tensor<?xf8E4M3FN>
  return %a, %b : tensor<2xf8E4M3FN>, tensor<?xf8E4M3FN>
}

//===----------------------------------------------------------------------===//
// fp8.compute_scale, current scaling (no previous scale)
//===----------------------------------------------------------------------===//

// -----

// The seeds' worked numbers (E4M3, max 448):
//   448 / 0.03 = 14933.333.. -> f32 14933.334 (0x46695556)
//   448 / 1000 = 0.448       -> f32 0.448     (0x3EE56042)
//   448 / 0.05 = 8959.99986  -> f32 8960      (0x460C0000; f32 step is 2^-10)
//   448 / 1200 = 0.3733..    -> f32 0.373333335 (0x3EBF258C)
// The hex form checks the bits: little-endian bytes of 0x46695556 0x3EE56042
// 0x460C0000 0x3EBF258C.

// CHECK-LABEL: func.func @compute_scale_seeds
// CHECK: %[[S:.+]] = arith.constant dense<[14933.334, 4.480000e-01, 8.960000e+03, 0.373333335]> : tensor<4xf32>
// CHECK: return %[[S]]
// HEX-LABEL: func.func @compute_scale_seeds
// HEX: arith.constant dense<"0x565569464260E53E00000C468C25BF3E"> : tensor<4xf32>
func.func @compute_scale_seeds() -> tensor<4xf32> {
  %a0 = arith.constant 0.03 : f32
  %a1 = arith.constant 1000.0 : f32
  %a2 = arith.constant 0.05 : f32
  %a3 = arith.constant 1200.0 : f32
  %s0 = fp8.compute_scale %a0 for f8E4M3FN : f32
  %s1 = fp8.compute_scale %a1 for f8E4M3FN : f32
  %s2 = fp8.compute_scale %a2 for f8E4M3FN : f32
  %s3 = fp8.compute_scale %a3 for f8E4M3FN : f32
  %t = tensor.from_elements %s0, %s1, %s2, %s3 : tensor<4xf32>
  return %t : tensor<4xf32>
}

// -----

// Margin and format: E5M2 with margin 1, amax 1000:
// 57344 * 2^-1 / 1000 = 28.672 -> f32 28.6720009 (0x41E56042, printed
// 2.867200e+01). E4M3 with margin 3, amax 1: 448 / 8 = 56.

// CHECK-LABEL: func.func @compute_scale_margin
// CHECK-DAG: %[[A:.+]] = arith.constant 2.867200e+01 : f32
// CHECK-DAG: %[[B:.+]] = arith.constant 5.600000e+01 : f32
// CHECK: return %[[A]], %[[B]]
// HEX-LABEL: func.func @compute_scale_margin
// HEX: arith.constant dense<"0x4260E54100006042"> : tensor<2xf32>
func.func @compute_scale_margin() -> (f32, f32, tensor<2xf32>) {
  %a = arith.constant 1000.0 : f32
  %one = arith.constant 1.0 : f32
  %0 = fp8.compute_scale %a for f8E5M2 {margin = 1 : i32} : f32
  %1 = fp8.compute_scale %one for f8E4M3FN {margin = 3 : i32} : f32
  %t = tensor.from_elements %0, %1 : tensor<2xf32>
  return %0, %1, %t : f32, f32, tensor<2xf32>
}

// -----

// power_of_two keeps sign and exponent only (rounds down to 2^k):
// 14933.334 -> 2^13 = 8192; 0.448 -> 2^-2 = 0.25;
// E5M2 amax 1: 57344 -> 2^15 = 32768.

// CHECK-LABEL: func.func @compute_scale_power_of_two
// CHECK-DAG: %[[A:.+]] = arith.constant 8.192000e+03 : f32
// CHECK-DAG: %[[B:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[C:.+]] = arith.constant 3.276800e+04 : f32
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @compute_scale_power_of_two() -> (f32, f32, f32) {
  %a = arith.constant 0.03 : f32
  %b = arith.constant 1000.0 : f32
  %one = arith.constant 1.0 : f32
  %0 = fp8.compute_scale %a for f8E4M3FN {power_of_two} : f32
  %1 = fp8.compute_scale %b for f8E4M3FN {power_of_two} : f32
  %2 = fp8.compute_scale %one for f8E5M2 {power_of_two} : f32
  return %0, %1, %2 : f32, f32, f32
}

// -----

// Current scaling (TE Float8CurrentScaling): amax 0, +Inf or NaN gives 1.

// CHECK-LABEL: func.func @compute_scale_current_degenerate
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: fp8.compute_scale
// CHECK: return %[[ONE]], %[[ONE]], %[[ONE]] : f32, f32, f32
func.func @compute_scale_current_degenerate() -> (f32, f32, f32) {
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %0 = fp8.compute_scale %zero for f8E4M3FN : f32
  %1 = fp8.compute_scale %inf for f8E4M3FN : f32
  %2 = fp8.compute_scale %nan for f8E5M2 : f32
  return %0, %1, %2 : f32, f32, f32
}

// -----

// A tiny amax gives an infinite quotient (448 / 1e-40 = 4.5e42 > FLT_MAX),
// which becomes FLT_MAX = (2 - 2^-23) * 2^127 = 3.40282347E+38 (0x7F7FFFFF)
// in both recipes. The hex form holds the bytes of 0x7F7FFFFF, twice, then 2.5
// (0x40200000).

// CHECK-LABEL: func.func @compute_scale_tiny_amax
// CHECK: %[[MAX:.+]] = arith.constant 3.40282347E+38 : f32
// CHECK: return %[[MAX]], %[[MAX]], %{{.+}} : f32, f32, tensor<3xf32>
// HEX-LABEL: func.func @compute_scale_tiny_amax
// HEX: arith.constant dense<"0xFFFF7F7FFFFF7F7F00002040"> : tensor<3xf32>
func.func @compute_scale_tiny_amax() -> (f32, f32, tensor<3xf32>) {
  %tiny = arith.constant 1.0e-40 : f32
  %p = arith.constant 2.5 : f32
  %0 = fp8.compute_scale %tiny for f8E4M3FN : f32
  %1 = fp8.compute_scale %tiny, %p for f8E4M3FN : f32
  %t = tensor.from_elements %0, %1, %p : tensor<3xf32>
  return %0, %1, %t : f32, f32, tensor<3xf32>
}

// -----

// epsilon (TE: amax < eps -> eps): amax 0.001 and amax 0 with epsilon 0.01
// both give 448 / f32(0.01) = 44800.001 -> f32 44800 (step 2^-8 there);
// without epsilon, amax 0 gives 1, and 0.001 gives 448 / f32(0.001) =
// 447999.979 -> f32 447999.969 (step 2^-5: 447999.96875 is nearer than
// 448000).

// CHECK-LABEL: func.func @compute_scale_epsilon
// CHECK-DAG: %[[EPS:.+]] = arith.constant 4.480000e+04 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[BIG:.+]] = arith.constant 447999.969 : f32
// CHECK: return %[[EPS]], %[[EPS]], %[[ONE]], %[[BIG]]
func.func @compute_scale_epsilon() -> (f32, f32, f32, f32) {
  %small = arith.constant 0.001 : f32
  %zero = arith.constant 0.0 : f32
  %0 = fp8.compute_scale %small for f8E4M3FN {epsilon = 0.01 : f32} : f32
  %1 = fp8.compute_scale %zero for f8E4M3FN {epsilon = 0.01 : f32} : f32
  %2 = fp8.compute_scale %zero for f8E4M3FN : f32
  %3 = fp8.compute_scale %small for f8E4M3FN : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

//===----------------------------------------------------------------------===//
// fp8.compute_scale, delayed scaling (previous scale)
//===----------------------------------------------------------------------===//

// -----

// TE DelayedScaling: recompute only for a finite amax > 0, else keep the
// previous scale (2.5 here).

// CHECK-LABEL: func.func @compute_scale_delayed
// CHECK-DAG: %[[PREV:.+]] = arith.constant 2.500000e+00 : f32
// CHECK-DAG: %[[NEW:.+]] = arith.constant 4.480000e-01 : f32
// CHECK-NOT: fp8.compute_scale
// CHECK: return %[[PREV]], %[[PREV]], %[[PREV]], %[[NEW]] : f32, f32, f32, f32
func.func @compute_scale_delayed() -> (f32, f32, f32, f32) {
  %prev = arith.constant 2.5 : f32
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %amax = arith.constant 1000.0 : f32
  %0 = fp8.compute_scale %zero, %prev for f8E4M3FN : f32
  %1 = fp8.compute_scale %inf, %prev for f8E4M3FN : f32
  %2 = fp8.compute_scale %nan, %prev for f8E4M3FN : f32
  %3 = fp8.compute_scale %amax, %prev for f8E4M3FN : f32
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

// History [0.5, 2, 1, NaN]: max (NaN ignored) = 2 -> 448 / 2 = 224;
// most_recent = row 0 = 0.5 -> 448 / 0.5 = 896.

// CHECK-LABEL: func.func @compute_scale_history
// CHECK-DAG: %[[MAX:.+]] = arith.constant 2.240000e+02 : f32
// CHECK-DAG: %[[RECENT:.+]] = arith.constant 8.960000e+02 : f32
// CHECK: return %[[MAX]], %[[RECENT]], %[[MAX]], %[[RECENT]]
func.func @compute_scale_history() -> (f32, f32, f32, f32) {
  %h = arith.constant dense<[0.5, 2.0, 1.0, 0x7FC00000]> : tensor<4xf32>
  %prev = arith.constant 2.5 : f32
  %0 = fp8.compute_scale %h, %prev for f8E4M3FN : tensor<4xf32>
  %1 = fp8.compute_scale %h, %prev for f8E4M3FN
      {algo = #fp8.amax_algo<most_recent>} : tensor<4xf32>
  %2 = fp8.compute_scale %h for f8E4M3FN : tensor<4xf32>
  %3 = fp8.compute_scale %h for f8E4M3FN
      {algo = #fp8.amax_algo<most_recent>} : tensor<4xf32>
  return %0, %1, %2, %3 : f32, f32, f32, f32
}

// -----

// A history whose reduced amax is 0 keeps the previous scale: all zeros
// with max; row 0 = 0 with most_recent even though row 1 is 8.

// CHECK-LABEL: func.func @compute_scale_history_keeps_previous
// CHECK: %[[PREV:.+]] = arith.constant 2.500000e+00 : f32
// CHECK: return %[[PREV]], %[[PREV]]
func.func @compute_scale_history_keeps_previous() -> (f32, f32) {
  %zeros = arith.constant dense<0.0> : tensor<16xf32>
  %h = arith.constant dense<[0.0, 8.0]> : tensor<2xf32>
  %prev = arith.constant 2.5 : f32
  %0 = fp8.compute_scale %zeros, %prev for f8E4M3FN : tensor<16xf32>
  %1 = fp8.compute_scale %h, %prev for f8E4M3FN
      {algo = #fp8.amax_algo<most_recent>} : tensor<2xf32>
  return %0, %1 : f32, f32
}

// -----

// The previous scale must be known to fold the delayed form.

// CHECK-LABEL: func.func @compute_scale_no_fold
// CHECK-SAME: (%[[PREV:.+]]: f32, %[[AMAX:.+]]: f32)
// CHECK: fp8.compute_scale %{{.+}}, %[[PREV]] for f8E4M3FN : f32
// CHECK: fp8.compute_scale %[[AMAX]] for f8E4M3FN : f32
func.func @compute_scale_no_fold(%prev: f32, %amax: f32) -> (f32, f32) {
  %a = arith.constant 1.0 : f32
  %0 = fp8.compute_scale %a, %prev for f8E4M3FN : f32
  %1 = fp8.compute_scale %amax for f8E4M3FN : f32
  return %0, %1 : f32, f32
}

//===----------------------------------------------------------------------===//
// fp8.record_amax / fp8.roll_history
//===----------------------------------------------------------------------===//

// -----

// Row 0 becomes max(row 0, amax), NaN ignored; other rows are untouched.

// CHECK-LABEL: func.func @record_amax
// CHECK-DAG: %[[A:.+]] = arith.constant dense<[5.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[7.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<4xf32>
// CHECK: return %[[A]], %[[B]], %[[B]]
func.func @record_amax() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %h0 = arith.constant dense<[0.0, 3.0, 2.0, 1.0]> : tensor<4xf32>
  %h7 = arith.constant dense<[7.0, 3.0, 2.0, 1.0]> : tensor<4xf32>
  %five = arith.constant 5.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %0 = fp8.record_amax %h0, %five : tensor<4xf32>
  %1 = fp8.record_amax %h7, %five : tensor<4xf32>
  %2 = fp8.record_amax %h7, %nan : tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// TE order: new[i] = old[i+1], new[N-1] = old[0], new[0] = 0.
// [5, 3, 2, 1] -> [0, 2, 1, 5]; a one-row history is just cleared.

// CHECK-LABEL: func.func @roll_history
// CHECK-DAG: %[[A:.+]] = arith.constant dense<[0.000000e+00, 2.000000e+00, 1.000000e+00, 5.000000e+00]> : tensor<4xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK: return %[[A]], %[[B]]
func.func @roll_history() -> (tensor<4xf32>, tensor<1xf32>) {
  %h = arith.constant dense<[5.0, 3.0, 2.0, 1.0]> : tensor<4xf32>
  %one = arith.constant dense<9.0> : tensor<1xf32>
  %0 = fp8.roll_history %h : tensor<4xf32>
  %1 = fp8.roll_history %one : tensor<1xf32>
  return %0, %1 : tensor<4xf32>, tensor<1xf32>
}

// -----

// One delayed-scaling step folds completely: record the step's amax (1000)
// into row 0, compute the scale from max over [1000, 3, 2, 1] -> 0.448,
// roll -> [0, 2, 1, 1000].

// CHECK-LABEL: func.func @delayed_scaling_step
// CHECK-DAG: %[[S:.+]] = arith.constant 4.480000e-01 : f32
// CHECK-DAG: %[[H:.+]] = arith.constant dense<[0.000000e+00, 2.000000e+00, 1.000000e+00, 1.000000e+03]> : tensor<4xf32>
// CHECK-NOT: fp8.
// CHECK: return %[[S]], %[[H]]
func.func @delayed_scaling_step() -> (f32, tensor<4xf32>) {
  %h = arith.constant dense<[0.0, 3.0, 2.0, 1.0]> : tensor<4xf32>
  %prev = arith.constant 1.0 : f32
  %amax = arith.constant 1000.0 : f32
  %h1 = fp8.record_amax %h, %amax : tensor<4xf32>
  %s = fp8.compute_scale %h1, %prev for f8E4M3FN : tensor<4xf32>
  %h2 = fp8.roll_history %h1 : tensor<4xf32>
  return %s, %h2 : f32, tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// fp8.amax
//===----------------------------------------------------------------------===//

// -----

// max |x| ignoring NaN: [1, NaN, -3, 2] -> 3; -Inf -> +Inf; all NaN -> 0;
// bf16 and f16 inputs widen exactly (65504 is f16's max).

// CHECK-LABEL: func.func @amax
// CHECK-DAG: %[[THREE:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[F16MAX:.+]] = arith.constant 6.550400e+04 : f32
// CHECK-NOT: fp8.amax
// CHECK: return %[[THREE]], %[[INF]], %[[ZERO]], %[[HALF]], %[[F16MAX]]
func.func @amax() -> (f32, f32, f32, f32, f32) {
  %a = arith.constant dense<[1.0, 0x7FC00000, -3.0, 2.0]> : tensor<4xf32>
  %b = arith.constant dense<[1.0, 0xFF800000]> : tensor<2xf32>
  %c = arith.constant dense<0x7FC00000> : tensor<3xf32>
  %d = arith.constant dense<[-0.5, 0.25]> : tensor<2xbf16>
  %e = arith.constant dense<[-1.0, 65504.0]> : tensor<2xf16>
  %0 = fp8.amax %a : tensor<4xf32>
  %1 = fp8.amax %b : tensor<2xf32>
  %2 = fp8.amax %c : tensor<3xf32>
  %3 = fp8.amax %d : tensor<2xbf16>
  %4 = fp8.amax %e : tensor<2xf16>
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, f32
}

//===----------------------------------------------------------------------===//
// fp8.dequantize
//===----------------------------------------------------------------------===//

// -----

// q * scale_inv in f32, rounded to the result type:
// E4M3 [448, -1.5, 2^-6, 2^-9] * 0.5 -> bf16 [224, -0.75, 2^-7, 2^-10];
// E5M2 [57344, -2^-15] * 2 -> f32 [114688, -2^-14].

// CHECK-LABEL: func.func @dequantize
// CHECK-DAG: %[[A:.+]] = arith.constant dense<[2.240000e+02, -7.500000e-01, 7.812500e-03, 9.765620e-04]> : tensor<4xbf16>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[1.146880e+05, -6.10351563E-5]> : tensor<2xf32>
// CHECK: return %[[A]], %[[B]]
func.func @dequantize() -> (tensor<4xbf16>, tensor<2xf32>) {
  %q = arith.constant dense<[448.0, -1.5, 0.015625, 0.001953125]>
      : tensor<4xf8E4M3FN>
  %g = arith.constant dense<[57344.0, -3.0517578125e-05]> : tensor<2xf8E5M2>
  %half = arith.constant 0.5 : f32
  %two = arith.constant 2.0 : f32
  %0 = fp8.dequantize %q, %half : tensor<4xf8E4M3FN> -> tensor<4xbf16>
  %1 = fp8.dequantize %g, %two : tensor<2xf8E5M2> -> tensor<2xf32>
  return %0, %1 : tensor<4xbf16>, tensor<2xf32>
}

// -----

// Rounding to the result type: 448 * f32(1 / 14933.334) = f32 0.0299999993
// -> bf16 0.030029296875 (0x3CF6: 0x3CF5C28F rounds up);
// 448 * 1000 = 448000 overflows f16 (max 65504) -> +Inf (0x7C00);
// the E4M3 NaN stays a (quiet) NaN; its payload is not specified.

// CHECK-LABEL: func.func @dequantize_rounding
// CHECK-DAG: %[[A:.+]] = arith.constant dense<3.002930e-02> : tensor<2xbf16>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<[0x7C00, 0x{{[7F][EF][0-9A-F][0-9A-F]}}]> : tensor<2xf16>
// CHECK: return %[[A]], %[[B]]
func.func @dequantize_rounding() -> (tensor<2xbf16>, tensor<2xf16>) {
  %q = arith.constant dense<448.0> : tensor<2xf8E4M3FN>
  %qn = arith.constant dense<[448.0, 0x7F]> : tensor<2xf8E4M3FN>
  %inv = arith.constant 6.69642832E-5 : f32
  %big = arith.constant 1000.0 : f32
  %0 = fp8.dequantize %q, %inv : tensor<2xf8E4M3FN> -> tensor<2xbf16>
  %1 = fp8.dequantize %qn, %big : tensor<2xf8E4M3FN> -> tensor<2xf16>
  return %0, %1 : tensor<2xbf16>, tensor<2xf16>
}

//===----------------------------------------------------------------------===//
// fp8.cast_transpose
//===----------------------------------------------------------------------===//

// -----

// [[1, 2, 1000], [-17, 0.0029296875, 19]] * 1 in E4M3:
// [[1, 2, 448], [-16, 2^-8, 20]] (saturation; ties 17 -> 16, 19 -> 20 and
// 1.5 * 2^-9 -> 2^-8 to even); the transpose is [[1, -16], [2, 2^-8],
// [448, 20]]; amax 1000.

// CHECK-LABEL: func.func @cast_transpose
// CHECK-DAG: %[[R:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 4.480000e+02], [-1.600000e+01, 3.906250e-03, 2.000000e+01]]> : tensor<2x3xf8E4M3FN>
// CHECK-DAG: %[[T:.+]] = arith.constant dense<{{\[}}[1.000000e+00, -1.600000e+01], [2.000000e+00, 3.906250e-03], [4.480000e+02, 2.000000e+01]]> : tensor<3x2xf8E4M3FN>
// CHECK-DAG: %[[A:.+]] = arith.constant 1.000000e+03 : f32
// CHECK-NOT: fp8.cast_transpose
// CHECK: return %[[R]], %[[T]], %[[A]]
func.func @cast_transpose()
    -> (tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>, f32) {
  %x = arith.constant dense<[[1.0, 2.0, 1000.0], [-17.0, 0.0029296875, 19.0]]>
      : tensor<2x3xf32>
  %s = arith.constant 1.0 : f32
  %r, %t, %amax = fp8.cast_transpose %x, %s
      : tensor<2x3xf32> -> tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>, f32
  return %r, %t, %amax : tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>, f32
}

// -----

// E5M2 with the seeds' scale: [[0.03, -0.02]] * 14933.334 = [[448, -298.67]]
// in E5M2: [256, 512) has step 64 -> 448 (exact), -298.67 -> -320.
// A splat input gives splat results.

// CHECK-LABEL: func.func @cast_transpose_e5m2
// CHECK-DAG: %[[R:.+]] = arith.constant dense<{{\[}}[4.480000e+02, -3.200000e+02]]> : tensor<1x2xf8E5M2>
// CHECK-DAG: %[[T:.+]] = arith.constant dense<{{\[}}[4.480000e+02], [-3.200000e+02]]> : tensor<2x1xf8E5M2>
// CHECK-DAG: %[[SR:.+]] = arith.constant dense<5.734400e+04> : tensor<2x3xf8E5M2>
// CHECK-DAG: %[[ST:.+]] = arith.constant dense<5.734400e+04> : tensor<3x2xf8E5M2>
// CHECK: return %[[R]], %[[T]], %[[SR]], %[[ST]]
func.func @cast_transpose_e5m2()
    -> (tensor<1x2xf8E5M2>, tensor<2x1xf8E5M2>, tensor<2x3xf8E5M2>,
        tensor<3x2xf8E5M2>) {
  %x = arith.constant dense<[[0.03, -0.02]]> : tensor<1x2xf32>
  %s = arith.constant 14933.334 : f32
  %r, %t = fp8.cast_transpose %x, %s
      : tensor<1x2xf32> -> tensor<1x2xf8E5M2>, tensor<2x1xf8E5M2>
  %big = arith.constant dense<1.0e6> : tensor<2x3xf32>
  %one = arith.constant 1.0 : f32
  %sr, %st = fp8.cast_transpose %big, %one
      : tensor<2x3xf32> -> tensor<2x3xf8E5M2>, tensor<3x2xf8E5M2>
  return %r, %t, %sr, %st : tensor<1x2xf8E5M2>, tensor<2x1xf8E5M2>,
      tensor<2x3xf8E5M2>, tensor<3x2xf8E5M2>
}
// -----

// Hand-derived: per-row-of-2 blocks, NaN ignored, 0 for a block of zeros.
// CHECK-LABEL: func.func @fold_block_amax
// CHECK: arith.constant dense<{{\[}}[3.000000e+00, 2.000000e+00], [5.000000e-01, 0.000000e+00]]> : tensor<2x2xf32>
func.func @fold_block_amax() -> tensor<2x2xf32> {
  %x = arith.constant dense<[[1.0, -3.0, 2.0, 0x7FC00000], [0.5, 0.0, -0.0, 0.0]]> : tensor<2x4xf32>
  %a = fp8.block_amax %x block [1, 2] : tensor<2x4xf32> -> tensor<2x2xf32>
  return %a : tensor<2x2xf32>
}

// -----

// FP8-FACTS.md's worked numbers, powers of two rounded down: amax 0.05 ->
// 8960 -> 8192, amax 1200 -> 0.3733 -> 0.25; an all-zero block and an Inf
// amax get 1 (never 0/0).
// CHECK-LABEL: func.func @fold_block_scales
// CHECK-DAG: arith.constant dense<[8.192000e+03, 2.500000e-01, 1.000000e+00, 1.000000e+00]> : tensor<4xf32>
// CHECK-DAG: arith.constant dense<[1.22070313E-4, 4.000000e+00, 1.000000e+00, 1.000000e+00]> : tensor<4xf32>
func.func @fold_block_scales() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = arith.constant dense<[0.05, 1200.0, 0.0, 0x7F800000]> : tensor<4xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  return %s, %si : tensor<4xf32>, tensor<4xf32>
}

// -----

// MX: scale_inv = 2^ceil(log2(amax / 448)): 448 -> 2^0 (code 127), 449 ->
// 2^1 (128), 1 -> 2^-8 (119), 0 -> 2^-127 (0); the multipliers are exact
// reciprocals.
// CHECK-LABEL: func.func @fold_mx_scales
// CHECK-DAG: arith.constant dense<[1.000000e+00, 5.000000e-01, 2.560000e+02, 1.70141183E+38]> : tensor<4xf32>
// HEX-LABEL: func.func @fold_mx_scales
// HEX-DAG: arith.constant dense<"0x7F807700"> : tensor<4xf8E8M0FNU>
func.func @fold_mx_scales() -> (tensor<4xf32>, tensor<4xf8E8M0FNU>) {
  %a = arith.constant dense<[448.0, 449.0, 1.0, 0.0]> : tensor<4xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN
      : tensor<4xf32> -> tensor<4xf32>, tensor<4xf8E8M0FNU>
  return %s, %si : tensor<4xf32>, tensor<4xf8E8M0FNU>
}

// -----

// Each pair with its block's scale: [1, 3] * 2 = [2, 6]; [100, 448] * 0.5 =
// [50, 224], 50 a tie between 48 and 52 in E4M3 that rounds to even (48).
// CHECK-LABEL: func.func @fold_block_quantize
// CHECK: arith.constant dense<[2.000000e+00, 6.000000e+00, 4.800000e+01, 2.240000e+02]> : tensor<4xf8E4M3FN>
func.func @fold_block_quantize() -> tensor<4xf8E4M3FN> {
  %x = arith.constant dense<[1.0, 3.0, 100.0, 448.0]> : tensor<4xf32>
  %s = arith.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %q = fp8.quantize %x, %s block [2] : tensor<4xf32> scales tensor<2xf32> -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

// E8M0 scale_invs 2^1 (code 0x80) and 2^-8 (0x77).
// CHECK-LABEL: func.func @fold_block_dequantize
// CHECK: arith.constant dense<[4.000000e+00, -3.000000e+00, 0.001953125, 5.000000e-01]> : tensor<4xf32>
func.func @fold_block_dequantize() -> tensor<4xf32> {
  %q = arith.constant dense<[2.0, -1.5, 0.5, 128.0]> : tensor<4xf8E4M3FN>
  %si = arith.constant dense<"0x8077"> : tensor<2xf8E8M0FNU>
  %d = fp8.dequantize %q, %si block [2] : tensor<4xf8E4M3FN> scales tensor<2xf8E8M0FNU> -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// A result typed with dynamic sizes never folds (the constant would need a
// static type): the op stays, nothing is allocated for it.
// CHECK-LABEL: func.func @no_fold_dynamic_block_quantize
// CHECK: fp8.quantize %{{.+}}, %{{.+}} block [1, 3] : tensor<4x3xf32> scales tensor<4x1xf32> -> tensor<?x3xf8E4M3FN>
// CHECK: fp8.dequantize %{{.+}}, %{{.+}} block [1, 3] : tensor<4x3xf8E4M3FN> scales tensor<4x1xf32> -> tensor<?x3xf32>
func.func @no_fold_dynamic_block_quantize() -> (tensor<?x3xf8E4M3FN>, tensor<?x3xf32>) {
  %c = arith.constant dense<1.0> : tensor<4x3xf32>
  %s = arith.constant dense<2.0> : tensor<4x1xf32>
  %q = fp8.quantize %c, %s block [1, 3] : tensor<4x3xf32> scales tensor<4x1xf32> -> tensor<?x3xf8E4M3FN>
  %c8 = arith.constant dense<1.0> : tensor<4x3xf8E4M3FN>
  %d = fp8.dequantize %c8, %s block [1, 3] : tensor<4x3xf8E4M3FN> scales tensor<4x1xf32> -> tensor<?x3xf32>
  return %q, %d : tensor<?x3xf8E4M3FN>, tensor<?x3xf32>
}

//===----------------------------------------------------------------------===//
// fp8.attention, fp8.attention_grad
//===----------------------------------------------------------------------===//

// A mask that changes no score goes: a boolean splat of true, an additive
// splat of +0 or -0 (s + 0 = s, s + -0 = s, exactly). causal goes where it
// masks nothing: 8 keys, causal_offset 7 (row 0 sees keys 0 .. 7), and
// not at offset 6 (row 0 would miss key 7).
// CHECK-LABEL: func.func @attention_neutral_masks
// CHECK: fp8.attention %arg0, %arg0, %arg0 scale 5.000000e-01 :
// CHECK: fp8.attention %arg0, %arg0, %arg0 scale 5.000000e-01 :
// CHECK: fp8.attention %arg0, %arg0, %arg0 scale 5.000000e-01 :
// CHECK: fp8.attention %arg0, %arg0, %arg0 scale 5.000000e-01 :
// CHECK: fp8.attention %arg0, %arg0, %arg0 scale 5.000000e-01 {causal, causal_offset = 6 : i64} :
// A mask that does change scores stays: false masks a score, 1.0 shifts it.
// CHECK: fp8.attention %arg0, %arg0, %arg0 mask %{{.+}} : tensor<1x1x8x8xi1>
// CHECK: fp8.attention %arg0, %arg0, %arg0 mask %{{.+}} : tensor<1x1x8x8xf32>
// The backward likewise.
// CHECK: fp8.attention_grad %arg0, %arg0, %arg0, %arg0, %arg0, %arg1 scale 5.000000e-01 :
func.func @attention_neutral_masks(%x: tensor<1x2x8x4xf32>, %lse: tensor<1x2x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %true = arith.constant dense<true> : tensor<1x1x8x8xi1>
  %zero = arith.constant dense<0.0> : tensor<1x1x8x8xf32>
  %negzero = arith.constant dense<-0.0> : tensor<1x2x8x8xf32>
  %false = arith.constant dense<false> : tensor<1x1x8x8xi1>
  %one = arith.constant dense<1.0> : tensor<1x1x8x8xf32>
  %0 = fp8.attention %x, %x, %x mask %true : tensor<1x1x8x8xi1> scale 0.5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %1 = fp8.attention %x, %x, %x mask %zero : tensor<1x1x8x8xf32> scale 0.5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %2 = fp8.attention %x, %x, %x mask %negzero : tensor<1x2x8x8xf32> scale 0.5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %3 = fp8.attention %x, %x, %x scale 0.5 {causal, causal_offset = 7} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %4 = fp8.attention %x, %x, %x scale 0.5 {causal, causal_offset = 6} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %5 = fp8.attention %x, %x, %x mask %false : tensor<1x1x8x8xi1> scale 0.5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %6 = fp8.attention %x, %x, %x mask %one : tensor<1x1x8x8xf32> scale 0.5 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %dq, %dk, %dv = fp8.attention_grad %x, %x, %x, %x, %x, %lse mask %true : tensor<1x1x8x8xi1> scale 0.5 {causal, causal_offset = 9} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %dq : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// A constant boolean mask that keeps exactly keys j <= i + p for every row
// i is the causal flag with offset p: 3 queries x 5 keys with p = 2 (the
// prefill of 3 tokens after 2 cached ones), the same for both heads. On an
// op that is causal already, the smaller offset (1) wins. One element off
// the pattern (row 2 keeps key 0 masked), a different pattern per head, or
// a row 0 that keeps no key: the mask stays.
// CHECK-LABEL: func.func @attention_constant_causal_mask
// CHECK: fp8.attention %arg0, %arg1, %arg1 scale 5.000000e-01 {causal, causal_offset = 2 : i64} :
// CHECK: fp8.attention %arg0, %arg1, %arg1 scale 5.000000e-01 {causal, causal_offset = 1 : i64} :
// CHECK: fp8.attention %arg0, %arg1, %arg1 mask %{{.+}} : tensor<1x1x3x5xi1>
// CHECK: fp8.attention %arg0, %arg1, %arg1 mask %{{.+}} : tensor<1x2x3x5xi1>
// CHECK: fp8.attention %arg0, %arg1, %arg1 mask %{{.+}} : tensor<1x1x3x5xi1>
// CHECK: fp8.attention_grad %arg0, %arg1, %arg1, %arg0, %arg0, %arg2 scale 5.000000e-01 {causal, causal_offset = 2 : i64} :
func.func @attention_constant_causal_mask(%q: tensor<1x2x3x4xf32>, %kv: tensor<1x2x5x4xf32>, %lse: tensor<1x2x3xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %tril = arith.constant dense<[[[[true, true, true, false, false], [true, true, true, true, false], [true, true, true, true, true]]]]> : tensor<1x1x3x5xi1>
  %off = arith.constant dense<[[[[true, true, true, false, false], [true, true, true, true, false], [false, true, true, true, true]]]]> : tensor<1x1x3x5xi1>
  %heads = arith.constant dense<[[[[true, true, true, false, false], [true, true, true, true, false], [true, true, true, true, true]], [[true, true, false, false, false], [true, true, true, false, false], [true, true, true, true, false]]]]> : tensor<1x2x3x5xi1>
  %none = arith.constant dense<[[[[false, false, false, false, false], [true, false, false, false, false], [true, true, false, false, false]]]]> : tensor<1x1x3x5xi1>
  %0 = fp8.attention %q, %kv, %kv mask %tril : tensor<1x1x3x5xi1> scale 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  %1 = fp8.attention %q, %kv, %kv mask %tril : tensor<1x1x3x5xi1> scale 0.5 {causal, causal_offset = 1} : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  %2 = fp8.attention %q, %kv, %kv mask %off : tensor<1x1x3x5xi1> scale 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  %3 = fp8.attention %q, %kv, %kv mask %heads : tensor<1x2x3x5xi1> scale 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  %4 = fp8.attention %q, %kv, %kv mask %none : tensor<1x1x3x5xi1> scale 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32> -> tensor<1x2x3x4xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %kv, %kv, %q, %q, %lse mask %tril : tensor<1x1x3x5xi1> scale 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3xf32>
  return %0, %1, %2, %3, %4, %dq : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}
