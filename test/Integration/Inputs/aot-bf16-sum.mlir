// A bf16 GEMM of 300 ones (fp8-compile-accumulation.test): 300 when it
// accumulates in f32, 256 when every multiply-add rounds to bf16.
func.func @sum300() -> f32 {
  %one = arith.constant 1.0 : bf16
  %zero = arith.constant 0.0 : bf16
  %ex = tensor.empty() : tensor<1x300xbf16>
  %x = linalg.fill ins(%one : bf16) outs(%ex : tensor<1x300xbf16>) -> tensor<1x300xbf16>
  %ew = tensor.empty() : tensor<300x1xbf16>
  %w = linalg.fill ins(%one : bf16) outs(%ew : tensor<300x1xbf16>) -> tensor<300x1xbf16>
  %ey = tensor.empty() : tensor<1x1xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%ey : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %y = linalg.matmul ins(%x, %w : tensor<1x300xbf16>, tensor<300x1xbf16>) outs(%c : tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %i = arith.constant 0 : index
  %s = tensor.extract %y[%i, %i] : tensor<1x1xbf16>
  %f = arith.extf %s : bf16 to f32
  return %f : f32
}
