func.func @constants() -> (tensor<8xf8E4M3FN>, tensor<8xbf16>, f32, f32, f32) {
  %x = arith.constant dense<[0.0, -0.0, 1.0e-9, 447.9, 464.0, 0x7F800000, 0xFF800000, 0x7FC00000]> : tensor<8xf32>
  %s = arith.constant 2.0 : f32
  %q, %amax = fp8.quantize %x, %s : tensor<8xf32> -> tensor<8xf8E4M3FN>, f32
  %d = fp8.dequantize %q, %s : tensor<8xf8E4M3FN> -> tensor<8xbf16>
  %h = arith.constant dense<[0.5, 0x7FC00000, 3.0e+38, 0.0]> : tensor<4xf32>
  %prev = arith.constant 1.0 : f32
  %delayed = fp8.compute_scale %h, %prev for f8E5M2 {margin = 1 : i32} : tensor<4xf32>
  %a = fp8.amax %d : tensor<8xbf16>
  %current = fp8.compute_scale %a for f8E4M3FN {power_of_two} : f32
  return %q, %d, %amax, %delayed, %current : tensor<8xf8E4M3FN>, tensor<8xbf16>, f32, f32, f32
}
