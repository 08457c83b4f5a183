// fp8-lower-to-gpu: a module with fp8 ops and high-precision ops becomes one
// GPU program. The host holds LLVM dialect, the kernels' gpu.binary and
// their gpu.launch_func (both translated to mgpu* calls), nothing else; its
// buffers are managed memory (generic allocation functions); each kernel
// assembles for sm_90a without libdevice.
//
// RUN: env -u CUDA_HOME -u CUDA_PATH fp8-opt %s --fp8-lower-to-gpu -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %if ptxas %{ %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t --ptxas %ptxas sm_90a %}
// The chip must be one that the NVVM target knows:
// RUN: not fp8-opt %s --fp8-lower-to-gpu="chip=sm_9000" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: chip 'sm_9000' cannot run the FP8 kernels

// RUN: FileCheck %s --check-prefix=HOST < %t.mlir

// The fp8 ops are the project's kernels (convert-fp8-to-gpu-launches, whose
// launchers fp8-inline-gpu-launchers inlines); the rest, upstream's kernels. All
// are queued on one stream, which the host waits for only where it reads
// what they wrote (the amax it returns) and before it returns.
// CHECK-LABEL: llvm.func @step(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: %[[S0:.+]] = llvm.call @mgpuStreamCreate()
// CHECK: gpu.launch_func <%[[S0]] : !llvm.ptr> @step_kernel::@step_kernel
// CHECK-NOT: mgpuStream
// CHECK: gpu.launch_func <%[[S0]] : !llvm.ptr> @fp8_kernels::@quantize_amax_f32_e4m3
// The buffers only the GPU touches are stream-ordered: freed on the stream
// after their last kernel, not after the wait.
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @mgpuMemFree(%{{.+}}, %[[S0]])
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S0]])
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[S0]])
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: %[[S1:.+]] = llvm.call @mgpuStreamCreate()
// CHECK: gpu.launch_func <%[[S1]] : !llvm.ptr> @fp8_kernels::@dequantize_e4m3_f32
// CHECK-NOT: mgpuStream
// CHECK: gpu.launch_func <%[[S1]] : !llvm.ptr> @step_kernel::@step_kernel_0
// CHECK-NOT: mgpuStream
// CHECK: gpu.launch_func <%[[S1]] : !llvm.ptr> @step_kernel::@step_kernel_1
// CHECK-NOT: mgpuStream
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S1]])
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[S1]])
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return
// CHECK: llvm.func @_mlir_ciface_step(
// RUN: FileCheck %s --check-prefix=BINARIES < %t.mlir
// BINARIES-DAG: gpu.binary @fp8_kernels
// BINARIES-DAG: gpu.binary @step_kernel
// HOST-NOT: {{(linalg|memref|fp8|func|scf|arith|math|tensor)\.}}
// HOST-NOT: llvm.call @malloc
// HOST-NOT: llvm.call @free
// HOST-NOT: fp8.gpu_launcher
// HOST-NOT: __fp8_gpu_

// y = quantize(x * 2) -> dequantize, amax; plus a row sum in f32.
func.func @step(%x: tensor<4x100xf32>, %s: f32) -> (tensor<4x100xf32>, f32, tensor<4xf32>)
    attributes {llvm.emit_c_interface} {
  %e = tensor.empty() : tensor<4x100xf32>
  %two = arith.constant 2.0 : f32
  %d = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x100xf32>) outs(%e : tensor<4x100xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<4x100xf32>
  %q, %amax = fp8.quantize %d, %s : tensor<4x100xf32> -> tensor<4x100xf8E4M3FN>, f32
  %inv = arith.constant 0.5 : f32
  %y = fp8.dequantize %q, %inv : tensor<4x100xf8E4M3FN> -> tensor<4x100xf32>
  %z = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<4xf32>
  %r0 = linalg.fill ins(%z : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                          iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x100xf32>) outs(%r0 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sum = arith.addf %acc, %a : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  return %y, %amax, %rows : tensor<4x100xf32>, f32, tensor<4xf32>
}
