#!/usr/bin/env python3
"""PyTorch's FP8 and BF16 GEMMs on the GPU kit's shapes, timed.

torch._scaled_mm is cuBLASLt's FP8 GEMM (E4M3 x E4M3, f32 scales, bf16
out; fast accumulation off and on), torch.matmul in bf16 is cuBLAS BF16:
the two numbers an FP8 GEMM is judged against. Timing as fp8-hopper-gemm
does it: median of per-launch CUDA events after warm-up, inputs rotating
through buffers larger than L2. One line per shape:
    TORCH|<shape>|<m>|<n>|<k>|<scaled_mm TFLOP/s>|<fast>|<bf16>
"""
import argparse
import math
import sys

from timing import median_ms

# The shapes of fp8-hopper-gemm's timing table, with its names.
SHAPES = [
    ("4096^3", 4096, 4096, 4096),
    ("8192^3", 8192, 8192, 8192),
    ("llama3-8b qkv (4096x6144x4096)", 4096, 6144, 4096),
    ("llama3-8b o (4096x4096x4096)", 4096, 4096, 4096),
    ("llama3-8b gate/up (4096x14336x4096)", 4096, 14336, 4096),
    ("llama3-8b down (4096x4096x14336)", 4096, 4096, 14336),
]
ROTATE_BYTES = 256 << 20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    try:
        import torch
    except ImportError as error:
        sys.exit("torch_gemm: no PyTorch here (%s)" % error)
    if not torch.cuda.is_available():
        sys.exit("torch_gemm: PyTorch sees no GPU")
    print("torch %s, CUDA %s, %s" % (torch.__version__, torch.version.cuda,
                                     torch.cuda.get_device_name()))
    one = torch.ones((), device="cuda", dtype=torch.float32)
    for name, m, n, k in SHAPES:
        set_bytes = k * (m + n) + 2 * m * n
        copies = max(1, min(8, math.ceil(ROTATE_BYTES / set_bytes)))
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = [torch.randn(m, k, device="cuda", generator=gen)
             .to(torch.float8_e4m3fn) for _ in range(copies)]
        # _scaled_mm wants the second operand column-major: B^T of [n, k].
        b = [torch.randn(n, k, device="cuda", generator=gen)
             .to(torch.float8_e4m3fn).t() for _ in range(copies)]
        flops = 2.0 * m * n * k

        def tflops(ms):
            return flops / (ms * 1e-3) / 1e12

        results = []
        for fast in (False, True):
            def run(i, fast=fast):
                torch._scaled_mm(a[i], b[i], scale_a=one, scale_b=one,
                                 out_dtype=torch.bfloat16,
                                 use_fast_accum=fast)
            results.append(tflops(median_ms(
                torch, lambda i, run=run: run(i % copies), args.iterations,
                warmups=5)))
        a16 = [x.to(torch.bfloat16) for x in a]
        b16 = [x.to(torch.bfloat16) for x in b]
        del a, b
        results.append(tflops(median_ms(
            torch, lambda i: torch.matmul(a16[i % copies], b16[i % copies]),
            args.iterations, warmups=5)))
        del a16, b16
        torch.cuda.empty_cache()
        print("TORCH|%s|%d|%d|%d|%.1f|%.1f|%.1f" % ((name, m, n, k) +
                                                   tuple(results)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
