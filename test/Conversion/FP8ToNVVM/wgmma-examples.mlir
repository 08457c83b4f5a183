// Every GEMM the rewrite produces for a training step (forward, dgrad and
// wgrad, E4M3 and E5M2) gets a kernel: the backward operands in the wrong
// orientation are planned through cast_transpose, none is left behind.
// RUN: fp8-opt %fp8_src_root/examples/llama-train-step.mlir --fp8-pipeline \
// RUN:   | fp8-opt --convert-fp8-scaled-matmul-to-wgmma -o %t.mlir
// RUN: grep -c "fp8.scaled_matmul" %t.mlir | FileCheck %s --check-prefix=GEMMS
// RUN: grep "fp8.scaled_matmul" %t.mlir | not grep -v "fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_"
// RUN: grep "fp8.scaled_matmul" %t.mlir | not grep "transpose_lhs"
// RUN: grep "fp8.scaled_matmul" %t.mlir | not grep -v "transpose_rhs"
// RUN: FileCheck %s < %t.mlir
// GEMMS: {{[1-9][0-9]*}}
// CHECK-DAG: llvm.func @scaled_matmul_e4m3_e4m3_bf16_64x128x128_s8
// CHECK-DAG: llvm.func @scaled_matmul_e5m2_e4m3_bf16_{{.*}}
// CHECK-DAG: fp8.cast_transpose
// A real-model block at its real sizes: 128x256 tiles.
// RUN: fp8-opt %graphs/accelgen_llama3-8b-block0-ffn-prefill-b1s128.mlir --fp8-pipeline \
// RUN:   | fp8-opt --convert-fp8-scaled-matmul-to-wgmma | FileCheck %s --check-prefix=FFN
// FFN: llvm.func @scaled_matmul_e4m3_e4m3_bf16_128x256x128_s4
// FFN: fp8.scaled_matmul {{.*}}fp8.wgmma_kernel = @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_128x256x128_s4
