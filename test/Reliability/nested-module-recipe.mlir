// W9: convert-fp8-to-linalg dropped `#fp8.recipe` from the module it ran
// on only; a nested module kept it and the output did not parse without
// the fp8 dialect. Now no recipe is left anywhere, and upstream mlir-opt
// reads the result.
//
// RUN: fp8-opt %s --convert-fp8-to-linalg --fp8-expand-float8 | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-to-linalg --fp8-expand-float8 | mlir-opt -o /dev/null
// CHECK-NOT: fp8.recipe
// CHECK: module @m
// CHECK: module @inner
module attributes {fp8.recipe = #fp8.recipe<>} {
  module @m attributes {fp8.recipe = #fp8.recipe<history = 16>} {
    module @inner attributes {fp8.recipe = #fp8.recipe<>} {
    }
  }
}
