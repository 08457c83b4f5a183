// Attention that the Hopper flash kernel takes (fp8-attention-cuda.test).
// Causal prefill with GQA: 4 query heads on 2 key/value heads, 200 tokens
// (two row tiles of 128, the second cut at 200), head dimension 128.
func.func @attention(%q: tensor<1x4x200x128xbf16>, %k: tensor<1x2x200x128xbf16>,
                     %v: tensor<1x2x200x128xbf16>) -> tensor<1x4x200x128xbf16> {
  %o = fp8.attention %q, %k, %v scale 0.0883883461 {causal}
      : tensor<1x4x200x128xbf16>, tensor<1x2x200x128xbf16>,
        tensor<1x2x200x128xbf16> -> tensor<1x4x200x128xbf16>
  return %o : tensor<1x4x200x128xbf16>
}

// Everything FP8, as fp8-quantize's fp8-attention writes it: per-token
// query and key scales, one value scale per head, E4M3 P in tiles of 128.
func.func @fp8_attention(%q: tensor<1x4x200x128xf8E4M3FN>,
                         %k: tensor<1x2x200x128xf8E4M3FN>,
                         %v: tensor<1x2x200x128xf8E4M3FN>,
                         %qs: tensor<1x4x200xf32>, %ks: tensor<1x2x200xf32>,
                         %vs: tensor<1x2xf32>)
    -> (tensor<1x4x200x128xbf16>, tensor<1x4x200xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x4x200xf32>, tensor<1x2x200xf32>
      value_scale %vs : tensor<1x2xf32> scale 0.0883883461
      {block_k = 128, causal, probability_scale = 2.560000e+02 : f32}
      : tensor<1x4x200x128xf8E4M3FN>, tensor<1x2x200x128xf8E4M3FN>,
        tensor<1x2x200x128xf8E4M3FN>
      -> tensor<1x4x200x128xbf16>, tensor<1x4x200xf32>
  return %o, %lse : tensor<1x4x200x128xbf16>, tensor<1x4x200xf32>
}

// Masked: a boolean padding mask per batch and key, and an f32 bias per
// head, query row and key (the kernels `_maski1` and `_maskf32`).
func.func @padded_attention(%q: tensor<1x4x200x128xbf16>, %k: tensor<1x2x200x128xbf16>,
                            %v: tensor<1x2x200x128xbf16>, %keep: tensor<1x1x1x200xi1>)
    -> tensor<1x4x200x128xbf16> {
  %o = fp8.attention %q, %k, %v mask %keep : tensor<1x1x1x200xi1> scale 0.0883883461
      : tensor<1x4x200x128xbf16>, tensor<1x2x200x128xbf16>,
        tensor<1x2x200x128xbf16> -> tensor<1x4x200x128xbf16>
  return %o : tensor<1x4x200x128xbf16>
}

func.func @biased_attention(%q: tensor<1x4x200x128xbf16>, %k: tensor<1x2x200x128xbf16>,
                            %v: tensor<1x2x200x128xbf16>, %bias: tensor<1x4x200x200xf32>)
    -> tensor<1x4x200x128xbf16> {
  %o = fp8.attention %q, %k, %v mask %bias : tensor<1x4x200x200xf32> scale 0.0883883461 {causal}
      : tensor<1x4x200x128xbf16>, tensor<1x2x200x128xbf16>,
        tensor<1x2x200x128xbf16> -> tensor<1x4x200x128xbf16>
  return %o : tensor<1x4x200x128xbf16>
}
