#!/usr/bin/env python3
"""The GPU kit's final table, from the parts' logs in a results folder.

    summarize.py OUT_DIR [PART=STATUS ...]

Reads OUT_DIR/<part>.log (the GPU kit's run.sh writes them) and prints one
Markdown document: the device, each part's status, cast bandwidths against
a copy, GEMM checks, GEMM TFLOP/s against torch._scaled_mm (cuBLASLt FP8)
and torch.matmul (BF16) with the targets of issue 10, the flash attention's
checks and TFLOP/s against PyTorch's SDPA, and the whole layer against
PyTorch's, with the targets of issue 33. Missing logs leave their rows out.
"""
import os
import sys

CAST_TARGETS = {"quantize+amax": 0.90, "cast+transpose": 0.80}
GEMM_TARGET_FP8, GEMM_GOAL_FP8, GEMM_TARGET_BF16 = 1.0, 1.1, 1.5
# Issue 33: BF16 attention >= 0.8x SDPA, FP8 >= 1.3x our BF16; our FP8 layer
# >= 1.3x our BF16 layer and >= 1.0x PyTorch's.
ATTN_VS_SDPA, ATTN_FP8_VS_BF16 = 0.8, 1.3
LAYER_FP8_VS_BF16, LAYER_VS_TORCH = 1.3, 1.0


def rows(path, tag):
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [line.rstrip("\n").split("|")[1:] for line in f
                if line.startswith(tag + "|")]


def first_line(path, prefix):
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith(prefix):
                    return line.strip()
    return None


def ratio(a, b):
    return a / b if b > 0 else float("nan")


def main():
    out = sys.argv[1]
    statuses = dict(arg.split("=", 1) for arg in sys.argv[2:])
    lines = ["# GPU kit results", ""]
    device = first_line(os.path.join(out, "probe.log"), "device:")
    lines.append("%s" % (device or "device: unknown"))
    lines.append("")
    lines.append("| part | exit |")
    lines.append("|---|---|")
    for part in ("environment", "casts", "gemm", "torch", "attention",
                 "torch-attention", "block", "block1k", "torch-layer", "aot"):
        lines.append("| %s | %s |" % (part, statuses.get(part, "not run")))

    casts = rows(os.path.join(out, "casts.log"), "CASTS")
    exact = rows(os.path.join(out, "casts.log"), "EXACT")
    if casts:
        lines += ["", "## Casts (GB/s; % of a device-to-device copy)", "",
                  "| MiB | copy | quantize+amax | % | cast+transpose | % |",
                  "|---|---|---|---|---|---|"]
        met = True
        for mib, copy, quant, ct in casts:
            copy, quant, ct = float(copy), float(quant), float(ct)
            q, t = ratio(quant, copy), ratio(ct, copy)
            met &= q >= CAST_TARGETS["quantize+amax"] and \
                t >= CAST_TARGETS["cast+transpose"]
            lines.append("| %s | %.1f | %.1f | %.1f%% | %.1f | %.1f%% |" %
                         (mib, copy, quant, 100 * q, ct, 100 * t))
        lines.append("")
        lines.append("targets (quantize+amax >= 90%%, cast+transpose >= 80%%): %s"
                     % ("met" if met else "NOT met"))
    blocks = rows(os.path.join(out, "casts.log"), "BLOCKCASTS")
    if blocks:
        lines += ["", "## Block casts (GB/s; amax, scale and cast in one pass; "
                  "% of a device-to-device copy)", "",
                  "| MiB | 1x128 pow2 | % | 128x128 | % | MX 1x32 | % |",
                  "|---|---|---|---|---|---|---|"]
        for mib, copy, *recipes in blocks:
            cells = []
            for value in recipes:
                cells += ["%.1f" % float(value),
                          "%.1f%%" % (100 * ratio(float(value), float(copy)))]
            lines.append("| %s | %s |" % (mib, " | ".join(cells)))
    transposed = rows(os.path.join(out, "casts.log"), "BLOCKCASTT")
    if transposed:
        lines += ["", "## Transposing block cast, 128x1 pow2 -> K-major 1x128 "
                  "(GB/s; one pass; % of a device-to-device copy)", "",
                  "| MiB | GB/s | % |", "|---|---|---|"]
        for mib, copy, value in transposed:
            lines.append("| %s | %.1f | %.1f%% |" % (
                mib, float(value), 100 * ratio(float(value), float(copy))))
    if exact:
        lines.append("bit-exact against the CPU numerics: %s (%s mismatches)" %
                     ("yes" if exact[0][0] == "0" else "NO", exact[0][0]))

    checks = rows(os.path.join(out, "gemm.log"), "CHECK")
    if checks:
        lines += ["", "## GEMM checks", "", "| problem | kernel | worst error / tolerance | |",
                  "|---|---|---|---|"]
        for check in checks:
            lines.append("| " + " | ".join(check) + " |")

    gemm = {r[0]: r for r in rows(os.path.join(out, "gemm.log"), "GEMM")}
    torch = {r[0]: r for r in rows(os.path.join(out, "torch.log"), "TORCH")}
    if gemm:
        lines += ["", "## GEMM TFLOP/s (bf16 out)", "",
                  "| shape | ours | +promote | +tma store | _scaled_mm | "
                  "_scaled_mm fast | bf16 matmul | ours / best _scaled_mm | "
                  "ours / bf16 |", "|---|---|---|---|---|---|---|---|---|"]
        met = True
        for name, r in gemm.items():
            ours, promote, tma = float(r[4]), float(r[5]), float(r[6])
            # torch's numbers when PyTorch ran, else cuBLASLt's own (the
            # same library under torch._scaled_mm and torch.matmul).
            t = torch.get(name)
            fp8, fast, bf16 = ((float(t[4]), float(t[5]), float(t[6])) if t
                               else (float(r[7]), float(r[8]), float(r[9])))
            best = max(ours, tma)
            vs_fp8, vs_bf16 = ratio(best, max(fp8, fast)), ratio(best, bf16)
            met &= vs_fp8 >= GEMM_TARGET_FP8 and vs_bf16 >= GEMM_TARGET_BF16
            lines.append("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | "
                         "%.2f | %.2f |" % (name, ours, promote, tma, fp8,
                                            fast, bf16, vs_fp8, vs_bf16))
        lines.append("")
        lines.append("baseline: %s" % ("torch (PyTorch ran)" if torch else
                                       "cuBLASLt called by fp8-hopper-gemm"))
        lines.append("targets (>= %.1fx best _scaled_mm, goal %.1fx; >= %.1fx "
                     "bf16): %s" % (GEMM_TARGET_FP8, GEMM_GOAL_FP8,
                                    GEMM_TARGET_BF16,
                                    "met" if met else "NOT met"))
    blocks = rows(os.path.join(out, "gemm.log"), "BLOCKGEMM")
    if blocks:
        lines += ["", "## Finer-scaled GEMM TFLOP/s (bf16 out)", "",
                  "| shape | 1x128 x 128x128 blocks | row-wise | MX "
                  "(emulated) | per-tensor | per-tensor promote | best "
                  "cuBLASLt FP8 (per-tensor) | blocks / promote | rows / "
                  "per-tensor |", "|---|---|---|---|---|---|---|---|---|"]
        for name, _, _, _, *values in blocks:
            blocked, rowwise, mx, plain, promote, lt = map(float, values)
            lines.append("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | "
                         "%.2f | %.2f |" % (name, blocked, rowwise, mx, plain,
                                            promote, lt,
                                            ratio(blocked, promote),
                                            ratio(rowwise, plain)))
    for log, tokens in (("block", 4096), ("block1k", 1024)):
        block = rows(os.path.join(out, log + ".log"), "BLOCK")
        if not block:
            continue
        bf16_ms, fp8_ms, sqnr, nonfinite = block[0]
        lines += ["", "## A whole block (Llama-3-8B layer, %d tokens; "
                  "fp8-compile --target=cuda)" % tokens, "",
                  "| BF16 program ms | FP8 program ms | speedup | FP8 SQNR vs "
                  "BF16 dB | new non-finite |", "|---|---|---|---|---|",
                  "| %.3f | %.3f | %.2fx | %s | %s |" %
                  (float(bf16_ms), float(fp8_ms),
                   ratio(float(bf16_ms), float(fp8_ms)), sqnr, nonfinite)]
    attention_log = os.path.join(out, "attention.log")
    if os.path.exists(attention_log):
        with open(attention_log, errors="replace") as f:
            checked = [line.rstrip("\n") for line in f
                       if " ok: " in line or " MISMATCH: " in line]
        if checked:
            lines += ["", "## Flash attention checks (against a double "
                      "reference of fp8.attention)", "", "```"] + checked + ["```"]
    attn = {}
    for variant, tokens, ms, tflops in rows(attention_log, "ATTN"):
        attn[(variant, tokens)] = float(tflops)
    sdpa = {r[0]: float(r[2]) for r in
            rows(os.path.join(out, "torch-attention.log"), "SDPA")}
    if attn:
        lines += ["", "## Attention TFLOP/s (Llama-3-8B heads: 32 q / 8 kv, "
                  "D = 128, causal)", "",
                  "| tokens | ours bf16 | ours FP8 | SDPA bf16 | bf16 / SDPA | "
                  "FP8 / our bf16 |", "|---|---|---|---|---|---|"]
        met = True
        for tokens in sorted({t for _, t in attn}, key=int):
            ours, fp8 = attn.get(("bf16", tokens), 0), attn.get(("fp8", tokens), 0)
            ref = sdpa.get(tokens, float("nan"))
            vs_sdpa, vs_bf16 = ratio(ours, ref), ratio(fp8, ours)
            met &= vs_sdpa >= ATTN_VS_SDPA and vs_bf16 >= ATTN_FP8_VS_BF16
            lines.append("| %s | %.1f | %.1f | %.1f | %.2f | %.2f |" %
                         (tokens, ours, fp8, ref, vs_sdpa, vs_bf16))
        backward = {r[1]: float(r[3]) for r in rows(attention_log, "ATTNBWD")}
        sdpa_bwd = {r[0]: float(r[2]) for r in
                    rows(os.path.join(out, "torch-attention.log"), "SDPABWD")}
        for tokens, ours in sorted(backward.items(), key=lambda t: int(t[0])):
            ref = sdpa_bwd.get(tokens, float("nan"))
            lines.append("| %s backward | %.1f | - | %.1f | %.2f | - |" %
                         (tokens, ours, ref, ratio(ours, ref)))
        lines.append("")
        lines.append("targets (bf16 >= %.1fx SDPA, FP8 >= %.1fx our bf16): %s"
                     % (ATTN_VS_SDPA, ATTN_FP8_VS_BF16,
                        "met" if met else "NOT met"))
    layer = {r[0]: float(r[2]) for r in
             rows(os.path.join(out, "torch-layer.log"), "LAYER")}
    block = rows(os.path.join(out, "block.log"), "BLOCK")
    if layer and block:
        bf16_ms, fp8_ms = float(block[0][0]), float(block[0][1])
        torch_fp8 = layer.get("fp8", float("nan"))
        met = ratio(bf16_ms, fp8_ms) >= LAYER_FP8_VS_BF16 and \
            ratio(torch_fp8, fp8_ms) >= LAYER_VS_TORCH
        lines += ["", "## The layer against PyTorch (4096 tokens, ms)", "",
                  "| our BF16 | our FP8 | PyTorch FP8 (_scaled_mm + SDPA) | "
                  "PyTorch bf16 | ours FP8 / ours BF16 | PyTorch FP8 / ours FP8 |",
                  "|---|---|---|---|---|---|",
                  "| %.3f | %.3f | %.3f | %.3f | %.2fx | %.2fx |" %
                  (bf16_ms, fp8_ms, torch_fp8, layer.get("bf16", float("nan")),
                   ratio(bf16_ms, fp8_ms), ratio(torch_fp8, fp8_ms)), "",
                  "targets (our FP8 >= %.1fx our BF16, >= %.1fx PyTorch's): %s"
                  % (LAYER_FP8_VS_BF16, LAYER_VS_TORCH,
                     "met" if met else "NOT met")]
    for log in ("block", "block1k"):
        profile = rows(os.path.join(out, log + ".log"), "PROFILE")
        if not profile:
            continue
        lines += ["", "## Where %s's time goes (--profile=1: each launch "
                  "synchronized and timed; the 12 largest per program)" % log,
                  "", "| program | kernel | ms | launches |",
                  "|---|---|---|---|"]
        shown = {}
        for program, kernel, ms, launches in profile:
            if shown.get(program, 0) < 13:
                shown[program] = shown.get(program, 0) + 1
                lines.append("| %s | %s | %s | %s |" %
                             (program, kernel, ms, launches))
    aot = os.path.join(out, "aot.log")
    if os.path.exists(aot):
        with open(aot, errors="replace") as f:
            lines += ["", "## An AOT-compiled FP8 FFN block on the GPU "
                      "(examples/aot/llama-ffn.cpp)", "", "```"]
            lines += [line.rstrip("\n") for line in f][:40]
            lines.append("```")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
