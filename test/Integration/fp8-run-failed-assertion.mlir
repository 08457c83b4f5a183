// A failed cf.assert in the compiled code (torch-mlir guards every gather
// with two) ends fp8-run with one line naming the function and the
// assertion's message, exit status 1: not a lost message in a redirected
// stdout's buffer and a stack dump as if the compiler had crashed (`not`
// without --crash fails the test on a signal).
//
// Token ids drawn from [0, 1000) index a table of 8 rows: out of bounds.
// RUN: not fp8-run -O0 %s --plain-inputs --int-range=1000 2>&1 | FileCheck %s
// CHECK: error: @embed: an assertion failed in the compiled code: index must be smaller than dim size
// CHECK-NOT: PLEASE submit a bug report
//
// Ids over the table's rows (fp8-run's default for an index): it runs.
// RUN: fp8-run -O0 %s --quiet | FileCheck %s --check-prefix=RUNS
// RUNS: inputs:  arg0 uniform [0, 8): indexes a dimension of 8;

#ids = affine_map<(b, d) -> (b)>
#rows = affine_map<(b, d) -> (b, d)>
func.func @embed(%ids: tensor<4xi64>, %table: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %rows = arith.constant 8 : index
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#ids, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %d = linalg.index 1 : index
    %below = arith.cmpi slt, %i, %rows : index
    cf.assert %below, "index must be smaller than dim size"
    %nonneg = arith.cmpi sge, %id, %zero : i64
    cf.assert %nonneg, "index must be larger or equal to 0"
    %x = tensor.extract %table[%i, %d] : tensor<8x16xf32>
    linalg.yield %x : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
