// fp8-tune on a graph that calls an external function defined nowhere (as
// buddy-mlir's timers are): it runs as a no-op in the trials, and the tuned
// graph still declares it (test/Integration/fp8-tune.test).
func.func private @record(f32)

func.func @timed(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  call @record(%zero) : (f32) -> ()
  %e = tensor.empty() : tensor<64x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
