// Token ids as a TOSA export has them (buddy-mlir's CLIP and Llama): i64,
// cast to i32 for tosa.gather.
func.func @embed(%ids: tensor<1x8xi64>, %table: tensor<1x100x16xf32>) -> tensor<1x8x16xf32> {
  %i32 = tosa.cast %ids : (tensor<1x8xi64>) -> tensor<1x8xi32>
  %rows = tosa.gather %table, %i32 : (tensor<1x100x16xf32>, tensor<1x8xi32>) -> tensor<1x8x16xf32>
  return %rows : tensor<1x8x16xf32>
}
