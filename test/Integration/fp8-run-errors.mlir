// fp8-run fails with one clear message and a non-zero exit, never a crash
// (`not` without --crash fails the test on a signal).
//
// RUN: not fp8-run -O0 %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=FILE
// FILE: fp8-run: error: cannot read '{{.*}}does-not-exist.mlir': No such file or directory
//
// RUN: not fp8-run -O0 %s 2>&1 | FileCheck %s --check-prefix=WHICH
// WHICH: fp8-run: error: the module has 3 public functions; choose one with --function (gemm, takes_memref, dynamic)
//
// RUN: not fp8-run -O0 %s --function=nope 2>&1 | FileCheck %s --check-prefix=FUNC
// FUNC: fp8-run: error: no function @nope with a body in '{{.*}}fp8-run-errors.mlir'
//
// RUN: not fp8-run -O0 %s --function=takes_memref 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: fp8-run: error: @takes_memref has an argument or result of unsupported type memref<4xf32>
//
// RUN: not fp8-run -O0 %s --function=gemm --arg=2:normal 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: fp8-run: error: bad --arg '2:normal' (expected INDEX:DIST[:SCALE] with SCALE > 0, or INDEX:file.npy, with INDEX < 2)
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:normal:big 2>&1 | FileCheck %s --check-prefix=SCALE
// SCALE: fp8-run: error: bad --arg '0:normal:big'
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:cauchy 2>&1 | FileCheck %s --check-prefix=DIST
// DIST: fp8-run: error: unknown distribution 'cauchy' in --arg
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:%t.missing.npy 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: fp8-run: error: cannot read '{{.*}}missing.npy': No such file or directory
// RUN: %python %S/Inputs/npy.py %t.wrong.npy --shape 4x4 --normal 1 1.0
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:%t.wrong.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: fp8-run: error: '{{.*}}wrong.npy' does not have the shape of argument #0
// A header whose shape claims more than the file holds, or more than int64
// can count, is rejected before anything is allocated.
// RUN: %python -c "import sys; sys.path.insert(0, r'%S/Inputs'); import npy; npy.write(r'%t.huge.npy', [1 << 62, 4], [])"
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:%t.huge.npy 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: fp8-run: error: '{{.*}}huge.npy': fewer elements than its shape says
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:normal:-1 2>&1 | FileCheck %s --check-prefix=NEGSCALE
// NEGSCALE: fp8-run: error: bad --arg '0:normal:-1'
// RUN: not fp8-run -O0 %s --function=gemm --scale=0 2>&1 | FileCheck %s --check-prefix=GLOBALSCALE
// GLOBALSCALE: fp8-run: error: --scale must be a positive number
// RUN: not fp8-run -O0 %s --function=gemm --dynamic-size=-1 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: fp8-run: error: --dynamic-size must not be negative
// RUN: not fp8-run -O0 %s --function=dynamic --dynamic-size=4611686018427387904 2>&1 | FileCheck %s --check-prefix=LARGE
// LARGE: fp8-run: error: running @dynamic as written needs more than 2^64 bytes for its arguments, results and globals (dynamic sizes 4611686018427387904), more than the memory budget of {{.+}} (--memory-budget)
// RUN: not fp8-run -O0 %s --function=gemm --dist=cauchy 2>&1 | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: fp8-run: error: unknown --dist 'cauchy' (expected normal, uniform, outliers or zeros)
// RUN: not fp8-run -O0 %s --function=gemm --fp8-pipeline="history=x" 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: fp8-run: error: bad --fp8-pipeline options 'history=x'

func.func @gemm(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>)
                     outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

func.func @takes_memref(%m: memref<4xf32>) {
  return
}

func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
