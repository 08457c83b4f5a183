// The seeds' motivation for scaling: a tensor in [-0.02, 0.03] cast to E4M3
// as it is lands on a handful of codes near the bottom of the format (its
// values are below E4M3's smallest normal, 2^-6, so all are subnormal
// multiples of 2^-9); scaled by 448 / amax = 14933.33 it fills [-298, 448]
// and uses most of the format's codes. The checker recomputes every code
// from the format definition (Inputs/fp8_reference.py) and counts them. The
// seeds' scales themselves (amax 0.03 -> 14933.33, 1000 -> 0.448, 0.05 ->
// 8960, 1200 -> 0.373333) are checked bit for bit in fp8-lower-to-cpu.mlir.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs > %t.out
// RUN: %python %S/Inputs/check_codes.py %t.out | FileCheck %s

// CHECK: amax 0.0299999993 scale 14933.334
// CHECK: unscaled: 1001 values -> 27 distinct codes, -0.0195312 .. 0.0292969
// CHECK: scaled: 1001 values -> 110 distinct codes, -288 .. 448

#id = affine_map<(d0) -> (d0)>

func.func private @printMemrefI32(memref<*xi32>)

// x[i] = (i - 400) / 20000, i = 0 .. 1000.
func.func @ramp() -> tensor<1001xf32> {
  %e = tensor.empty() : tensor<1001xf32>
  %den = arith.constant 20000.0 : f32
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%e : tensor<1001xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %c400 = arith.constant 400 : i32
    %n = arith.subi %ii, %c400 : i32
    %f = arith.sitofp %n : i32 to f32
    %v = arith.divf %f, %den : f32
    linalg.yield %v : f32
  } -> tensor<1001xf32>
  return %r : tensor<1001xf32>
}

func.func @codes(%x: tensor<1001xf32>, %s: f32) {
  %q = fp8.quantize %x, %s : tensor<1001xf32> -> tensor<1001xf8E4M3FN>
  %e = tensor.empty() : tensor<1001xi32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%q : tensor<1001xf8E4M3FN>) outs(%e : tensor<1001xi32>) {
  ^bb0(%in: f8E4M3FN, %out: i32):
    %b = arith.bitcast %in : f8E4M3FN to i8
    %i = arith.extui %b : i8 to i32
    linalg.yield %i : i32
  } -> tensor<1001xi32>
  %u = tensor.cast %c : tensor<1001xi32> to tensor<*xi32>
  %m = bufferization.to_buffer %u : tensor<*xi32> to memref<*xi32>
  call @printMemrefI32(%m) : (memref<*xi32>) -> ()
  return
}

func.func @main() {
  %x = call @ramp() : () -> tensor<1001xf32>
  %one = arith.constant 1.0 : f32
  call @codes(%x, %one) : (tensor<1001xf32>, f32) -> ()
  %a = fp8.amax %x : tensor<1001xf32>
  %s = fp8.compute_scale %a, %one for f8E4M3FN : f32
  call @codes(%x, %s) : (tensor<1001xf32>, f32) -> ()
  return
}
