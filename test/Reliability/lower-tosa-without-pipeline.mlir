// T1 (found 2026-12-02 while lowering the shared inputs' high-precision
// twins): a TOSA graph given to fp8-lower-to-cpu or fp8-lower-to-gpu
// without fp8-pipeline (which imports TOSA) failed with "op was not
// bufferized" on its first TOSA op. Both lowerings now import TOSA first
// (nothing happens to a module without it); on the GPU the f32 batched
// GEMM becomes the tf32 wgmma kernel (3xTF32 split).
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-gpu | FileCheck %s --check-prefix=GPU

// [1, 2, 3; 4, 5, 6] x [1, 0; 0, 1; 1, 1] = [4, 5; 10, 11], plus 0.5.
// CHECK: {{\[}}[4.5,   5.5],
// CHECK-NEXT: [10.5,   11.5]]

// GPU-NOT: tosa.
// GPU: gpu.launch_func <%{{.+}} : !llvm.ptr> @fp8_gemm_kernels::@scaled_matmul_f32_f32_f32_64x128x32_s8
// GPU-NOT: tosa.

func.func private @printMemrefF32(memref<*xf32>)

func.func @graph(%a: tensor<1x2x3xf32>, %b: tensor<1x3x2xf32>) -> tensor<1x2x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = tosa.matmul %a, %b, %zp, %zp : (tensor<1x2x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  %d = tosa.add %c, %half : (tensor<1x2x2xf32>, tensor<1x1x1xf32>) -> tensor<1x2x2xf32>
  return %d : tensor<1x2x2xf32>
}

func.func @main() {
  %a = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>
  %b = arith.constant dense<[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]> : tensor<1x3x2xf32>
  %d = func.call @graph(%a, %b) : (tensor<1x2x3xf32>, tensor<1x3x2xf32>) -> tensor<1x2x2xf32>
  %r = tensor.collapse_shape %d [[0, 1], [2]] : tensor<1x2x2xf32> into tensor<2x2xf32>
  %u = tensor.cast %r : tensor<2x2xf32> to tensor<*xf32>
  %m = bufferization.to_buffer %u : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}
