// RUN: fp8-opt %s --fp8-free-after-last-use --split-input-file | FileCheck %s

// Each buffer is freed right after the op that last reads or writes it,
// through views and nested regions; the order of everything else stays.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[A:.+]] = memref.alloc()
// CHECK-NEXT:    linalg.fill ins(%arg1 : f32) outs(%[[A]]
// CHECK-NEXT:    %[[B:.+]] = memref.alloc()
// CHECK-NEXT:    %[[V:.+]] = memref.subview %[[B]]
// CHECK-NEXT:    linalg.copy ins(%[[A]] : {{.*}}) outs(%[[B]]
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    %[[C:.+]] = memref.alloc()
// CHECK-NEXT:    linalg.copy ins(%[[V]] : {{.*}}) outs(%[[C]]
// CHECK-NEXT:    memref.dealloc %[[B]]
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.load %[[C]]
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.dealloc %[[C]]
// CHECK-NEXT:    %[[D:.+]] = memref.alloc()
// CHECK-NEXT:    memref.dealloc %[[D]]
// CHECK-NEXT:    return
func.func @chain(%out: memref<4xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%x : f32) outs(%a : memref<8xf32>)
  %b = memref.alloc() : memref<8xf32>
  %view = memref.subview %b[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  %c = memref.alloc() : memref<4xf32>
  linalg.copy ins(%view : memref<4xf32, strided<[1]>>) outs(%c : memref<4xf32>)
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %c[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }
  %d = memref.alloc() : memref<4xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %c : memref<4xf32>
  memref.dealloc %d : memref<4xf32>
  return
}

// -----

// A use that may hand the address on (its address as an integer, a call,
// a loop that carries it) keeps the free where ownership-based deallocation
// put it; so does a free in another block than the allocation, and the
// free of a buffer the function did not allocate.
// CHECK-LABEL: func.func @escapes
// CHECK:         call @keep
// CHECK:         scf.for
// CHECK:         }
// CHECK-NEXT:    memref.alloc
// CHECK-NEXT:    cf.br ^[[NEXT:.+]]
// CHECK-NEXT:  ^[[NEXT]]:
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<1xf32>
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<2xf32>
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<3xf32>
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<4xf32>
// CHECK-NEXT:    memref.dealloc %arg0
// CHECK-NEXT:    return
func.func private @keep(memref<2xf32>)
func.func @escapes(%arg: memref<8xf32>, %x: f32) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %address = memref.alloc() : memref<1xf32>
  %p = memref.extract_aligned_pointer_as_index %address : memref<1xf32> -> index
  %called = memref.alloc() : memref<2xf32>
  call @keep(%called) : (memref<2xf32>) -> ()
  %carried = memref.alloc() : memref<3xf32>
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%m = %carried) -> (memref<3xf32>) {
    scf.yield %m : memref<3xf32>
  }
  %later = memref.alloc() : memref<4xf32>
  cf.br ^next
^next:
  %v = memref.load %later[%c0] : memref<4xf32>
  memref.dealloc %address : memref<1xf32>
  memref.dealloc %called : memref<2xf32>
  memref.dealloc %carried : memref<3xf32>
  memref.dealloc %later : memref<4xf32>
  memref.dealloc %arg : memref<8xf32>
  return %p : index
}

// -----

// Work that may still run when its op returns keeps the free where it was:
// an asynchronous GPU copy (until its gpu.wait), a DMA (until its
// dma_wait), a tensor over the buffer (read by later ops). A synchronous
// GPU copy is done when it returns, also through the base buffer of
// extract_strided_metadata; two frees after one op both move.
// CHECK-LABEL: func.func @asynchronous
// CHECK:         %[[SYNC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    %[[META:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         gpu.memcpy %arg0, %reinterpret_cast
// CHECK-NEXT:    memref.dealloc %[[META]]
// CHECK-NEXT:    gpu.memcpy %arg0, %[[SYNC]]
// CHECK-NEXT:    memref.dealloc %[[SYNC]]
// CHECK:         %[[P:.+]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT:    %[[Q:.+]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT:    memref.copy %[[P]], %[[Q]]
// CHECK-DAG:     memref.dealloc %[[P]]
// CHECK-DAG:     memref.dealloc %[[Q]]
// CHECK:         gpu.wait [%{{.+}}]
// CHECK:         memref.dma_wait
// CHECK:         tensor.extract
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<5xf32>
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<6xf32>
// CHECK-NEXT:    memref.dealloc %{{.+}} : memref<7xf32>
// CHECK-NEXT:    return
func.func @asynchronous(%dst: memref<4xf32>, %tag: memref<1xi32>, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %sync = memref.alloc() : memref<4xf32>
  %meta = memref.alloc() : memref<4xf32>
  %base, %offset, %size, %stride = memref.extract_strided_metadata %meta : memref<4xf32> -> memref<f32>, index, index, index
  %view = memref.reinterpret_cast %base to offset: [0], sizes: [4], strides: [1] : memref<f32> to memref<4xf32>
  gpu.memcpy %dst, %view : memref<4xf32>, memref<4xf32>
  gpu.memcpy %dst, %sync : memref<4xf32>, memref<4xf32>
  %p = memref.alloc() : memref<2xf32>
  %q = memref.alloc() : memref<2xf32>
  memref.copy %p, %q : memref<2xf32> to memref<2xf32>
  %async = memref.alloc() : memref<5xf32>
  %sub = memref.subview %async[0] [4] [1] : memref<5xf32> to memref<4xf32, strided<[1]>>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %dst, %sub : memref<4xf32>, memref<4xf32, strided<[1]>>
  gpu.wait [%t1]
  %dma = memref.alloc() : memref<6xf32>
  memref.dma_start %dma[%c0], %dst[%c0], %c4, %tag[%c0] : memref<6xf32>, memref<4xf32>, memref<1xi32>
  memref.dma_wait %tag[%c0], %c4 : memref<1xi32>
  %tensor = memref.alloc() : memref<7xf32>
  memref.store %x, %tensor[%c0] : memref<7xf32>
  %t = bufferization.to_tensor %tensor restrict : memref<7xf32> to tensor<7xf32>
  %v = tensor.extract %t[%c0] : tensor<7xf32>
  memref.dealloc %sync : memref<4xf32>
  memref.dealloc %meta : memref<4xf32>
  memref.dealloc %p : memref<2xf32>
  memref.dealloc %q : memref<2xf32>
  memref.dealloc %async : memref<5xf32>
  memref.dealloc %dma : memref<6xf32>
  memref.dealloc %tensor : memref<7xf32>
  return %v : f32
}
