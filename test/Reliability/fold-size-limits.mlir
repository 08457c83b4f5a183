// R1 and W2: what the fp8 folders may materialize.
//
// R1: a 225-byte input (a splat history of 10^9 rows) made --canonicalize
// take 4 GB and write 800 MB: the folders expanded splats row by row and
// materialized histories of any size. A splat history now reduces as its one
// row, and no folder builds a non-splat constant of more than 2^24 elements:
// the op stays and runs instead.
// W2: cast_transpose folded into a constant of its dynamically typed result
// (`dense<> : tensor<?x?x...>`): values lost, output unparsable. A result
// type that is not static is not folded.
//
// RUN: fp8-opt %s -split-input-file --canonicalize | FileCheck %s
// RUN: fp8-opt %s -split-input-file --canonicalize | fp8-opt -split-input-file -o /dev/null

// 448 / 1.0 (every row 1.0), and the previous scale does not matter.
// CHECK-LABEL: func.func @huge_splat_history
// CHECK: %[[S:.+]] = arith.constant 4.480000e+02 : f32
// CHECK: return %[[S]]
func.func @huge_splat_history() -> f32 {
  %h = arith.constant dense<1.0> : tensor<1000000000xf32>
  %p = arith.constant 2.0 : f32
  %c = fp8.compute_scale %h, %p for f8E4M3FN : tensor<1000000000xf32>
  return %c : f32
}

// -----

// Recording an amax makes row 0 differ: 2^25 rows would be a 128 MiB
// constant, so the update stays an op.
// CHECK-LABEL: func.func @huge_history_update
// CHECK: fp8.record_amax
// CHECK: fp8.roll_history
func.func @huge_history_update(%a: f32) -> tensor<33554432xf32> {
  %h = arith.constant dense<1.0> : tensor<33554432xf32>
  %c = arith.constant 3.0 : f32
  %r = fp8.record_amax %h, %c : tensor<33554432xf32>
  %s = fp8.roll_history %r : tensor<33554432xf32>
  return %s : tensor<33554432xf32>
}

// -----

// A splat input quantizes to a splat at any size: 3.0 * 2 = 6.0 is code
// 0x4C in E4M3 (exponent 2 + bias 7 = 9, mantissa .5 -> 0b100).
// CHECK-LABEL: func.func @huge_splat_quantize
// CHECK: arith.constant dense<6.000000e+00> : tensor<100000x100000xf8E4M3FN>
// CHECK-NOT: fp8.quantize
func.func @huge_splat_quantize() -> tensor<100000x100000xf8E4M3FN> {
  %x = arith.constant dense<3.0> : tensor<100000x100000xf32>
  %s = arith.constant 2.0 : f32
  %q = fp8.quantize %x, %s : tensor<100000x100000xf32> -> tensor<100000x100000xf8E4M3FN>
  return %q : tensor<100000x100000xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @cast_transpose_dynamic_result
// CHECK: fp8.cast_transpose
// CHECK-NOT: dense<> : tensor<?x?
func.func @cast_transpose_dynamic_result() -> (tensor<2x3xf8E4M3FN>, tensor<?x?xf8E4M3FN>) {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = arith.constant 2.0 : f32
  %q, %t = fp8.cast_transpose %x, %s : tensor<2x3xf32> -> tensor<2x3xf8E4M3FN>, tensor<?x?xf8E4M3FN>
  return %q, %t : tensor<2x3xf8E4M3FN>, tensor<?x?xf8E4M3FN>
}

// -----

// The static form still folds, both layouts (x * 2 = 2..12, exact in E4M3).
// CHECK-LABEL: func.func @cast_transpose_static_result
// CHECK-DAG: arith.constant dense<{{\[}}[2.000000e+00, 4.000000e+00, 6.000000e+00], [8.000000e+00, 1.000000e+01, 1.200000e+01]]> : tensor<2x3xf8E4M3FN>
// CHECK-DAG: arith.constant dense<{{\[}}[2.000000e+00, 8.000000e+00], [4.000000e+00, 1.000000e+01], [6.000000e+00, 1.200000e+01]]> : tensor<3x2xf8E4M3FN>
func.func @cast_transpose_static_result() -> (tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>) {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = arith.constant 2.0 : f32
  %q, %t = fp8.cast_transpose %x, %s : tensor<2x3xf32> -> tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>
  return %q, %t : tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>
}
