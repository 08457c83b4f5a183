// RUN: fp8-opt %s --fp8-split-deallocs --split-input-file | FileCheck %s

// Fresh allocations that no retained value views are freed by deallocs of
// their own, with their conditions; the one the retained value views and a
// memref that is not an allocation stay in the original, which still
// reports on the retained value.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[ARG:.+]]: memref<4xf32>, %[[C0:.+]]: i1, %[[C1:.+]]: i1, %[[C2:.+]]: i1)
// CHECK:      %[[A:.+]] = memref.alloc() : memref<2xf32>
// CHECK:      %[[B:.+]] = memref.alloc() : memref<8xf32>
// CHECK:      %[[C:.+]] = memref.alloc() : memref<3xf32>
// CHECK:      %[[V:.+]] = memref.subview %[[B]]
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<2xf32>) if (%[[C0]]){{$}}
// CHECK-NEXT: bufferization.dealloc (%[[C]] : memref<3xf32>) if (%[[C2]]){{$}}
// CHECK-NEXT: %[[R:.+]] = bufferization.dealloc (%[[B]], %[[ARG]] : memref<8xf32>, memref<4xf32>) if (%[[C1]], %[[C0]]) retain (%[[V]] : memref<4xf32, strided<[1], offset: 2>>)
// CHECK-NEXT: return %[[V]], %[[R]]
func.func @split(%arg: memref<4xf32>, %c0: i1, %c1: i1, %c2: i1) -> (memref<4xf32, strided<[1], offset: 2>>, i1) {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<3xf32>
  %v = memref.subview %b[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %r = bufferization.dealloc (%a, %b, %c, %arg : memref<2xf32>, memref<8xf32>, memref<3xf32>, memref<4xf32>) if (%c0, %c1, %c2, %c0) retain (%v : memref<4xf32, strided<[1], offset: 2>>)
  return %v, %r : memref<4xf32, strided<[1], offset: 2>>, i1
}

// -----

// A retained value whose buffer is unknown (a call may return any of the
// allocations) leaves the dealloc whole.
// CHECK-LABEL: func.func @unknown_retained
// CHECK:      bufferization.dealloc (%{{.+}}, %{{.+}} : memref<2xf32>, memref<3xf32>) if (%arg0, %arg0) retain
// CHECK-NOT:  bufferization.dealloc
func.func private @pick(memref<2xf32>, memref<3xf32>) -> memref<2xf32>
func.func @unknown_retained(%c: i1) -> (memref<2xf32>, i1) {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<3xf32>
  %p = call @pick(%a, %b) : (memref<2xf32>, memref<3xf32>) -> memref<2xf32>
  %r = bufferization.dealloc (%a, %b : memref<2xf32>, memref<3xf32>) if (%c, %c) retain (%p : memref<2xf32>)
  return %p, %r : memref<2xf32>, i1
}

// -----

// A memref that may be any buffer (a select of two allocations) may be one
// of the allocations, which the dealloc frees once: it stays whole.
// CHECK-LABEL: func.func @may_alias
// CHECK:      bufferization.dealloc (%{{.+}}, %{{.+}}, %{{.+}} : memref<4xf32>, memref<4xf32>, memref<4xf32>) if
// CHECK-NOT:  bufferization.dealloc
func.func @may_alias(%c: i1, %t: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %s = arith.select %c, %a, %b : memref<4xf32>
  bufferization.dealloc (%a, %b, %s : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%t, %t, %t)
  return
}
