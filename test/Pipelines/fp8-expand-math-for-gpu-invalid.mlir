// RUN: fp8-opt %s --pass-pipeline="builtin.module(gpu.module(fp8-expand-math-for-gpu))" -verify-diagnostics

// An f64 transcendental function has no approximation here: without this
// error it would become a libdevice call that the driver cannot resolve.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @exp64(%x: f64, %out: memref<f64>) kernel {
      // expected-error @+1 {{'math.exp' op has no lowering without libdevice in a GPU kernel}}
      %e = math.exp %x : f64
      memref.store %e, %out[] : memref<f64>
      gpu.return
    }
  }
}
