// The policy options of fp8-classify (shared with fp8-quantize and
// fp8-pipeline), on one three-layer MLP.
//
// RUN: fp8-opt %s --fp8-classify | FileCheck %s --check-prefix=DEFAULT
// RUN: fp8-opt %s --fp8-classify="keep-first-last" | FileCheck %s --check-prefix=FIRSTLAST
// RUN: fp8-opt %s --fp8-classify="min-flops=1000000" | FileCheck %s --check-prefix=SMALL
// RUN: fp8-opt %s --fp8-classify="exclude=mlp" | FileCheck %s --check-prefix=EXCLUDE-FUNC
// RUN: fp8-opt %s --fp8-classify="exclude=down_proj,nothing" | FileCheck %s --check-prefix=EXCLUDE-LOC
// RUN: fp8-opt %s --fp8-classify="report=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: not fp8-opt %s --fp8-classify="exclude=(" 2>&1 | FileCheck %s --check-prefix=BADREGEX

// DEFAULT-COUNT-3: fp8.decision = "fp8", fp8.reason = "weight_gemm"

// FIRSTLAST: fp8.reason = "first_or_last_gemm"
// FIRSTLAST: fp8.reason = "weight_gemm"
// FIRSTLAST: fp8.reason = "first_or_last_gemm"

// 2 * 64 * 32 * 128 = 524288 flops for the middle GEMM, 1048576 for the
// others.
// SMALL: fp8.reason = "weight_gemm"
// SMALL: fp8.reason = "below_size_threshold"
// SMALL: fp8.reason = "weight_gemm"

// EXCLUDE-FUNC-COUNT-3: fp8.reason = "excluded"

// EXCLUDE-LOC: fp8.reason = "weight_gemm"
// EXCLUDE-LOC: fp8.reason = "weight_gemm"
// EXCLUDE-LOC: fp8.reason = "excluded"

// JSON: "gemms": [
// JSON: "decision": "fp8"
// JSON: "k": 64
// JSON: "format": "f8E4M3FN"
// JSON: "origin": "computed"
// JSON: "role": "activation"
// JSON: "m": 64
// JSON: "n": 128
// JSON: "reason": "weight_gemm"
// JSON: "origin": "arg1"
// JSON: "role": "weight"
// JSON: "totals": {
// JSON-NEXT: "flops": 2621440
// JSON-NEXT: "fp8": 3
// JSON-NEXT: "fp8_flop_share": 1
// JSON-NEXT: "fp8_flops": 2621440
// JSON-NEXT: "gemms": 3
// JSON-NEXT: "gemms_with_dynamic_sizes": 0
// JSON-NEXT: "high_precision": 0

// BADREGEX: error: invalid exclude pattern '('

func.func @mlp(%x: tensor<64x64xf32>, %w0: tensor<64x128xf32>, %w1: tensor<128x32xf32>, %w2: tensor<32x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %a = math.tanh %x : tensor<64x64xf32>
  %e0 = tensor.empty() : tensor<64x128xf32>
  %c0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %h0 = linalg.matmul ins(%a, %w0 : tensor<64x64xf32>, tensor<64x128xf32>) outs(%c0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e1 = tensor.empty() : tensor<64x32xf32>
  %c1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%c1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<64x256xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %h2 = linalg.matmul ins(%h1, %w2 : tensor<64x32xf32>, tensor<32x256xf32>) outs(%c2 : tensor<64x256xf32>) -> tensor<64x256xf32> loc("down_proj")
  return %h2 : tensor<64x256xf32>
}
