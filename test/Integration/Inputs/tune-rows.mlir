// fp8-tune's graph for the finer ways into FP8 (test/Integration/fp8-tune.test).
// @rows: y = x' w where x' is x with its rows 32..63 scaled by 2^-20. One
// scale for all of x' (the pipeline's recipe) maps x's amax onto 448, and
// the small rows, 2^-20 of it, fall below E4M3's least subnormal (2^-9,
// 448 / 2^-9 < 2^18): they flush to zero and their output rows are lost
// (0 dB), whatever the whole output's SQNR. A scale per row (or per 1x128
// block, or per 32 along K) keeps every row at the ~28 dB of an E4M3 cast.
func.func @rows(%x: tensor<64x128xf32>, %w: tensor<128x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %tiny = arith.constant 9.5367431640625e-07 : f32
  %c32 = arith.constant 32 : index
  %ex = tensor.empty() : tensor<64x128xf32>
  %xs = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i, k)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x128xf32>) outs(%ex : tensor<64x128xf32>) {
  ^bb0(%v: f32, %out: f32):
    %i = linalg.index 0 : index
    %small = arith.cmpi uge, %i, %c32 : index
    %scaled = arith.mulf %v, %tiny : f32
    %r = arith.select %small, %scaled, %v : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%xs, %w : tensor<64x128xf32>, tensor<128x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
