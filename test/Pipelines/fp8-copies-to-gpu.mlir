// RUN: fp8-opt %s --fp8-copies-to-gpu | FileCheck %s

// Dense buffers (any rank, dynamic sizes too): the driver's copy on a
// stream of its own, waited for at once.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: (%[[A:.+]]: memref<?x8xf32>, %[[B:.+]]: memref<?x8xf32>, %[[S:.+]]: memref<f32>, %[[T:.+]]: memref<f32>)
// CHECK-NEXT: %[[W0:.+]] = gpu.wait async
// CHECK-NEXT: %[[C0:.+]] = gpu.memcpy async [%[[W0]]] %[[B]], %[[A]] : memref<?x8xf32>, memref<?x8xf32>
// CHECK-NEXT: gpu.wait [%[[C0]]]
// CHECK-NEXT: %[[W1:.+]] = gpu.wait async
// CHECK-NEXT: %[[C1:.+]] = gpu.memcpy async [%[[W1]]] %[[T]], %[[S]] : memref<f32>, memref<f32>
// CHECK-NEXT: gpu.wait [%[[C1]]]
// CHECK-NOT: memref.copy
func.func @dense(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %s: memref<f32>, %t: memref<f32>) {
  memref.copy %a, %b : memref<?x8xf32> to memref<?x8xf32>
  memref.copy %s, %t : memref<f32> to memref<f32>
  return
}

// A strided side: a linalg.copy, which becomes a kernel with the rest of
// the linalg ops. A strided scalar has nothing to map: it stays.
// CHECK-LABEL: func.func @strided
// CHECK: %[[V:.+]] = memref.subview
// CHECK-NEXT: linalg.copy ins(%[[V]] : memref<4x4xf32, strided<[8, 1]>>) outs(%{{.+}} : memref<4x4xf32>)
// CHECK-NEXT: %[[E:.+]] = memref.subview
// CHECK-NEXT: memref.copy %[[E]], %{{.+}} : memref<f32, strided<[], offset: 9>> to memref<f32>
func.func @strided(%a: memref<8x8xf32>, %b: memref<4x4xf32>, %t: memref<f32>) {
  %v = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<8x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %v, %b : memref<4x4xf32, strided<[8, 1]>> to memref<4x4xf32>
  %e = memref.subview %a[1, 1] [1, 1] [1, 1] : memref<8x8xf32> to memref<f32, strided<[], offset: 9>>
  memref.copy %e, %t : memref<f32, strided<[], offset: 9>> to memref<f32>
  return
}

// Inside a kernel, and between unranked buffers: left alone.
// CHECK-LABEL: func.func @left
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<*xf32> to memref<*xf32>
// CHECK: gpu.launch
// CHECK: memref.copy %{{.+}}, %{{.+}} : memref<f32> to memref<f32>
// CHECK-NOT: gpu.memcpy
func.func @left(%a: memref<*xf32>, %b: memref<*xf32>, %s: memref<f32>, %t: memref<f32>) {
  %c1 = arith.constant 1 : index
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.copy %s, %t : memref<f32> to memref<f32>
    gpu.terminator
  }
  return
}

// A store through a temporary (what bufferization makes of a global's
// store: the new history copied into a fresh buffer, that buffer into the
// global) is one copy; a temporary read by anything else, or copies with
// something between them, keep both.
// CHECK-LABEL: func.func @through_temporary
// CHECK-SAME: (%[[NEW:.+]]: memref<16xf32>, %[[STATE:.+]]: memref<16xf32>, %[[OTHER:.+]]: memref<16xf32>)
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[W0:.+]] = gpu.wait async
// CHECK-NEXT: %[[C0:.+]] = gpu.memcpy async [%[[W0]]] %[[STATE]], %[[NEW]]
// CHECK-NEXT: gpu.wait [%[[C0]]]
// CHECK-NEXT: %[[READ:.+]] = memref.alloc() : memref<16xf32>
// CHECK-COUNT-2: gpu.memcpy
// CHECK: memref.load %[[READ]]
// CHECK: %[[APART:.+]] = memref.alloc() : memref<16xf32>
// CHECK-COUNT-3: gpu.memcpy
// CHECK-NOT: gpu.memcpy
// CHECK: memref.dealloc %[[READ]]
// CHECK-NEXT: memref.dealloc %[[APART]]
// CHECK-NEXT: return
func.func @through_temporary(%new: memref<16xf32>, %state: memref<16xf32>, %other: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %new, %tmp : memref<16xf32> to memref<16xf32>
  memref.copy %tmp, %state : memref<16xf32> to memref<16xf32>
  %read = memref.alloc() : memref<16xf32>
  memref.copy %new, %read : memref<16xf32> to memref<16xf32>
  memref.copy %read, %state : memref<16xf32> to memref<16xf32>
  %x = memref.load %read[%c0] : memref<16xf32>
  %apart = memref.alloc() : memref<16xf32>
  memref.copy %new, %apart : memref<16xf32> to memref<16xf32>
  memref.copy %other, %new : memref<16xf32> to memref<16xf32>
  memref.copy %apart, %state : memref<16xf32> to memref<16xf32>
  memref.dealloc %tmp : memref<16xf32>
  memref.dealloc %read : memref<16xf32>
  memref.dealloc %apart : memref<16xf32>
  return %x : f32
}

// Frees between the two copies (fp8-free-after-last-use frees each buffer
// after its last use) do not stop the forwarding; the free of the first
// copy's own source moves after the one copy left.
// CHECK-LABEL: func.func @frees_between
// CHECK-NEXT: %[[SRC:.+]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: %[[OTHER:.+]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: memref.dealloc %[[OTHER]]
// CHECK-NEXT: %[[W:.+]] = gpu.wait async
// CHECK-NEXT: %[[C:.+]] = gpu.memcpy async [%[[W]]] %arg0, %[[SRC]]
// CHECK-NEXT: gpu.wait [%[[C]]]
// CHECK-NEXT: memref.dealloc %[[SRC]]
// CHECK-NEXT: return
func.func @frees_between(%state: memref<16xf32>, %v: f32) {
  %src = memref.alloc() : memref<16xf32>
  %other = memref.alloc() : memref<16xf32>
  linalg.fill ins(%v : f32) outs(%src : memref<16xf32>)
  linalg.fill ins(%v : f32) outs(%other : memref<16xf32>)
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %src, %tmp : memref<16xf32> to memref<16xf32>
  memref.dealloc %src : memref<16xf32>
  memref.dealloc %other : memref<16xf32>
  memref.copy %tmp, %state : memref<16xf32> to memref<16xf32>
  memref.dealloc %tmp : memref<16xf32>
  return
}

// A state setter (fp8-compile's state_set_<global>): the argument copied
// into a temporary, the global's address taken, the temporary copied into
// it. Taking an address touches no memory: one copy. A store in between
// (it could change the source) keeps both.
// CHECK-LABEL: func.func @state_set
// CHECK-SAME: (%[[ARG:.+]]: memref<16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[G:.+]] = memref.get_global @hist
// CHECK-NEXT: %[[W:.+]] = gpu.wait async
// CHECK-NEXT: %[[C:.+]] = gpu.memcpy async [%[[W]]] %[[G]], %[[ARG]]
// CHECK-NEXT: gpu.wait [%[[C]]]
// CHECK-NOT: gpu.memcpy
// CHECK-NEXT: return
// CHECK-LABEL: func.func @store_between
// CHECK: memref.alloc
// CHECK-COUNT-2: gpu.memcpy
memref.global "private" @hist : memref<16xf32> = dense<0.000000e+00>
func.func @state_set(%arg0: memref<16xf32>) {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %arg0, %alloc : memref<16xf32> to memref<16xf32>
  %0 = memref.get_global @hist : memref<16xf32>
  memref.copy %alloc, %0 : memref<16xf32> to memref<16xf32>
  memref.dealloc %alloc : memref<16xf32>
  return
}
func.func @store_between(%arg0: memref<16xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %arg0, %alloc : memref<16xf32> to memref<16xf32>
  memref.store %v, %arg0[%c0] : memref<16xf32>
  %0 = memref.get_global @hist : memref<16xf32>
  memref.copy %alloc, %0 : memref<16xf32> to memref<16xf32>
  memref.dealloc %alloc : memref<16xf32>
  return
}
