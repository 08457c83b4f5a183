// RUN: fp8-opt %s --fp8-merge-gpu-modules -split-input-file | FileCheck %s

// Three modules as gpu-kernel-outlining makes them (one kernel each, no
// target): one module, the second @f_kernel renamed, the launches
// following. A module with a target (the project's kernels) and one that
// holds more than kernels stay as they are.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @f_kernel {
// CHECK-NEXT: gpu.func @f_kernel(%{{.+}}: memref<f32>) kernel
// CHECK: gpu.func @f_kernel_0(%{{.+}}: memref<f32>) kernel
// CHECK: gpu.func @g_kernel(%{{.+}}: memref<f32>) kernel
// CHECK-NOT: gpu.module @f_kernel_0
// CHECK-NOT: gpu.module @g_kernel
// CHECK: gpu.module @ours [#nvvm.target]
// CHECK: gpu.module @mixed
// CHECK-LABEL: func.func @f
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: gpu.launch_func @f_kernel::@f_kernel
// CHECK-NEXT: gpu.launch_func @f_kernel::@f_kernel_0
// CHECK-NEXT: gpu.launch_func @f_kernel::@g_kernel
// CHECK-NEXT: gpu.launch_func @ours::@k
// CHECK-NEXT: gpu.launch_func @mixed::@k
module attributes {gpu.container_module} {
  gpu.module @f_kernel {
    gpu.func @f_kernel(%m: memref<f32>) kernel {
      %c = arith.constant 1.0 : f32
      memref.store %c, %m[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel(%m: memref<f32>) kernel {
      %c = arith.constant 2.0 : f32
      memref.store %c, %m[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @g_kernel {
    gpu.func @g_kernel(%m: memref<f32>) kernel {
      %c = arith.constant 3.0 : f32
      memref.store %c, %m[] : memref<f32>
      gpu.return
    }
  }
  gpu.module @ours [#nvvm.target] {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  gpu.module @mixed {
    gpu.func @k() kernel {
      gpu.return
    }
    gpu.func @helper() {
      gpu.return
    }
  }
  func.func @f(%m: memref<f32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
    gpu.launch_func @g_kernel::@g_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<f32>)
    gpu.launch_func @ours::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @mixed::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// Kernels that differ only in their names and locations (a model's layers
// launch the same kernels) become one, the first; every launch of the
// others launches it. One that differs (an operand type) stays, and so do
// the kernels of a module with a target.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @l0_kernel {
// CHECK-NEXT: gpu.func @l0_kernel(
// CHECK-NOT: gpu.func @l1_kernel(
// CHECK: gpu.func @wide_kernel(
// CHECK-NOT: gpu.func
// CHECK: gpu.module @ours [#nvvm.target]
// CHECK-NEXT: gpu.func @k(
// CHECK-LABEL: func.func @layers
// CHECK-NEXT: arith.constant
// CHECK-NEXT: gpu.launch_func @l0_kernel::@l0_kernel
// CHECK-NEXT: gpu.launch_func @l0_kernel::@l0_kernel
// CHECK-NEXT: gpu.launch_func @l0_kernel::@wide_kernel
// CHECK-NEXT: gpu.launch_func @ours::@k
module attributes {gpu.container_module} {
  gpu.module @l0_kernel {
    gpu.func @l0_kernel(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %m[%i] : memref<4xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @l1_kernel {
    gpu.func @l1_kernel(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x loc("layer1")
      %v = memref.load %m[%i] : memref<4xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @wide_kernel {
    gpu.func @wide_kernel(%m: memref<4xf64>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %m[%i] : memref<4xf64>
      %d = arith.addf %v, %v : f64
      memref.store %d, %m[%i] : memref<4xf64>
      gpu.return
    }
  }
  gpu.module @ours [#nvvm.target] {
    gpu.func @k(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %m[%i] : memref<4xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
  func.func @layers(%m: memref<4xf32>, %w: memref<4xf64>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @l0_kernel::@l0_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @l1_kernel::@l1_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @wide_kernel::@wide_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%w : memref<4xf64>)
    gpu.launch_func @ours::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
}
