// RUN: fp8-opt %s --pass-pipeline="builtin.module(gpu.module(fp8-expand-math-for-gpu))" | FileCheck %s
// Lowered to PTX with no CUDA toolkit in sight (no libdevice to link),
// every kernel still assembles:
// RUN: env -u CUDA_HOME -u CUDA_PATH fp8-opt %s --pass-pipeline="builtin.module(gpu.module(fp8-expand-math-for-gpu,convert-gpu-to-nvvm,reconcile-unrealized-casts),gpu-module-to-binary{format=isa})" -o %t.mlir
// RUN: %if ptxas %{ %python %fp8_src_root/scripts/extract-ptx.py %t.mlir %t --ptxas %ptxas sm_90a %}

// What convert-gpu-to-nvvm would send to libdevice (__nv_expf, __nv_sqrtf,
// ...) becomes arithmetic and single PTX instructions.
// CHECK-LABEL: gpu.func @math
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.log
// CHECK-NOT: math.floor
// CHECK-NOT: math.round
// CHECK-NOT: math.sqrt
// CHECK-DAG: llvm.inline_asm "cvt.rmi.f32.f32 $0, $1;", "=f,f"
// CHECK-DAG: llvm.inline_asm "abs.f32 $0, $1;", "=f,f"
// CHECK-DAG: llvm.inline_asm "sqrt.rn.f64 $0, $1;", "=d,d"

// log10 is log's approximation times log10(e) (upstream has none of its own).
// CHECK-DAG: arith.constant 0.434294492 : f32

// rsqrt is 1 / sqrt, both correctly rounded.
// CHECK-DAG: %[[ROOT:.+]] = llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f" %arg1
// CHECK-DAG: arith.divf %{{.+}}, %[[ROOT]] : f32
// CHECK: gpu.return

// f16 (rocMLIR's attention rounds its f16 scores to i16 with math.round):
// in f32, exactly, then back.
// CHECK-LABEL: gpu.func @half
// CHECK-NOT: math.
// CHECK: arith.extf %arg0 : f16 to f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: arith.extf %arg0 : f16 to f32
// CHECK: llvm.inline_asm "sqrt.rn.f32 $0, $1;", "=f,f"
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT: math.
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @math(%x: f32, %y: f32, %d: f64, %h: bf16, %out: memref<8xf32>, %out64: memref<f64>, %out16: memref<bf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %e = math.exp %x : f32
      memref.store %e, %out[%c0] : memref<8xf32>
      %r = math.rsqrt %y : f32
      memref.store %r, %out[%c1] : memref<8xf32>
      %t = math.tanh %x : f32
      memref.store %t, %out[%c2] : memref<8xf32>
      %f = math.floor %x : f32
      memref.store %f, %out[%c3] : memref<8xf32>
      %a = math.absf %x : f32
      memref.store %a, %out[%c4] : memref<8xf32>
      %g = math.erf %x : f32
      memref.store %g, %out[%c5] : memref<8xf32>
      %l = math.log %y : f32
      memref.store %l, %out[%c6] : memref<8xf32>
      %c7 = arith.constant 7 : index
      %l10 = math.log10 %y : f32
      memref.store %l10, %out[%c7] : memref<8xf32>
      %s = math.sqrt %d : f64
      memref.store %s, %out64[] : memref<f64>
      %he = math.exp %h : bf16
      %hf = math.floor %h : bf16
      %hs = arith.addf %he, %hf : bf16
      memref.store %hs, %out16[] : memref<bf16>
      gpu.return
    }
    gpu.func @half(%k: f16, %out: memref<2xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = math.round %k : f16
      memref.store %r, %out[%c0] : memref<2xf16>
      %s = math.sqrt %k : f16
      memref.store %s, %out[%c1] : memref<2xf16>
      gpu.return
    }
  }
}
