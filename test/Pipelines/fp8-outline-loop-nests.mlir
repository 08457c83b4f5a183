// RUN: fp8-opt %s -split-input-file --fp8-outline-loop-nests | FileCheck %s

// Two layers' loop nests, the same but for their buffers: one function,
// called twice. Constants are cloned into it; buffers are its arguments.
// A nest that differs (in an op, or only in a constant) gets its own
// function. A sequential loop around a parallel one stays, and the
// parallel one inside it is outlined; a nest inside a nest stays in it.

// CHECK-LABEL: func.func @layers
// CHECK-SAME: (%[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>, %[[C:.*]]: memref<64xf32>, %[[D:.*]]: memref<64xf32>)
// CHECK-NOT: scf.parallel
// CHECK: call @layers_nest_0(%[[A]], %[[B]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT: call @layers_nest_0(%[[C]], %[[D]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT: call @layers_nest_2(%[[A]], %[[D]])
// CHECK-NEXT: call @layers_nest_3(%[[A]], %[[D]])
// CHECK: scf.for
// CHECK-NEXT: call @layers_nest_4(%[[B]])
// CHECK-NOT: scf.parallel
// CHECK: return

// CHECK: func.func private @layers_nest_0(%[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>)
// CHECK-SAME: llvm.linkage = #llvm.linkage<internal>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%[[ZERO]]) to (%[[N]]) step (%[[ONE]])
// CHECK: memref.load %[[X]][%[[I]]]
// CHECK: memref.store %{{.*}}, %[[Y]][%[[I]]]
// CHECK: return
// CHECK-NOT: func.func private @layers_nest_1
// CHECK: func.func private @layers_nest_2(
// CHECK: arith.constant 2.000000e+00
// CHECK: arith.mulf
// CHECK: func.func private @layers_nest_3(
// CHECK: arith.constant 3.000000e+00
// CHECK: arith.mulf
// CHECK: func.func private @layers_nest_4(
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: return
func.func @layers(%a: memref<64xf32>, %b: memref<64xf32>,
                  %c: memref<64xf32>, %d: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %c[%i] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %d[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %d[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %d[%i] : memref<64xf32>
    scf.reduce
  }
  scf.for %step = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%c64) step (%c16) {
      scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
        %k = arith.addi %i, %j : index
        %x = memref.load %b[%k] : memref<64xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %b[%k] : memref<64xf32>
        scf.reduce
      }
      scf.reduce
    }
  }
  return
}

// -----

// Sequential nests (scalar loops) too, with their results; a name that is
// taken is not reused.
// CHECK-LABEL: func.func @sum
// CHECK: %[[S:.*]] = call @sum_nest_0_0(%{{.*}}) : (memref<64xf32>) -> f32
// CHECK: return %[[S]]
// CHECK: func.func private @sum_nest_0_0(%{{.*}}: memref<64xf32>) -> f32
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32
// CHECK: func.func @sum_nest_0()
func.func @sum(%a: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<64xf32>
    %t = arith.addf %acc, %x : f32
    scf.yield %t : f32
  }
  return %s : f32
}
func.func @sum_nest_0() {
  return
}

// -----

// A sequential loop around several nests (a layer or training-step loop,
// scalar code) stays; the nests inside it are outlined. A bound computed
// from constants is recomputed in the function, not passed. A loop that
// may return stack memory of its body stays where it is.
// CHECK-LABEL: func.func @steps
// CHECK-SAME: (%[[A:.*]]: memref<64xf32>)
// CHECK: scf.for
// CHECK-NEXT: call @steps_nest_0(%[[A]]) : (memref<64xf32>) -> ()
// CHECK-NEXT: call @steps_nest_1(%[[A]]) : (memref<64xf32>) -> ()
// CHECK: scf.for {{.*}} -> (memref<4xf32>)
// CHECK: memref.alloca
// CHECK: return
// CHECK: func.func private @steps_nest_0(%{{.*}}: memref<64xf32>)
// CHECK-DAG: %[[EIGHT:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[N:.*]] = arith.muli %[[EIGHT]], %[[EIGHT]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK: func.func private @steps_nest_1(
// CHECK: arith.mulf
// CHECK-NOT: func.func private
func.func @steps(%a: memref<64xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %n = arith.muli %c8, %c8 : index
  scf.for %step = %c0 to %c4 step %c1 {
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%i] : memref<64xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %a[%i] : memref<64xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%i] : memref<64xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %a[%i] : memref<64xf32>
    }
  }
  %init = memref.alloc() : memref<4xf32>
  %last = scf.for %i = %c0 to %c4 step %c1 iter_args(%buf = %init) -> (memref<4xf32>) {
    %tmp = memref.alloca() : memref<4xf32>
    scf.yield %tmp : memref<4xf32>
  }
  return %last : memref<4xf32>
}
