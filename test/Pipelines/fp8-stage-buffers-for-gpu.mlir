// RUN: fp8-opt %s -split-input-file --fp8-stage-buffers-for-gpu | FileCheck %s

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// %in is read by the kernel, %out written by it (through a view), %host
// only read on the host: %in and %out are asked about at the entry
// (fp8GpuIsManagedMemory) and used where they are when kernels can
// read them there, else they get managed copies, used by everything
// after; then only %out is copied back (the function is not marked
// read-only), and the copies are freed at the return. The constant table
// is read by the kernel: one copy at the entry, from a get_global of its
// own, never copied back.
// CHECK-LABEL: func.func @kernel_args
// CHECK-SAME: (%[[IN:.+]]: memref<?xf32>, %[[OUT:.+]]: memref<4xf32>, %[[HOST:.+]]: memref<4xf32>)
// CHECK: memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: %[[INDEV:.+]] = call @fp8GpuIsManagedMemory(
// CHECK: %[[INB:.+]] = scf.if %[[INDEV]] -> (memref<?xf32>) {
// CHECK-NEXT: scf.yield %[[IN]]
// CHECK-NEXT: } else {
// CHECK: %[[INC:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK-NEXT: memref.copy %[[IN]], %[[INC]] :
// CHECK-NEXT: scf.yield %[[INC]]
// CHECK: %[[INCOPIED:.+]] = arith.xori %[[INDEV]], %{{.+}} : i1
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[OUTDEV:.+]] = call @fp8GpuIsManagedMemory(
// CHECK: %[[OUTB:.+]] = scf.if %[[OUTDEV]] -> (memref<4xf32>) {
// CHECK-NEXT: scf.yield %[[OUT]]
// CHECK: memref.copy %[[OUT]], %{{.+}} :
// CHECK: %[[OUTCOPIED:.+]] = arith.xori %[[OUTDEV]], %{{.+}} : i1
// CHECK-NOT: extract_aligned_pointer_as_index %[[HOST]]
// CHECK: %[[TABLE:.+]] = memref.get_global @table
// CHECK-NEXT: %[[TABLEC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[TABLE]], %[[TABLEC]] :
// CHECK-NOT: memref.get_global
// CHECK: memref.load %[[HOST]]
// CHECK: memref.subview %[[OUTB]]
// CHECK: gpu.launch
// CHECK: memref.load %[[INB]]
// CHECK: memref.load %[[TABLEC]]
// CHECK: gpu.terminator
// CHECK: scf.if %[[INCOPIED]] {
// CHECK-NEXT: memref.dealloc %[[INB]] :
// CHECK: scf.if %[[OUTCOPIED]] {
// CHECK-NEXT: memref.copy %[[OUTB]], %[[OUT]] :
// CHECK-NEXT: memref.dealloc %[[OUTB]] :
// CHECK-NOT: memref.copy %[[TABLEC]]
// CHECK: memref.dealloc %[[TABLEC]] :
// CHECK: return
func.func @kernel_args(%in: memref<?xf32>, %out: memref<4xf32>, %host: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %table = memref.get_global @table : memref<4xf32>
  %h = memref.load %host[%c0] : memref<4xf32>
  %view = memref.subview %out[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
    %x = memref.load %in[%tx] : memref<?xf32>
    %t = memref.load %table[%tx] : memref<4xf32>
    %s = arith.addf %x, %t : f32
    memref.store %s, %view[%tx] : memref<2xf32, strided<[1]>>
    gpu.terminator
  }
  return %h : f32
}

// -----

memref.global "private" @state : memref<f32> = dense<0.0>
func.func private @other()

// Marked by fp8-read-only-arguments: the kernel's writes to %x stay in a
// copy, made wherever %x is (no device check). The state global, written by the kernel: one copy for the whole
// function (the second get_global, in a nested region, reads it too),
// written back around the call and at the return.
// CHECK-LABEL: func.func @update_state
// CHECK-NOT: fp8_read_only_arguments
// CHECK-SAME: (%[[X:.+]]: memref<4xf32>
// CHECK-DAG: %[[XC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[G:.+]] = memref.get_global @state
// CHECK-DAG: %[[GC:.+]] = memref.alloc() : memref<f32>
// CHECK-DAG: memref.copy %[[G]], %[[GC]] :
// CHECK: gpu.launch
// CHECK: memref.store %{{.+}}, %[[GC]][]
// CHECK: memref.copy %[[GC]], %[[G]] :
// CHECK-NEXT: call @other()
// CHECK-NEXT: memref.copy %[[G]], %[[GC]] :
// CHECK: scf.execute_region
// CHECK: memref.load %[[GC]][]
// CHECK-NOT: memref.copy %[[XC]], %[[X]]
// CHECK: memref.copy %[[GC]], %[[G]] :
// CHECK: return
func.func @update_state(%x: memref<4xf32>) -> f32 attributes {fp8_read_only_arguments} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = memref.get_global @state : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<4xf32>
    memref.store %v, %x[%c0] : memref<4xf32>
    memref.store %v, %s[] : memref<f32>
    gpu.terminator
  }
  call @other() : () -> ()
  %r = scf.execute_region -> f32 {
    %s2 = memref.get_global @state : memref<f32>
    %l = memref.load %s2[] : memref<f32>
    scf.yield %l : f32
  }
  return %r : f32
}

// -----

// No kernel: nothing to stage.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
func.func @host_only(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %in[%c0] : memref<4xf32>
  return %x : f32
}
