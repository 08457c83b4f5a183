// fp8-run --device=cuda beyond the casts (fp8-run-cuda-errors.test).

// A GEMM: under fp8-pipeline, the wgmma kernel with its operands' casts
// and delayed scaling.
func.func @gemm(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>)
                     outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// K known at run time only (fp8-run --dynamic-size): rows of K FP8 bytes
// are padded to a 16-byte multiple there when they need to be (TMA).
func.func @gemm_dynamic_k(%x: tensor<16x?xf32>, %w: tensor<?x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x?xf32>, tensor<?x16xf32>)
                     outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
