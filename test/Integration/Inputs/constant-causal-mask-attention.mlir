// A causal mask given as a constant boolean tensor (the lower triangle of
// 8 x 8, as a model's registered buffer exports) selecting -inf: fused with
// the constant as the op's mask, which canonicalization turns into the
// causal flag (fp8-fuse-attention.mlir checks; fp8-fuse-attention-run.test
// runs it against the written graph in f64).
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
#keep = affine_map<(b, i, j) -> (0, i, j)>
#q = affine_map<(b, i, j, c) -> (b, i, c)>
#kt = affine_map<(b, i, j, c) -> (b, j, c)>
#s = affine_map<(b, i, j, c) -> (b, i, j)>
func.func @constant_causal(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  %zero = arith.constant 0.0 : f32
  %keep = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant 0.5 : f32
  %e3 = tensor.empty() : tensor<2x8x8xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %qk = linalg.batch_matmul indexing_maps = [#q, #kt, #s] ins(%q, %k : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%z3 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qk, %keep : tensor<2x8x8xf32>, tensor<1x8x8xi1>) outs(%e3 : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %kp: i1, %out: f32):
    %m = arith.mulf %in, %half : f32
    %r = arith.select %kp, %m, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sc : tensor<2x8x8xf32>) outs(%mi : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sc, %max : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%si : tensor<2x8xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    %r = arith.addf %out, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sc, %max, %sum : tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) outs(%e3 : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %mx: f32, %l: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    %r = arith.divf %x, %l : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x3xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x3xf32>) outs(%zo : tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
  return %o : tensor<2x8x3xf32>
}
