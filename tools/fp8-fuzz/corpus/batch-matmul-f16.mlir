func.func @bmm(%x: tensor<2x16x32xf16>, %w: tensor<2x32x16xf16>) -> tensor<2x16x16xf16> {
  %zero = arith.constant 0.0 : f16
  %init = tensor.empty() : tensor<2x16x16xf16>
  %acc = linalg.fill ins(%zero : f16) outs(%init : tensor<2x16x16xf16>) -> tensor<2x16x16xf16>
  %y = linalg.batch_matmul ins(%x, %w : tensor<2x16x32xf16>, tensor<2x32x16xf16>) outs(%acc : tensor<2x16x16xf16>) -> tensor<2x16x16xf16>
  return %y : tensor<2x16x16xf16>
}
