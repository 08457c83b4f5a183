#!/usr/bin/env bash
# Every .mlir file of a directory (graphs exported by other projects: not
# kept here, docs/reliability.md lists the ones measured and where they come
# from) through fp8-pipeline, then fp8-lower-to-cpu and fp8-lower-to-gpu
# after it. Prints a Markdown table: the GEMMs fp8-classify saw, how many
# became fp8.scaled_matmul, the reasons the others stayed in high precision,
# and each stage's exit status and wall time, with the first error line of a
# stage that failed. Exits non-zero if a file that parses fails a stage.
#
#   bench/external-graphs.sh DIR [build-dir]     (TIMEOUT=600 per stage)
set -uo pipefail
shopt -s nullglob
dir=${1:?usage: bench/external-graphs.sh DIR [build-dir]}
build=${2:-$(dirname "$0")/../build}
opt=$build/bin/fp8-opt
limit=${TIMEOUT:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# stage NAME FILE ARGS...: runs fp8-opt, records "rc seconds" in $work/NAME.
stage() {
  local name=$1 file=$2
  shift 2
  local start end
  start=$(date +%s.%N)
  timeout "$limit" "$opt" "$file" "$@" -o "$work/$name.mlir" \
    2> "$work/$name.err"
  local rc=$?
  end=$(date +%s.%N)
  awk -v rc="$rc" -v a="$start" -v b="$end" \
    'BEGIN { printf "%d %.1f\n", rc, b - a }' > "$work/$name"
  return $rc
}

# The first diagnostic of a failed stage, without its source line.
first_error() {
  grep -m1 -E 'error:' "$work/$1.err" | sed -E 's/^[^ ]*: error: //' |
    cut -c1-120
}

echo "| file | GEMMs | FP8 | kept (reason x count) | fp8-pipeline | + lower-to-cpu | + lower-to-gpu |"
echo "|---|---|---|---|---|---|---|"
failed=0
for file in "$dir"/*.mlir; do
  name=$(basename "$file" .mlir)
  if ! "$opt" "$file" -o /dev/null 2> "$work/parse.err"; then
    echo "| $name | - | - | does not parse: $(grep -m1 'error:' "$work/parse.err" | sed -E 's/^[^ ]*: error: //' | cut -c1-80) | - | - | - |"
    continue
  fi
  "$opt" "$file" --fp8-pipeline=remarks -o /dev/null 2> "$work/remarks"
  gemms=$(grep -cE 'remark: (FP8|kept in high precision)' "$work/remarks")
  kept=$(grep -oE 'kept in high precision: [a-z0-9_]+' "$work/remarks" |
    sed 's/kept in high precision: //' | sort | uniq -c |
    awk '{printf "%s%s x %d", (NR > 1 ? ", " : ""), $2, $1}')
  row="| $name | $gemms"
  if stage pipeline "$file" --fp8-pipeline; then
    fp8=$(grep -c 'fp8.scaled_matmul' "$work/pipeline.mlir")
    row+=" | $fp8 | ${kept:--} | ok $(cut -d' ' -f2 "$work/pipeline")s"
    for target in cpu gpu; do
      if stage "$target" "$work/pipeline.mlir" "--fp8-lower-to-$target"; then
        row+=" | ok $(cut -d' ' -f2 "$work/$target")s"
      else
        row+=" | FAILED ($(cut -d' ' -f1 "$work/$target")): $(first_error "$target")"
        failed=1
      fi
    done
  else
    row+=" | - | ${kept:--} | FAILED: $(first_error pipeline) | - | -"
    failed=1
  fi
  echo "$row |"
done
exit $failed
