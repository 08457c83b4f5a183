// RUN: fp8-opt %s --fp8-gpu-module-to-binary | FileCheck %s
// RUN: not fp8-opt %s --fp8-gpu-module-to-binary="toolkit=/nonexistent" -o %t 2>&1 | FileCheck %s --check-prefix=ERROR

// Upstream's gpu-module-to-binary, and a failure (non-zero exit) on an
// error its NVVM serializer reports without failing: MLIR 22 prints
// "CUDA path: ... does not exist" for a toolkit that is not a directory and
// carries on with whatever ptxas is on the PATH (exit status 0).

// CHECK: gpu.binary @kernels {{.*}}#nvvm.target<chip = "sm_90a", features = "+ptx80">{{.*}}.visible .entry k(
// ERROR: error: CUDA path: /nonexistent does not exist or is not a directory

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a", features = "+ptx80">] {
    llvm.func @k() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
