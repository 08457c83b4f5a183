// A small Llama-style FFN block, written as linalg on tensors the way ML
// exporters spell it: RMSNorm (f32 inside), SwiGLU (gate and up projections,
// SiLU, product), down projection, residual add. 16 tokens, hidden 64,
// FFN width 128, bf16 activations and weights.
//
//   fp8-opt examples/llama-ffn-block.mlir --fp8-pipeline="history=16 remarks"
//
// The three projections go to FP8 (E4M3, delayed scaling with explicit state);
// RMSNorm, SiLU and the residual add stay in bf16/f32, and fp8-verify proves it.

#rows = affine_map<(t, h) -> (t, h)>
#row = affine_map<(t, h) -> (t)>
#col = affine_map<(t, h) -> (h)>

func.func @llama_ffn(%x: tensor<16x64xbf16>, %norm_w: tensor<64xbf16>,
                     %w_gate: tensor<128x64xbf16>, %w_up: tensor<128x64xbf16>,
                     %w_down: tensor<64x128xbf16>) -> tensor<16x64xbf16> {
  %f0 = arith.constant 0.0 : f32
  %b0 = arith.constant 0.0 : bf16
  %eps = arith.constant 1.0e-5 : f32
  %inv_h = arith.constant 0.015625 : f32

  // RMSNorm, computed in f32.
  %ss_init = tensor.empty() : tensor<16xf32>
  %ss_zero = linalg.fill ins(%f0 : f32) outs(%ss_init : tensor<16xf32>) -> tensor<16xf32>
  %ss = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x64xbf16>) outs(%ss_zero : tensor<16xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %w = arith.extf %v : bf16 to f32
    %sq = arith.mulf %w, %w : f32
    %sum = arith.addf %acc, %sq : f32
    linalg.yield %sum : f32
  } -> tensor<16xf32>
  %n_init = tensor.empty() : tensor<16x64xbf16>
  %normed = linalg.generic {indexing_maps = [#rows, #row, #col, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss, %norm_w : tensor<16x64xbf16>, tensor<16xf32>, tensor<64xbf16>) outs(%n_init : tensor<16x64xbf16>) {
  ^bb0(%v: bf16, %s: f32, %g: bf16, %out: bf16):
    %mean = arith.mulf %s, %inv_h : f32
    %me = arith.addf %mean, %eps : f32
    %r = math.rsqrt %me : f32
    %vf = arith.extf %v : bf16 to f32
    %gf = arith.extf %g : bf16 to f32
    %y0 = arith.mulf %vf, %r : f32
    %y1 = arith.mulf %y0, %gf : f32
    %y = arith.truncf %y1 : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<16x64xbf16>

  // Gate and up projections: x W^T with PyTorch's [out, in] weights.
  %h_init = tensor.empty() : tensor<16x128xbf16>
  %h_zero = linalg.fill ins(%b0 : bf16) outs(%h_init : tensor<16x128xbf16>) -> tensor<16x128xbf16>
  %gate = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%normed, %w_gate : tensor<16x64xbf16>, tensor<128x64xbf16>) outs(%h_zero : tensor<16x128xbf16>) -> tensor<16x128xbf16>
  %up = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%normed, %w_up : tensor<16x64xbf16>, tensor<128x64xbf16>) outs(%h_zero : tensor<16x128xbf16>) -> tensor<16x128xbf16>

  // SwiGLU: silu(gate) * up, in f32.
  %act = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : tensor<16x128xbf16>, tensor<16x128xbf16>) outs(%h_init : tensor<16x128xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %out: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %ng = arith.negf %gf : f32
    %e = math.exp %ng : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %e : f32
    %silu = arith.divf %gf, %den : f32
    %p = arith.mulf %silu, %uf : f32
    %pb = arith.truncf %p : f32 to bf16
    linalg.yield %pb : bf16
  } -> tensor<16x128xbf16>

  // Down projection and the residual add.
  %o_zero = linalg.fill ins(%b0 : bf16) outs(%n_init : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %down = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%act, %w_down : tensor<16x128xbf16>, tensor<64x128xbf16>) outs(%o_zero : tensor<16x64xbf16>) -> tensor<16x64xbf16>
  %res = linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %down : tensor<16x64xbf16>, tensor<16x64xbf16>) outs(%n_init : tensor<16x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %out: bf16):
    %s = arith.addf %a, %b : bf16
    linalg.yield %s : bf16
  } -> tensor<16x64xbf16>
  return %res : tensor<16x64xbf16>
}
