// fp8-lower-to-gpu with the token count known at run time only: two FP8
// GEMMs (fp8-pipeline, delayed scaling) with a dynamic M. Their launchers
// have no control flow (an empty result is a grid of no blocks, which the
// runtime does not launch), so fp8-inline-gpu-launchers inlines them and
// every kernel of a call, casts, scaling updates, GEMMs and upstream's
// kernels, is queued on one stream, synchronized once. Buffer deallocation
// sees the launchers' buffers as the function's own: no run-time alias
// check (the dealloc helper) before the managed buffers are freed, after
// the wait; the ones only the GPU touches (the dynamic-size intermediate
// among them) are freed on the stream.
//
// RUN: fp8-opt %s --fp8-pipeline --fp8-lower-to-gpu | FileCheck %s
// CHECK-LABEL: llvm.func @f(
// CHECK: %[[S:.+]] = llvm.call @mgpuStreamCreate()
// CHECK-NOT: mgpuStream
// CHECK-COUNT-2: gpu.launch_func <%[[S]] : !llvm.ptr> @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16
// CHECK-NOT: mgpuStream
// CHECK: llvm.call @mgpuMemFree(%{{.+}}, %[[S]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[S]])
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: dealloc_helper
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
// CHECK-NOT: __fp8_gpu_
func.func @f(%a: tensor<?x64xbf16>, %w: tensor<128x64xbf16>, %w2: tensor<64x128xbf16>) -> tensor<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x64xbf16>
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty(%m) : tensor<?x128xbf16>
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %h = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %w : tensor<?x64xbf16>, tensor<128x64xbf16>) outs(%f : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  %e2 = tensor.empty(%m) : tensor<?x64xbf16>
  %f2 = linalg.fill ins(%z : bf16) outs(%e2 : tensor<?x64xbf16>) -> tensor<?x64xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %w2 : tensor<?x128xbf16>, tensor<64x128xbf16>) outs(%f2 : tensor<?x64xbf16>) -> tensor<?x64xbf16>
  return %y : tensor<?x64xbf16>
}
