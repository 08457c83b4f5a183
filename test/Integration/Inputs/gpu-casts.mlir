// A pure-fp8 step for fp8-run --device=cuda (used by fp8-run-cuda*.test):
// delayed scaling with a fused amax, current scaling (amax, scale, cast),
// cast+transpose on a 2-D tensor with a tile edge, dequantize, and the
// scale / history updates. Dynamic sizes: --dynamic-size picks them (an odd
// size exercises the kernels' scalar tail).
func.func @step(%x: tensor<?xf32>, %w: tensor<200x72xbf16>, %scale: f32,
                %history: tensor<16xf32>)
    -> (tensor<?xf8E4M3FN>, f32, tensor<?xf8E5M2>, f32,
        tensor<200x72xf8E4M3FN>, tensor<72x200xf8E4M3FN>, f32,
        tensor<?xf32>, tensor<200x72xbf16>, tensor<16xf32>, f32) {
  %q, %amax = fp8.quantize %x, %scale : tensor<?xf32> -> tensor<?xf8E4M3FN>, f32
  %a = fp8.amax %x : tensor<?xf32>
  %s = fp8.compute_scale %a for f8E5M2 : f32
  %q5 = fp8.quantize %x, %s : tensor<?xf32> -> tensor<?xf8E5M2>
  %wq, %wqt, %wamax = fp8.cast_transpose %w, %scale
      : tensor<200x72xbf16> -> tensor<200x72xf8E4M3FN>, tensor<72x200xf8E4M3FN>, f32
  %inv = arith.constant 0.25 : f32
  %y = fp8.dequantize %q, %inv : tensor<?xf8E4M3FN> -> tensor<?xf32>
  %wy = fp8.dequantize %wq, %inv : tensor<200x72xf8E4M3FN> -> tensor<200x72xbf16>
  %h = fp8.record_amax %history, %amax : tensor<16xf32>
  %next = fp8.compute_scale %h, %scale for f8E4M3FN : tensor<16xf32>
  %rolled = fp8.roll_history %h : tensor<16xf32>
  return %q, %amax, %q5, %s, %wq, %wqt, %wamax, %y, %wy, %rolled, %next
      : tensor<?xf8E4M3FN>, f32, tensor<?xf8E5M2>, f32,
        tensor<200x72xf8E4M3FN>, tensor<72x200xf8E4M3FN>, f32,
        tensor<?xf32>, tensor<200x72xbf16>, tensor<16xf32>, f32
}
