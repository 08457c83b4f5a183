#!/usr/bin/env bash
# GFLOP/s of a bf16 GEMM (linalg.matmul, bf16 operands and result) on the
# CPU path, under both accumulation semantics of fp8-lower-to-cpu
# (DESIGN.md decision 15, docs/numerics.md):
#   f32:        accumulate in f32, round once to bf16 (the default;
#               fp8-widen-accumulation: f32 operands, the f32 GEMM, a truncf)
#   as-written: linalg's strict semantics, every step rounded to bf16
# and the f32 GEMM of the same shape as the yardstick. Each program is
# JIT-compiled once by mlir-runner and timed over REPEAT calls (best call).
#
#   bench/bf16-gemm.sh [BUILD_DIR]          (default: build)
#   REPEAT=5 SHAPES="512x512x512" bench/bf16-gemm.sh
#   FORM=linear bench/bf16-gemm.sh    (B as [N, K], nn.Linear's weights)
#   FORM=generic bench/bf16-gemm.sh   (the GEMM as a linalg.generic)
#   FP8_OPT=/path/to/fp8-opt bench/bf16-gemm.sh   (another build's fp8-opt)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
fp8_opt=${FP8_OPT:-$build/bin/fp8-opt}
repeat=${REPEAT:-5}
shapes=${SHAPES:-"512x512x512 2048x2048x2048"}
form=${FORM:-matmul}
llvm_lib=/usr/lib/llvm-22/lib
libs="$llvm_lib/libmlir_c_runner_utils.so,$llvm_lib/libmlir_runner_utils.so,$llvm_lib/libomp.so"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

program() {  # elem m k n
  local elem=$1 m=$2 k=$3 n=$4 bshape maps gemm
  local ta="tensor<${m}x${k}x${elem}>" tc="tensor<${m}x${n}x${elem}>"
  if [ "$form" = linear ]; then
    bshape="${n}x${k}"
    maps="indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]"
  else
    bshape="${k}x${n}"
    maps=""
  fi
  local tb="tensor<${bshape}x${elem}>"
  if [ "$form" = generic ]; then
    gemm="%r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\", \"reduction\"]}
      ins(%a, %b : $ta, $tb) outs(%acc : $tc) {
  ^bb0(%x: ${elem}, %y: ${elem}, %o: ${elem}):
    %p = arith.mulf %x, %y : ${elem}
    %s = arith.addf %o, %p : ${elem}
    linalg.yield %s : ${elem}
  } -> $tc"
  else
    gemm="%r = linalg.matmul $maps ins(%a, %b : $ta, $tb) outs(%acc : $tc) -> $tc"
  fi
  IFS=x read -r brows bcols <<< "$bshape"
  cat <<MLIR
func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()

func.func @gemm(%a: $ta, %b: $tb) -> $tc attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : ${elem}
  %e = tensor.empty() : $tc
  %acc = linalg.fill ins(%zero : ${elem}) outs(%e : $tc) -> $tc
  $gemm
  return %r : $tc
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
  %cbr = arith.constant ${brows} : index
  %cbc = arith.constant ${bcols} : index
  %s1 = arith.constant 12345 : i32
  %s2 = arith.constant 678 : i32
  %ad = call @operand(%cm, %ck, %s1) : (index, index, i32) -> tensor<?x?x${elem}>
  %bd = call @operand(%cbr, %cbc, %s2) : (index, index, i32) -> tensor<?x?x${elem}>
  %a = tensor.cast %ad : tensor<?x?x${elem}> to $ta
  %b = tensor.cast %bd : tensor<?x?x${elem}> to $tb
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cr = arith.constant ${repeat} : index
  %inf = arith.constant 1.0e30 : f64
  %best = scf.for %i = %c0 to %cr step %c1 iter_args(%b0 = %inf) -> f64 {
    %t0 = func.call @rtclock() : () -> f64
    %r = func.call @gemm(%a, %b) : ($ta, $tb) -> $tc
    %t1 = func.call @rtclock() : () -> f64
    // Keep the result alive: read one element.
    %v = tensor.extract %r[%c0, %c0] : $tc
    %dt = arith.subf %t1, %t0 : f64
    %b1 = arith.minimumf %b0, %dt : f64
    %vv = arith.extf %v : ${elem} to f64
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

run() {  # name elem lowering m k n -> seconds
  local name=$1 elem=$2 lowering=$3
  shift 3
  program "$elem" "$@" > "$work/$name.mlir"
  "$fp8_opt" "$work/$name.mlir" "--$lowering" -o "$work/$name.ll.mlir"
  "$llvm_lib/../bin/mlir-runner" "$work/$name.ll.mlir" -e main \
    -entry-point-result=void -O3 -shared-libs="$libs" | tail -1
}

printf '%-16s %12s %12s %12s   (%s; GFLOP/s, best of %d)\n' "M x K x N" \
  "bf16 f32-acc" "bf16 as-wr." f32 "$form" "$repeat"
for shape in $shapes; do
  IFS=x read -r m k n <<< "$shape"
  flop=$(( 2 * m * n * k ))
  wide=$(run wide bf16 "fp8-lower-to-cpu" "$m" "$k" "$n")
  strict=$(run strict bf16 "fp8-lower-to-cpu=accumulation=as-written" "$m" "$k" "$n")
  f32=$(run f32 f32 "fp8-lower-to-cpu" "$m" "$k" "$n")
  awk -v s="$shape" -v f="$flop" -v a="$wide" -v b="$strict" -v c="$f32" \
    'BEGIN { printf "%-16s %12.1f %12.1f %12.1f\n", s, f / a / 1e9, f / b / 1e9, f / c / 1e9 }'
done
