// RUN: fp8-opt %s --fp8-async-gpu-host -split-input-file | FileCheck %s

// Launches and copies join one chain; the host waits once, before it
// returns. The copy's own wait pair (fp8-copies-to-gpu) is dropped.
// CHECK-LABEL: func.func @chain
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[T1:.+]] = gpu.launch_func async [%[[T0]]] @k::@a
// CHECK-NEXT: %[[T2:.+]] = gpu.memcpy async [%[[T1]]] %arg1, %arg0
// CHECK-NEXT: %[[T3:.+]] = gpu.launch_func async [%[[T2]]] @k::@a
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK-NEXT: return
// CHECK-NOT: gpu.wait
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
  }
  func.func @chain(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %w = gpu.wait async
    %m = gpu.memcpy async [%w] %y, %x : memref<4xf32>, memref<4xf32>
    gpu.wait [%m]
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
    return
  }
}

// -----

// What the host may do while the chain runs: allocate, write a buffer no
// queued op has, use its stack and host globals, ask the runtime library.
// A one-element buffer's store (the amax zeroed before the kernel that
// reads it) becomes a gpu.memset on the chain: the device writes it. What
// the host must wait for: a read of a buffer a queued op was given
// (through a view), a buffer whose address a tensor map holds, an unknown
// call.
// CHECK-LABEL: func.func @host
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[T1:.+]] = gpu.launch_func async [%[[T0]]] @k::@a
// CHECK-NEXT: %[[AMAX:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: %[[T2:.+]] = gpu.memset async [%[[T1]]] %[[AMAX]], %arg1 : memref<f32>, f32
// CHECK-NEXT: %[[PAIR:.+]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT: memref.store %arg1, %[[PAIR]][%c0]
// CHECK-NEXT: llvm.alloca
// CHECK-NEXT: llvm.store
// CHECK-NEXT: llvm.mlir.addressof @slot
// CHECK-NEXT: llvm.load
// CHECK-NEXT: %[[T3:.+]] = gpu.launch_func async [%[[T2]]] @k::@b {{.*}} args(%[[AMAX]] : memref<f32>)
// CHECK-NEXT: memref.subview
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK-NEXT: memref.load
// CHECK-NEXT: %[[T4:.+]] = gpu.wait async
// CHECK-NEXT: %[[T5:.+]] = gpu.launch_func async [%[[T4]]] @k::@a
// CHECK: %[[MAPPED:.+]] = memref.alloc() : memref<2xf32>
// CHECK: call @fp8GpuEncodeTensorMap
// CHECK-NEXT: memref.store %arg1, %[[PAIR]][%c1]
// CHECK-NEXT: gpu.wait [%[[T5]]]
// CHECK-NEXT: memref.store %arg1, %[[MAPPED]][%c0]
// CHECK-NEXT: call @unknown() : () -> ()
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
    gpu.func @b(%x: memref<f32>) kernel { gpu.return }
  }
  llvm.mlir.global internal @slot() : !llvm.ptr
  func.func private @fp8GpuEncodeTensorMap(!llvm.ptr, !llvm.ptr)
  func.func private @unknown()
  func.func @host(%x: memref<4xf32>, %v: f32) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %i1 = arith.constant 1 : i64
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %amax = memref.alloc() : memref<f32>
    memref.store %v, %amax[] : memref<f32>
    %pair = memref.alloc() : memref<2xf32>
    memref.store %v, %pair[%c0] : memref<2xf32>
    %stack = llvm.alloca %i1 x i64 : (i64) -> !llvm.ptr
    llvm.store %i1, %stack : i64, !llvm.ptr
    %slot = llvm.mlir.addressof @slot : !llvm.ptr
    %p = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    gpu.launch_func @k::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%amax : memref<f32>)
    %view = memref.subview %amax[] [] [] : memref<f32> to memref<f32>
    %r = memref.load %view[] : memref<f32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %buffer = memref.alloc() : memref<2xf32>
    %index = memref.extract_aligned_pointer_as_index %buffer : memref<2xf32> -> index
    %int = arith.index_cast %index : index to i64
    %ptr = llvm.inttoptr %int : i64 to !llvm.ptr
    func.call @fp8GpuEncodeTensorMap(%stack, %ptr) : (!llvm.ptr, !llvm.ptr) -> ()
    memref.store %v, %pair[%c1] : memref<2xf32>
    memref.store %v, %buffer[%c0] : memref<2xf32>
    func.call @unknown() : () -> ()
    return %r : f32
  }
}

// -----

// Launchers of one block are inlined and erased; one of several blocks
// stays a call, which the chain waits for. Tokens never cross blocks: the
// host waits before a branch. A buffer queued work may use is freed after
// the next wait, not where it was (that would wait there); one no queued
// op has is freed where it is; one only queued work touches is allocated
// and freed on the chain (stream-ordered device memory).
// CHECK-NOT: __fp8_gpu_inlined
// CHECK: func.func private @__fp8_gpu_branchy(%arg0: memref<4xf32>) {
// CHECK-LABEL: func.func @blocks
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[T1:.+]] = gpu.launch_func async [%[[T0]]] @k::@a
// CHECK-NEXT: gpu.wait [%[[T1]]]
// CHECK-NEXT: call @__fp8_gpu_branchy
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[T2:.+]] = gpu.wait async
// CHECK-NEXT: %[[T3:.+]] = gpu.launch_func async [%[[T2]]] @k::@a
// CHECK-NEXT: gpu.wait [%[[T3]]]
// CHECK-NEXT: cf.br ^bb1
// CHECK: ^bb1:
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[T4:.+]] = gpu.wait async
// CHECK-NEXT: %[[T5:.+]] = gpu.launch_func async [%[[T4]]] @k::@a {{.*}} args(%arg0
// CHECK-NEXT: %[[FRESH:.+]] = memref.alloc
// CHECK-NEXT: memref.dealloc %[[FRESH]]
// CHECK-NEXT: %[[SCRATCH:.+]], %[[T6:.+]] = gpu.alloc async [%[[T5]]] () : memref<4xf32>
// CHECK-NEXT: arith.constant 1 : index
// CHECK-NEXT: %[[T7:.+]] = gpu.launch_func async [%[[T6]]] @k::@a {{.*}} args(%[[SCRATCH]]
// CHECK-NEXT: %[[T8:.+]] = gpu.dealloc async [%[[T7]]] %[[SCRATCH]]
// CHECK-NEXT: gpu.wait [%[[T8]]]
// CHECK-NEXT: memref.dealloc %arg0
// CHECK-NEXT: return
// CHECK-NOT: __fp8_gpu_inlined
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
  }
  func.func private @__fp8_gpu_inlined(%x: memref<4xf32>) attributes {fp8.gpu_launcher} {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return
  }
  func.func private @__fp8_gpu_branchy(%x: memref<4xf32>) attributes {fp8.gpu_launcher} {
    cf.br ^bb1
  ^bb1:
    return
  }
  func.func @blocks(%x: memref<4xf32>) {
    call @__fp8_gpu_inlined(%x) : (memref<4xf32>) -> ()
    call @__fp8_gpu_branchy(%x) : (memref<4xf32>) -> ()
    call @__fp8_gpu_inlined(%x) : (memref<4xf32>) -> ()
    cf.br ^bb1
  ^bb1:
    call @__fp8_gpu_inlined(%x) : (memref<4xf32>) -> ()
    memref.dealloc %x : memref<4xf32>
    %fresh = memref.alloc() : memref<4xf32>
    memref.dealloc %fresh : memref<4xf32>
    %scratch = memref.alloc() : memref<4xf32>
    call @__fp8_gpu_inlined(%scratch) : (memref<4xf32>) -> ()
    memref.dealloc %scratch : memref<4xf32>
    return
  }
}

// -----

// A buffer whose address was stored as data may reach queued work through
// memory: the host waits before writing it. Uses after the write do not
// count (the dealloc bookkeeping stores every address at the end).
// CHECK-LABEL: func.func @leak
// CHECK: %[[T:.+]] = gpu.launch_func async
// CHECK-NEXT: memref.store %{{.+}}, %[[LATER:.+]][%c0]
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK-NEXT: memref.store %{{.+}}, %[[LEAKED:.+]][%c0]
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[LATER]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @c(%x: memref<1xindex>) kernel { gpu.return }
  }
  func.func @leak(%v: f32) -> index {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %leaked = memref.alloc() : memref<2xf32>
    %later = memref.alloc() : memref<2xf32>
    %address = memref.extract_aligned_pointer_as_index %leaked : memref<2xf32> -> index
    %holder = memref.alloc() : memref<1xindex>
    memref.store %address, %holder[%c0] : memref<1xindex>
    gpu.launch_func @k::@c blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%holder : memref<1xindex>)
    memref.store %v, %later[%c0] : memref<2xf32>
    memref.store %v, %leaked[%c0] : memref<2xf32>
    %other = memref.extract_aligned_pointer_as_index %later : memref<2xf32> -> index
    return %other : index
  }

  // The same for an address a tensor map took before the chain began.
  // CHECK-LABEL: func.func @mapped
  // CHECK: call @fp8GpuEncodeTensorMap
  // CHECK-NEXT: %[[T:.+]] = gpu.wait async
  // CHECK-NEXT: %[[T1:.+]] = gpu.launch_func async [%[[T]]]
  // CHECK-NEXT: gpu.wait [%[[T1]]]
  // CHECK-NEXT: memref.store
  func.func private @fp8GpuEncodeTensorMap(!llvm.ptr, !llvm.ptr)
  func.func @mapped(%v: f32, %map: !llvm.ptr, %x: memref<1xindex>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %buffer = memref.alloc() : memref<2xf32>
    %index = memref.extract_aligned_pointer_as_index %buffer : memref<2xf32> -> index
    %int = arith.index_cast %index : index to i64
    %ptr = llvm.inttoptr %int : i64 to !llvm.ptr
    func.call @fp8GpuEncodeTensorMap(%map, %ptr) : (!llvm.ptr, !llvm.ptr) -> ()
    gpu.launch_func @k::@c blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<1xindex>)
    memref.store %v, %buffer[%c0] : memref<2xf32>
    return
  }
}

// -----

// An address taken inside an earlier op's region is not traced: the
// buffer counts as used. A stack buffer given to a queued op is waited
// for like any other.
// CHECK-LABEL: func.func @nested
// CHECK: %[[T:.+]] = gpu.launch_func async
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[%c0] : memref<2xf32>
// CHECK-LABEL: func.func @stack
// CHECK: %[[T:.+]] = gpu.launch_func async
// CHECK-NEXT: gpu.wait [%[[T]]]
// CHECK-NEXT: llvm.store
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @c(%x: memref<1xindex>) kernel { gpu.return }
    gpu.func @p(%x: !llvm.ptr) kernel { gpu.return }
  }
  func.func @nested(%v: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %buffer = memref.alloc() : memref<2xf32>
    %holder = memref.alloc() : memref<1xindex>
    scf.execute_region {
      %address = memref.extract_aligned_pointer_as_index %buffer : memref<2xf32> -> index
      memref.store %address, %holder[%c0] : memref<1xindex>
      scf.yield
    }
    gpu.launch_func @k::@c blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%holder : memref<1xindex>)
    memref.store %v, %buffer[%c0] : memref<2xf32>
    return
  }
  func.func @stack(%v: i64) {
    %c1 = arith.constant 1 : index
    %stack = llvm.alloca %v x i64 : (i64) -> !llvm.ptr
    gpu.launch_func @k::@p blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%stack : !llvm.ptr)
    llvm.store %v, %stack : i64, !llvm.ptr
    return
  }
}

// -----

// A launcher's stack buffers of a constant size (the tensor maps) go to
// the caller's entry block when it is inlined: in a loop, the stack must
// not grow with every call.
// CHECK-LABEL: func.func @loop
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK-NEXT: %[[MAP:.+]] = llvm.alloca %[[ONE]] x !llvm.array<16 x i64>
// CHECK: ^bb1:
// CHECK-NOT: llvm.alloca
// CHECK: llvm.store %{{.+}}, %[[MAP]]
// CHECK-NOT: llvm.alloca
// CHECK: cf.cond_br
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: !llvm.array<16 x i64>) kernel { gpu.return }
  }
  func.func private @__fp8_gpu_mapped(%x: i64) attributes {fp8.gpu_launcher} {
    %one = arith.constant 1 : i64
    %c1 = arith.constant 1 : index
    %map = llvm.alloca %one x !llvm.array<16 x i64> : (i64) -> !llvm.ptr
    llvm.store %x, %map : i64, !llvm.ptr
    %value = llvm.load %map : !llvm.ptr -> !llvm.array<16 x i64>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%value : !llvm.array<16 x i64>)
    return
  }
  func.func @loop(%x: i64, %more: i1) {
    cf.br ^bb1
  ^bb1:
    call @__fp8_gpu_mapped(%x) : (i64) -> ()
    cf.cond_br %more, ^bb1, ^bb2
  ^bb2:
    return
  }
}

// -----

// Nothing on the GPU: nothing changes.
// CHECK-LABEL: func.func @none
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @none() {
  %a = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// Stream-ordered buffers: one that only queued work touches (a launch, a
// copy, a memset it becomes from a one-element store, a tensor map's
// address through pointer arithmetic, its free) is allocated and freed on
// the chain, the free moved to right after its last user: %s's after the
// launch of @b, %a's after the launch that reads the tensor map holding its
// address (what is loaded from the map is the buffer's), %c's after the
// copy. Not: one the host reads, one used in another block, one never
// freed, one freed through a view.
// CHECK-LABEL: func.func @device_only
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[A:.+]], %[[T1:.+]] = gpu.alloc async [%[[T0]]] () : memref<4xf32>
// CHECK-NEXT: %[[S:.+]], %[[T2:.+]] = gpu.alloc async [%[[T1]]] () : memref<f32>
// CHECK-NEXT: %[[T3:.+]] = gpu.memset async [%[[T2]]] %[[S]], %arg1
// CHECK-NEXT: %[[C:.+]], %[[T4:.+]] = gpu.alloc async [%[[T3]]] () : memref<4xf32>
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: call @fp8GpuEncodeTensorMap
// CHECK-NEXT: %[[M:.+]] = llvm.load
// CHECK-NEXT: %[[T5:.+]] = gpu.launch_func async [%[[T4]]] @k::@b {{.*}} args(%[[S]] : memref<f32>)
// CHECK-NEXT: %[[T6:.+]] = gpu.dealloc async [%[[T5]]] %[[S]]
// CHECK-NEXT: %[[T7:.+]] = gpu.launch_func async [%[[T6]]] @k::@m {{.*}} args(%[[M]] : !llvm.array<16 x i64>)
// CHECK-NEXT: %[[T8:.+]] = gpu.dealloc async [%[[T7]]] %[[A]]
// CHECK-NEXT: %[[T9:.+]] = gpu.launch_func async [%[[T8]]] @k::@a {{.*}} args(%[[C]] : memref<4xf32>)
// CHECK-NEXT: %[[T10:.+]] = gpu.memcpy async [%[[T9]]] %arg0, %[[C]]
// CHECK-NEXT: %[[T11:.+]] = gpu.dealloc async [%[[T10]]] %[[C]]
// CHECK-NEXT: %[[READ:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[KEPT:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[VIEWED:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NOT: gpu.alloc
// CHECK: cf.br ^bb1
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
    gpu.func @b(%x: memref<f32>) kernel { gpu.return }
    gpu.func @m(%x: !llvm.array<16 x i64>) kernel { gpu.return }
  }
  func.func private @fp8GpuEncodeTensorMap(!llvm.ptr, !llvm.ptr)
  func.func @device_only(%out: memref<4xf32>, %v: f32) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i64
    %map = llvm.alloca %one x !llvm.array<16 x i64> : (i64) -> !llvm.ptr
    %a = memref.alloc() : memref<4xf32>
    %s = memref.alloc() : memref<f32>
    memref.store %v, %s[] : memref<f32>
    %c = memref.alloc() : memref<4xf32>
    %index = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
    %int = arith.index_cast %index : index to i64
    %ptr = llvm.inttoptr %int : i64 to !llvm.ptr
    func.call @fp8GpuEncodeTensorMap(%map, %ptr) : (!llvm.ptr, !llvm.ptr) -> ()
    %m = llvm.load %map : !llvm.ptr -> !llvm.array<16 x i64>
    gpu.launch_func @k::@b blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%s : memref<f32>)
    gpu.launch_func @k::@m blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : !llvm.array<16 x i64>)
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%c : memref<4xf32>)
    %w = gpu.wait async
    %cp = gpu.memcpy async [%w] %out, %c : memref<4xf32>, memref<4xf32>
    gpu.wait [%cp]
    memref.dealloc %a : memref<4xf32>
    memref.dealloc %s : memref<f32>
    memref.dealloc %c : memref<4xf32>
    %read = memref.alloc() : memref<4xf32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%read : memref<4xf32>)
    %r = memref.load %read[%c0] : memref<4xf32>
    memref.dealloc %read : memref<4xf32>
    %kept = memref.alloc() : memref<4xf32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%kept : memref<4xf32>)
    %viewed = memref.alloc() : memref<4xf32>
    %view = memref.cast %viewed : memref<4xf32> to memref<?xf32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%viewed : memref<4xf32>)
    memref.dealloc %view : memref<?xf32>
    cf.br ^bb1
  ^bb1:
    memref.dealloc %kept : memref<4xf32>
    return %r : f32
  }
}

// -----

// Not stream-ordered: a buffer whose tensor map's memory is handed to
// anything but a load (here a launch that takes the map's address: the
// launch that reads the buffer cannot be told); and a gpu.alloc of the
// input's own, whose free keeps its place after the wait.
// CHECK-LABEL: func.func @not_device_only
// CHECK-NOT: gpu.alloc async
// CHECK: gpu.wait [%{{.+}}]
// CHECK-NEXT: memref.dealloc %{{.+}} : memref<4xf32>
// CHECK-NEXT: memref.dealloc %{{.+}} : memref<4xf32>
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
    gpu.func @p(%x: !llvm.ptr) kernel { gpu.return }
  }
  func.func private @fp8GpuEncodeTensorMap(!llvm.ptr, !llvm.ptr)
  func.func @not_device_only() {
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i64
    %map = llvm.alloca %one x !llvm.array<16 x i64> : (i64) -> !llvm.ptr
    %a = memref.alloc() : memref<4xf32>
    %index = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
    %int = arith.index_cast %index : index to i64
    %ptr = llvm.inttoptr %int : i64 to !llvm.ptr
    func.call @fp8GpuEncodeTensorMap(%map, %ptr) : (!llvm.ptr, !llvm.ptr) -> ()
    gpu.launch_func @k::@p blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%map : !llvm.ptr)
    %g = gpu.alloc host_shared () : memref<4xf32>
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
    memref.dealloc %g : memref<4xf32>
    return
  }
}

// -----

// The runtime's question of what memory a pointer is reads no buffer and
// waits for nothing: the launches around it stay one chain.
// CHECK-LABEL: func.func @memory_kind
// CHECK: %[[T0:.+]] = gpu.wait async
// CHECK-NEXT: %[[T1:.+]] = gpu.launch_func async [%[[T0]]] @k::@a
// CHECK-NEXT: call @fp8GpuMemoryKind
// CHECK-NEXT: %[[T2:.+]] = gpu.launch_func async [%[[T1]]] @k::@a
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @a(%x: memref<4xf32>) kernel { gpu.return }
  }
  func.func private @fp8GpuMemoryKind(!llvm.ptr) -> i32
  func.func @memory_kind(%x: memref<4xf32>, %p: !llvm.ptr) -> i32 {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    %kind = call @fp8GpuMemoryKind(%p) : (!llvm.ptr) -> i32
    gpu.launch_func @k::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    return %kind : i32
  }
}
