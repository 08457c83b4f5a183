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

// Reductions along rows (softmax's max and sum of exponentials): each row
// of 4096 is viewed as [32, 128]; 128 lanes per row (few rows) reduce its
// 32-element strides into partials from the neutral element, reading
// adjacent elements; then each row's 128 partials into the original init.
// An input that does not walk the row (the row maximum) keeps its map.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[X:.*]]: tensor<8x4096xf32>, %[[M:.*]]: tensor<8xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [8, 32, 128] : tensor<8x4096xf32> into tensor<8x32x128xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PE:.*]] = tensor.empty() : tensor<8x128xf32>
// CHECK: %[[PI:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[PE]] : tensor<8x128xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[V3:.*]], #[[ROW:.*]], #[[VP:.*]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[V]], %[[M]] : tensor<8x32x128xf32>, tensor<8xf32>) outs(%[[PI]] : tensor<8x128xf32>)
// CHECK: math.exp
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<8x128xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK: return %[[S]]
func.func @rows(%x: tensor<8x4096xf32>, %m: tensor<8xf32>) -> tensor<8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %j = linalg.fill ins(%z : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>, affine_map<(r, c) -> (r)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<8x4096xf32>, tensor<8xf32>) outs(%j : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %ex = math.exp %d : f32
    %r = arith.addf %acc, %ex : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// Many rows (8192): 32 lanes per row. A row reduction that reads the row
// along a non-innermost dimension (a column sum), one using linalg.index,
// and a short row (64) stay.
// CHECK-LABEL: func.func @more_rows(
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8192, 8, 32] : tensor<8192x256xbf16> into tensor<8192x8x32xbf16>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8192x32xf32>)
// CHECK: linalg.reduce ins(%{{.*}} : tensor<256x512xf32>) outs(%{{.*}} : tensor<512xf32>) dimensions = [0]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x512xf32>)
// CHECK: linalg.index 1
// CHECK-NOT: tensor.expand_shape
func.func @more_rows(%x: tensor<8192x256xbf16>, %c: tensor<256x512xf32>, %w: tensor<4x512xf32>,
                     %i1: tensor<8192xf32>, %i2: tensor<512xf32>, %i3: tensor<4xf32>)
    -> (tensor<8192xf32>, tensor<512xf32>, tensor<4xf32>) {
  %s = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x256xbf16>) outs(%i1 : tensor<8192xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %f = arith.extf %a : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  } -> tensor<8192xf32>
  %cols = linalg.reduce ins(%c : tensor<256x512xf32>) outs(%i2 : tensor<512xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %idx = linalg.generic {indexing_maps = [affine_map<(r, c) -> (r, c)>, affine_map<(r, c) -> (r)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<4x512xf32>) outs(%i3 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %p = arith.mulf %a, %jf : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s, %cols, %idx : tensor<8192xf32>, tensor<512xf32>, tensor<4xf32>
}

// A rank-1 reduction whose body reads its index: viewing it as [K / r, r]
// would renumber the loop, so it stays.
// CHECK-LABEL: func.func @indexed_sum(
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.index 0
// CHECK-NOT: tensor.expand_shape
func.func @indexed_sum(%v: tensor<4096xf32>, %init: tensor<f32>) -> tensor<f32> {
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%v : tensor<4096xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %p = arith.mulf %a, %f : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
