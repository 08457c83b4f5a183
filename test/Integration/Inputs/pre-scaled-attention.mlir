// Attention with the scale applied to Q and K before Q K^T, each by the
// fourth root of 1/32 (PyTorch's math SDPA scales both operands by the
// square root of the scale), and the named linalg.softmax reading Q K^T
// itself (f32): fp8-fuse-attention.mlir checks that it fuses with scale
// 1/sqrt(32); fp8-fuse-attention-run.test runs it.
#id = affine_map<(b, i, j) -> (b, i, j)>
#q = affine_map<(b, i, j, c) -> (b, i, c)>
#kt = affine_map<(b, i, j, c) -> (b, j, c)>
#s = affine_map<(b, i, j, c) -> (b, i, j)>
func.func @pre_scaled(%q: tensor<4x64x32xf32>, %k: tensor<4x96x32xf32>, %v: tensor<4x96x16xf32>) -> tensor<4x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.42044820762685725 : f32
  %eq = tensor.empty() : tensor<4x64x32xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<4x64x32xf32>) outs(%eq : tensor<4x64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x64x32xf32>
  %ek = tensor.empty() : tensor<4x96x32xf32>
  %ks = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<4x96x32xf32>) outs(%ek : tensor<4x96x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %c, %in : f32
    linalg.yield %m : f32
  } -> tensor<4x96x32xf32>
  %e3 = tensor.empty() : tensor<4x64x96xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x64x96xf32>) -> tensor<4x64x96xf32>
  %qk = linalg.batch_matmul indexing_maps = [#q, #kt, #s] ins(%qs, %ks : tensor<4x64x32xf32>, tensor<4x96x32xf32>) outs(%z3 : tensor<4x64x96xf32>) -> tensor<4x64x96xf32>
  %p = linalg.softmax dimension(2) ins(%qk : tensor<4x64x96xf32>) outs(%e3 : tensor<4x64x96xf32>) -> tensor<4x64x96xf32>
  %eo = tensor.empty() : tensor<4x64x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x96xf32>, tensor<4x96x16xf32>) outs(%zo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}
