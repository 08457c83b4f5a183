// A prefill after a KV cache of 32 tokens, the cache concatenated in: K
// and V are the cache's 32 tokens and the 64 new ones (tensor.concat, as
// exporters write `torch.cat([k_cache, k], dim=-2)`), 64 query rows
// against the 96 keys, row i attending keys j <= i + 32. fp8-fuse-attention
// takes the concatenation as K and V (the op reads whatever tensor holds
// them): fp8.attention {causal, causal_offset = 32}. fp8-fuse-attention.mlir
// checks the IR, fp8-fuse-attention-run.test the values.
#id = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>
#q = affine_map<(b, i, j, c) -> (b, i, c)>
#kt = affine_map<(b, i, j, c) -> (b, j, c)>
#s = affine_map<(b, i, j, c) -> (b, i, j)>
func.func @prefill(%q: tensor<4x64x32xf32>, %kc: tensor<4x32x32xf32>, %kn: tensor<4x64x32xf32>, %vc: tensor<4x32x16xf32>, %vn: tensor<4x64x16xf32>) -> tensor<4x64x16xf32> {
  %k = tensor.concat dim(1) %kc, %kn : (tensor<4x32x32xf32>, tensor<4x64x32xf32>) -> tensor<4x96x32xf32>
  %v = tensor.concat dim(1) %vc, %vn : (tensor<4x32x16xf32>, tensor<4x64x16xf32>) -> tensor<4x96x16xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 0.17677669 : f32
  %e3 = tensor.empty() : tensor<4x64x96xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x64x96xf32>) -> tensor<4x64x96xf32>
  %qk = linalg.batch_matmul indexing_maps = [#q, #kt, #s] ins(%q, %k : tensor<4x64x32xf32>, tensor<4x96x32xf32>) outs(%z3 : tensor<4x64x96xf32>) -> tensor<4x64x96xf32>
  %prefix = arith.constant 32 : index
  %sc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qk : tensor<4x64x96xf32>) outs(%e3 : tensor<4x64x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %x = arith.mulf %in, %c : f32
    %last = arith.addi %i, %prefix : index
    %after = arith.cmpi ugt, %j, %last : index
    %r = arith.select %after, %ninf, %x : f32
    linalg.yield %r : f32
  } -> tensor<4x64x96xf32>
  %e2 = tensor.empty() : tensor<4x64xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sc : tensor<4x64x96xf32>) outs(%mi : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %si = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sc, %max : tensor<4x64x96xf32>, tensor<4x64xf32>) outs(%si : tensor<4x64xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    %r = arith.addf %out, %x : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sc, %max, %sum : tensor<4x64x96xf32>, tensor<4x64xf32>, tensor<4x64xf32>) outs(%e3 : tensor<4x64x96xf32>) {
  ^bb0(%in: f32, %mx: f32, %l: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %x = math.exp %d : f32
    %r = arith.divf %x, %l : f32
    linalg.yield %r : f32
  } -> tensor<4x64x96xf32>
  %eo = tensor.empty() : tensor<4x64x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x96xf32>, tensor<4x96x16xf32>) outs(%zo : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}
