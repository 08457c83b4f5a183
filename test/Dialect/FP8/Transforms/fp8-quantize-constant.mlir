// Constant weights are scaled from their own amax, so the canonicalizer folds
// their quantization to an FP8 constant, bit-exact.
// RUN: fp8-opt %s --fp8-quantize --canonicalize | FileCheck %s

// amax = 2.0, scale = 448 / 2 = 224 (exact); 2.0 * 224 = 448 and
// -0.5 * 224 = -112, both exact E4M3 values; 0.3 * 224 = 67.2 (f32) rounds
// to 64 (3 mantissa bits: spacing 8 in [64, 128), neighbours 64 and 72);
// 0.001 * 224 = 0.224 (spacing 2^-6 in [0.125, 0.25), neighbours 0.21875
// and 0.234375) rounds to 0.21875.
// scale_inv = 1/224 = 4.46428591E-3 in f32.
// CHECK-LABEL: func.func @constant_weight
// CHECK-DAG: %[[W:.+]] = arith.constant dense<{{\[}}[4.480000e+02, -1.120000e+02], [6.400000e+01, 2.187500e-01]]> : tensor<2x2xf8E4M3FN>
// CHECK-DAG: %[[SINV:.+]] = arith.constant 0.00446428591 : f32
// CHECK: fp8.scaled_matmul %{{.+}}, %[[W]] scales %{{.+}}, %[[SINV]]
func.func @constant_weight(%x: tensor<16x2xf32>) -> tensor<16x2xf32> {
  %w = arith.constant dense<[[2.0, -0.5], [0.3, 0.001]]> : tensor<2x2xf32>
  %a = math.tanh %x : tensor<16x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x2xf32>) -> tensor<16x2xf32>
  %y = linalg.matmul {fp8.precision = "fp8"} ins(%a, %w : tensor<16x2xf32>, tensor<2x2xf32>) outs(%c : tensor<16x2xf32>) -> tensor<16x2xf32>
  return %y : tensor<16x2xf32>
}
