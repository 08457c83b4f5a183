// Found by the .npy reader's fuzz target (bench/fuzz.sh): a float .npy for
// an integer argument was converted element by element through int64, and
// a value that int64 cannot hold (inf, NaN, 1e300) was undefined behaviour
// (UBSan: "outside the range of representable values"). It is now an error
// at the element.
//
// RUN: %python %S/../Integration/Inputs/npy.py %t.ids.npy --shape 4 --normal 1 1.0 --set 2=inf
// RUN: not fp8-run -O0 %s --arg=0:%t.ids.npy 2>&1 | FileCheck %s
// CHECK: fp8-run: error: '{{.*}}ids.npy': element 2 (INF) is not an integer of i32
//
// The same for an integer file: an i8 near INT64_MAX becomes a double of
// 2^63 on the way, which int64 cannot hold (CI's fuzz stage, 2026-12-04;
// the reproducer is in tools/fp8-fuzz/corpus/npy/int64-max-i8).
// RUN: %python %S/../Integration/Inputs/npy.py %t.i8.npy --shape 4 --normal 1 1.0 --int64 --set 1=9223372036854775807
// RUN: not fp8-run -O0 %s --arg=0:%t.i8.npy 2>&1 | FileCheck %s --check-prefix=I8
// I8: fp8-run: error: '{{.*}}i8.npy': element 1 (9223372036854775807) is not an integer of i32
//
// In range, floats truncate to integers as before.
// RUN: %python %S/../Integration/Inputs/npy.py %t.ok.npy --shape 4 --normal 1 1.0
// RUN: fp8-run -O0 %s --arg=0:%t.ok.npy | FileCheck %s --check-prefix=OK
// OK: step 0

func.func @f(%ids: tensor<4xi32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%ids, %x : tensor<4xi32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: i32, %v: f32, %o: f32):
    %f = arith.sitofp %i : i32 to f32
    %s = arith.addf %f, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
