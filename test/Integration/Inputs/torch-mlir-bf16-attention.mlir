// torch-mlir's form of a bf16 model whose softmax runs in f32 (HF Llama's
// `softmax(..., dtype=torch.float32).to(query.dtype)`): Q K^T and P V as
// bf16 batch_matmuls, the scores widened by an extf generic before the
// division by sqrt(32) and the f32 softmax (max.dim with its index, sub,
// exp, sum, div), P rounded back to bf16 by a truncf generic. The fused op
// keeps both in f32 (fp8-fuse-attention-run.test: more accurate than the
// written graph against f64).
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#mapT = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#mapR = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
func.func @forward(%q: tensor<1x4x16x32xbf16>, %k: tensor<1x4x16x32xbf16>, %v: tensor<1x4x16x32xbf16>) -> tensor<1x4x16x32xbf16> {
  %cst0 = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0i = arith.constant 0 : i64
  %scale = arith.constant 5.65685415 : f32
  %et = tensor.empty() : tensor<1x4x32x16xbf16>
  %kt = linalg.generic {indexing_maps = [#mapT, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x4x16x32xbf16>) outs(%et : tensor<1x4x32x16xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<1x4x32x16xbf16>
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x16x32xbf16> into tensor<4x16x32xbf16>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x32x16xbf16> into tensor<4x32x16xbf16>
  %cst0b = arith.constant 0.0 : bf16
  %e3 = tensor.empty() : tensor<4x16x16xbf16>
  %z3 = linalg.fill ins(%cst0b : bf16) outs(%e3 : tensor<4x16x16xbf16>) -> tensor<4x16x16xbf16>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<4x16x32xbf16>, tensor<4x32x16xbf16>) outs(%z3 : tensor<4x16x16xbf16>) -> tensor<4x16x16xbf16>
  %sb = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [1, 4, 16, 16] : tensor<4x16x16xbf16> into tensor<1x4x16x16xbf16>
  %e4 = tensor.empty() : tensor<1x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sb : tensor<1x4x16x16xbf16>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<1x4x16x16xf32>
  %sd = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %scale : f32
    linalg.yield %d : f32
  } -> tensor<1x4x16x16xf32>
  %er = tensor.empty() : tensor<1x4x16x1xf32>
  %eri = tensor.empty() : tensor<1x4x16x1xi64>
  %mf = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
  %mi = linalg.fill ins(%c0i : i64) outs(%eri : tensor<1x4x16x1xi64>) -> tensor<1x4x16x1xi64>
  %max:2 = linalg.generic {indexing_maps = [#map4, #mapR, #mapR], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sd : tensor<1x4x16x16xf32>) outs(%mf, %mi : tensor<1x4x16x1xf32>, tensor<1x4x16x1xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %j = linalg.index 3 : index
    %ji = arith.index_cast %j : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %sel = arith.select %gt, %ji, %idx : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<1x4x16x1xf32>, tensor<1x4x16x1xi64>)
  %maxv = tensor.cast %max#0 : tensor<1x4x16x1xf32> to tensor<1x4x16x1xf32>
  %sub = linalg.generic {indexing_maps = [#map4, #mapR, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sd, %maxv : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %d = arith.subf %in, %in1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x16x16xf32>
  %exp = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sub : tensor<1x4x16x16xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<1x4x16x16xf32>
  %sf = linalg.fill ins(%cst0 : f32) outs(%er : tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
  %sum = linalg.generic {indexing_maps = [#map4, #mapR], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x4x16x16xf32>) outs(%sf : tensor<1x4x16x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<1x4x16x1xf32>
  %p = linalg.generic {indexing_maps = [#map4, #mapR, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) outs(%e4 : tensor<1x4x16x16xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %d = arith.divf %in, %in1 : f32
    linalg.yield %d : f32
  } -> tensor<1x4x16x16xf32>
  %e4b = tensor.empty() : tensor<1x4x16x16xbf16>
  %pb = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x4x16x16xf32>) outs(%e4b : tensor<1x4x16x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %x = arith.truncf %in : f32 to bf16
    linalg.yield %x : bf16
  } -> tensor<1x4x16x16xbf16>
  %p3 = tensor.collapse_shape %pb [[0, 1], [2], [3]] : tensor<1x4x16x16xbf16> into tensor<4x16x16xbf16>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x16x32xbf16> into tensor<4x16x32xbf16>
  %eo = tensor.empty() : tensor<4x16x32xbf16>
  %zo = linalg.fill ins(%cst0b : bf16) outs(%eo : tensor<4x16x32xbf16>) -> tensor<4x16x32xbf16>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<4x16x16xbf16>, tensor<4x16x32xbf16>) outs(%zo : tensor<4x16x32xbf16>) -> tensor<4x16x32xbf16>
  %o = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [1, 4, 16, 32] : tensor<4x16x32xbf16> into tensor<1x4x16x32xbf16>
  return %o : tensor<1x4x16x32xbf16>
}
