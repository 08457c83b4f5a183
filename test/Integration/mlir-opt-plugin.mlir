// libFP8Plugin.so in the installed mlir-opt (Debian's mlir-opt-22, not
// fp8-opt): the dialect with its verifiers and folders, every pass and
// pipeline. The runs reuse other tests' independent references.
//
// REQUIRES: mlir-plugin
//
// Without the plugin, mlir-opt does not know the dialect:
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN
// NOPLUGIN: operation being parsed with an unregistered dialect
//
// The verifiers, through the dialect plugin alone:
// RUN: mlir-opt %s --load-dialect-plugin=%fp8_plugin -split-input-file -verify-diagnostics
//
// The fp8 ops on the CPU (fp8-lower-to-cpu, then mlir-runner) print what
// fp8-lower-to-cpu.mlir derives from the format definitions and TE's
// formulas; the folders give the same values:
// RUN: mlir-opt %S/fp8-lower-to-cpu.mlir --load-dialect-plugin=%fp8_plugin \
// RUN:   --load-pass-plugin=%fp8_plugin --pass-pipeline='builtin.module(fp8-lower-to-cpu)' \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %S/fp8-lower-to-cpu.mlir
// RUN: mlir-opt %S/fp8-lower-to-cpu.mlir --load-dialect-plugin=%fp8_plugin \
// RUN:   --load-pass-plugin=%fp8_plugin --pass-pipeline='builtin.module(canonicalize)' \
// RUN: | FileCheck %S/fp8-lower-to-cpu.mlir --check-prefix=FOLDED
//
// The rewrite of a whole graph, with pipeline options:
// RUN: mlir-opt %fp8_src_root/examples/llama-ffn-block.mlir \
// RUN:   --load-dialect-plugin=%fp8_plugin --load-pass-plugin=%fp8_plugin \
// RUN:   --pass-pipeline='builtin.module(fp8-pipeline{granularity=block})' \
// RUN: | FileCheck %s --check-prefix=GRAPH
// GRAPH: fp8.recipe = #fp8.recipe<{{.*}}granularity = block>
// GRAPH-COUNT-3: fp8.scaled_matmul
// GRAPH-NOT: fp8.scaled_matmul
// GRAPH-NOT: linalg.matmul

func.func @quantize_into_f32(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  // expected-error @+1 {{'fp8.quantize' op result #0 must be ranked tensor of}}
  %q, %a = "fp8.quantize"(%x, %s) : (tensor<4xf32>, f32) -> (tensor<4xf32>, f32)
  return %q : tensor<4xf32>
}
