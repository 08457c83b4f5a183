// fp8-tune's graph for E4M3 gradients (test/Integration/fp8-tune.test):
// dx = dy w with dy a gradient, E5M2 under the hybrid recipe (two mantissa
// bits: about 6 dB under E4M3's three), E4M3 as the `e4m3` alternative.
func.func @grad(%dy: tensor<64x128xf32> {fp8.role = "grad"}, %w: tensor<128x256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %dx = linalg.matmul ins(%dy, %w : tensor<64x128xf32>, tensor<128x256xf32>) outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %dx : tensor<64x256xf32>
}
