// Issue 36, N17: fp8-lower-to-gpu on a GEMM at module level, outside any
// function (F2's input; gemm-outside-function.mlir is the CPU side): the
// GEMM became a kernel launch there, and fp8-inline-gpu-launchers
// dereferenced the missing function (SIGSEGV). As on the CPU, what lies
// outside any function is left to the cleanups (nothing runs it: these
// pure ops fold away); a launcher call there is not inlined.
//
// RUN: fp8-opt %s -split-input-file --fp8-lower-to-gpu | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-pipeline --fp8-lower-to-gpu | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-inline-gpu-launchers | FileCheck %s --check-prefix=INLINE

// CHECK-NOT: gpu.launch_func
// CHECK-NOT: linalg.
%x = tensor.empty() : tensor<16x32xf32>
%w = tensor.empty() : tensor<32x16xf32>
%z = arith.constant 0.0 : f32
%e = tensor.empty() : tensor<16x16xf32>
%c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
%y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>

// -----

// INLINE-LABEL: func.func private @launcher
//       INLINE: %[[B:.+]] = memref.alloc
//       INLINE: func.call @launcher(%[[B]])
//  INLINE-LABEL: func.func @f
//   INLINE-NOT: call @launcher
func.func private @launcher(%b: memref<4xf32>) attributes {fp8.gpu_launcher} {
  return
}
%b = memref.alloc() : memref<4xf32>
func.call @launcher(%b) : (memref<4xf32>) -> ()
func.func @f(%m: memref<4xf32>) {
  func.call @launcher(%m) : (memref<4xf32>) -> ()
  return
}
