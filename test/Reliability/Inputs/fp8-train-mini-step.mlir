// A training step of the fp8.train contract small enough to compile in a
// second: one 2x16 by 16x16 GEMM (quantized by the FP8 recipes), its sum of
// squares as the loss.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @train_step(%tok: tensor<2x16xi64> {fp8.train = "tokens"},
                      %tgt: tensor<2x16xi64> {fp8.train = "targets"},
                      %ls: tensor<f32> {fp8.train = "loss_scale"},
                      %step: f32 {fp8.train = "step"},
                      %w: tensor<16x16xf32> {fp8.init = 0.02 : f64, fp8.train = "parameter"},
                      %m: tensor<16x16xf32> {fp8.train = "moment1"},
                      %v: tensor<16x16xf32> {fp8.train = "moment2"})
    -> (tensor<f32> {fp8.train = "loss"}, tensor<16x16xf32> {fp8.train = "parameter"},
        tensor<16x16xf32> {fp8.train = "moment1"}, tensor<16x16xf32> {fp8.train = "moment2"},
        tensor<f32> {fp8.train = "grad_norm"})
    attributes {fp8.train_step} {
  %e = tensor.empty() : tensor<2x16xf32>
  %x = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%tok : tensor<2x16xi64>) outs(%e : tensor<2x16xf32>) {
  ^bb0(%a: i64, %o: f32):
    %f = arith.sitofp %a : i64 to f32
    %s = arith.constant 0.00390625 : f32
    %r = arith.mulf %f, %s : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x16xf32>, tensor<16x16xf32>) outs(%c : tensor<2x16xf32>) -> tensor<2x16xf32>
  %e0 = tensor.empty() : tensor<f32>
  %c0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<2x16xf32>) outs(%c0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %r = arith.addf %o, %sq : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e3 = tensor.empty() : tensor<16x16xf32>
  %w2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<16x16xf32>) outs(%e3 : tensor<16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %k = arith.constant 0.99 : f32
    %r = arith.mulf %a, %k : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  return %l, %w2, %m, %v, %l : tensor<f32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<f32>
}
