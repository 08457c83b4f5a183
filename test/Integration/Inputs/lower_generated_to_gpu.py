"""fp8-gen graphs in every architecture, form, dtype and mode, lowered by
fp8-lower-to-gpu with fp8-pipeline (FP8) and without (the high-precision
twin; f32 graphs only, bf16 twins are covered by the examples): prints one
line per graph with its GEMMs on wgmma kernels and the contractions left
to loops, from the IR after convert-fp8-scaled-matmul-to-wgmma.

usage: lower_generated_to_gpu.py FP8_GEN FP8_OPT WORKDIR
"""
import os
import re
import subprocess
import sys

gen, opt, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
failed = False
for arch in ("llama", "gpt2"):
    for form in ("named", "generic", "tosa"):
        for dtype in ("f32", "bf16"):
            for mode in ("forward", "train"):
                graph = os.path.join(work, f"{arch}-{form}-{dtype}-{mode}.mlir")
                subprocess.run([gen, f"--arch={arch}", f"--form={form}",
                                f"--dtype={dtype}", f"--mode={mode}",
                                "--hidden=64", "--heads=2", "--layers=1",
                                "--seq=16", "-o", graph], check=True)
                for pipeline in ([["--fp8-pipeline"], []] if dtype == "f32"
                                 else [["--fp8-pipeline"]]):
                    run = subprocess.run(
                        [opt, graph, *pipeline, "--fp8-lower-to-gpu",
                         "--mlir-print-ir-after="
                         "convert-fp8-scaled-matmul-to-wgmma",
                         "-o", os.devnull],
                        capture_output=True, text=True)
                    ir = run.stderr
                    kernels = len(re.findall(r"fp8\.wgmma_kernel =", ir))
                    loops = sum(1 for line in ir.splitlines()
                                if re.search(r"linalg\.(matmul|batch_matmul"
                                             r"|contract)\b", line)
                                and "wgmma_kernel" not in line)
                    name = "fp8" if pipeline else "twin"
                    print(f"{arch} {form} {dtype} {mode} {name}: "
                          f"rc={run.returncode} kernels={kernels} "
                          f"loops={loops}")
