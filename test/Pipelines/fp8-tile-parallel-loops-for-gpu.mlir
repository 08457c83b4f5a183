// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-parallel-loops-for-gpu))" | FileCheck %s
// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-parallel-loops-for-gpu{threads=64}))" | FileCheck %s --check-prefix=SMALL

// 16 rows of 100: blocks of one row and 128 columns (100 rounded up to a
// warp multiple, under the 256-thread cap), the last columns guarded.
// (Constants are folded later: canonicalize would merge the two loops.)
// CHECK-LABEL: func.func @rows
// CHECK: %[[ROWS:.+]] = arith.muli %c1, %c1{{.*}} : index
// CHECK: %[[COLS:.+]] = arith.muli %c1, %c128 : index
// CHECK: scf.parallel (%[[I:.+]], %[[J:.+]]) = (%c0, %c0) to (%c16, %c100) step (%[[ROWS]], %[[COLS]])
// CHECK: scf.parallel (%[[TI:.+]], %[[TJ:.+]]) = (%{{.+}}, %{{.+}}) to (%[[ROWS]], %[[COLS]])
// CHECK: %[[COL:.+]] = arith.addi %[[TJ]], %[[J]]
// CHECK: %[[GUARD:.+]] = arith.cmpi ult, %{{.+}}, %c100
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %arg0[%{{.+}}, %[[COL]]]
// SMALL-LABEL: func.func @rows
// SMALL: arith.muli %c1, %c64 : index
func.func @rows(%m: memref<16x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c100 = arith.constant 100 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c100) step (%c1, %c1) {
    memref.store %v, %m[%i, %j] : memref<16x100xf32>
    scf.reduce
  }
  return
}

// -----

// A dynamic innermost size: full 256-thread blocks.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[STEP:.+]] = arith.muli %c1, %c256 : index
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%{{.+}}) step (%[[STEP]])
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[STEP]])
func.func @dynamic(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  %v = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %v, %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Rank 3: the innermost dimension on thread x and grid x, the next two on
// grid y and z (a block may hold only 64 threads along z).
// CHECK-LABEL: func.func @rank3
// CHECK: scf.parallel
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = sequential{{.*}}>, #gpu.loop_dim_map<processor = thread_x{{.*}}>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_z{{.*}}>, #gpu.loop_dim_map<processor = block_y{{.*}}>, #gpu.loop_dim_map<processor = block_x{{.*}}>]}
func.func @rank3(%m: memref<2x128x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c128, %c4096) step (%c1, %c1, %c1) {
    memref.store %v, %m[%i, %j, %k] : memref<2x128x4096xf32>
    scf.reduce
  }
  return
}
