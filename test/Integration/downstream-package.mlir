// Installs fp8-mlir into a fresh prefix, builds a separate project against
// find_package(FP8MLIR) and runs the fp8 dialect's folders and fp8-verify
// through it.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cmake_command --install %fp8_obj_root --prefix %t/prefix > %t/install.log
// RUN: %cmake_command -G Ninja -S %fp8_src_root/test/downstream -B %t/build \
// RUN:   -DCMAKE_PREFIX_PATH=%t/prefix -DMLIR_DIR=%mlir_dir \
// RUN:   -DCMAKE_CXX_COMPILER=%cxx_compiler > %t/configure.log
// RUN: %cmake_command --build %t/build > %t/build.log
// RUN: %t/build/downstream-opt %s --canonicalize --fp8-verify | FileCheck %s

// CHECK-LABEL: func.func @quantize_constant
func.func @quantize_constant() -> tensor<2xf8E4M3FN> {
  // 1000 saturates to E4M3's largest finite value, 448; 0.5 is exact.
  // CHECK: arith.constant dense<[4.480000e+02, 5.000000e-01]> : tensor<2xf8E4M3FN>
  %x = arith.constant dense<[1000.0, 0.5]> : tensor<2xf32>
  %s = arith.constant 1.0 : f32
  %q = fp8.quantize %x, %s : tensor<2xf32> -> tensor<2xf8E4M3FN>
  return %q : tensor<2xf8E4M3FN>
}
