// A training step's attention whose Q and K are scaled by 0.5 before
// Q K^T (as exporters write q * d^-1/4, k * d^-1/4), with its backward
// written through the scales: dQ' = dS K' and dK' = dS^T Q' read the scaled
// operands, and dQ = 0.5 dQ', dK = 0.5 dK' are the scales' own backward.
// The fused ops read Q' and K'; the scales and their backward stay.
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
#q = affine_map<(b, i, j, c) -> (b, i, c)>
#kt = affine_map<(b, i, j, c) -> (b, j, c)>
#s = affine_map<(b, i, j, c) -> (b, i, j)>
#pt = affine_map<(b, i, j, c) -> (b, c, i)>
#dot = affine_map<(b, i, j, c) -> (b, c, j)>
func.func @pre_scaled_train_attention(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x3xf32>, %do: tensor<2x8x3xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.25 : f32
  %dscale = arith.constant 0.25 : f32
  %half = arith.constant 0.5 : f32
  %eqs = tensor.empty() : tensor<2x8x4xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<2x8x4xf32>) outs(%eqs : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %ks = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<2x8x4xf32>) outs(%eqs : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %half, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %e3 = tensor.empty() : tensor<2x8x8xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %qk = linalg.batch_matmul indexing_maps = [#q, #kt, #s] ins(%qs, %ks : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%z3 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qk : tensor<2x8x8xf32>) outs(%e3 : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %m = arith.mulf %in, %scale : f32
    %after = arith.cmpi ugt, %j, %i : index
    %r = arith.select %after, %ninf, %m : f32
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
  // The backward.
  %dv = linalg.batch_matmul indexing_maps = [#pt, #dot, #s] ins(%p, %do : tensor<2x8x8xf32>, tensor<2x8x3xf32>) outs(%zo : tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
  %dp = linalg.batch_matmul indexing_maps = [#q, #kt, #s] ins(%do, %v : tensor<2x8x3xf32>, tensor<2x8x3xf32>) outs(%z3 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %dsum = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p, %dp : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%si : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %x = arith.mulf %a, %b : f32
    %r = arith.addf %out, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ds = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p, %dp, %dsum : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e3 : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32, %out: f32):
    %x = arith.subf %b, %d : f32
    %y = arith.mulf %a, %x : f32
    %r = arith.mulf %y, %dscale : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %eq = tensor.empty() : tensor<2x8x4xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %dqs = linalg.batch_matmul ins(%ds, %ks : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%zq : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %dks = linalg.batch_matmul indexing_maps = [#pt, #dot, #s] ins(%ds, %qs : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%zq : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %dq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dqs : tensor<2x8x4xf32>) outs(%eqs : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %dk = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dks : tensor<2x8x4xf32>) outs(%eqs : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %half : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  return %dq, %dk, %dv, %o : tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3xf32>
}

