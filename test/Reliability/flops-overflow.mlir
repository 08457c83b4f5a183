// W3: 2*M*N*K wrapped around in int64 (UBSan: signed overflow), so a
// 2^69-flop GEMM passed for "below_size_threshold". Flop counts now
// saturate at 2^63 - 1 (9223372036854775807) and the totals with them.
//
// RUN: fp8-opt %s --fp8-classify="min-flops=1000 remarks report=%t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// REMARK: remark: FP8 (weight_gemm)
// REMARK-NOT: below_size_threshold
// REPORT: "flops": 9223372036854775807
// REPORT: "fp8_flops": 9223372036854775807
// REPORT: "operand_bytes_saved": 9223372036854775807
func.func @f(%x: tensor<4294967296x4294967296xf32>, %w: tensor<4294967296x16xf32>) -> tensor<4294967296x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4294967296x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<4294967296x16xf32>) -> tensor<4294967296x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4294967296x4294967296xf32>, tensor<4294967296x16xf32>) outs(%c : tensor<4294967296x16xf32>) -> tensor<4294967296x16xf32>
  return %y : tensor<4294967296x16xf32>
}
