// RUN: fp8-opt %s --fp8-merge-gpu-modules | FileCheck %s

// Three modules as gpu-kernel-outlining makes them (one kernel each, no
// target): one module, the second @f_kernel renamed, the launches
// following. A module with a target (the project's kernels) and one that
// holds more than kernels stay as they are.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK: gpu.module @f_kernel {
// CHECK-NEXT: gpu.func @f_kernel() kernel
// CHECK: gpu.func @f_kernel_0() kernel
// CHECK: gpu.func @g_kernel() kernel
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
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @g_kernel {
    gpu.func @g_kernel() kernel {
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
  func.func @f() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @g_kernel::@g_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @ours::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @mixed::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}
