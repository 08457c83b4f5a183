// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-and-vectorize-for-cpu))" | FileCheck %s
// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-tile-and-vectorize-for-cpu{threads=false}))" | FileCheck %s --check-prefix=SERIAL

// A GEMM: blocks of M x N in parallel, a K panel, an 8 x 32 accumulator
// loaded once, updated by one FMA per row and K step, stored once.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.parallel (%[[M:.+]], %[[N:.+]]) = (%c0, %c0) to (%c64, %c128) step (%c64, %c128)
// CHECK: scf.for %[[P:.+]] = %c0 to %c32 step %c32
// CHECK: scf.for %[[MR:.+]] = %c0 to %c64 step %c8
// CHECK: scf.for %[[NR:.+]] = %c0 to %c128 step %c32
// CHECK-COUNT-8: vector.load %arg2{{.+}} : memref<64x128xf32>, vector<32xf32>
// CHECK: %[[ACC:.+]] = scf.for %{{.+}} = %c0 to %c32 step %c8 iter_args(%{{.+}} = %{{.+}}) -> (vector<8x32xf32>)
// CHECK-NOT: memref<64x128xf32>
// CHECK-COUNT-64: vector.fma {{.+}} : vector<32xf32>
// CHECK: scf.yield {{.+}} : vector<8x32xf32>
// CHECK-COUNT-8: vector.store {{.+}}, %arg2{{.+}} : memref<64x128xf32>, vector<32xf32>
// SERIAL-LABEL: func.func @matmul
// SERIAL-NOT: scf.parallel
// SERIAL: vector.fma
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x128xf32>, %c: memref<64x128xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x128xf32>) outs(%c : memref<64x128xf32>)
  return
}

// -----

// Element-wise along the innermost loop, 16 lanes, the tail masked.
// CHECK-LABEL: func.func @add
// CHECK: scf.for %[[I:.+]] = %c0 to %c4 step %c1
// CHECK: scf.for %[[J:.+]] = %c0 to %c100 step %c16
// CHECK: %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<16xi1>
// CHECK: vector.maskedload %arg0[%[[I]], %[[J]]], %[[MASK]]
// CHECK: arith.addf {{.+}} : vector<1x16xf32>
// CHECK: vector.maskedstore %arg2[%[[I]], %[[J]]], %[[MASK]]
func.func @add(%x: memref<4x100xf32>, %y: memref<4x100xf32>, %z: memref<4x100xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : memref<4x100xf32>, memref<4x100xf32>) outs(%z : memref<4x100xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Large element-wise ops run their rows in parallel.
// CHECK-LABEL: func.func @scale_rows
// CHECK: scf.parallel (%{{.+}}) = (%c0) to (%c256) step (%c1)
// CHECK: arith.mulf {{.+}} : vector<1x16xf32>
// SERIAL-LABEL: func.func @scale_rows
// SERIAL-NOT: scf.parallel
func.func @scale_rows(%x: memref<256x256xf32>, %s: f32) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<256x256xf32>) {
  ^bb0(%a: f32):
    %y = arith.mulf %a, %s : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// A row sum reduces 16 lanes at a time, in order (vector.reduction with
// the accumulator), so it adds in the scalar loop's order.
// CHECK-LABEL: func.func @row_sum
// CHECK: vector.reduction <add>, %{{.+}}, %{{.+}} : vector<16xf32> into f32
func.func @row_sum(%x: memref<8x64xf32>, %out: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %y = arith.addf %a, %acc : f32
    linalg.yield %y : f32
  }
  return
}

// -----

// Left scalar: a reduction of a value that does not vary (a count; MLIR 22's
// vectorizer would add it once per vector, not once per lane), and a
// contraction whose accumulator is transposed.
// CHECK-LABEL: func.func @count
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @count(%x: memref<4x40xf32>, %n: memref<i64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4x40xf32>) outs(%n : memref<i64>) {
  ^bb0(%a: f32, %acc: i64):
    %one = arith.constant 1 : i64
    %y = arith.addi %acc, %one : i64
    linalg.yield %y : i64
  }
  return
}
// CHECK-LABEL: func.func @transposed_result
// CHECK: linalg.matmul
// CHECK-NOT: vector.
func.func @transposed_result(%a: memref<16x64xf32>, %b: memref<64x32xf32>, %c: memref<32x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>]
      ins(%a, %b : memref<16x64xf32>, memref<64x32xf32>) outs(%c : memref<32x16xf32>)
  return
}

// -----

// math.fpowi stays scalar: MLIR 22 would give it a vector exponent, which
// convert-math-to-llvm turns into an invalid llvm.intr.powi (found by the
// fuzzer on the shared DeepSeek layer's RMSNorm, x^2 as fpowi).
// CHECK-LABEL: func.func @square
// CHECK: scf.parallel
// CHECK: math.fpowi %{{.+}}, %{{.+}} : f32, i32
// CHECK-NOT: vector<16xi32>
func.func @square(%x: memref<64x1536xf32>, %y: memref<64x1536xf32>) {
  %two = arith.constant 2 : i32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x1536xf32>) outs(%y : memref<64x1536xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = math.fpowi %a, %two : f32, i32
    linalg.yield %p : f32
  }
  return
}

// -----

// A transposing copy stays scalar, in 32 x 32 blocks.
// CHECK-LABEL: func.func @transpose
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = (%c0, %c0) to (%c256, %c512) step (%c32, %c32)
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : memref<32x32xf32, strided<[256, 1], offset: ?>>) outs(%{{.+}} : memref<32x32xf32, strided<[512, 1], offset: ?>>)
func.func @transpose(%x: memref<512x256xf32>, %y: memref<256x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x256xf32>) outs(%y : memref<256x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}


// -----

// A size the register tile does not divide: the N loop is peeled, the main
// part runs 8 x 32 tiles, the remainder one 8 x 4 tile, both vectorized
// without masks (MLIR 22 lowers a masked contraction element by element).
// SERIAL-LABEL: func.func @matmul_ragged
// SERIAL: scf.for %{{.+}} = %c0 to %c96 step %c32
// SERIAL-COUNT-64: vector.fma {{.+}} : vector<32xf32>
// SERIAL: -> (vector<8x4xf32>)
// SERIAL-COUNT-64: vector.fma {{.+}} : vector<4xf32>
// SERIAL-NOT: linalg.matmul
// SERIAL-NOT: mask
// SERIAL: return
func.func @matmul_ragged(%a: memref<64x72xf32>, %b: memref<72x100xf32>, %c: memref<64x100xf32>) {
  linalg.matmul ins(%a, %b : memref<64x72xf32>, memref<72x100xf32>) outs(%c : memref<64x100xf32>)
  return
}

// -----

// A dynamic M: full 8-row tiles up to M - M mod 8, vectorized without
// masks; the remaining rows, of dynamic count, stay a scalar matmul.
// SERIAL-LABEL: func.func @matmul_dynamic
// SERIAL: %[[DIM:.+]] = memref.dim %arg0, %c0
// SERIAL: scf.for %[[M:.+]] = %c0 to %[[DIM]] step %c128
// SERIAL: %[[FULL:.+]] = affine.apply
// SERIAL: scf.for %{{.+}} = %c0 to %[[FULL]] step %c8
// SERIAL-COUNT-64: vector.fma {{.+}} : vector<32xf32>
// SERIAL: scf.for %{{.+}} = %[[FULL]] to %{{.+}} step %c8
// SERIAL: linalg.matmul ins(%{{.+}}, %{{.+}} : memref<?x8xf32
// SERIAL-NOT: mask
// SERIAL: return
func.func @matmul_dynamic(%a: memref<?x64xf32>, %b: memref<64x128xf32>, %c: memref<?x128xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x128xf32>) outs(%c : memref<?x128xf32>)
  return
}

// -----

// An accumulator read and written in the outermost loop of its nest (a
// loop with a result, used after it): the pair is hoisted out of that loop
// too, which replaces the loop (hoisting runs one nest at a time; the root
// of each run must not be the loop it replaces: ASan found a use after
// free). Another nest's loop (below) keeps its own transfers.
// CHECK-LABEL: func.func @hoist_out_of_outermost
// CHECK: %[[INIT:.+]] = vector.load %arg0[%c0]
// CHECK: %[[LOOP:.+]]:2 = scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}, %[[ACC:.+]] = %[[INIT]])
// CHECK-NOT: vector.load %arg0
// CHECK-NOT: vector.store
// CHECK: scf.yield
// CHECK: vector.store %[[LOOP]]#1, %arg0[%c0]
// CHECK: scf.for
// CHECK: vector.load %arg1
// CHECK: vector.store
// CHECK: return %[[LOOP]]#0
func.func @hoist_out_of_outermost(%acc: memref<8xf32>, %x: memref<64x8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c64 step %c1 iter_args(%s = %zero) -> f32 {
    %a = vector.transfer_read %acc[%c0], %zero {in_bounds = [true]} : memref<8xf32>, vector<8xf32>
    %v = vector.transfer_read %x[%i, %c0], %zero {in_bounds = [true]} : memref<64x8xf32>, vector<8xf32>
    %n = arith.addf %a, %v : vector<8xf32>
    vector.transfer_write %n, %acc[%c0] {in_bounds = [true]} : vector<8xf32>, memref<8xf32>
    %e = vector.extract %v[0] : f32 from vector<8xf32>
    %t = arith.addf %s, %e : f32
    scf.yield %t : f32
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %v = vector.transfer_read %x[%i, %c0], %zero {in_bounds = [true]} : memref<64x8xf32>, vector<8xf32>
    vector.transfer_write %v, %x[%i, %c0] {in_bounds = [true]} : vector<8xf32>, memref<64x8xf32>
  }
  return %sum : f32
}

// -----

// A memref of i1 holds a byte per element and a vector of i1 a bit per
// lane: an op that reads booleans stays scalar (vectorized, it read packed
// bits; fp8.attention's boolean masks are such reads).
// CHECK-LABEL: func.func @select_by_mask
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @select_by_mask(%keep: memref<64x64xi1>, %s: memref<64x64xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%keep : memref<64x64xi1>) outs(%s : memref<64x64xf32>) {
  ^bb0(%k: i1, %x: f32):
    %y = arith.select %k, %x, %ninf : f32
    linalg.yield %y : f32
  }
  return
}
