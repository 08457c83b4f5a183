// RUN: rm -rf %t && split-file %s %t && mkdir -p %t/bare/bin
// RUN: fp8-opt %t/plain.mlir --fp8-gpu-module-to-binary | FileCheck %s
// RUN: not fp8-opt %t/plain.mlir --fp8-gpu-module-to-binary="toolkit=/nonexistent" -o %t/out 2>&1 | FileCheck %s --check-prefix=ERROR
// A toolkit without libdevice (a bare ptxas install, %t/bare): no error for
// kernels that do not call it, an error and a failure for one that does.
// RUN: fp8-opt %t/plain.mlir --fp8-gpu-module-to-binary="toolkit=%t/bare" 2>&1 | FileCheck %s --check-prefix=BARE
// RUN: not fp8-opt %t/libdevice.mlir --fp8-gpu-module-to-binary="toolkit=%t/bare" -o %t/out 2>&1 | FileCheck %s --check-prefix=BARE-LIBDEVICE

// Upstream's gpu-module-to-binary, and a failure (non-zero exit) on an
// error its NVVM serializer reports without failing: MLIR 22 prints
// "CUDA path: ... does not exist" for a toolkit that is not a directory and
// carries on with whatever ptxas is on the PATH (exit status 0).

// CHECK: gpu.binary @kernels {{.*}}#nvvm.target<chip = "sm_90a", features = "+ptx80">{{.*}}.visible .entry k(
// ERROR: error: CUDA path: /nonexistent does not exist or is not a directory

// BARE-NOT: error
// BARE: gpu.binary @kernels {{.*}}.visible .entry k(
// BARE-NOT: error

// BARE-LIBDEVICE: libdevice.mlir:{{[0-9]+}}:{{[0-9]+}}: error: LibDevice path: {{.*}}bare/nvvm/libdevice/libdevice.10.bc does not exist

//--- plain.mlir
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

//--- libdevice.mlir
module attributes {gpu.container_module} {
  gpu.module @exp_kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @k(%x: f32) attributes {gpu.kernel, nvvm.kernel} {
      %y = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return
    }
  }
}
