ml_program.global private mutable @"a\\b??/"(dense<0.0> : tensor<2xf32>) : tensor<2xf32>
ml_program.global private mutable @"nl\0Aé*/ int x; /*"(dense<0> : tensor<3xi8>) : tensor<3xi8>
ml_program.global private mutable @h(dense<0.0> : tensor<2x4xbf16>) : tensor<2x4xbf16>
func.func @quantize(%x: tensor<?xf32>, %s: f32) -> (tensor<?xf8E4M3FN>, f32) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf8E4M3FN>
  return %e, %s : tensor<?xf8E4M3FN>, f32
}
func.func @amax(%x: tensor<4x?xbf16>) -> f32 {
  %z = arith.constant 0.0 : f32
  return %z : f32
}
func.func @none(%i: i64, %j: index, %b: i1, %t: tensor<f16>) {
  return
}
func.func @scales(%x: tensor<2x3x4x5xf8E8M0FNU>, %y: tensor<8xf8E5M2>, %z: tensor<1xi16>, %w: tensor<1xi32>, %v: tensor<1xf64>) -> tensor<2x3x4x5xf8E8M0FNU> {
  return %x : tensor<2x3x4x5xf8E8M0FNU>
}
func.func private @hidden(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
