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
