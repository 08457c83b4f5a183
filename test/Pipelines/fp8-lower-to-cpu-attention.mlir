// fp8-lower-to-cpu: fp8.attention's (batch, head, query tile) loop runs as
// OpenMP threads like the tiled GEMMs, with no tensor carried through its
// key loops (each key tile updates the query tile's state in place, so no
// run-time alias check ends up in the threaded body), and the full 64 x 64
// key tiles are static and vectorized (fmuladd on vectors). The numbers
// are checked in test/Integration/fp8-attention-cpu.mlir.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-cpu="threads=false" | FileCheck %s --check-prefix=SERIAL
// RUN: fp8-opt %s --fp8-lower-to-cpu --mlir-print-ir-after=fp8-tile-and-vectorize-for-cpu 2>&1 >/dev/null \
// RUN: | FileCheck %s --check-prefix=TILES

// CHECK-LABEL: llvm.func @causal(
// CHECK-NOT: dealloc_helper
// CHECK: omp.parallel
// CHECK-NOT: omp.parallel
// CHECK-NOT: dealloc_helper
// CHECK: llvm.intr.fmuladd{{.*}}vector<
// CHECK-NOT: dealloc_helper

// SERIAL-LABEL: llvm.func @causal(
// SERIAL-NOT: omp.

// TILES-LABEL: func.func @causal(
// TILES: scf.parallel
// TILES-NOT: scf.parallel
// TILES: scf.for
// TILES: vector.fma {{.*}} : vector<
func.func @causal(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>,
                  %v: tensor<1x2x1024x64xbf16>) -> tensor<1x8x1024x64xbf16> {
  %o = fp8.attention %q, %k, %v scale 0.125 {causal}
      : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>,
        tensor<1x2x1024x64xbf16> -> tensor<1x8x1024x64xbf16>
  return %o : tensor<1x8x1024x64xbf16>
}
