#!/usr/bin/env bash
# GFLOP/s of the CPU path's GEMMs next to OpenBLAS sgemm, on 2048^3 and
# 128x4096x14336 (M x K x N: a Llama-3-8B FFN projection at 128 tokens).
#   f32: linalg.matmul in f32, lowered by fp8-lower-to-cpu;
#   fp8: fp8.scaled_matmul on E4M3 operands (decode + contraction + scaling
#        epilogue, f32 out), lowered the same way;
#   openblas: numpy's matmul in f32 (Debian's python3-numpy on OpenBLAS),
#        with the kernels OpenBLAS detects for this CPU: OPENBLAS_CORETYPE
#        and OPENBLAS_L2_SIZE, which this environment sets (to Haswell's
#        AVX2 kernels on an AVX-512 machine), are unset for that command
#        only. The kernel it used is printed (python3-threadpoolctl).
# Each program is JIT-compiled once by mlir-runner and timed over REPEAT
# calls (best call). The last line gives the ratios to OpenBLAS on the
# geometric mean over the shapes: `ratio f32 X.XX fp8 Y.YY`.
#
#   bench/cpu-gemm.sh [BUILD_DIR]        (default: build)
#   REPEAT=5 SHAPES="2048x2048x2048" bench/cpu-gemm.sh
#   LOWERING="fp8-lower-to-cpu{threads=false}" bench/cpu-gemm.sh
#   KEEP=1 bench/cpu-gemm.sh     (keeps the programs, e.g. for perf)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
repeat=${REPEAT:-5}
shapes=${SHAPES:-"2048x2048x2048 128x4096x14336"}
lowering=${LOWERING:-fp8-lower-to-cpu}
llvm_lib=/usr/lib/llvm-22/lib
libs="$llvm_lib/libmlir_c_runner_utils.so,$llvm_lib/libmlir_runner_utils.so,$llvm_lib/libomp.so"
# Debian's numpy, not a virtual environment's: its BLAS is the system's.
python=/usr/bin/python3
work=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then
  echo "cpu-gemm: programs kept in $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi

# One program per kind and shape: fills the operands, calls the GEMM REPEAT
# times and prints the best time in seconds.
program() {  # kind m k n
  local kind=$1 m=$2 k=$3 n=$4 in elem gemm
  if [ "$kind" = f32 ]; then
    elem=f32
    gemm="%zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<${m}x${n}xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<${m}x${n}xf32>) -> tensor<${m}x${n}xf32>
    %r = linalg.matmul ins(%a, %b : tensor<${m}x${k}xf32>, tensor<${k}x${n}xf32>)
                       outs(%acc : tensor<${m}x${n}xf32>) -> tensor<${m}x${n}xf32>"
  else
    elem=f8E4M3FN
    gemm="%s = arith.constant 0.5 : f32
    %r = fp8.scaled_matmul %a, %b scales %s, %s
        : tensor<${m}x${k}xf8E4M3FN>, tensor<${k}x${n}xf8E4M3FN> -> tensor<${m}x${n}xf32>"
  fi
  cat <<MLIR
func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()

func.func @gemm(%a: tensor<${m}x${k}x${elem}>, %b: tensor<${k}x${n}x${elem}>)
    -> tensor<${m}x${n}xf32> attributes {llvm.emit_c_interface} {
  $gemm
  return %r : tensor<${m}x${n}xf32>
}

// Operands in [-1, 1): a hash of the position, so that nothing folds.
func.func @operand(%rows: index, %cols: index, %seed: i32) -> tensor<?x?x${elem}> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?x${elem}>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?x${elem}>) {
  ^bb0(%out: ${elem}):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %c = arith.constant 40503 : i32
    %x0 = arith.muli %ii, %c : i32
    %x1 = arith.addi %x0, %jj : i32
    %x2 = arith.muli %x1, %c : i32
    %x3 = arith.xori %x2, %seed : i32
    %m = arith.constant 1023 : i32
    %x4 = arith.andi %x3, %m : i32
    %f = arith.sitofp %x4 : i32 to f32
    %h = arith.constant 0.001953125 : f32
    %one = arith.constant 1.0 : f32
    %y0 = arith.mulf %f, %h : f32
    %y = arith.subf %y0, %one : f32
    $( [ "$elem" = f32 ] && echo "linalg.yield %y : f32" || echo "%q = arith.truncf %y : f32 to ${elem}
    linalg.yield %q : ${elem}" )
  } -> tensor<?x?x${elem}>
  return %t : tensor<?x?x${elem}>
}

func.func @main() {
  %cm = arith.constant ${m} : index
  %ck = arith.constant ${k} : index
  %cn = arith.constant ${n} : index
  %s1 = arith.constant 12345 : i32
  %s2 = arith.constant 678 : i32
  %ad = call @operand(%cm, %ck, %s1) : (index, index, i32) -> tensor<?x?x${elem}>
  %bd = call @operand(%ck, %cn, %s2) : (index, index, i32) -> tensor<?x?x${elem}>
  %a = tensor.cast %ad : tensor<?x?x${elem}> to tensor<${m}x${k}x${elem}>
  %b = tensor.cast %bd : tensor<?x?x${elem}> to tensor<${k}x${n}x${elem}>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cr = arith.constant ${repeat} : index
  %inf = arith.constant 1.0e30 : f64
  %best = scf.for %i = %c0 to %cr step %c1 iter_args(%b0 = %inf) -> f64 {
    %t0 = func.call @rtclock() : () -> f64
    %r = func.call @gemm(%a, %b) : (tensor<${m}x${k}x${elem}>, tensor<${k}x${n}x${elem}>) -> tensor<${m}x${n}xf32>
    %t1 = func.call @rtclock() : () -> f64
    // Keep the result alive: read one element.
    %v = tensor.extract %r[%c0, %c0] : tensor<${m}x${n}xf32>
    %dt = arith.subf %t1, %t0 : f64
    %b1 = arith.minimumf %b0, %dt : f64
    %vv = arith.extf %v : f32 to f64
    %z = arith.constant 0.0 : f64
    %keep = arith.mulf %vv, %z : f64
    %b2 = arith.addf %b1, %keep : f64
    scf.yield %b2 : f64
  }
  func.call @printF64(%best) : (f64) -> ()
  func.call @printNewline() : () -> ()
  return
}
MLIR
}

run_ours() {  # kind m k n -> seconds
  program "$@" > "$work/$1.mlir"
  "$build/bin/fp8-opt" "$work/$1.mlir" "--$lowering" -o "$work/$1.ll.mlir"
  "$llvm_lib/../bin/mlir-runner" "$work/$1.ll.mlir" -e main -entry-point-result=void \
    -O3 -shared-libs="$libs" | tail -1
}

run_openblas() {  # m k n -> "seconds kernel"
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$python" - "$@" "$repeat" <<'PY'
import sys, time
import numpy as np
from threadpoolctl import threadpool_info
m, k, n, repeat = map(int, sys.argv[1:])
kernel = "/".join(info.get("architecture") or "?" for info in threadpool_info()
                  if info.get("internal_api") == "openblas") or "not-openblas"
rng = np.random.default_rng(0)
a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
best = float("inf")
for _ in range(repeat):
    t = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t)
print(best, kernel)
PY
}

printf '%-16s %10s %10s %10s   (GFLOP/s, best of %d)\n' "M x K x N" f32 fp8 openblas "$repeat"
kernels=()
ratios=()
for shape in $shapes; do
  IFS=x read -r m k n <<< "$shape"
  flop=$(( 2 * m * n * k ))
  f32=$(run_ours f32 "$m" "$k" "$n")
  fp8=$(run_ours fp8 "$m" "$k" "$n")
  read -r blas kernel < <(run_openblas "$m" "$k" "$n")
  read -r gf32 gfp8 gblas < <(awk -v f="$flop" -v a="$f32" -v b="$fp8" -v c="$blas" \
    'BEGIN { printf "%.1f %.1f %.1f\n", f / a / 1e9, f / b / 1e9, f / c / 1e9 }')
  printf '%-16s %10s %10s %10s\n' "$shape" "$gf32" "$gfp8" "$gblas"
  kernels+=("$kernel")
  ratios+=("$gf32 $gfp8 $gblas")
done
echo "openblas kernel: $(printf '%s\n' "${kernels[@]}" | sort -u | paste -sd, -)"
printf '%s\n' "${ratios[@]}" | awk '
  { f += log($1 / $3); p += log($2 / $3); n++ }
  END { printf "ratio f32 %.2f fp8 %.2f\n", exp(f / n), exp(p / n) }'
