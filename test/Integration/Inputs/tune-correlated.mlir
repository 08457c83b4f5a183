// fp8-tune's verification loop (test/Integration/fp8-tune.test): @twice
// returns x W + x W, the second GEMM accumulating into the first. Both
// quantize the same x and W with the same scales, so their FP8 errors are
// the same tensor: together they add 4 times one's noise power, not the 2
// times that the additive model predicts (6 dB worse than one alone, not 3).
func.func @twice(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g0 = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g1 = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%g0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %g1 : tensor<64x64xf32>
}
