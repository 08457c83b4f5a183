// RUN: fp8-opt %s --fp8-split-reductions-for-gpu | FileCheck %s

// A full reduction over [64, 100]: the partial sums along the inner loop
// (100 threads, adjacent elements), each from the neutral 0; then the 100
// partials into the original init with the same combiner.
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME: %[[X:.*]]: tensor<64x100xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<100xf32>
// CHECK: %[[P0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<100xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[MAP2D:.*]], #[[INNER:.*]]], iterator_types = ["reduction", "parallel"]} ins(%[[X]] : tensor<64x100xf32>) outs(%[[P0]] : tensor<100xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction"]} ins(%[[P]] : tensor<100xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[ADD:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK: linalg.yield %[[ADD]]
// CHECK: return %[[S]]
func.func @sum_of_squares(%x: tensor<64x100xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x100xf32>) outs(%i : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// A rank-1 max over 4096 = 4 x 1024 (linalg.reduce, generalized): viewed as
// [4, 1024], 1024 partial maxima from -inf, then their max.
// CHECK-LABEL: func.func @max_of_vector(
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1024] : tensor<4096xf32> into tensor<4x1024xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PE:.*]] = tensor.empty() : tensor<1024xf32>
// CHECK: %[[PI:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[PE]] : tensor<1024xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[V]] : tensor<4x1024xf32>) outs(%[[PI]] : tensor<1024xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P]] : tensor<1024xf32>)
// CHECK: arith.maximumf
func.func @max_of_vector(%v: tensor<4096xf32>, %init: tensor<f32>) -> tensor<f32> {
  %mx = linalg.reduce ins(%v : tensor<4096xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %mx : tensor<f32>
}

// What stays: a dynamic rank-1 length (no static factor to split by), an
// odd one, a combiner without a neutral element (a subtraction), and a
// reduction with a parallel loop (already on threads).
// CHECK-LABEL: func.func @unchanged(
// CHECK-NOT: linalg.generic
// CHECK: linalg.reduce {{.*}}ins(%arg0 : tensor<?xf32>)
// CHECK: linalg.reduce ins(%arg1 : tensor<1001xf32>)
// CHECK: linalg.reduce {{.*}}ins(%arg0 : tensor<?xf32>)
// CHECK: linalg.reduce ins(%arg2 : tensor<8x64xf32>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
func.func @unchanged(%d: tensor<?xf32>, %o: tensor<1001xf32>, %m: tensor<8x64xf32>,
                     %i: tensor<f32>, %r: tensor<8xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<8xf32>) {
  %0 = linalg.reduce ins(%d : tensor<?xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %1 = linalg.reduce ins(%o : tensor<1001xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  %2 = linalg.reduce ins(%d : tensor<?xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.subf %acc, %a : f32
      linalg.yield %s : f32
    }
  %3 = linalg.reduce ins(%m : tensor<8x64xf32>) outs(%r : tensor<8xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<8xf32>
}
