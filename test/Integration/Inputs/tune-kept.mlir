// fp8-tune's report keeps every GEMM (test/Integration/fp8-tune.test): one
// the user keeps in high precision, attention-like scores (activation x
// activation), and the one candidate, a projection.
func.func @kept(%x: tensor<32x64xf32>, %w: tensor<64x64xf32>, %kt: tensor<64x32xf32>, %wo: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %es = tensor.empty() : tensor<32x32xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<32x32xf32>) -> tensor<32x32xf32>
  %k = linalg.matmul {fp8.precision = "high"} ins(%x, %w : tensor<32x64xf32>, tensor<64x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  %t = math.tanh %kt : tensor<64x32xf32>
  %s = linalg.matmul ins(%k, %t : tensor<32x64xf32>, tensor<64x32xf32>) outs(%zs : tensor<32x32xf32>) -> tensor<32x32xf32>
  %p = linalg.matmul ins(%s, %wo : tensor<32x32xf32>, tensor<32x64xf32>) outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %p : tensor<32x64xf32>
}
