// Compiled by fp8-compile.test: dynamic sizes, several results, a scalar
// argument and a scalar result across the C interface.
func.func @quantize(%x: tensor<?xf32>, %s: f32) -> (tensor<?xf8E4M3FN>, f32) {
  %q, %amax = fp8.quantize %x, %s : tensor<?xf32> -> tensor<?xf8E4M3FN>, f32
  return %q, %amax : tensor<?xf8E4M3FN>, f32
}

func.func @amax(%x: tensor<?x?xbf16>) -> f32 {
  %a = fp8.amax %x : tensor<?x?xbf16>
  return %a : f32
}
