// A Llama-style FFN (SwiGLU) forward and backward, the setup of torchao's
// FP8 numerics test: y = (silu(x W1^T) * (x W3^T)) W2^T, and with the
// upstream gradient dY (fp8.role = "grad": E5M2 under the hybrid format) the
// backward GEMMs dX, dW1, dW2, dW3. Llama-3 proportions scaled down for a
// CPU: D = 1024, H = 3584, 64 tokens. Weights in PyTorch's [out, in] layout.
#ew = affine_map<(t, j) -> (t, j)>
func.func @ffn_train(%x: tensor<64x1024xf32>, %w1: tensor<3584x1024xf32>, %w3: tensor<3584x1024xf32>, %w2: tensor<1024x3584xf32>,
                     %dy: tensor<64x1024xf32> {fp8.role = "grad"})
    -> (tensor<64x1024xf32>, tensor<64x1024xf32>, tensor<3584x1024xf32>, tensor<3584x1024xf32>, tensor<1024x3584xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %eth = tensor.empty() : tensor<64x3584xf32>
  %zth = linalg.fill ins(%zero : f32) outs(%eth : tensor<64x3584xf32>) -> tensor<64x3584xf32>
  %etd = tensor.empty() : tensor<64x1024xf32>
  %ztd = linalg.fill ins(%zero : f32) outs(%etd : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %ehd = tensor.empty() : tensor<3584x1024xf32>
  %zhd = linalg.fill ins(%zero : f32) outs(%ehd : tensor<3584x1024xf32>) -> tensor<3584x1024xf32>
  %edh = tensor.empty() : tensor<1024x3584xf32>
  %zdh = linalg.fill ins(%zero : f32) outs(%edh : tensor<1024x3584xf32>) -> tensor<1024x3584xf32>

  // Forward.
  %g = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w1 : tensor<64x1024xf32>, tensor<3584x1024xf32>) outs(%zth : tensor<64x3584xf32>) -> tensor<64x3584xf32>
  %u = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w3 : tensor<64x1024xf32>, tensor<3584x1024xf32>) outs(%zth : tensor<64x3584xf32>) -> tensor<64x3584xf32>
  %h = linalg.generic {indexing_maps = [#ew, #ew, #ew], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : tensor<64x3584xf32>, tensor<64x3584xf32>) outs(%eth : tensor<64x3584xf32>) {
  ^bb0(%gv: f32, %uv: f32, %o: f32):
    %ng = arith.negf %gv : f32
    %e = math.exp %ng : f32
    %den = arith.addf %one, %e : f32
    %silu = arith.divf %gv, %den : f32
    %p = arith.mulf %silu, %uv : f32
    linalg.yield %p : f32
  } -> tensor<64x3584xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%h, %w2 : tensor<64x3584xf32>, tensor<1024x3584xf32>) outs(%ztd : tensor<64x1024xf32>) -> tensor<64x1024xf32>

  // Backward.
  %dw2 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %h : tensor<64x1024xf32>, tensor<64x3584xf32>) outs(%zdh : tensor<1024x3584xf32>) -> tensor<1024x3584xf32>
  %dh = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dy, %w2 : tensor<64x1024xf32>, tensor<1024x3584xf32>) outs(%zth : tensor<64x3584xf32>) -> tensor<64x3584xf32>
  %dg, %du = linalg.generic {indexing_maps = [#ew, #ew, #ew, #ew, #ew], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %g, %u : tensor<64x3584xf32>, tensor<64x3584xf32>, tensor<64x3584xf32>) outs(%eth, %eth : tensor<64x3584xf32>, tensor<64x3584xf32>) {
  ^bb0(%dhv: f32, %gv: f32, %uv: f32, %o0: f32, %o1: f32):
    %ng = arith.negf %gv : f32
    %e = math.exp %ng : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %silu = arith.mulf %gv, %s : f32
    // silu'(g) = s (1 + g (1 - s))
    %oms = arith.subf %one, %s : f32
    %gom = arith.mulf %gv, %oms : f32
    %opg = arith.addf %one, %gom : f32
    %dsilu = arith.mulf %s, %opg : f32
    %da = arith.mulf %dhv, %uv : f32
    %dgv = arith.mulf %da, %dsilu : f32
    %duv = arith.mulf %dhv, %silu : f32
    linalg.yield %dgv, %duv : f32, f32
  } -> (tensor<64x3584xf32>, tensor<64x3584xf32>)
  %dw1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dg, %x : tensor<64x3584xf32>, tensor<64x1024xf32>) outs(%zhd : tensor<3584x1024xf32>) -> tensor<3584x1024xf32>
  %dw3 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%du, %x : tensor<64x3584xf32>, tensor<64x1024xf32>) outs(%zhd : tensor<3584x1024xf32>) -> tensor<3584x1024xf32>
  %dx1 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%dg, %w1 : tensor<64x3584xf32>, tensor<3584x1024xf32>) outs(%ztd : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%du, %w3 : tensor<64x3584xf32>, tensor<3584x1024xf32>) outs(%dx1 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
  return %y, %dx, %dw1, %dw3, %dw2 : tensor<64x1024xf32>, tensor<64x1024xf32>, tensor<3584x1024xf32>, tensor<3584x1024xf32>, tensor<1024x3584xf32>
}
