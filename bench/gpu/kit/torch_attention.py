#!/usr/bin/env python3
"""PyTorch's fused attention on the GPU kit's attention shapes, timed.

torch.nn.functional.scaled_dot_product_attention in bf16 (FlashAttention or
cuDNN, whichever PyTorch picks; the backend it may use is printed), causal,
with GQA (enable_gqa): Llama-3-8B's 32 query and 8 key/value heads, D = 128,
at 4096 and 16384 tokens, as fp8-hopper-attention times our kernels.
Timing as fp8-hopper-gemm does it: the median of per-launch CUDA events
after warm-up. TFLOP/s count half of 4 b h s^2 D (causal). One line per
shape:
    SDPA|<tokens>|<ms>|<TFLOP/s>
and the backward alone (a forward and backward timed, less the forward;
2.5 times the forward's flops, FlashAttention's count):
    SDPABWD|<tokens>|<ms>|<TFLOP/s>
"""
import argparse
import sys

from timing import median_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as error:
        sys.exit("torch_attention: no PyTorch here (%s)" % error)
    if not torch.cuda.is_available():
        sys.exit("torch_attention: PyTorch sees no GPU")
    print("torch %s, CUDA %s, %s; flash %s, cuDNN %s, efficient %s" % (
        torch.__version__, torch.version.cuda, torch.cuda.get_device_name(),
        torch.backends.cuda.flash_sdp_enabled(),
        torch.backends.cuda.cudnn_sdp_enabled(),
        torch.backends.cuda.mem_efficient_sdp_enabled()))
    heads, kv_heads, d = 32, 8, 128
    for tokens in (4096, 16384):
        gen = torch.Generator(device="cuda").manual_seed(0)
        q = torch.randn(1, heads, tokens, d, device="cuda", generator=gen,
                        dtype=torch.bfloat16)
        k = torch.randn(1, kv_heads, tokens, d, device="cuda", generator=gen,
                        dtype=torch.bfloat16)
        v = torch.randn(1, kv_heads, tokens, d, device="cuda", generator=gen,
                        dtype=torch.bfloat16)
        ms = median_ms(torch, lambda _: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True), args.iterations)
        flops = 4.0 * heads * tokens * tokens * d / 2
        print("SDPA|%d|%.4f|%.1f" % (tokens, ms, flops / (ms * 1e-3) / 1e12))
        sys.stdout.flush()
        q.requires_grad_(True)
        k.requires_grad_(True)
        v.requires_grad_(True)
        grad = torch.randn_like(q)

        def forward_backward():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                 enable_gqa=True)
            out.backward(grad)

        both = median_ms(torch, lambda _: forward_backward(), args.iterations)
        bwd = max(both - ms, 1e-6)
        print("SDPABWD|%d|%.4f|%.1f" % (tokens, bwd,
                                        2.5 * flops / (bwd * 1e-3) / 1e12))
        sys.stdout.flush()
        del q, k, v, grad
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
