// F5: a 40 GB argument, a history of 10^8 rows or a .npy that is /dev/zero
// made fp8-run die with "LLVM ERROR: out of memory". fp8-run now checks a
// memory budget (default: the machine's memory, or the process limit when
// lower) against the arguments, results and globals of each version before
// allocating or compiling, and reads .npy inputs only from regular files
// that fit it.
//
// RUN: not fp8-run -O0 %s --function=huge 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: fp8-run: error: running @huge as written needs 37.3 GiB for its arguments, results and globals (dynamic sizes 16), more than the memory budget of {{.+}} (--memory-budget)
//
// The FP8 version's state is counted too: the module compiles whole, so 4
// histories (@huge's and @gemm's operands) x 10^8 rows x 4 bytes, and a
// copy of one, which the report reads after each step (N19).
// RUN: not fp8-run -O0 %s --function=gemm --memory-budget=512M --fp8-pipeline=history=100000000 2>&1 | FileCheck %s --check-prefix=STATE
// STATE: fp8-run: error: running @gemm through fp8-pipeline needs 1.9 GiB for its arguments, results and globals (dynamic sizes 16), more than the memory budget of 512.0 MiB (--memory-budget)
//
// RUN: not fp8-run -O0 %s --function=gemm --memory-budget=4K 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: fp8-run: error: running @gemm as written needs 6.0 KiB for its arguments, results and globals (dynamic sizes 16), more than the memory budget of 4.0 KiB (--memory-budget)
//
// RUN: not fp8-run -O0 %s --function=dynamic --dynamic-size=100000000000 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: fp8-run: error: running @dynamic as written needs 4.4 TiB
//
// RUN: ln -sf /dev/zero %t.zero.npy
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:%t.zero.npy 2>&1 | FileCheck %s --check-prefix=DEVZERO
// DEVZERO: fp8-run: error: '{{.*}}zero.npy' is not a regular file
//
// RUN: %python %S/../Integration/Inputs/npy.py %t.x.npy --shape 16x32 --normal 1 1.0
// RUN: not fp8-run -O0 %s --function=gemm --arg=0:%t.x.npy --memory-budget=1K 2>&1 | FileCheck %s --check-prefix=NPYBIG
// NPYBIG: fp8-run: error: '{{.*}}x.npy' (2.1 KiB) is larger than the memory budget (1.0 KiB)
// RUN: not fp8-run -O0 %s --function=gemm --memory-budget=12x 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: fp8-run: error: bad --memory-budget '12x' (expected a positive size such as 512M or 8G)
//
// Within the budget, it runs.
// RUN: fp8-run -O0 %s --function=gemm --memory-budget=1M --arg=0:%t.x.npy | FileCheck %s --check-prefix=OK
// OK: step 0

func.func @huge(%x: tensor<100000x100000xf32>, %w: tensor<100000x16xf32>) -> tensor<100000x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100000x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<100000x16xf32>) -> tensor<100000x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<100000x100000xf32>, tensor<100000x16xf32>) outs(%c : tensor<100000x16xf32>) -> tensor<100000x16xf32>
  return %y : tensor<100000x16xf32>
}

func.func @gemm(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = arith.addf %x, %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
