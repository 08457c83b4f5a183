// RUN: fp8-opt %s -split-input-file -verify-diagnostics --fp8-check-llvm-lowering | FileCheck %s

// All LLVM dialect (OpenMP, a nested module, a GPU binary and its launch
// included): unchanged.
// CHECK-LABEL: llvm.func @lowered
// CHECK: omp.parallel
// CHECK: gpu.launch_func @kernels::@k
// CHECK: gpu.binary @kernels
// CHECK: module @nested
module attributes {gpu.container_module} {
  llvm.func @lowered(%x: f32) -> f32 {
    %c1 = llvm.mlir.constant(1 : index) : i64
    omp.parallel {
      omp.terminator
    }
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    %y = llvm.fadd %x, %x : f32
    llvm.return %y : f32
  }
  gpu.binary @kernels [#gpu.object<#nvvm.target, "">]
  module @nested {
    llvm.func @g() {
      llvm.return
    }
  }
}

// -----

// An op nothing lowered, on a type LLVM has.
llvm.func @left(%x: f128) -> f128 {
  // expected-error @below {{'math.erf' op is left after the lowering to the LLVM dialect: nothing lowers it}}
  %y = math.erf %x : f128
  llvm.return %y : f128
}

// -----

// Only a cast is left (its producer was converted, its user too): named
// with the types.
llvm.func @cast(%x: !llvm.array<1 x vector<16xf32>>) -> !llvm.array<1 x vector<16xf32>> {
  // expected-error @below {{'builtin.unrealized_conversion_cast' op is left after the lowering to the LLVM dialect: a value of type '!llvm.array<1 x vector<16xf32>>' was not converted to 'vector<1x16xf32>'}}
  %v = builtin.unrealized_conversion_cast %x : !llvm.array<1 x vector<16xf32>> to vector<1x16xf32>
  %w = builtin.unrealized_conversion_cast %v : vector<1x16xf32> to !llvm.array<1 x vector<16xf32>>
  llvm.return %w : !llvm.array<1 x vector<16xf32>>
}

