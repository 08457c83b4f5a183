#!/usr/bin/env bash
# Data parallelism on this machine (issue "Data-parallel FP8 over MPI"): the
# same 2-layer Llama step and global batch trained STEPS steps by 1, 2 and 4
# ranks (fp8-gen --data-parallel, fp8-train --ranks under OpenMPI's mpirun)
# in FP32, BF16 and FP8 delayed and current scaling. Prints, per recipe and
# rank count, the final loss and its relative difference to the single
# process, and the amax collectives per step. Then the cost of the
# collectives: seconds per step of 2 ranks (each one thread, batch 4)
# against one single-threaded process running the batch-4 step without
# collectives.
#
#   bench/distributed.sh [BUILD_DIR] [OUT_DIR]   (default: build, build/distributed)
#   STEPS=50 RECIPES=fp32,delayed bench/distributed.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="${2:-$build/distributed}"
steps=${STEPS:-50}
recipes=${RECIPES:-fp32,bf16,delayed,current}
mkdir -p "$out"
model=(--arch=llama --mode=train --layers=2 --hidden=128 --heads=4 --seq=64
       --vocab=256 --dtype=bf16)

for ranks in 1 2 4; do
  "$build/bin/fp8-gen" "${model[@]}" --batch=8 --data-parallel=$ranks \
    -o "$out/step$ranks.mlir"
  "$build/bin/fp8-train" "$out/step$ranks.mlir" --ranks=$ranks \
    --steps="$steps" --recipes="$recipes" --val-every="$steps" --json --quiet \
    > "$out/ranks$ranks.json"
done

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def runs(ranks):
    text = open(f"{out}/ranks{ranks}.json").read()
    return {r["recipe"]: r for r in json.loads(text[text.index("{\n"):])["runs"]}
one = runs(1)
print(f"{'recipe':<10} {'ranks':>5} {'final loss':>12} {'vs 1 rank':>11} "
      f"{'val loss':>10} {'vs 1 rank':>11} {'amax coll.':>10} {'s/step':>7}")
for ranks in (1, 2, 4):
    for name, run in runs(ranks).items():
        ref = one[name]
        rel = lambda key: (run[key] - ref[key]) / ref[key]
        print(f"{name:<10} {ranks:>5} {run['final_loss']:>12.6f} "
              f"{rel('final_loss'):>+11.2e} {run['final_val_loss']:>10.6f} "
              f"{rel('final_val_loss'):>+11.2e} "
              f"{run.get('amax_collectives_per_step', '-'):>10} "
              f"{run['seconds_per_step']:>7.3f}")
PY

# The collectives' cost: the rank's own compute, single-threaded, without
# them, against 2 ranks of one thread each (the same compute per process).
cost_steps=$(( steps < 20 ? steps : 20 ))
"$build/bin/fp8-gen" "${model[@]}" --batch=4 -o "$out/step-local.mlir"
OMP_NUM_THREADS=1 "$build/bin/fp8-train" "$out/step-local.mlir" \
  --steps=$cost_steps --recipes=bf16,delayed --val-every=$cost_steps --json \
  --quiet > "$out/local.json"
"$build/bin/fp8-train" "$out/step2.mlir" --ranks=2 --steps=$cost_steps \
  --recipes=bf16,delayed --val-every=$cost_steps --json --quiet \
  > "$out/dp2.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def runs(name):
    text = open(f"{out}/{name}.json").read()
    return {r["recipe"]: r for r in json.loads(text[text.index("{\n"):])["runs"]}
local, dp = runs("local"), runs("dp2")
for name in local:
    a, b = local[name]["seconds_per_step"], dp[name]["seconds_per_step"]
    print(f"{name:<10} 1 process, batch 4: {a*1e3:8.1f} ms/step   "
          f"2 ranks, batch 4 each: {b*1e3:8.1f} ms/step   "
          f"collectives + contention: {(b-a)*1e3:+7.1f} ms/step")
PY
