#!/usr/bin/env bash
# The time of a training step on this CPU, and what the process pays the
# kernel for it: fp8-train's seconds per step, user and system time, minor
# page faults and peak RSS, for each fp8-train given (to compare two builds),
# interleaved REPEAT times so that a busy moment hits every binary alike.
# The model is the parity study's small size (2 layers, hidden 256, 4 heads,
# FFN 704, seq 64, batch 8, autocast BF16).
#
#   bench/train-step-time.sh [FP8_TRAIN ...]     (default: build/bin/fp8-train)
#   STEPS=80 REPEAT=3 RECIPES=bf16,delayed OMP_NUM_THREADS=1 bench/train-step-time.sh old/fp8-train new/fp8-train
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -gt 0 ] || set -- "$root/build/bin/fp8-train"
steps=${STEPS:-80}
repeat=${REPEAT:-3}
recipes=${RECIPES:-bf16,delayed}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$(dirname "$1")/fp8-gen" --arch=llama --mode=train --layers=2 --hidden=256 \
  --heads=4 --ffn=704 --seq=64 --batch=8 --vocab=256 --dtype=bf16 \
  -o "$work/step.mlir"
echo "steps $steps, recipes $recipes, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
for ((r = 1; r <= repeat; ++r)); do
  for train in "$@"; do
    /usr/bin/time -f "%U %S %R %M" -o "$work/time" "$train" "$work/step.mlir" \
      --steps="$steps" --val-every="$steps" --recipes="$recipes" --json \
      --quiet | sed -n '/^{/,$p' > "$work/report.json"   # the JSON after the table
    python3 - "$work/report.json" "$work/time" "$train" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
user, system, faults, rss = open(sys.argv[2]).read().split()[-4:]
steps = " ".join(f"{run['recipe']} {run['seconds_per_step']:.4f}"
                 for run in report["runs"])
print(f"{sys.argv[3]}: s/step {steps}; user {user} s, sys {system} s, "
      f"{faults} minor faults, peak RSS {int(rss) // 1024} MiB")
PY
  done
done
