func.func @tosa_mm(%a: tensor<1x16x32xf32>, %b: tensor<1x32x16xf32>) -> tensor<1x16x16xf32> {
  %za = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zb = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %za, %zb : (tensor<1x16x32xf32>, tensor<1x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16xf32>
  return %y : tensor<1x16x16xf32>
}
