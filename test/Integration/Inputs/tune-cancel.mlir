// fp8-tune's graph with a known answer (test/Integration/fp8-tune.test).
// @out0 is x W1 - (x + e) W1 = -e W1 with e 100 times smaller than x (run
// with --arg=1:normal:0.01): the two GEMMs' FP8 errors (about 3% of x W1)
// are about 3x the output itself, so neither may be in FP8 under any
// budget above 0 dB. @out1 and @out2 are plain projections, each near
// 28 dB alone in FP8. GEMM FLOPs: g0 and g1 524288 each, g2 and g3 1048576
// each: the optimum is {g2, g3}, 2/3 of the GEMM FLOPs.
func.func @cancel(%x: tensor<64x64xf32>, %e: tensor<64x64xf32>,
                  %w1: tensor<64x64xf32>, %z: tensor<64x128xf32>,
                  %w3: tensor<128x64xf32>, %u: tensor<64x64xf32>,
                  %w4: tensor<64x128xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e64 = tensor.empty() : tensor<64x64xf32>
  %c64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e128 = tensor.empty() : tensor<64x128xf32>
  %c128 = linalg.fill ins(%zero : f32) outs(%e128 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %g0 = linalg.matmul ins(%x, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %x2 = linalg.add ins(%x, %e : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g1 = linalg.matmul ins(%x2, %w1 : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %out0 = linalg.sub ins(%g0, %g1 : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g2 = linalg.matmul ins(%z, %w3 : tensor<64x128xf32>, tensor<128x64xf32>) outs(%c64 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g3 = linalg.matmul ins(%u, %w4 : tensor<64x64xf32>, tensor<64x128xf32>) outs(%c128 : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %out0, %g2, %g3 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x128xf32>
}
