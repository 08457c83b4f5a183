// F8 is upstream's, not ours: MLIR 22's linalg.transpose parser (and
// linalg.broadcast's, which shares the helper; upstream mlir-opt crashes
// the same way) stores the null attribute of a failed
// `permutation = [...]` / `dimensions = [...]` parse into the op's attribute
// list and crashes in NamedAttrList::set right after reporting the error
// (docs/reliability.md). fp8-opt cannot intercept a dialect's parser; what
// it guarantees is that the located parse error comes out first. This test
// pins that down, and fails once Debian's MLIR stops crashing (`not --crash`
// then fails): drop the entry in docs/reliability.md then.
//
// RUN: not --crash fp8-opt %s 2>&1 | FileCheck %s
// CHECK: upstream-linalg-transpose-parser.mlir:[[# @LINE + 3]]:96: error: custom op 'linalg.transpose' expected integer value
// CHECK: PLEASE submit a bug report to https://github.com/llvm/llvm-project
func.func @f(%x: tensor<2x3xf32>, %e: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 1.0e+39]
  return %t : tensor<3x2xf32>
}
