// fp8-run --device=cuda refuses this module (fp8-run-cuda-errors.test).

// An f64 exponential: the GPU lowering approximates f32, f16 and bf16
// math without libdevice, not f64.
func.func @f64_exp(%x: tensor<64xf64>) -> tensor<64xf64> {
  %e = tensor.empty() : tensor<64xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<64xf64>) outs(%e : tensor<64xf64>) {
  ^bb0(%a: f64, %o: f64):
    // Line 12:
    %r = math.exp %a : f64
    linalg.yield %r : f64
  } -> tensor<64xf64>
  return %y : tensor<64xf64>
}
