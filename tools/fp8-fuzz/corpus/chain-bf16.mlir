func.func @chain(%x: tensor<32x64xbf16>, %a: tensor<64x32xbf16>, %b: tensor<32x16xbf16> {fp8.role = "weight"}) -> tensor<32x16xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e0 = tensor.empty() : tensor<32x32xbf16>
  %f0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %h = linalg.matmul ins(%x, %a : tensor<32x64xbf16>, tensor<64x32xbf16>) outs(%f0 : tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %e1 = tensor.empty() : tensor<32x16xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<32x16xbf16>) -> tensor<32x16xbf16>
  %y = linalg.matmul {fp8.precision = "fp8"} ins(%h, %b : tensor<32x32xbf16>, tensor<32x16xbf16>) outs(%f1 : tensor<32x16xbf16>) -> tensor<32x16xbf16>
  return %y : tensor<32x16xbf16>
}
