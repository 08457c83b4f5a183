// libfp8_gpu_runtime.so implements MLIR's GPU runtime ABI: a host program
// compiled by upstream's own GPU route (gpu-module-to-binary for the
// kernel, gpu-to-llvm for allocations, copies, the stream and the launch)
// runs through it. Here the CUDA driver is the fake one (host memory,
// launches logged, not run), traced: every call the host makes, in order,
// and nothing left allocated. gpu-runtime-abi-cuda.mlir runs the same on a
// GPU.
//
// UNSUPPORTED: sanitizer
// (The runtime library is instrumented in the ASan build; the uninstrumented
// mlir-runner cannot load it. Stage 1 of CI runs this test.)
//
// RUN: mlir-opt %s --pass-pipeline='builtin.module(convert-linalg-to-loops,convert-scf-to-cf,gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa},expand-strided-metadata,gpu-to-llvm,convert-to-llvm,reconcile-unrealized-casts)' -o %t.ll.mlir
// RUN: env FP8_CUDA_DRIVER=%fake_cuda_driver FP8_FAKE_CUDA_TRACE=1 \
// RUN:   mlir-runner %t.ll.mlir -e main -entry-point-result=void \
// RUN:   -shared-libs=%fp8_gpu_runtime,%mlir_runner_libs 2>&1 | FileCheck %s
//
// The runtime's first act: the device's memory pool keeps what
// stream-ordered frees return (release threshold 4 = UINT64_MAX), for the
// next calls. The module is loaded when the program starts, by the
// gpu.binary's constructor (mgpuModuleLoadJIT: PTX). `gpu.alloc async` and
// `gpu.dealloc async` are stream-ordered (cuMemAllocAsync, cuMemFreeAsync
// on the stream).
// CHECK: fake-cuda: mempool attribute 4 = 18446744073709551615
// CHECK: fake-cuda: load module ({{[0-9]+}} bytes of PTX)
// CHECK-NEXT: fake-cuda: stream create
// CHECK-NEXT: fake-cuda: alloc async 4000 bytes
// CHECK-NEXT: fake-cuda: alloc async 4000 bytes
// CHECK-NEXT: fake-cuda: copy 4000 bytes
// CHECK-NEXT: fake-cuda: copy 4000 bytes
// 1000 elements, 256 threads a block: 4 blocks.
// CHECK-NEXT: fake-cuda: launch add grid 4,1,1 block 256,1,1 smem 0
// The second launch has an empty grid (no blocks): nothing is launched,
// and no error (the driver would answer CUDA_ERROR_INVALID_VALUE).
// CHECK-NEXT: fake-cuda: copy 4000 bytes
// CHECK-NEXT: fake-cuda: free async 4000 bytes
// CHECK-NEXT: fake-cuda: free async 4000 bytes
// CHECK-NEXT: fake-cuda: stream synchronize
// CHECK-NEXT: fake-cuda: stream destroy
// The fake runs no kernel: b comes back as it went.
// CHECK: [1.5, 1.5, 1.5, 1.5]
// With the last module, what the pool keeps goes back to the driver.
// CHECK: fake-cuda: unload module
// CHECK-NEXT: fake-cuda: mempool trim to 0
// CHECK-NEXT: fake-cuda: at exit 0 allocations, 0 modules, 0 streams live
//
// A driver without a memory pool: plain device memory, each free after the
// stream it was queued on has finished.
// RUN: env FP8_CUDA_DRIVER=%fake_cuda_driver FP8_FAKE_CUDA_TRACE=1 FP8_FAKE_CUDA_NO_POOL=1 \
// RUN:   mlir-runner %t.ll.mlir -e main -entry-point-result=void \
// RUN:   -shared-libs=%fp8_gpu_runtime,%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=NOPOOL
// NOPOOL-NOT: mempool attribute
// NOPOOL: fake-cuda: alloc 4000 bytes
// NOPOOL-NEXT: fake-cuda: alloc 4000 bytes
// NOPOOL: fake-cuda: stream synchronize
// NOPOOL-NEXT: fake-cuda: free 4000 bytes
// NOPOOL-NEXT: fake-cuda: stream synchronize
// NOPOOL-NEXT: fake-cuda: free 4000 bytes
// NOPOOL: [1.5, 1.5, 1.5, 1.5]
// NOPOOL: fake-cuda: at exit 0 allocations, 0 modules, 0 streams live
//
// A failing driver call: the message (call, CUDA error name, code, text)
// once; then nothing is copied or launched, and what was allocated is freed.
// RUN: env FP8_CUDA_DRIVER=%fake_cuda_driver FP8_FAKE_CUDA_TRACE=1 FP8_FAKE_CUDA_MEMORY=6000 \
// RUN:   mlir-runner %t.ll.mlir -e main -entry-point-result=void \
// RUN:   -shared-libs=%fp8_gpu_runtime,%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=OOM
// OOM: fake-cuda: alloc async 4000 bytes
// OOM-NEXT: fp8-gpu-runtime: cuMemAllocAsync(4000 bytes): CUDA_ERROR_OUT_OF_MEMORY (2): out of memory
// OOM-NOT: copy
// OOM-NOT: launch
// OOM: fake-cuda: free async 4000 bytes
// OOM-NOT: fp8-gpu-runtime
// OOM: fake-cuda: at exit 0 allocations, 0 modules, 0 streams live
//
// No driver at all: one message, no crash.
// RUN: env FP8_CUDA_DRIVER=%t.no-such-driver.so \
// RUN:   mlir-runner %t.ll.mlir -e main -entry-point-result=void \
// RUN:   -shared-libs=%fp8_gpu_runtime,%mlir_runner_libs 2>&1 | FileCheck %s --check-prefix=NODRIVER
// NODRIVER: fp8-gpu-runtime: no CUDA driver: cannot load {{.*}}no-such-driver.so
// NODRIVER-NOT: fp8-gpu-runtime
// NODRIVER: [1.5, 1.5, 1.5, 1.5]

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %c = arith.cmpi ult, %i, %n : index
      scf.if %c {
        %x = memref.load %a[%i] : memref<?xf32>
        %y = memref.load %b[%i] : memref<?xf32>
        %s = arith.addf %x, %y : f32
        memref.store %s, %b[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func private @printMemrefF32(memref<*xf32>)

  // b += a on the GPU, 1000 elements of 1.5, and prints b[0:4].
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %n = arith.constant 1000 : index
    %a = memref.alloc(%n) : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf32>
    %v = arith.constant 1.5 : f32
    linalg.fill ins(%v : f32) outs(%a : memref<?xf32>)
    linalg.fill ins(%v : f32) outs(%b : memref<?xf32>)
    %blocks = arith.ceildivui %n, %c256 : index
    %t0 = gpu.wait async
    %da, %t1 = gpu.alloc async [%t0] (%n) : memref<?xf32>
    %db, %t2 = gpu.alloc async [%t1] (%n) : memref<?xf32>
    %t3 = gpu.memcpy async [%t2] %da, %a : memref<?xf32>, memref<?xf32>
    %t4 = gpu.memcpy async [%t3] %db, %b : memref<?xf32>, memref<?xf32>
    %t5 = gpu.launch_func async [%t4] @kernels::@add
        blocks in (%blocks, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%da : memref<?xf32>, %db : memref<?xf32>, %n : index)
    // A dynamic extent 0 at run time: a grid of no blocks, not launched.
    %c0 = arith.constant 0 : index
    %t5e = gpu.launch_func async [%t5] @kernels::@add
        blocks in (%c0, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%da : memref<?xf32>, %db : memref<?xf32>, %c0 : index)
    %t6 = gpu.memcpy async [%t5e] %b, %db : memref<?xf32>, memref<?xf32>
    %t7 = gpu.dealloc async [%t6] %da : memref<?xf32>
    %t8 = gpu.dealloc async [%t7] %db : memref<?xf32>
    gpu.wait [%t8]
    %head = memref.subview %b[0] [4] [1] : memref<?xf32> to memref<4xf32, strided<[1]>>
    %u = memref.cast %head : memref<4xf32, strided<[1]>> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    memref.dealloc %a : memref<?xf32>
    memref.dealloc %b : memref<?xf32>
    return
  }
}
