// RUN: fp8-opt %s --fp8-split-reductions-for-gpu | FileCheck %s
// Through the whole route, no function keeps a loop in the host code:
// every reduction loop is inside a kernel.
// RUN: fp8-opt %s --fp8-lower-to-gpu --mlir-print-ir-after=fp8-merge-gpu-modules -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOST
// HOST-LABEL: func.func @sum_of_squares(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
// HOST-LABEL: func.func @max_of_vector(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
// HOST-LABEL: func.func @masked(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
// HOST-LABEL: func.func @one_thread(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
// HOST-LABEL: func.func @rows(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
// HOST-LABEL: func.func @more_rows(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
// HOST-LABEL: func.func @indexed_sum(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return

// A full reduction over [64, 100]: the partial sums along the inner loop
// (100 threads, adjacent elements; the parallel loop moved outermost), each
// from the neutral 0; then the 100 partials into the original init with
// the same combiner, on one thread: a unit parallel loop in front, the
// init viewed as [1].
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK-SAME: %[[X:.*]]: tensor<64x100xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<100xf32>
// CHECK: %[[P0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<100xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[TRANSPOSED:.*]], #[[FIRST:.*]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<64x100xf32>) outs(%[[P0]] : tensor<100xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[UNIT:.*]] = tensor.expand_shape %[[INIT]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[SECOND:.*]], #[[FIRST]]], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<100xf32>) outs(%[[UNIT]] : tensor<1xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[ADD:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK: linalg.yield %[[ADD]]
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[S]] [] : tensor<1xf32> into tensor<f32>
// CHECK: return %[[R]]
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
// [4, 1024], 1024 partial maxima from -inf; more than 256 partials, so
// those viewed as [8, 128] into 128 (each thread 8 of them); their max on
// one thread.
// CHECK-LABEL: func.func @max_of_vector(
// CHECK-SAME: %{{.*}}: tensor<4096xf32>, %[[INIT:.*]]: tensor<f32>
// CHECK: %[[V:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1024] : tensor<4096xf32> into tensor<4x1024xf32>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PE:.*]] = tensor.empty() : tensor<1024xf32>
// CHECK: %[[PI:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%[[PE]] : tensor<1024xf32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[V]] : tensor<4x1024xf32>) outs(%[[PI]] : tensor<1024xf32>)
// CHECK: arith.maximumf
// CHECK: %[[P2:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [8, 128] : tensor<1024xf32> into tensor<8x128xf32>
// CHECK: %[[QI:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<128xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P2]] : tensor<8x128xf32>) outs(%[[QI]] : tensor<128xf32>)
// CHECK: arith.maximumf
// CHECK: %[[UNIT:.*]] = tensor.expand_shape %[[INIT]] [] output_shape [1]
// CHECK: %[[M:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[Q]] : tensor<128xf32>) outs(%[[UNIT]] : tensor<1xf32>)
// CHECK: arith.maximumf
// CHECK: tensor.collapse_shape %[[M]] []
func.func @max_of_vector(%v: tensor<4096xf32>, %init: tensor<f32>) -> tensor<f32> {
  %mx = linalg.reduce ins(%v : tensor<4096xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %mx : tensor<f32>
}

// A dynamic length, and a static one with no power-of-two factor (1001):
// padded with zeros to R x 256 (R = ceil(K / 256); 1001 -> 4 x 256), 256
// lanes each folding every 256th element from the neutral 0; element
// i * 256 + j past K leaves the lane's accumulator as it was. Then the 256
// partials on one thread.
// CHECK-LABEL: func.func @masked(
// CHECK-SAME: %[[D:[^:]*]]: tensor<?xf32>, %[[O:[^:]*]]: tensor<1001xf32>, %[[I:[^:]*]]: tensor<f32>
// CHECK: %[[K:.*]] = tensor.dim %[[D]], %{{.*}} : tensor<?xf32>
// CHECK: %[[LANES:.*]] = arith.constant 256 : index
// CHECK: %[[R:.*]] = arith.ceildivui %[[K]], %[[LANES]] : index
// CHECK: %[[PADDED:.*]] = arith.muli %[[R]], %[[LANES]] : index
// CHECK: %[[HIGH:.*]] = arith.subi %[[PADDED]], %[[K]] : index
// CHECK: %[[PAD:.*]] = tensor.pad %[[D]] low[0] high[%[[HIGH]]]
// CHECK: tensor.yield %{{.*}} : f32
// CHECK: %[[V:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0, 1]] output_shape [%[[R]], 256] : tensor<?xf32> into tensor<?x256xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[V]] : tensor<?x256xf32>) outs(%{{.*}} : tensor<256xf32>)
// CHECK: ^bb0(%{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK: %[[ROW:.*]] = affine.apply
// CHECK: %[[LANE:.*]] = affine.apply
// CHECK: %[[BASE:.*]] = arith.muli %[[ROW]], %[[LANES]] : index
// CHECK: %[[POS:.*]] = arith.addi %[[BASE]], %[[LANE]] : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[POS]], %[[K]] : index
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[KEPT:.*]] = arith.select %[[INSIDE]], %[[SUM]], %[[ACC]] : f32
// CHECK: linalg.yield %[[KEPT]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<256xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK: tensor.pad %[[O]] low[0] high[23]
// CHECK: } : tensor<1001xf32> to tensor<1024xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 256] : tensor<1024xf32> into tensor<4x256xf32>
// CHECK: arith.cmpi ult, %{{.*}}, %c1001 : index
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<256xf32>) outs(%{{.*}} : tensor<1xf32>)
func.func @masked(%d: tensor<?xf32>, %o: tensor<1001xf32>, %i: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
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
  return %0, %1 : tensor<f32>, tensor<f32>
}

// Whole on one thread (a unit parallel loop in front, inputs' maps shifted,
// inits viewed as [1]): a combiner without a neutral element (a
// subtraction), two results at once (a sum and a max), a short length
// (100, at most 256). A reduction with a parallel loop (already on
// threads, its row too short to split) stays.
// CHECK-LABEL: func.func @one_thread(
// CHECK-SAME: %[[D:[^:]*]]: tensor<?xf32>, %[[S:[^:]*]]: tensor<100xf32>, %[[M:[^:]*]]: tensor<8x64xf32>, %[[I:[^:]*]]: tensor<f32>
// CHECK: %[[U0:.*]] = tensor.expand_shape %[[I]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[D]] : tensor<?xf32>) outs(%[[U0]] : tensor<1xf32>)
// CHECK: arith.subf
// CHECK: %[[R0:.*]] = tensor.collapse_shape %[[G0]] [] : tensor<1xf32> into tensor<f32>
// CHECK: %[[G1:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[D]] : tensor<?xf32>) outs(%{{.*}}, %{{.*}} : tensor<1xf32>, tensor<1xf32>)
// CHECK: %[[SUM:.*]] = tensor.collapse_shape %[[G1]]#0 []
// CHECK: %[[MAX:.*]] = tensor.collapse_shape %[[G1]]#1 []
// CHECK: %[[G2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<100xf32>) outs(%{{.*}} : tensor<1xf32>)
// CHECK: %[[R2:.*]] = tensor.collapse_shape %[[G2]] []
// CHECK: %[[ROWS:.*]] = linalg.reduce ins(%[[M]] : tensor<8x64xf32>)
// CHECK: return %[[R0]], %[[SUM]], %[[MAX]], %[[R2]], %[[ROWS]]
func.func @one_thread(%d: tensor<?xf32>, %s: tensor<100xf32>, %m: tensor<8x64xf32>,
                      %i: tensor<f32>, %r: tensor<8xf32>)
    -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<8xf32>) {
  %0 = linalg.reduce ins(%d : tensor<?xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s0 = arith.subf %acc, %a : f32
      linalg.yield %s0 : f32
    }
  %1:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%d : tensor<?xf32>) outs(%i, %i : tensor<f32>, tensor<f32>) {
  ^bb0(%a: f32, %sum: f32, %max: f32):
    %s1 = arith.addf %sum, %a : f32
    %m1 = arith.maximumf %max, %a : f32
    linalg.yield %s1, %m1 : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  %2 = linalg.reduce ins(%s : tensor<100xf32>) outs(%i : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s2 = arith.addf %a, %acc : f32
      linalg.yield %s2 : f32
    }
  %3 = linalg.reduce ins(%m : tensor<8x64xf32>) outs(%r : tensor<8xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %s3 = arith.addf %a, %acc : f32
      linalg.yield %s3 : f32
    }
  return %0, %1#0, %1#1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<8xf32>
}

// Reductions along rows (softmax's max and sum of exponentials): each row
// of 4096 is viewed as [32, 128]; 128 lanes per row (few rows) reduce its
// 32-element strides into partials from the neutral element, reading
// adjacent elements (rows and lanes the parallel loops, outermost); then
// each row's 128 partials into the original init. An input that does not
// walk the row (the row maximum) keeps its map.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME: %[[X:.*]]: tensor<8x4096xf32>, %[[M:.*]]: tensor<8xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [8, 32, 128] : tensor<8x4096xf32> into tensor<8x32x128xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[PE:.*]] = tensor.empty() : tensor<8x128xf32>
// CHECK: %[[PI:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[PE]] : tensor<8x128xf32>)
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[V3:.*]], #[[ROW:.*]], #[[VP:.*]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[V]], %[[M]] : tensor<8x32x128xf32>, tensor<8xf32>) outs(%[[PI]] : tensor<8x128xf32>)
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
// along a non-innermost dimension (a column sum) and one using linalg.index
// are not split; the column sum's parallel loop (the columns) moves
// outermost: one thread per column walking down it, adjacent threads on
// adjacent columns, instead of a host loop over the rows.
// CHECK-LABEL: func.func @more_rows(
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [8192, 8, 32] : tensor<8192x256xbf16> into tensor<8192x8x32xbf16>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8192x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[COLUMNS:.*]], #[[FIRST:.*]]], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<256x512xf32>) outs(%{{.*}} : tensor<512xf32>)
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

// A rank-1 reduction whose body reads its index: split as a masked one
// (its length is a multiple of 256: no padding), the index it read the
// element's position i * 256 + j.
// CHECK-LABEL: func.func @indexed_sum(
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [16, 256] : tensor<4096xf32> into tensor<16x256xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x256xf32>)
// CHECK: %[[BASE:.*]] = arith.muli
// CHECK: %[[POS:.*]] = arith.addi %[[BASE]]
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[POS]], %c4096 : index
// CHECK: %[[POS32:.*]] = arith.index_cast %[[POS]] : index to i32
// CHECK: arith.sitofp %[[POS32]]
// CHECK: arith.select %[[INSIDE]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<256xf32>) outs(%{{.*}} : tensor<1xf32>)
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

// A full reduction over a dynamic matrix: partials along the inner loop
// (dynamic: their number is only known at run time), reduced by a masked
// split over 256 lanes, then on one thread.
// CHECK-LABEL: func.func @dynamic_matrix(
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x?xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[K:.*]] = tensor.dim %[[P]]
// CHECK: %[[PAD:.*]] = tensor.pad %[[P]] low[0]
// CHECK: %[[V:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 256]
// CHECK: %[[L:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[V]] : tensor<?x256xf32>) outs(%{{.*}} : tensor<256xf32>)
// CHECK: arith.cmpi ult, %{{.*}}, %[[K]] : index
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[L]] : tensor<256xf32>) outs(%{{.*}} : tensor<1xf32>)
// HOST-LABEL: func.func @dynamic_matrix(
// HOST-NOT: scf.{{for|while|parallel}}
// HOST: return
func.func @dynamic_matrix(%m: tensor<?x?xf32>, %init: tensor<f32>) -> tensor<f32> {
  %s = linalg.reduce ins(%m : tensor<?x?xf32>) outs(%init : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}
