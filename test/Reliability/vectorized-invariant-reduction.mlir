// C2 (found by fp8-run-gemm-sqnr.mlir when the CPU path was vectorized): a
// reduction that adds a loop-invariant value (a count, acc + 1) came out of
// MLIR 22's vectorizer adding it once per 16-lane vector, not once per
// element; fp8-run's flushed-to-zero fractions were wrong. Such reductions
// now stay scalar. The counts are derived by hand: x[i][j] = (i + j) mod 3
// over 4 x 40, so 53 elements are 2 (> 1), 54 are 0, 160 in all.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-cpu="vectorize=false threads=false" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// CHECK: [53]
// CHECK: [54]
// CHECK: [160]

func.func private @printMemrefI64(memref<*xi64>)
func.func @count(%x: tensor<4x40xf32>) -> (tensor<i64>, tensor<i64>, tensor<i64>) {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%c0 : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %r:3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<4x40xf32>) outs(%init, %init, %init : tensor<i64>, tensor<i64>, tensor<i64>) {
  ^bb0(%v: f32, %a: i64, %b: i64, %c: i64):
    %z = arith.constant 0.0 : f32
    %big = arith.constant 1.0 : f32
    %p1 = arith.cmpf ogt, %v, %big : f32
    %p2 = arith.cmpf oeq, %v, %z : f32
    %t = arith.constant true
    %e1 = arith.extui %p1 : i1 to i64
    %e2 = arith.extui %p2 : i1 to i64
    %e3 = arith.extui %t : i1 to i64
    %a1 = arith.addi %a, %e1 : i64
    %b1 = arith.addi %b, %e2 : i64
    %c1 = arith.addi %c, %e3 : i64
    linalg.yield %a1, %b1, %c1 : i64, i64, i64
  } -> (tensor<i64>, tensor<i64>, tensor<i64>)
  return %r#0, %r#1, %r#2 : tensor<i64>, tensor<i64>, tensor<i64>
}
func.func @main() {
  %e = tensor.empty() : tensor<4x40xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x40xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %ii = arith.index_cast %s : index to i32
    %three = arith.constant 3 : i32
    %m = arith.remui %ii, %three : i32
    %f = arith.sitofp %m : i32 to f32
    linalg.yield %f : f32
  } -> tensor<4x40xf32>
  %r:3 = call @count(%x) : (tensor<4x40xf32>) -> (tensor<i64>, tensor<i64>, tensor<i64>)
  %m0 = bufferization.to_buffer %r#0 : tensor<i64> to memref<i64>
  %m1 = bufferization.to_buffer %r#1 : tensor<i64> to memref<i64>
  %m2 = bufferization.to_buffer %r#2 : tensor<i64> to memref<i64>
  %u0 = memref.cast %m0 : memref<i64> to memref<*xi64>
  %u1 = memref.cast %m1 : memref<i64> to memref<*xi64>
  %u2 = memref.cast %m2 : memref<i64> to memref<*xi64>
  call @printMemrefI64(%u0) : (memref<*xi64>) -> ()
  call @printMemrefI64(%u1) : (memref<*xi64>) -> ()
  call @printMemrefI64(%u2) : (memref<*xi64>) -> ()
  return
}
