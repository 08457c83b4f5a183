// F6: a report that cannot be written (a full disk) aborted the process
// from the stream's destructor ("LLVM ERROR: IO failure", no location). It
// is now an error of the pass, with the file and the reason.
//
// RUN: not fp8-opt %s --fp8-pipeline=report=/dev/full -o /dev/null 2>&1 | FileCheck %s
// RUN: not fp8-opt %s --fp8-classify=report=/dev/full -o /dev/null 2>&1 | FileCheck %s
// RUN: not fp8-opt %s --fp8-classify=report=%t.missing-dir/r.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPEN
// CHECK: error: cannot write the FP8 report to '/dev/full': No space left on device
// CHECK-NOT: LLVM ERROR
// OPEN: error: cannot write the FP8 report to '{{.*}}missing-dir/r.json': No such file or directory
func.func @f(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
