// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-parallel-loops-for-gpu))" | FileCheck %s
// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-parallel-loops-for-gpu{threads=64}))" | FileCheck %s --check-prefix=SMALL
// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-parallel-loops-for-gpu{threads=1}))" | FileCheck %s --check-prefix=ONE
// The launches convert-parallel-loops-to-gpu makes of the mapping:
// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-parallel-loops-for-gpu{threads=32},convert-parallel-loops-to-gpu,canonicalize,cse))" | FileCheck %s --check-prefix=GPU
// Every position of each iteration space visited exactly once (the last
// part of this file), the mapped loops run on the CPU: the scf.parallel
// loops over blocks and threads run every (block, thread) pair that the
// gpu.launch runs, with the same index arithmetic.
// RUN: fp8-opt %s --pass-pipeline="builtin.module(func.func(convert-linalg-to-parallel-loops,fp8-tile-parallel-loops-for-gpu))" \
// RUN: | mlir-opt --expand-strided-metadata --lower-affine --convert-scf-to-cf --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s --check-prefix=EXEC
// RUN: fp8-opt %s --pass-pipeline="builtin.module(func.func(convert-linalg-to-parallel-loops,fp8-tile-parallel-loops-for-gpu{threads=32}))" \
// RUN: | mlir-opt --expand-strided-metadata --lower-affine --convert-scf-to-cf --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils | FileCheck %s --check-prefix=EXEC

// 16 rows of 100: blocks of 2 rows of 100 threads, 8 blocks, no guard.
// With 64 threads: rows of two blocks of 64 (100 rounded up to a warp
// multiple, split evenly), 32 blocks, the last columns guarded.
// CHECK-LABEL: func.func @rows
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c8) step
// CHECK:   %[[FIRST:.+]] = arith.muli %[[B]], %c2{{[_0-9]*}} : index
// CHECK:   scf.parallel (%[[X:.+]], %[[Y:.+]]) = (%{{.+}}, %{{.+}}) to (%c100{{[_0-9]*}}, %c2{{[_0-9]*}}) step
// CHECK-NOT: scf.if
// CHECK:     %[[ROW:.+]] = arith.addi %[[FIRST]], %[[Y]] : index
// CHECK:     memref.store %{{.+}}, %arg0[%[[ROW]], %[[X]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}, #gpu.loop_dim_map<processor = thread_y{{[^#]*}}]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
// SMALL-LABEL: func.func @rows
// SMALL: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c32) step
// SMALL:   %[[REM:.+]] = arith.remui %[[B]], %c2{{[_0-9]*}} : index
// SMALL:   %[[FIRST:.+]] = arith.muli %[[REM]], %c64{{[_0-9]*}} : index
// SMALL:   %[[ROW:.+]] = arith.divui %[[B]], %c2{{[_0-9]*}} : index
// SMALL:   scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%c64{{[_0-9]*}}) step
// SMALL:     %[[COL:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// SMALL:     %[[IN:.+]] = arith.cmpi ult, %[[COL]], %c100{{[_0-9]*}} : index
// SMALL:     scf.if %[[IN]] {
// SMALL:       memref.store %{{.+}}, %arg0[%[[ROW]], %[[COL]]]
// SMALL:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}]}
// SMALL: } {mapping = [#gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
func.func @rows(%m: memref<16x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c100 = arith.constant 100 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0, %i1) = (%c0, %c0) to (%c16, %c100) step (%c1, %c1) {
    memref.store %v, %m[%i0, %i1] : memref<16x100xf32>
    scf.reduce
  }
  return
}

// -----

// A dynamic size: a block of up to 256 threads, and the grid on x, y, z and
// a sequential loop, all sized before the loop; every thread guarded.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.+]] = arith.maxsi %{{.+}}, %c0{{[_0-9]*}} : index
// CHECK: %[[SHORT:.+]] = arith.minui %[[N]], %c256 : index
// CHECK: %[[WIDTH:.+]] = arith.maxui %[[SHORT]], %c1{{[_0-9]*}} : index
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[N]], %[[WIDTH]] : index
// CHECK: %[[GX:.+]] = arith.minui %[[TILES]], %c2147483647 : index
// CHECK: %[[OVERX:.+]] = arith.ceildivui %[[TILES]], %c2147483647 : index
// CHECK: %[[GY:.+]] = arith.minui %[[OVERX]], %c65535 : index
// CHECK: %[[OVERXY:.+]] = arith.ceildivui %[[TILES]], %c140735340806145 : index
// CHECK: %[[GZ:.+]] = arith.minui %[[OVERXY]], %c65535 : index
// CHECK: %[[GS:.+]] = arith.ceildivui %[[TILES]], %c9223090559730712575 : index
// CHECK: scf.parallel (%[[S:.+]], %[[BZ:.+]], %[[BY:.+]], %[[BX:.+]]) = ({{.+}}) to (%[[GS]], %[[GZ]], %[[GY]], %[[GX]]) step
// CHECK:   %[[T0:.+]] = arith.muli %[[S]], %[[GZ]] : index
// CHECK:   %[[T1:.+]] = arith.addi %[[T0]], %[[BZ]] : index
// CHECK:   %[[T2:.+]] = arith.muli %[[T1]], %[[GY]] : index
// CHECK:   %[[T3:.+]] = arith.addi %[[T2]], %[[BY]] : index
// CHECK:   %[[T4:.+]] = arith.muli %[[T3]], %[[GX]] : index
// CHECK:   %[[TILE:.+]] = arith.addi %[[T4]], %[[BX]] : index
// CHECK:   %[[FIRST:.+]] = arith.muli %[[TILE]], %[[WIDTH]] : index
// CHECK:   scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%[[WIDTH]]) step
// CHECK:     %[[COL:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// CHECK:     %[[IN:.+]] = arith.cmpi ult, %[[COL]], %[[N]] : index
// CHECK:     scf.if %[[IN]] {
// CHECK:       memref.store %{{.+}}, %arg0[%[[COL]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = sequential{{[^#]*}}, #gpu.loop_dim_map<processor = block_z{{[^#]*}}, #gpu.loop_dim_map<processor = block_y{{[^#]*}}, #gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
// After convert-parallel-loops-to-gpu: the grid sized at run time, the
// sequential loop (one trip unless more than 2^63 blocks) in the kernel.
// GPU-LABEL: func.func @dynamic
// GPU: gpu.launch blocks(%[[BX:.+]], %[[BY:.+]], %[[BZ:.+]]) in (%{{.+}} = %[[GX:.+]], %{{.+}} = %[[GY:.+]], %{{.+}} = %[[GZ:.+]]) threads(%[[X:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[WIDTH:.+]], %{{.+}} = %c1, %{{.+}} = %c1)
// GPU:   scf.for %[[S:.+]] = %c0 to %[[GS:.+]] step %c1
// GPU:     arith.muli %[[S]], %[[GZ]]
// GPU:     %[[COL:.+]] = arith.addi %{{.+}}, %[[X]] : index
// GPU:     %[[IN:.+]] = arith.cmpi ult, %[[COL]], %{{.+}} : index
// GPU:     scf.if %[[IN]] {
// GPU:       memref.store %{{.+}}, %arg0[%[[COL]]]
func.func @dynamic(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n0 = memref.dim %m, %c0 : memref<?xf32>
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0) = (%c0) to (%n0) step (%c1) {
    memref.store %v, %m[%i0] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Rank 3, a row of 4096 in 16 blocks of 256: 2 * 128 * 16 blocks on grid x.
// CHECK-LABEL: func.func @rank3
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c4096{{[_0-9]*}}) step
// CHECK:   %[[REM:.+]] = arith.remui %[[B]], %c16 : index
// CHECK:   %[[FIRST:.+]] = arith.muli %[[REM]], %c256 : index
// CHECK:   %[[ROW:.+]] = arith.divui %[[B]], %c16 : index
// CHECK:   scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%c256) step
// CHECK:     %[[K:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// CHECK:     %[[J:.+]] = arith.remui %[[ROW]], %c128{{[_0-9]*}} : index
// CHECK:     %[[I:.+]] = arith.divui %[[ROW]], %c128{{[_0-9]*}} : index
// CHECK:     memref.store %{{.+}}, %arg0[%[[I]], %[[J]], %[[K]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
func.func @rank3(%m: memref<2x128x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0, %i1, %i2) = (%c0, %c0, %c0) to (%c2, %c128, %c4096) step (%c1, %c1, %c1) {
    memref.store %v, %m[%i0, %i1, %i2] : memref<2x128x4096xf32>
    scf.reduce
  }
  return
}

// -----

// RoPE's [tokens, heads, 2, 64]: 4096 * 32 * 2 rows of 64, blocks of 64 x 4
// threads, 65,536 blocks (the old mapping: 64 blocks of 64 threads, 4096
// sequential in each).
// CHECK-LABEL: func.func @rope
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c65536) step
// CHECK:   %[[FIRST:.+]] = arith.muli %[[B]], %c4 : index
// CHECK:   scf.parallel (%[[X:.+]], %[[Y:.+]]) = (%{{.+}}, %{{.+}}) to (%c64{{[_0-9]*}}, %c4) step
// CHECK:     %[[ROW:.+]] = arith.addi %[[FIRST]], %[[Y]] : index
// CHECK:     %[[K:.+]] = arith.remui %[[ROW]], %c2{{[_0-9]*}} : index
// CHECK:     %[[R:.+]] = arith.divui %[[ROW]], %c2{{[_0-9]*}} : index
// CHECK:     %[[J:.+]] = arith.remui %[[R]], %c32{{[_0-9]*}} : index
// CHECK:     %[[I:.+]] = arith.divui %[[R]], %c32{{[_0-9]*}} : index
// CHECK:     memref.store %{{.+}}, %arg0[%[[I]], %[[J]], %[[K]], %[[X]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}, #gpu.loop_dim_map<processor = thread_y{{[^#]*}}]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
// SMALL-LABEL: func.func @rope
// SMALL: scf.parallel (%{{.+}}) = (%{{.+}}) to (%c262144) step
// SMALL:   scf.parallel (%{{.+}}) = (%{{.+}}) to (%c64{{[_0-9]*}}) step
func.func @rope(%m: memref<4096x32x2x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %c32 = arith.constant 32 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %v = arith.constant 1.0 : bf16
  scf.parallel (%i0, %i1, %i2, %i3) = (%c0, %c0, %c0, %c0) to (%c4096, %c32, %c2, %c64) step (%c1, %c1, %c1, %c1) {
    memref.store %v, %m[%i0, %i1, %i2, %i3] : memref<4096x32x2x64xbf16>
    scf.reduce
  }
  return
}

// -----

// GQA's [1, 8, 4, 4096, 128]: blocks of 128 x 2 threads, 65,536 blocks.
// CHECK-LABEL: func.func @heads
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c65536) step
// CHECK:   %[[FIRST:.+]] = arith.muli %[[B]], %c2 : index
// CHECK:   scf.parallel (%[[X:.+]], %[[Y:.+]]) = (%{{.+}}, %{{.+}}) to (%c128{{[_0-9]*}}, %c2) step
// CHECK:     %[[ROW:.+]] = arith.addi %[[FIRST]], %[[Y]] : index
// CHECK:     %[[L:.+]] = arith.remui %[[ROW]], %c4096{{[_0-9]*}} : index
// CHECK:     %[[R1:.+]] = arith.divui %[[ROW]], %c4096{{[_0-9]*}} : index
// CHECK:     %[[K:.+]] = arith.remui %[[R1]], %c4{{[_0-9]*}} : index
// CHECK:     %[[R2:.+]] = arith.divui %[[R1]], %c4{{[_0-9]*}} : index
// CHECK:     %[[J:.+]] = arith.remui %[[R2]], %c8{{[_0-9]*}} : index
// CHECK:     %[[I:.+]] = arith.divui %[[R2]], %c8{{[_0-9]*}} : index
// CHECK:     memref.store %{{.+}}, %arg0[%[[I]], %[[J]], %[[K]], %[[L]], %[[X]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}, #gpu.loop_dim_map<processor = thread_y{{[^#]*}}]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
func.func @heads(%m: memref<1x8x4x4096x128xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %c4096 = arith.constant 4096 : index
  %c128 = arith.constant 128 : index
  %v = arith.constant 1.0 : bf16
  scf.parallel (%i0, %i1, %i2, %i3, %i4) = (%c0, %c0, %c0, %c0, %c0) to (%c1, %c8, %c4, %c4096, %c128) step (%c1, %c1, %c1, %c1, %c1) {
    memref.store %v, %m[%i0, %i1, %i2, %i3, %i4] : memref<1x8x4x4096x128xbf16>
    scf.reduce
  }
  return
}

// -----

// Attention scores' [32, 4096, 4096]: 2^21 blocks of 256 on grid x.
// CHECK-LABEL: func.func @scores
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%c2097152) step
// CHECK:   scf.parallel (%{{.+}}) = (%{{.+}}) to (%c256) step
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
func.func @scores(%m: memref<32x4096x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c4096 = arith.constant 4096 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0, %i1, %i2) = (%c0, %c0, %c0) to (%c32, %c4096, %c4096) step (%c1, %c1, %c1) {
    memref.store %v, %m[%i0, %i1, %i2] : memref<32x4096x4096xf32>
    scf.reduce
  }
  return
}

// -----

// 1000 elements: 4 blocks of 256, the last 24 threads guarded.
// CHECK-LABEL: func.func @odd
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c4) step
// CHECK:   %[[FIRST:.+]] = arith.muli %[[B]], %c256 : index
// CHECK:   scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%c256) step
// CHECK:     %[[I:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// CHECK:     %[[IN:.+]] = arith.cmpi ult, %[[I]], %c1000{{[_0-9]*}} : index
// CHECK:     scf.if %[[IN]] {
// CHECK:       memref.store %{{.+}}, %arg0[%[[I]]]
func.func @odd(%m: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0) = (%c0) to (%c1000) step (%c1) {
    memref.store %v, %m[%i0] : memref<1000xf32>
    scf.reduce
  }
  return
}

// -----

// Both sizes dynamic: rows of up to 256 columns, 256 / columns of them
// (at most the rows), rows and columns guarded.
// CHECK-LABEL: func.func @dynamic2
// CHECK: %[[ROWS:.+]] = arith.maxsi %{{.+}}, %c0{{[_0-9]*}} : index
// CHECK: %[[COLS:.+]] = arith.maxsi %{{.+}}, %c0{{[_0-9]*}} : index
// CHECK: %[[SHORT:.+]] = arith.minui %[[COLS]], %c256 : index
// CHECK: %[[WIDTH:.+]] = arith.maxui %[[SHORT]], %c1{{[_0-9]*}} : index
// CHECK: %[[FIT:.+]] = arith.divui %c256, %[[WIDTH]] : index
// CHECK: %[[SOME:.+]] = arith.maxui %[[ROWS]], %c1{{[_0-9]*}} : index
// CHECK: %[[HEIGHT:.+]] = arith.minui %[[FIT]], %[[SOME]] : index
// CHECK: %[[COLBLOCKS:.+]] = arith.ceildivui %[[COLS]], %[[WIDTH]] : index
// CHECK: scf.parallel
// CHECK:   %[[REM:.+]] = arith.remui %[[TILE:.+]], %[[COLBLOCKS]] : index
// CHECK:   %[[FIRSTCOL:.+]] = arith.muli %[[REM]], %[[WIDTH]] : index
// CHECK:   %[[QUO:.+]] = arith.divui %[[TILE]], %[[COLBLOCKS]] : index
// CHECK:   %[[FIRSTROW:.+]] = arith.muli %[[QUO]], %[[HEIGHT]] : index
// CHECK:   scf.parallel (%[[X:.+]], %[[Y:.+]]) = (%{{.+}}, %{{.+}}) to (%[[WIDTH]], %[[HEIGHT]]) step
// CHECK:     %[[COL:.+]] = arith.addi %[[FIRSTCOL]], %[[X]] : index
// CHECK:     %[[ROW:.+]] = arith.addi %[[FIRSTROW]], %[[Y]] : index
// CHECK:     %[[INROW:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK:     %[[INCOL:.+]] = arith.cmpi ult, %[[COL]], %[[COLS]] : index
// CHECK:     %[[IN:.+]] = arith.andi %[[INROW]], %[[INCOL]] : i1
// CHECK:     scf.if %[[IN]] {
// CHECK:       memref.store %{{.+}}, %arg0[%[[ROW]], %[[COL]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}, #gpu.loop_dim_map<processor = thread_y{{[^#]*}}]}
func.func @dynamic2(%m: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n0 = memref.dim %m, %c0 : memref<?x?xf32>
  %n1 = memref.dim %m, %c1 : memref<?x?xf32>
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0, %i1) = (%c0, %c0) to (%n0, %n1) step (%c1, %c1) {
    memref.store %v, %m[%i0, %i1] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Rank 6, rows of 37: 6 rows a block, 2 * 3 * 4 * 5 / 6 = 20 blocks; the
// unit dimension is 0.
// CHECK-LABEL: func.func @rank6
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%c20) step
// CHECK:   %[[FIRST:.+]] = arith.muli %[[B]], %c6 : index
// CHECK:   scf.parallel (%[[X:.+]], %[[Y:.+]]) = (%{{.+}}, %{{.+}}) to (%c37{{[_0-9]*}}, %c6) step
// CHECK:     %[[ROW:.+]] = arith.addi %[[FIRST]], %[[Y]] : index
// CHECK:     %[[D4:.+]] = arith.remui %[[ROW]], %c5{{[_0-9]*}} : index
// CHECK:     %[[R4:.+]] = arith.divui %[[ROW]], %c5{{[_0-9]*}} : index
// CHECK:     %[[D3:.+]] = arith.remui %[[R4]], %c4{{[_0-9]*}} : index
// CHECK:     %[[R3:.+]] = arith.divui %[[R4]], %c4{{[_0-9]*}} : index
// CHECK:     %[[D1:.+]] = arith.remui %[[R3]], %c3{{[_0-9]*}} : index
// CHECK:     %[[D0:.+]] = arith.divui %[[R3]], %c3{{[_0-9]*}} : index
// CHECK:     memref.store %{{.+}}, %arg0[%[[D0]], %[[D1]], %c0{{[_0-9]*}}, %[[D3]], %[[D4]], %[[X]]]
func.func @rank6(%m: memref<2x3x1x4x5x37xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c37 = arith.constant 37 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0, %i1, %i2, %i3, %i4, %i5) = (%c0, %c0, %c0, %c0, %c0, %c0) to (%c2, %c3, %c1, %c4, %c5, %c37) step (%c1, %c1, %c1, %c1, %c1, %c1) {
    memref.store %v, %m[%i0, %i1, %i2, %i3, %i4, %i5] : memref<2x3x1x4x5x37xf32>
    scf.reduce
  }
  return
}

// -----

// Dynamic rows of a static length: rows of 4096 take 16 whole blocks
// each (no thread y, no division of the tile); rows of 64 up to 4 a block,
// as many as there are when fewer.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[ROWS:.+]] = arith.maxsi %{{.+}}, %c0{{[_0-9]*}} : index
// CHECK: %[[TILES:.+]] = arith.muli %[[ROWS]], %c16 : index
// CHECK: scf.parallel
// CHECK:   %[[REM:.+]] = arith.remui %[[TILE:.+]], %c16 : index
// CHECK:   %[[FIRST:.+]] = arith.muli %[[REM]], %c256 : index
// CHECK:   %[[ROW:.+]] = arith.divui %[[TILE]], %c16 : index
// CHECK:   scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%c256) step
// CHECK:     %[[COL:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// CHECK:     %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK:     scf.if %[[IN]] {
// CHECK:       memref.store %{{.+}}, %arg0[%[[ROW]], %[[COL]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}]}
// CHECK-LABEL: func.func @dynamic_short_rows
// CHECK: %[[ROWS:.+]] = arith.maxsi %{{.+}}, %c0{{[_0-9]*}} : index
// CHECK: %[[SOME:.+]] = arith.maxui %[[ROWS]], %c1{{[_0-9]*}} : index
// CHECK: %[[HEIGHT:.+]] = arith.minui %[[SOME]], %c4 : index
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[ROWS]], %[[HEIGHT]] : index
// CHECK: scf.parallel
// CHECK:   %[[FIRST:.+]] = arith.muli %{{.+}}, %[[HEIGHT]] : index
// CHECK:   scf.parallel (%[[X:.+]], %[[Y:.+]]) = (%{{.+}}, %{{.+}}) to (%c64{{[_0-9]*}}, %[[HEIGHT]]) step
// CHECK:     %[[ROW:.+]] = arith.addi %[[FIRST]], %[[Y]] : index
// CHECK:     %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK:     scf.if %[[IN]] {
// CHECK:       memref.store %{{.+}}, %arg0[%[[ROW]], %[[X]]]
// CHECK:   } {mapping = [#gpu.loop_dim_map<processor = thread_x{{[^#]*}}, #gpu.loop_dim_map<processor = thread_y{{[^#]*}}]}
func.func @dynamic_rows(%m: memref<?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %n = memref.dim %m, %c0 : memref<?x4096xf32>
  %v = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c4096) step (%c1, %c1) {
    memref.store %v, %m[%i, %j] : memref<?x4096xf32>
    scf.reduce
  }
  return
}

func.func @dynamic_short_rows(%m: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %m, %c0 : memref<?x64xf32>
  %v = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    memref.store %v, %m[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}

// -----

// [3, 5, 7] with 32 threads: blocks of 7 x 4 threads, 4 blocks for 15 rows,
// the last row of the last block guarded. By hand, for block b and thread
// (x, y): row = 4b + y, position [row / 5, row % 5, x] when row < 15.
// GPU-LABEL: func.func @small
// GPU: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c4, %{{.+}} = %c1, %{{.+}} = %c1) threads(%[[X:.+]], %[[Y:.+]], %{{.+}}) in (%{{.+}} = %c7, %{{.+}} = %c4, %{{.+}} = %c1)
// GPU:   %[[FIRST:.+]] = arith.muli %[[B]], %c4 : index
// GPU:   %[[ROW:.+]] = arith.addi %[[FIRST]], %[[Y]] : index
// GPU:   %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %c15 : index
// GPU:   scf.if %[[IN]] {
// GPU:     %[[J:.+]] = arith.remui %[[ROW]], %c5 : index
// GPU:     %[[I:.+]] = arith.divui %[[ROW]], %c5 : index
// GPU:     memref.store %{{.+}}, %arg0[%[[I]], %[[J]], %[[X]]]
func.func @small(%m: memref<3x5x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i0, %i1, %i2) = (%c0, %c0, %c0) to (%c3, %c5, %c7) step (%c1, %c1, %c1) {
    memref.store %v, %m[%i0, %i1, %i2] : memref<3x5x7xf32>
    scf.reduce
  }
  return
}

// -----

// More blocks than grid x holds. One thread a block: 2^63 - 1 blocks, on
// x (2^31 - 1), y and z (65,535 each) and 2 sequential trips. With 32
// threads: 2^58 blocks, x and y full, ceil(2^58 / ((2^31 - 1) * 65535)) =
// 2049 on z.
// ONE-LABEL: func.func @huge
// ONE: scf.parallel (%[[S:.+]], %[[BZ:.+]], %[[BY:.+]], %[[BX:.+]]) = ({{.+}}) to (%c2, %c65535{{[_0-9]*}}, %c65535{{[_0-9]*}}, %c2147483647) step
// ONE:   scf.parallel (%[[X:.+]]) = (%{{.+}}) to (%c1{{[_0-9]*}}) step
// ONE:     %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %c9223372036854775807{{[_0-9]*}} : index
// ONE:     scf.if %[[IN]] {
// ONE: } {mapping = [#gpu.loop_dim_map<processor = sequential{{[^#]*}}, #gpu.loop_dim_map<processor = block_z{{[^#]*}}, #gpu.loop_dim_map<processor = block_y{{[^#]*}}, #gpu.loop_dim_map<processor = block_x{{[^#]*}}]}
// GPU-LABEL: func.func @huge
// GPU: gpu.launch blocks(%[[BX:.+]], %[[BY:.+]], %[[BZ:.+]]) in (%{{.+}} = %c2147483647, %{{.+}} = %c65535, %{{.+}} = %c2049) threads(%[[X:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c32, %{{.+}} = %c1, %{{.+}} = %c1)
// GPU:   %[[T0:.+]] = arith.muli %[[BZ]], %c65535 : index
// GPU:   %[[T1:.+]] = arith.addi %[[T0]], %[[BY]] : index
// GPU:   %[[T2:.+]] = arith.muli %[[T1]], %c2147483647 : index
// GPU:   %[[TILE:.+]] = arith.addi %[[T2]], %[[BX]] : index
// GPU:   %[[FIRST:.+]] = arith.muli %[[TILE]], %c32 : index
// GPU:   %[[I:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// GPU:   %[[IN:.+]] = arith.cmpi ult, %[[I]], %c9223372036854775807 : index
// GPU:   scf.if %[[IN]] {
func.func @huge(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %max = arith.constant 9223372036854775807 : index
  %v = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%max) step (%c1) {
    memref.store %v, %m[%c0] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A reduction inside (a row sum): the sequential loop stays in the thread.
// GPU-LABEL: func.func @row_sums
// GPU: gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128, %{{.+}} = %c1, %{{.+}} = %c1) threads(%[[X:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c32, %{{.+}} = %c1, %{{.+}} = %c1)
// GPU:   %[[FIRST:.+]] = arith.muli %[[B]], %c32 : index
// GPU:   %[[I:.+]] = arith.addi %[[FIRST]], %[[X]] : index
// GPU:   %[[SUM:.+]] = scf.for %[[K:.+]] = %c0 to %c128 step %c1 iter_args
// GPU:     memref.load %arg0[%[[I]], %[[K]]]
// GPU:   memref.store %[[SUM]], %arg1[%[[I]]]
func.func @row_sums(%in: memref<4096x128xf32>, %out: memref<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c4096) step (%c1) {
    %sum = scf.for %k = %c0 to %c128 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %in[%i, %k] : memref<4096x128xf32>
      %next = arith.addf %acc, %x : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%i] : memref<4096xf32>
    scf.reduce
  }
  return
}

// -----

// Run on the CPU (the EXEC lines at the top): each case fills a buffer
// with zeros, adds position + 1 to every element through a linalg.generic
// over its shape (static, or dynamic with the sizes given), and prints the
// element count and how many elements do not hold position + 1 (visited
// twice or never). Static shapes: small versions of the ones above, a
// guarded last row, one row of tiles, two blocks a row (300 columns: 2 x
// 160), ranks 5 and 6; dynamic ones with sizes 0, a single element, odd
// sizes, and dynamic rows of a static length.
// EXEC: 3840, 0
// EXEC-NEXT: 105, 0
// EXEC-NEXT: 1000, 0
// EXEC-NEXT: 900, 0
// EXEC-NEXT: 16384, 0
// EXEC-NEXT: 4440, 0
// EXEC-NEXT: 0, 0
// EXEC-NEXT: 1, 0
// EXEC-NEXT: 257, 0
// EXEC-NEXT: 1000, 0
// EXEC-NEXT: 0, 0
// EXEC-NEXT: 0, 0
// EXEC-NEXT: 105, 0
// EXEC-NEXT: 600, 0
// EXEC-NEXT: 1, 0
// EXEC-NEXT: 42, 0
// EXEC-NEXT: 4440, 0
// EXEC-NEXT: 0, 0
// EXEC-NEXT: 192, 0
// EXEC-NEXT: 576, 0
// EXEC-NEXT: 1500, 0
#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#id6 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>

func.func private @printI64(i64)
func.func private @printComma()
func.func private @printNewline()

// Prints the element count and how many elements do not hold position + 1.
func.func @check(%m: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xi64>
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %errors = scf.for %p = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
    %v = memref.load %m[%p] : memref<?xi64>
    %pi = arith.index_cast %p : index to i64
    %want = arith.addi %pi, %one : i64
    %bad = arith.cmpi ne, %v, %want : i64
    %add = arith.extui %bad : i1 to i64
    %next = arith.addi %acc, %add : i64
    scf.yield %next : i64
  }
  %count = arith.index_cast %n : index to i64
  call @printI64(%count) : (i64) -> ()
  call @printComma() : () -> ()
  call @printI64(%errors) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
func.func @run_rope() {
  %m = memref.alloc() : memref<6x5x2x64xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<6x5x2x64xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<6x5x2x64xi64>
  %c2 = arith.constant 2 : index
  %d2 = memref.dim %m, %c2 : memref<6x5x2x64xi64>
  %c3 = arith.constant 3 : index
  %d3 = memref.dim %m, %c3 : memref<6x5x2x64xi64>
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%m : memref<6x5x2x64xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %s2_ = arith.muli %l1, %d2 : index
    %l2 = arith.addi %s2_, %i2 : index
    %s3_ = arith.muli %l2, %d3 : index
    %l3 = arith.addi %s3_, %i3 : index
    %p = arith.index_cast %l3 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1, 2, 3]] : memref<6x5x2x64xi64> into memref<3840xi64>
  %g = memref.cast %f : memref<3840xi64> to memref<?xi64>
  call @check(%g) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<6x5x2x64xi64>
  return
}
func.func @run_guarded_rows() {
  %m = memref.alloc() : memref<3x5x7xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<3x5x7xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<3x5x7xi64>
  %c2 = arith.constant 2 : index
  %d2 = memref.dim %m, %c2 : memref<3x5x7xi64>
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%m : memref<3x5x7xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %s2_ = arith.muli %l1, %d2 : index
    %l2 = arith.addi %s2_, %i2 : index
    %p = arith.index_cast %l2 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1, 2]] : memref<3x5x7xi64> into memref<105xi64>
  %g = memref.cast %f : memref<105xi64> to memref<?xi64>
  call @check(%g) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<3x5x7xi64>
  return
}
func.func @run_odd() {
  %m = memref.alloc() : memref<1000xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<1000xi64>)
  linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%m : memref<1000xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %p = arith.index_cast %i0 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %g = memref.cast %m : memref<1000xi64> to memref<?xi64>
  call @check(%g) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<1000xi64>
  return
}
func.func @run_two_blocks_a_row() {
  %m = memref.alloc() : memref<3x300xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<3x300xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<3x300xi64>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%m : memref<3x300xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %p = arith.index_cast %l1 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1]] : memref<3x300xi64> into memref<900xi64>
  %g = memref.cast %f : memref<900xi64> to memref<?xi64>
  call @check(%g) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<3x300xi64>
  return
}
func.func @run_heads() {
  %m = memref.alloc() : memref<1x2x4x16x128xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<1x2x4x16x128xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<1x2x4x16x128xi64>
  %c2 = arith.constant 2 : index
  %d2 = memref.dim %m, %c2 : memref<1x2x4x16x128xi64>
  %c3 = arith.constant 3 : index
  %d3 = memref.dim %m, %c3 : memref<1x2x4x16x128xi64>
  %c4 = arith.constant 4 : index
  %d4 = memref.dim %m, %c4 : memref<1x2x4x16x128xi64>
  linalg.generic {indexing_maps = [#id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%m : memref<1x2x4x16x128xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %s2_ = arith.muli %l1, %d2 : index
    %l2 = arith.addi %s2_, %i2 : index
    %s3_ = arith.muli %l2, %d3 : index
    %l3 = arith.addi %s3_, %i3 : index
    %s4_ = arith.muli %l3, %d4 : index
    %l4 = arith.addi %s4_, %i4 : index
    %p = arith.index_cast %l4 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1, 2, 3, 4]] : memref<1x2x4x16x128xi64> into memref<16384xi64>
  %g = memref.cast %f : memref<16384xi64> to memref<?xi64>
  call @check(%g) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<1x2x4x16x128xi64>
  return
}
func.func @run_rank6() {
  %m = memref.alloc() : memref<2x3x1x4x5x37xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<2x3x1x4x5x37xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<2x3x1x4x5x37xi64>
  %c2 = arith.constant 2 : index
  %d2 = memref.dim %m, %c2 : memref<2x3x1x4x5x37xi64>
  %c3 = arith.constant 3 : index
  %d3 = memref.dim %m, %c3 : memref<2x3x1x4x5x37xi64>
  %c4 = arith.constant 4 : index
  %d4 = memref.dim %m, %c4 : memref<2x3x1x4x5x37xi64>
  %c5 = arith.constant 5 : index
  %d5 = memref.dim %m, %c5 : memref<2x3x1x4x5x37xi64>
  linalg.generic {indexing_maps = [#id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%m : memref<2x3x1x4x5x37xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %i5 = linalg.index 5 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %s2_ = arith.muli %l1, %d2 : index
    %l2 = arith.addi %s2_, %i2 : index
    %s3_ = arith.muli %l2, %d3 : index
    %l3 = arith.addi %s3_, %i3 : index
    %s4_ = arith.muli %l3, %d4 : index
    %l4 = arith.addi %s4_, %i4 : index
    %s5_ = arith.muli %l4, %d5 : index
    %l5 = arith.addi %s5_, %i5 : index
    %p = arith.index_cast %l5 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1, 2, 3, 4, 5]] : memref<2x3x1x4x5x37xi64> into memref<4440xi64>
  %g = memref.cast %f : memref<4440xi64> to memref<?xi64>
  call @check(%g) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<2x3x1x4x5x37xi64>
  return
}
func.func @run_dyn1(%s0: index) {
  %m = memref.alloc(%s0) : memref<?xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<?xi64>)
  linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%m : memref<?xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %p = arith.index_cast %i0 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  call @check(%m) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<?xi64>
  return
}
func.func @run_dyn3(%s0: index, %s1: index, %s2: index) {
  %m = memref.alloc(%s0, %s1, %s2) : memref<?x?x?xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<?x?x?xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<?x?x?xi64>
  %c2 = arith.constant 2 : index
  %d2 = memref.dim %m, %c2 : memref<?x?x?xi64>
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%m : memref<?x?x?xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %s2_ = arith.muli %l1, %d2 : index
    %l2 = arith.addi %s2_, %i2 : index
    %p = arith.index_cast %l2 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1, 2]] : memref<?x?x?xi64> into memref<?xi64>
  call @check(%f) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<?x?x?xi64>
  return
}
func.func @run_dyn6(%s0: index, %s1: index, %s2: index, %s3: index, %s4: index, %s5: index) {
  %m = memref.alloc(%s0, %s1, %s2, %s3, %s4, %s5) : memref<?x?x?x?x?x?xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<?x?x?x?x?x?xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<?x?x?x?x?x?xi64>
  %c2 = arith.constant 2 : index
  %d2 = memref.dim %m, %c2 : memref<?x?x?x?x?x?xi64>
  %c3 = arith.constant 3 : index
  %d3 = memref.dim %m, %c3 : memref<?x?x?x?x?x?xi64>
  %c4 = arith.constant 4 : index
  %d4 = memref.dim %m, %c4 : memref<?x?x?x?x?x?xi64>
  %c5 = arith.constant 5 : index
  %d5 = memref.dim %m, %c5 : memref<?x?x?x?x?x?xi64>
  linalg.generic {indexing_maps = [#id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%m : memref<?x?x?x?x?x?xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %i5 = linalg.index 5 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %s2_ = arith.muli %l1, %d2 : index
    %l2 = arith.addi %s2_, %i2 : index
    %s3_ = arith.muli %l2, %d3 : index
    %l3 = arith.addi %s3_, %i3 : index
    %s4_ = arith.muli %l3, %d4 : index
    %l4 = arith.addi %s4_, %i4 : index
    %s5_ = arith.muli %l4, %d5 : index
    %l5 = arith.addi %s5_, %i5 : index
    %p = arith.index_cast %l5 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1, 2, 3, 4, 5]] : memref<?x?x?x?x?x?xi64> into memref<?xi64>
  call @check(%f) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<?x?x?x?x?x?xi64>
  return
}
func.func @run_dyn_rows_of_64(%s0: index) {
  %m = memref.alloc(%s0) : memref<?x64xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<?x64xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<?x64xi64>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%m : memref<?x64xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %p = arith.index_cast %l1 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1]] : memref<?x64xi64> into memref<?xi64>
  call @check(%f) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<?x64xi64>
  return
}
func.func @run_dyn_rows_of_300(%s0: index) {
  %m = memref.alloc(%s0) : memref<?x300xi64>
  %zero = arith.constant 0 : i64
  linalg.fill ins(%zero : i64) outs(%m : memref<?x300xi64>)
  %c1 = arith.constant 1 : index
  %d1 = memref.dim %m, %c1 : memref<?x300xi64>
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%m : memref<?x300xi64>) {
  ^bb0(%o: i64):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %s1_ = arith.muli %i0, %d1 : index
    %l1 = arith.addi %s1_, %i1 : index
    %p = arith.index_cast %l1 : index to i64
    %one = arith.constant 1 : i64
    %q = arith.addi %p, %one : i64
    %v = arith.addi %o, %q : i64
    linalg.yield %v : i64
  }
  %f = memref.collapse_shape %m [[0, 1]] : memref<?x300xi64> into memref<?xi64>
  call @check(%f) : (memref<?xi64>) -> ()
  memref.dealloc %m : memref<?x300xi64>
  return
}
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c9 = arith.constant 9 : index
  %c37 = arith.constant 37 : index
  %c257 = arith.constant 257 : index
  %c300 = arith.constant 300 : index
  %c1000 = arith.constant 1000 : index
  call @run_rope() : () -> ()
  call @run_guarded_rows() : () -> ()
  call @run_odd() : () -> ()
  call @run_two_blocks_a_row() : () -> ()
  call @run_heads() : () -> ()
  call @run_rank6() : () -> ()
  call @run_dyn1(%c0) : (index) -> ()
  call @run_dyn1(%c1) : (index) -> ()
  call @run_dyn1(%c257) : (index) -> ()
  call @run_dyn1(%c1000) : (index) -> ()
  call @run_dyn3(%c0, %c5, %c7) : (index, index, index) -> ()
  call @run_dyn3(%c3, %c0, %c7) : (index, index, index) -> ()
  call @run_dyn3(%c3, %c5, %c7) : (index, index, index) -> ()
  call @run_dyn3(%c2, %c1, %c300) : (index, index, index) -> ()
  call @run_dyn3(%c1, %c1, %c1) : (index, index, index) -> ()
  call @run_dyn3(%c7, %c3, %c2) : (index, index, index) -> ()
  call @run_dyn6(%c2, %c3, %c1, %c4, %c5, %c37) : (index, index, index, index, index, index) -> ()
  call @run_dyn_rows_of_64(%c0) : (index) -> ()
  call @run_dyn_rows_of_64(%c3) : (index) -> ()
  call @run_dyn_rows_of_64(%c9) : (index) -> ()
  call @run_dyn_rows_of_300(%c5) : (index) -> ()
  return
}

