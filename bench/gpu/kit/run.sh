#!/usr/bin/env bash
# The GPU kit's one command, run from the checkout on the GPU machine:
#
#   bash build/gpu-kit/run.sh          (results in $OUT, else build/gpu-kit/results)
#
# Needs the NVIDIA driver; uses nvidia-smi, the CUDA toolkit (ptxas,
# cuobjdump) and python3 with PyTorch when they are there. No LLVM, no MLIR,
# no network. Parts run in this order, each on its own (one failing does not
# stop the next), each with its full log in $OUT/<part>.log:
#   0. completeness: every file of the kit against MANIFEST; the drivers
#      start (else they are rebuilt from src/ with the local compiler)
#   1. environment: GPU, driver, SMs, clocks; ptxas -v of every kernel (no
#      C75xx advisory); cuobjdump SASS of the GEMM: QGMMA present
#   2. casts: bit-exactness and bandwidth (fp8-hopper-casts)
#   3. gemm: correctness, then TFLOP/s against cuBLASLt (fp8-hopper-gemm)
#   4. torch: torch._scaled_mm and torch.matmul bf16 on the same shapes
#   4b. attention: the flash attention kernels against a double reference,
#      then TFLOP/s on Llama-3-8B's heads (fp8-hopper-attention)
#   4c. torch-attention: scaled_dot_product_attention on the same shapes
#   5. block: a Llama-3-8B-shaped layer at 4096 tokens compiled whole by
#      fp8-compile --target=cuda, FP8 against BF16: time, speedup, SQNR
#      (fp8-block-bench)
#   5b. block1k: the same layer at 1024 tokens
#   5c. torch-layer: the same layer as PyTorch runs it (SDPA, _scaled_mm
#      FP8 projections, bf16 elsewhere; and all-bf16)
#   6. aot: examples/aot/llama-ffn.cpp calling the FP8 FFN block that
#      fp8-compile --target=cuda built: outputs against float64, TE's
#      scales from the GPU's state, a checkpoint restored bit for bit
#   7. the table (summarize.py), also in $OUT/summary.md
# FP8_KIT_PARTS="casts block" runs only the parts named.
# Exit status: 0 all parts passed, 1 a part failed, 2 no GPU (after the
# completeness check), 3 the kit is incomplete.
set -uo pipefail
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$kit/results}"
mkdir -p "$out"
# Everything goes to $out/run.log as well. A pipeline, not `exec > >(tee)`:
# bash does not wait for a process substitution, so whoever read our output
# right after we exited could miss its end (a CI run read only the first line).
if [ -z "${FP8_KIT_TEED:-}" ]; then
  FP8_KIT_TEED=1 bash "${BASH_SOURCE[0]}" "$@" 2>&1 | tee "$out/run.log"
  exit "${PIPESTATUS[0]}"
fi

echo "== 0. completeness"
if ! (cd "$kit" && sha256sum --quiet -c MANIFEST); then
  echo "gpu-kit: the kit is incomplete or changed (MANIFEST); rebuild it with scripts/gpu-kit.sh"
  exit 3
fi
bin="$kit/bin"
if ! "$bin/fp8-hopper-casts" --help > /dev/null 2>&1 ||
   ! "$bin/fp8-hopper-gemm" --help > /dev/null 2>&1 ||
   ! "$bin/fp8-hopper-attention" --help > /dev/null 2>&1 ||
   ! "$bin/fp8-block-bench" --help > /dev/null 2>&1; then
  echo "gpu-kit: the prebuilt drivers do not start here; rebuilding them from src/"
  bin="$out/bin"
  bash "$kit/build-drivers.sh" "$kit/src" "$bin" || {
    echo "gpu-kit: cannot build the drivers"; exit 3; }
fi
echo "kit complete: $(wc -l < "$kit/MANIFEST") files; drivers in $bin"

if ! "$bin/fp8-hopper-casts" --probe > "$out/probe.log" 2>&1; then
  cat "$out/probe.log"
  echo "no GPU: nothing to measure here"
  exit 2
fi

failed=0
status_of=()
# part NAME SECONDS COMMAND...: a part that outlives its limit is killed
# (exit 124), so one hung kernel cannot spend the lease of those after it.
run_part() {
  local name="$1" limit="$2"
  shift 2
  echo "== $name"
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > "$out/$name.log" 2>&1
  local status=$?
  [ "$status" -ne 124 ] || echo "-- $name: killed after its ${limit} s limit"
  tail -n 40 "$out/$name.log"
  echo "-- $name: exit $status, $((SECONDS - start)) s"
  status_of+=("$name=$status")
  [ "$status" -eq 0 ] || failed=1
}

cuda_bin=""
for dir in "$(dirname "$(command -v ptxas 2>/dev/null || echo /x/x)")" \
           /usr/local/cuda/bin; do
  [ -x "$dir/ptxas" ] && { cuda_bin="$dir"; break; }
done

environment() {
  cat "$out/probe.log"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,clocks.sm,power.limit \
      --format=csv
  fi
  [ -n "$cuda_bin" ] || { echo "no CUDA toolkit: ptxas and SASS checks skipped"; return 0; }
  "$cuda_bin/ptxas" --version | tail -n 1
  local bad=0
  for ptx in "$kit"/kernels/*.ptx; do
    local name
    name="$(basename "$ptx" .ptx)"
    "$cuda_bin/ptxas" -arch=sm_90a -v "$ptx" -o "$out/$name.cubin" > "$out/ptxas-$name.txt" 2>&1 || bad=1
    if grep -E 'C75[0-9][0-9]|warning' "$out/ptxas-$name.txt"; then
      echo "ptxas $name: advisory above (wgmma serialization?)"
      bad=1
    fi
    echo "ptxas $name: $(grep -c 'Compiling entry' "$out/ptxas-$name.txt") kernels, max $(grep -o 'Used [0-9]* registers' "$out/ptxas-$name.txt" | sort -k2 -n | tail -n 1)"
  done
  local sass="$out/gemm-plain.sass"
  "$cuda_bin/cuobjdump" --dump-sass "$out/gemm-plain.cubin" > "$sass" || bad=1
  local qgmma
  qgmma=$(grep -c QGMMA "$sass")
  echo "SASS gemm-plain: $qgmma QGMMA instructions, $(grep -c 'WARPGROUP.ARRIVE' "$sass") WARPGROUP.ARRIVE, $(grep -c 'WARPGROUP.DEPBAR' "$sass") WARPGROUP.DEPBAR"
  [ "$qgmma" -gt 0 ] || { echo "no QGMMA in the GEMM's SASS"; bad=1; }
  return $bad
}

# cuBLASLt for fp8-hopper-gemm's comparisons: the toolkit's, else PyTorch's.
lt_dirs=()
[ -n "$cuda_bin" ] && lt_dirs+=("$cuda_bin/../lib64")
torch_lt="$(python3 -c 'import glob, os, nvidia.cublas as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null || true)"
[ -n "$torch_lt" ] && lt_dirs+=("$torch_lt")
lt_path="$(IFS=:; echo "${lt_dirs[*]:-}")"

export out kit cuda_bin
# FP8_KIT_PARTS (default: all) picks parts by name, to spend a short lease
# on what changed.
parts="${FP8_KIT_PARTS:-environment casts gemm torch attention torch-attention block block1k torch-layer aot}"
part() {
  case " $parts " in *" $1 "*) ;; *) echo "== $1: skipped (FP8_KIT_PARTS)"; return 0 ;; esac
  run_part "$@"
}
part environment 45 bash -c "$(declare -f environment); environment"
part casts 120 "$bin/fp8-hopper-casts" --ptx "$kit/kernels/casts.ptx" \
  --transpose-ptx "$kit/kernels/block-transpose.ptx" \
  --sizes-mib=256,512,1024,2048 --iterations=20
part gemm 180 env LD_LIBRARY_PATH="${lt_path}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$bin/fp8-hopper-gemm" --ptx "$kit/kernels/gemm-plain.ptx" \
  --ptx-promote "$kit/kernels/gemm-promote.ptx" \
  --ptx-tmastore "$kit/kernels/gemm-tmastore.ptx" --iterations=20
part torch 75 python3 "$kit/torch_gemm.py" --iterations=20
part attention 180 "$bin/fp8-hopper-attention" \
  --ptx "$kit/kernels/attention.ptx" --iterations=20
part torch-attention 90 python3 "$kit/torch_attention.py" --iterations=20
part block 150 "$bin/fp8-block-bench" --fp8 "$kit/programs/libfp8block.so" \
  --bf16 "$kit/programs/libbf16block.so" \
  --signature "$kit/programs/block.sig" \
  --runtime "$bin/libfp8_gpu_runtime.so" --warmup=3 --iterations=10 --profile=1
part block1k 120 "$bin/fp8-block-bench" --fp8 "$kit/programs/libfp8block1k.so" \
  --bf16 "$kit/programs/libbf16block1k.so" \
  --signature "$kit/programs/block1k.sig" \
  --runtime "$bin/libfp8_gpu_runtime.so" --warmup=3 --iterations=20 --profile=1
part torch-layer 90 python3 "$kit/torch_layer.py" --iterations=10
part aot 60 "$kit/programs/llama-ffn" 4

echo "== table"
python3 "$kit/summarize.py" "$out" "${status_of[@]}" | tee "$out/summary.md"
exit $failed
