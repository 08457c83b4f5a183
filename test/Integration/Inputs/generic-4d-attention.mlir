// Attention with 4-D contractions: Q K^T and P V as linalg.generic
// contractions over loops (b, h, i, j, c) and (b, h, i, c, j) with two
// batch loops and no reshapes (the form a dot_general with batch
// dimensions [0, 1] takes in linalg), the softmax as linalg.reduce max,
// sub, exp, linalg.reduce sum and div, all on [1, 4, 16, 16].
// fp8-fuse-attention.mlir checks that it fuses; fp8-fuse-attention-run.test
// runs it (and the same with K given as K^T [b, h, d, s]) against the
// written graph in f64.
#q = affine_map<(b, h, i, j, c) -> (b, h, i, c)>
#k = affine_map<(b, h, i, j, c) -> (b, h, j, c)>
#s = affine_map<(b, h, i, j, c) -> (b, h, i, j)>
#p = affine_map<(b, h, i, c, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, c, j) -> (b, h, j, c)>
#o = affine_map<(b, h, i, c, j) -> (b, h, i, c)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
func.func @forward(%q: tensor<1x4x16x32xf32>, %k: tensor<1x4x16x32xf32>, %v: tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.176776692 : f32
  %e4 = tensor.empty() : tensor<1x4x16x16xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %qk = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x4x16x32xf32>, tensor<1x4x16x32xf32>) outs(%z4 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x16xf32>
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk : tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<1x4x16x16xf32>
  %e3 = tensor.empty() : tensor<1x4x16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %max = linalg.reduce ins(%sc : tensor<1x4x16x16xf32>) outs(%mi : tensor<1x4x16xf32>) dimensions = [3]
    (%in: f32, %init: f32) {
      %r = arith.maximumf %in, %init : f32
      linalg.yield %r : f32
    }
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sc, %max : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    linalg.yield %d : f32
  } -> tensor<1x4x16x16xf32>
  %ee = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex : tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x16x16xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %sum = linalg.reduce ins(%ee : tensor<1x4x16x16xf32>) outs(%si : tensor<1x4x16xf32>) dimensions = [3]
    (%in: f32, %init: f32) {
      %r = arith.addf %in, %init : f32
      linalg.yield %r : f32
    }
  %pr = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ee, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %l: f32, %out: f32):
    %d = arith.divf %in, %l : f32
    linalg.yield %d : f32
  } -> tensor<1x4x16x16xf32>
  %eo = tensor.empty() : tensor<1x4x16x32xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x4x16x32xf32>) -> tensor<1x4x16x32xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%pr, %v : tensor<1x4x16x16xf32>, tensor<1x4x16x32xf32>) outs(%zo : tensor<1x4x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16x32xf32>
  return %o : tensor<1x4x16x32xf32>
}
