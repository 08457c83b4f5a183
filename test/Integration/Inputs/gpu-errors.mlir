// Functions fp8-run --device=cuda cannot run (fp8-run-cuda-errors.test).
func.func @gemm(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>)
                     outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// The GPU lowering turns fp8 ops into kernels; arith.addf on tensors has
// none.
func.func @mixed(%x: tensor<64xf32>, %s: f32) -> tensor<64xf32> {
  %q = fp8.quantize %x, %s : tensor<64xf32> -> tensor<64xf8E4M3FN>
  %y = fp8.dequantize %q, %s : tensor<64xf8E4M3FN> -> tensor<64xf32>
  // Line 17:
  %z = arith.addf %y, %x : tensor<64xf32>
  return %z : tensor<64xf32>
}

func.func @plain(%x: tensor<64xf32>) -> tensor<64xf32> {
  %z = arith.addf %x, %x : tensor<64xf32>
  return %z : tensor<64xf32>
}
