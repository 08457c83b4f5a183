// The flash attention kernels of the GPU kit: fp8-lower-gemm-to-nvvm makes
// one kernel per variant here (convert-fp8-attention-to-wgmma), which
// fp8-hopper-attention (bench/gpu/hopper-attention.cpp) launches by name.
// Shapes are the kernels' run-time parameters; only the element types, the
// head dimension, causal, lse and the mask's element type select a kernel.

// Llama-3-8B prefill: bf16, causal, GQA, D = 128.
func.func @bf16_causal(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                       %v: tensor<1x8x?x128xbf16>) -> tensor<1x32x?x128xbf16> {
  %o = fp8.attention %q, %k, %v scale 0.0883883461 {causal}
      : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>,
        tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  return %o : tensor<1x32x?x128xbf16>
}

// A training step's forward: the log-sum-exp kept.
func.func @bf16_causal_lse(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                           %v: tensor<1x8x?x128xbf16>)
    -> (tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.0883883461 {causal}
      : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>,
        tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
}

// GPT-2-style heads: f16, D = 64, not causal, f32 output and lse.
func.func @f16_d64(%q: tensor<?x12x?x64xf16>, %k: tensor<?x12x?x64xf16>,
                   %v: tensor<?x12x?x64xf16>)
    -> (tensor<?x12x?x64xf32>, tensor<?x12x?xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.125
      : tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>
      -> tensor<?x12x?x64xf32>, tensor<?x12x?xf32>
  return %o, %lse : tensor<?x12x?x64xf32>, tensor<?x12x?xf32>
}

// FP8 scores (E4M3 query and key, per-token scales) with a bf16 value.
func.func @fp8_scores(%q: tensor<1x32x?x128xf8E4M3FN>, %k: tensor<1x8x?x128xf8E4M3FN>,
                      %v: tensor<1x8x?x128xbf16>, %qs: tensor<1x32x?xf32>,
                      %ks: tensor<1x8x?xf32>) -> tensor<1x32x?x128xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x32x?xf32>, tensor<1x8x?xf32> scale 0.0883883461 {causal}
      : tensor<1x32x?x128xf8E4M3FN>, tensor<1x8x?x128xf8E4M3FN>,
        tensor<1x8x?x128xbf16> -> tensor<1x32x?x128xbf16>
  return %o : tensor<1x32x?x128xbf16>
}

// Everything FP8 (fp8-quantize's fp8-attention), causal, with and without
// the log-sum-exp.
func.func @fp8_causal(%q: tensor<1x32x?x128xf8E4M3FN>, %k: tensor<1x8x?x128xf8E4M3FN>,
                      %v: tensor<1x8x?x128xf8E4M3FN>, %qs: tensor<1x32x?xf32>,
                      %ks: tensor<1x8x?xf32>, %vs: tensor<1x8xf32>)
    -> tensor<1x32x?x128xbf16> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x32x?xf32>, tensor<1x8x?xf32> value_scale %vs : tensor<1x8xf32>
      scale 0.0883883461 {block_k = 128, causal, probability_scale = 2.560000e+02 : f32}
      : tensor<1x32x?x128xf8E4M3FN>, tensor<1x8x?x128xf8E4M3FN>,
        tensor<1x8x?x128xf8E4M3FN> -> tensor<1x32x?x128xbf16>
  return %o : tensor<1x32x?x128xbf16>
}

func.func @fp8_causal_lse(%q: tensor<1x32x?x128xf8E4M3FN>, %k: tensor<1x8x?x128xf8E4M3FN>,
                          %v: tensor<1x8x?x128xf8E4M3FN>, %qs: tensor<1x32x?xf32>,
                          %ks: tensor<1x8x?xf32>, %vs: tensor<1x8xf32>)
    -> (tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x32x?xf32>, tensor<1x8x?xf32> value_scale %vs : tensor<1x8xf32>
      scale 0.0883883461 {block_k = 128, causal, probability_scale = 2.560000e+02 : f32}
      : tensor<1x32x?x128xf8E4M3FN>, tensor<1x8x?x128xf8E4M3FN>,
        tensor<1x8x?x128xf8E4M3FN> -> tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %o, %lse : tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
}

// The backward of a training step's attention: bf16 causal GQA, D = 128;
// f16, D = 64.
func.func @bf16_causal_grad(%q: tensor<1x32x?x128xbf16>, %k: tensor<1x8x?x128xbf16>,
                            %v: tensor<1x8x?x128xbf16>, %o: tensor<1x32x?x128xbf16>,
                            %do: tensor<1x32x?x128xbf16>, %lse: tensor<1x32x?xf32>)
    -> (tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      scale 0.0883883461 {causal}
      : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>,
        tensor<1x32x?x128xbf16>, tensor<1x32x?xf32>
  return %dq, %dk, %dv : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
}

func.func @f16_d64_grad(%q: tensor<?x12x?x64xf16>, %k: tensor<?x12x?x64xf16>,
                        %v: tensor<?x12x?x64xf16>, %o: tensor<?x12x?x64xf16>,
                        %do: tensor<?x12x?x64xf16>, %lse: tensor<?x12x?xf32>)
    -> (tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.125
      : tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>,
        tensor<?x12x?x64xf16>, tensor<?x12x?xf32>
  return %dq, %dk, %dv : tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>
}

// Masked forwards: an f32 bias (any broadcast: the strides are run-time
// parameters), a boolean padding mask with FP8 scores and the
// log-sum-exp, an f16 mask with f16 heads of 64.
func.func @bf16_causal_mask(%q: tensor<1x4x?x128xbf16>, %k: tensor<1x2x?x128xbf16>,
                            %v: tensor<1x2x?x128xbf16>, %m: tensor<1x4x?x?xf32>)
    -> tensor<1x4x?x128xbf16> {
  %o = fp8.attention %q, %k, %v mask %m : tensor<1x4x?x?xf32> scale 0.0883883461 {causal}
      : tensor<1x4x?x128xbf16>, tensor<1x2x?x128xbf16>,
        tensor<1x2x?x128xbf16> -> tensor<1x4x?x128xbf16>
  return %o : tensor<1x4x?x128xbf16>
}

func.func @fp8_scores_padding(%q: tensor<2x4x?x128xf8E4M3FN>, %k: tensor<2x2x?x128xf8E4M3FN>,
                              %v: tensor<2x2x?x128xbf16>, %qs: tensor<2x4x?xf32>,
                              %ks: tensor<2x2x?xf32>, %keep: tensor<2x1x1x?xi1>)
    -> (tensor<2x4x?x128xbf16>, tensor<2x4x?xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<2x4x?xf32>, tensor<2x2x?xf32> mask %keep : tensor<2x1x1x?xi1>
      scale 0.0883883461
      : tensor<2x4x?x128xf8E4M3FN>, tensor<2x2x?x128xf8E4M3FN>,
        tensor<2x2x?x128xbf16> -> tensor<2x4x?x128xbf16>, tensor<2x4x?xf32>
  return %o, %lse : tensor<2x4x?x128xbf16>, tensor<2x4x?xf32>
}

func.func @f16_d64_mask(%q: tensor<?x12x?x64xf16>, %k: tensor<?x12x?x64xf16>,
                        %v: tensor<?x12x?x64xf16>, %m: tensor<1x1x?x?xf16>)
    -> tensor<?x12x?x64xf16> {
  %o = fp8.attention %q, %k, %v mask %m : tensor<1x1x?x?xf16> scale 0.125
      : tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>
      -> tensor<?x12x?x64xf16>
  return %o : tensor<?x12x?x64xf16>
}
