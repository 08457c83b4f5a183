// RUN: fp8-opt %s -split-input-file --fp8-stage-buffers-for-gpu | FileCheck %s

memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// %in is read by the kernel, %out written by it (through a view), %host
// only read on the host: %in and %out get managed copies at entry, used by
// everything after; only %out is copied back; both are freed at the
// return. The constant table is read by the kernel: copied where it is
// loaded, never copied back.
// CHECK-LABEL: func.func @kernel_args
// CHECK-SAME: (%[[IN:.+]]: memref<?xf32>, %[[OUT:.+]]: memref<4xf32>, %[[HOST:.+]]: memref<4xf32>)
// CHECK-DAG: %[[OUTC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: memref.copy %[[OUT]], %[[OUTC]]
// CHECK-DAG: %[[DIM:.+]] = memref.dim %[[IN]], %c0
// CHECK-DAG: %[[INC:.+]] = memref.alloc(%[[DIM]]) : memref<?xf32>
// CHECK-DAG: memref.copy %[[IN]], %[[INC]]
// CHECK: %[[TABLE:.+]] = memref.get_global @table
// CHECK-NEXT: %[[TABLEC:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[TABLE]], %[[TABLEC]]
// CHECK: memref.load %[[HOST]]
// CHECK: memref.subview %[[OUTC]]
// CHECK: gpu.launch
// CHECK: memref.load %[[INC]]
// CHECK: memref.load %[[TABLEC]]
// CHECK: gpu.terminator
// CHECK-NOT: memref.copy %[[TABLEC]]
// CHECK-NOT: memref.copy %[[INC]]
// CHECK-DAG: memref.copy %[[OUTC]], %[[OUT]] :
// CHECK-DAG: memref.dealloc %[[OUTC]] :
// CHECK-DAG: memref.dealloc %[[INC]] :
// CHECK-DAG: memref.dealloc %[[TABLEC]] :
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

// No kernel: nothing to stage.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
func.func @host_only(%in: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %in[%c0] : memref<4xf32>
  return %x : f32
}
