#!/usr/bin/env bash
# Builds fp8-fuzz (scripts/sanitize.sh's ASan+UBSan build, build-asan/) if
# needed and fuzzes fp8-pipeline and the CPU lowerings for SECONDS (default
# 60), then feeds the grown corpus to the fold-vs-lowering differential test.
# Prints executions, exec/s, libFuzzer coverage (cov, ft) and the fraction of
# inputs that parse. Then fuzzes each input reader of the `readers` table
# below for its number of inputs (at most SECONDS each) from
# FUZZ_READER_SEED (default 1: the same inputs every run). Exits non-zero on
# a finding; the reproducer is in build-asan/fuzz/artifacts/. FUZZ_JOBS=N
# runs N workers of fp8-fuzz (-jobs/-workers); extra arguments go to
# fp8-fuzz's libFuzzer.
#
#   bench/fuzz.sh 60
#   FUZZ_JOBS=2 bench/fuzz.sh 1800 -runs=2000000
#   FUZZ_READER_RUNS=1000000 FUZZ_READER_SEED=0 bench/fuzz.sh 600
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ASAN_BUILD_DIR:-$root/build-asan}"
seconds="${1:-60}"
shift || true
jobs="${FUZZ_JOBS:-1}"
max_len=32768

# The input readers' targets (tools/fp8-fuzz/CMakeLists.txt), one line
# each: the target, its seed corpus (tools/fp8-fuzz/corpus/<dir>), the
# longest input, how many inputs a run tries (FUZZ_READER_RUNS overrides;
# CI's budget is about half a minute for all of them) and, optionally, a
# libFuzzer dictionary in tools/fp8-fuzz/.
readers=(
  "fp8-fuzz-npy npy 4096 300000"
  "fp8-fuzz-c-header c-header 8192 15000 mlir.dict"
  "fp8-fuzz-train-contract train-contract 8192 10000 mlir.dict"
  "fp8-fuzz-checkpoint checkpoint 4096 10000"
)

reader_targets=()
for reader in "${readers[@]}"; do
  reader_targets+=("${reader%% *}")
done
mkdir -p "$build"
"$root/scripts/sanitize.sh" fp8-fuzz FP8FoldVsLowerTests "${reader_targets[@]}" \
  > "$build/fuzz-build.log" 2>&1 \
  || { cat "$build/fuzz-build.log"; exit 1; }
source "$root/scripts/sanitizer-env.sh"

# Seeds, rebuilt each run: the checked-in corpus, the examples, the real
# graphs of test/Inputs, the lit tests' cases (one per `// -----`, RUN and
# CHECK lines dropped) and fp8-gen graphs. The grown corpus is kept.
work="$build/fuzz"
seeds="$work/seeds"
rm -rf "$seeds"
mkdir -p "$seeds" "$work/corpus" "$work/artifacts"
cp "$root"/tools/fp8-fuzz/corpus/*.mlir "$root"/examples/*.mlir \
  "$root"/test/Inputs/graphs/*.mlir "$seeds"/
find "$root/test" -name '*.mlir' -not -path '*/Inputs/*' -print0 \
  | xargs -0 grep -lE '(fp8|linalg|tosa)\.' \
  | while read -r file; do
      awk -v out="$seeds/$(basename "$file" .mlir)" '
        /^\/\/ -----/ { n++; next }
        /^\/\/ *(RUN|CHECK|[A-Z0-9-]+:)/ { next }
        { print > (out "." n ".mlir") }' n=0 "$file"
    done
gen="$root/build/bin/fp8-gen"
[ -x "$gen" ] || gen="$build/bin/fp8-gen"
i=0
for args in "--arch=gpt2 --form=named" "--arch=llama --form=generic --dtype=bf16" \
            "--arch=llama --form=tosa --kv-heads=1" "--arch=gpt2 --mode=train" \
            "--arch=llama --weights=globals --dtype=f16"; do
  # shellcheck disable=SC2086
  "$gen" $args --layers=1 --hidden=32 --heads=2 --seq=16 --batch=1 \
    -o "$seeds/fp8-gen-$i.mlir" 2>/dev/null || true
  i=$((i + 1))
done
find "$seeds" -size +${max_len}c -delete

log="$work/fuzz.log"
parallel=()
if [ "$jobs" -gt 1 ]; then
  parallel=(-jobs="$jobs" -workers="$jobs")
fi
cd "$work"
rm -f fuzz-*.log
set +e
"$build/bin/fp8-fuzz" "$work/corpus" "$seeds" \
  -dict="$root/tools/fp8-fuzz/mlir.dict" -max_len=$max_len \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -only_ascii=1 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
  ${parallel[@]+"${parallel[@]}"} "$@" > "$log" 2>&1
status=$?
set -e
# With workers, the main log echoes theirs: summarize the workers' own logs
# (once each), keep the main one for the errors.
summary="$log"
if [ "$jobs" -gt 1 ]; then
  summary="$work/workers.log"
  cat fuzz-*.log > "$summary"
  rm -f fuzz-*.log
fi

# A summary of every worker's log: libFuzzer's final stats, its last
# coverage line and fp8-fuzz's own counts.
awk '
  /^stat::number_of_executed_units:/ { runs += $2 }
  /^stat::average_exec_per_sec:/ { rate += $2 }
  /^stat::new_units_added:/ { added += $2 }
  /^stat::peak_rss_mb:/ { if ($2 > rss) rss = $2 }
  / cov: / { for (i = 1; i < NF; i++) { if ($i == "cov:") cov = $(i + 1); if ($i == "ft:") ft = $(i + 1) } }
  /^fp8-fuzz: / { inputs += $2; parsed += $4; piped += $7; lowered += $11; skipped += $15 }
  END {
    printf "fuzz: %d executions, %d exec/s, cov %s ft %s, %d new units, peak RSS %d MB\n", runs, rate, cov, ft, added, rss
    if (inputs) printf "fuzz: %.1f%% parse, %.1f%% through fp8-pipeline, %.1f%% through fp8-lower-to-cpu, %d skipped (known upstream bugs)\n", 100 * parsed / inputs, 100 * piped / inputs, 100 * lowered / inputs, skipped
  }' "$summary"
if [ $status -ne 0 ]; then
  grep -E "^(==[0-9]+==ERROR|fp8-fuzz finding|SUMMARY|artifact_prefix|Test unit written)" "$log" | head -20
  echo "fuzz: FAILED (status $status); log $log, reproducers in $work/artifacts/" >&2
  exit $status
fi

# The input readers, each on its own corpus (kept, like fp8-fuzz's).
for reader in "${readers[@]}"; do
  read -r name dir reader_len reader_runs reader_dict <<< "$reader"
  dict=()
  if [ -n "$reader_dict" ]; then
    dict=(-dict="$root/tools/fp8-fuzz/$reader_dict")
  fi
  mkdir -p "$work/$name"
  set +e
  "$build/bin/$name" "$work/$name" "$root/tools/fp8-fuzz/corpus/$dir" \
    ${dict[@]+"${dict[@]}"} \
    -seed="${FUZZ_READER_SEED:-1}" -runs="${FUZZ_READER_RUNS:-$reader_runs}" \
    -max_total_time="$seconds" -max_len="$reader_len" -timeout=20 \
    -rss_limit_mb=2048 -artifact_prefix="$work/artifacts/$name-" \
    -print_final_stats=1 > "$work/$name.log" 2>&1
  status=$?
  set -e
  awk -v name="$name" '
    /^stat::number_of_executed_units:/ { runs = $2 }
    /^stat::average_exec_per_sec:/ { rate = $2 }
    / cov: / { for (i = 1; i < NF; i++) { if ($i == "cov:") cov = $(i + 1); if ($i == "ft:") ft = $(i + 1) } }
    END { printf "%s: %d executions, %d exec/s, cov %s ft %s\n", name, runs, rate, cov, ft }' \
    "$work/$name.log"
  if [ $status -ne 0 ]; then
    grep -E "^(==[0-9]+==ERROR|fp8-fuzz-[a-z-]+ finding|SUMMARY|Test unit written)" "$work/$name.log" | head -20
    echo "$name: FAILED (status $status); log $work/$name.log, reproducers in $work/artifacts/" >&2
    exit $status
  fi
done

# The numeric side: constants that fp8 ops take in the grown corpus, folded
# and JIT-run bit for bit (unittests/Runner/FoldVsLowerTest.cpp).
FP8_DIFF_CORPUS="$work/corpus" "$build/unittests/Runner/FP8FoldVsLowerTests" \
  --gtest_brief=1 > "$work/diff.log" 2>&1 \
  || { cat "$work/diff.log"; exit 1; }
echo "fuzz: fold-vs-lowering differential test on the grown corpus passed"
