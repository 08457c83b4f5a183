// F1: one FP8 GEMM's result feeds another (x A B, LoRA's x A B + x W). The
// analysis traced the second GEMM's operand to the first GEMM, which the
// rewrite then erased (heap-use-after-free). Now the second GEMM quantizes
// the first one's replacement, under every recipe and state storage.
//
// RUN: fp8-opt %s -split-input-file --fp8-pipeline | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-pipeline="scaling=current" | FileCheck %s --check-prefix=CURRENT
// RUN: fp8-opt %s -split-input-file --fp8-pipeline="state=arguments history=4" | FileCheck %s --check-prefix=ARGS
// And the chain computes x A B: two FP8 GEMMs in a row, each ~28 dB.
// RUN: split-file %s %t
// RUN: fp8-run -O0 %t/x_a_b.mlir --steps=2 --arg=1:normal:0.18 --arg=2:normal:0.18 --json > %t.json
// RUN: %python %S/../Integration/Inputs/check_json.py %t.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= 22' 'steps.1.outputs.0.sqnr_db >= 22'

// CHECK-LABEL: func.func @x_a_b
// CHECK-NOT: linalg.matmul
// CHECK: %[[Y:.+]] = fp8.scaled_matmul
// CHECK: fp8.quantize %[[Y]],
// CHECK: %[[Y2:.+]] = fp8.scaled_matmul
// CHECK: return %[[Y2]]
// CURRENT-LABEL: func.func @x_a_b
// CURRENT: %[[Y:.+]] = fp8.scaled_matmul
// CURRENT: fp8.amax %[[Y]]
// CURRENT: fp8.quantize %[[Y]],
// CURRENT: %[[Y2:.+]] = fp8.scaled_matmul
// CURRENT: return %[[Y2]]
// ARGS-LABEL: func.func @x_a_b
// ARGS-SAME: fp8.state = "fp8.x_a_b.gemm1.lhs.scale"
// ARGS: %[[Y:.+]] = fp8.scaled_matmul
// ARGS: fp8.quantize %[[Y]],
// ARGS: %[[Y2:.+]] = fp8.scaled_matmul
// ARGS: return %[[Y2]],
//--- x_a_b.mlir
func.func @x_a_b(%x: tensor<16x32xf32>, %a: tensor<32x32xf32>,
                 %b: tensor<32x32xf32>) -> tensor<16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%x, %a : tensor<16x32xf32>, tensor<32x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y2 = linalg.matmul ins(%y, %b : tensor<16x32xf32>, tensor<32x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y2 : tensor<16x32xf32>
}

//--- lora.mlir
// -----

// LoRA: y = x W + (x A) B, the low-rank product accumulated onto x W.
// CHECK-LABEL: func.func @lora
// CHECK-NOT: linalg.matmul
// CHECK-COUNT-3: fp8.scaled_matmul
// CHECK-NOT: linalg.matmul
func.func @lora(%x: tensor<16x64xf32>, %w: tensor<64x64xf32>,
                %a: tensor<64x16xf32>, %b: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x64xf32>) outs(%c : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x16xf32>
  %c2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %xa = linalg.matmul ins(%x, %a : tensor<16x64xf32>, tensor<64x16xf32>) outs(%c2 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%xa, %b : tensor<16x16xf32>, tensor<16x64xf32>) outs(%xw : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
