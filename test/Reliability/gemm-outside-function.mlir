// F2: a GEMM at module level, outside any function, has nowhere to keep its
// scaling state (the state is per function): the pipeline crashed on the
// missing function. It is now reported as outside_function and left as it
// was, even when forced to FP8.
//
// RUN: fp8-opt %s --fp8-classify=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: fp8-opt %s --fp8-pipeline | FileCheck %s
// REMARK: remark: kept in high precision: outside_function
// CHECK: linalg.matmul {fp8.precision = "fp8"}
// CHECK-NOT: fp8.scaled_matmul
// CHECK-NOT: fp8.recipe
%x0 = tensor.empty() : tensor<16x32xf32>
%w0 = tensor.empty() : tensor<32x16xf32>
%z = arith.constant 0.0 : f32
%x = linalg.fill ins(%z : f32) outs(%x0 : tensor<16x32xf32>) -> tensor<16x32xf32>
%w = linalg.fill ins(%z : f32) outs(%w0 : tensor<32x16xf32>) -> tensor<32x16xf32>
%e = tensor.empty() : tensor<16x16xf32>
%c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
%y = linalg.matmul {fp8.precision = "fp8"} ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
