// The backward that the Hopper flash kernel takes (fp8-attention-cuda.test):
// a training step's attention, causal, GQA (4 query heads on 2 key/value
// heads), 200 tokens, D = 128, and its gradients from the forward's output
// and lse.
func.func @attention_grad(%q: tensor<1x4x200x128xbf16>, %k: tensor<1x2x200x128xbf16>,
                          %v: tensor<1x2x200x128xbf16>, %o: tensor<1x4x200x128xbf16>,
                          %do: tensor<1x4x200x128xbf16>, %lse: tensor<1x4x200xf32>)
    -> (tensor<1x4x200x128xbf16>, tensor<1x2x200x128xbf16>, tensor<1x2x200x128xbf16>) {
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      scale 0.0883883461 {causal}
      : tensor<1x4x200x128xbf16>, tensor<1x2x200x128xbf16>,
        tensor<1x2x200x128xbf16>, tensor<1x4x200x128xbf16>, tensor<1x4x200xf32>
  return %dq, %dk, %dv : tensor<1x4x200x128xbf16>, tensor<1x2x200x128xbf16>, tensor<1x2x200x128xbf16>
}
