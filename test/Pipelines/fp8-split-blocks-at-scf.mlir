// RUN: fp8-opt %s --fp8-split-blocks-at-scf --split-input-file | FileCheck %s

// Each scf op of a function's block ends it, with a branch to the ops after
// it; the op right before the terminator and the ops inside scf bodies
// (single blocks) stay as they are.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[A:.+]] = arith.addf %arg1, %arg1
// CHECK-NEXT:    %[[IF:.+]] = scf.if %arg0 -> (f32) {
// CHECK:           scf.yield %arg1
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.br ^[[B1:.+]]
// CHECK-NEXT:  ^[[B1]]:
// CHECK-NEXT:    %[[M:.+]] = arith.mulf %[[IF]], %[[A]]
// CHECK:         %[[FOR:.+]] = scf.for
// CHECK:           scf.if %arg0 {
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NOT:       cf.br
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.br ^[[B2:.+]]
// CHECK-NEXT:  ^[[B2]]:
// CHECK-NEXT:    scf.if %arg0 {
// CHECK-NEXT:      memref.store %[[FOR]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[M]]
// CHECK-NOT:   ^
// CHECK:       }
func.func @chain(%c: i1, %x: f32, %m: memref<f32>) -> f32 {
  %a = arith.addf %x, %x : f32
  %r = scf.if %c -> (f32) {
    scf.yield %a : f32
  } else {
    scf.yield %x : f32
  }
  %p = arith.mulf %r, %a : f32
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %p) -> (f32) {
    scf.if %c {
      memref.store %acc, %m[] : memref<f32>
    }
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  scf.if %c {
    memref.store %s, %m[] : memref<f32>
  }
  return %p : f32
}

// -----

// Every block of the body, the later ones included; blocks without scf ops
// are left alone, and so is a function without a body.
// CHECK-LABEL: func.func @blocks
// CHECK:         cf.cond_br %arg0, ^[[T:.+]], ^[[E:.+]]
// CHECK-NEXT:  ^[[T]]:
// CHECK-NEXT:    scf.execute_region {
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    cf.br ^[[R:.+]]
// CHECK-NEXT:  ^[[R]]:
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    return
// CHECK-NEXT:  ^[[E]]:
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    return
// CHECK:       func.func private @external
func.func @blocks(%c: i1, %x: f32, %m: memref<f32>) {
  cf.cond_br %c, ^then, ^else
^then:
  scf.execute_region {
    memref.store %x, %m[] : memref<f32>
    scf.yield
  }
  memref.store %x, %m[] : memref<f32>
  return
^else:
  memref.store %x, %m[] : memref<f32>
  return
}
func.func private @external(f32)

// -----

// Adjacent scf ops each end a block; kernel bodies (gpu.func) are function
// bodies too.
// CHECK-LABEL: func.func @adjacent
// CHECK:         scf.if %arg0 {
// CHECK:         }
// CHECK-NEXT:    cf.br ^[[B1:.+]]
// CHECK-NEXT:  ^[[B1]]:
// CHECK-NEXT:    scf.if %arg0 {
// CHECK:         }
// CHECK-NEXT:    cf.br ^[[B2:.+]]
// CHECK-NEXT:  ^[[B2]]:
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    return
// CHECK:       gpu.func @kernel
// CHECK:         scf.if %arg0 {
// CHECK:         }
// CHECK-NEXT:    cf.br ^[[K:.+]]
// CHECK-NEXT:  ^[[K]]:
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    gpu.return
func.func @adjacent(%c: i1, %x: f32, %m: memref<f32>) {
  scf.if %c {
    memref.store %x, %m[] : memref<f32>
  }
  scf.if %c {
    memref.store %x, %m[] : memref<f32>
  }
  memref.store %x, %m[] : memref<f32>
  return
}
gpu.module @kernels {
  gpu.func @kernel(%c: i1, %x: f32, %m: memref<f32>) kernel {
    scf.if %c {
      memref.store %x, %m[] : memref<f32>
    }
    memref.store %x, %m[] : memref<f32>
    gpu.return
  }
}
