#!/usr/bin/env python3
"""A Llama-3-8B layer as PyTorch users run it today, timed: the reference
for the GPU kit's compiled FP8 and BF16 layer programs (part "block").

The forward of one layer at 4096 tokens (hidden 4096, 32 query and 8
key/value heads, D = 128, FFN 14336, causal): RMSNorm, the Q/K/V, output,
gate, up and down projections as torch._scaled_mm (cuBLASLt FP8, E4M3,
per-tensor current scaling: each activation's amax, a scale, a cast; the
weights cast once, outside the timing), RoPE-free attention on
scaled_dot_product_attention in bf16, SwiGLU, the residual adds, bf16
everywhere else. Also the same layer with every projection in bf16
(torch.matmul). Median of CUDA-event-timed forwards after warm-up:
    LAYER|<variant>|<tokens>|<ms>
"""
import argparse
import sys

from timing import median_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=4096)
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as error:
        sys.exit("torch_layer: no PyTorch here (%s)" % error)
    if not torch.cuda.is_available():
        sys.exit("torch_layer: PyTorch sees no GPU")
    print("torch %s, CUDA %s, %s" % (torch.__version__, torch.version.cuda,
                                     torch.cuda.get_device_name()))
    s, hidden, heads, kv_heads, d, ffn = args.tokens, 4096, 32, 8, 128, 14336
    dev, bf16, e4m3 = "cuda", torch.bfloat16, torch.float8_e4m3fn
    fp8_max = torch.finfo(e4m3).max
    gen = torch.Generator(device=dev).manual_seed(0)

    def weight(n, k):
        return (torch.randn(n, k, device=dev, generator=gen) / k ** 0.5).to(bf16)

    w = {"q": weight(heads * d, hidden), "k": weight(kv_heads * d, hidden),
         "v": weight(kv_heads * d, hidden), "o": weight(hidden, heads * d),
         "gate": weight(ffn, hidden), "up": weight(ffn, hidden),
         "down": weight(hidden, ffn)}
    norm1 = torch.ones(hidden, device=dev, dtype=bf16)
    norm2 = torch.ones(hidden, device=dev, dtype=bf16)

    def cast(x):
        amax = x.abs().amax().float().clamp(min=1e-12)
        scale = fp8_max / amax
        return (x.float() * scale).clamp(-fp8_max, fp8_max).to(e4m3), \
            scale.reciprocal()

    # The weights in E4M3 with their scale_inv, [n, k] row-major: _scaled_mm
    # takes them transposed (column-major [k, n]).
    w8 = {name: cast(t) for name, t in w.items()}

    def linear_fp8(x, name):
        x8, sx = cast(x)
        wq, sw = w8[name]
        return torch._scaled_mm(x8, wq.t(), scale_a=sx, scale_b=sw,
                                out_dtype=bf16)

    def linear_bf16(x, name):
        return torch.matmul(x, w[name].t())

    def rms_norm(x, g):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(var + 1e-5)).to(bf16) * g

    def layer(x, linear):
        h = rms_norm(x, norm1)
        q = linear(h, "q").view(s, heads, d).transpose(0, 1).unsqueeze(0)
        k = linear(h, "k").view(s, kv_heads, d).transpose(0, 1).unsqueeze(0)
        v = linear(h, "v").view(s, kv_heads, d).transpose(0, 1).unsqueeze(0)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=True)
        a = a.squeeze(0).transpose(0, 1).reshape(s, heads * d)
        x = x + linear(a, "o")
        h = rms_norm(x, norm2)
        h = F.silu(linear(h, "gate")) * linear(h, "up")
        return x + linear(h, "down")

    x = torch.randn(s, hidden, device=dev, generator=gen).to(bf16)
    with torch.no_grad():
        for name, linear in (("fp8", linear_fp8), ("bf16", linear_bf16)):
            ms = median_ms(torch, lambda _: layer(x, linear), args.iterations)
            print("LAYER|%s|%d|%.4f" % (name, s, ms))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
