// RUN: fp8-opt %s -split-input-file --fp8-quantize="history=16" | FileCheck %s --check-prefix=DELAYED
// RUN: fp8-opt %s -split-input-file --fp8-quantize="scaling=current margin=1 power-of-two" | FileCheck %s --check-prefix=CURRENT
// RUN: fp8-opt %s -split-input-file --fp8-quantize="format=e4m3 algo=most_recent history=4" | FileCheck %s --check-prefix=E4M3
// Running it twice changes nothing the second time.
// RUN: fp8-opt %s -split-input-file --fp8-quantize="history=16" -o %t.once.mlir
// RUN: fp8-opt %t.once.mlir -split-input-file --fp8-quantize="history=16" -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: not fp8-opt %s -split-input-file --fp8-quantize="scaling=sometimes" 2>&1 | FileCheck %s --check-prefix=BADOPT

// BADOPT: error: unknown scaling 'sometimes' (expected delayed or current)

// Delayed scaling: per tensor, an amax history and a scale in public mutable
// globals with stable names; the cast uses the stored scale and measures the
// amax in the same pass; then Transformer Engine's update.
//
// DELAYED: module attributes {fp8.recipe = #fp8.recipe<history = 16>}
// DELAYED: ml_program.global public mutable @fp8.linear.gemm0.lhs.amax_history(dense<0.000000e+00> : tensor<16xf32>) : tensor<16xf32>
// DELAYED: ml_program.global public mutable @fp8.linear.gemm0.lhs.scale(dense<1.000000e+00> : tensor<f32>) : tensor<f32>
// DELAYED: ml_program.global public mutable @fp8.linear.arg1.amax_history
// DELAYED: ml_program.global public mutable @fp8.linear.arg1.scale
// DELAYED-LABEL: func.func @linear
// DELAYED-SAME: (%[[X:.+]]: tensor<32x64xbf16>, %[[W:.+]]: tensor<64x128xbf16>)
// DELAYED: %[[WH:.+]] = ml_program.global_load @fp8.linear.arg1.amax_history : tensor<16xf32>
// DELAYED: %[[WST:.+]] = ml_program.global_load @fp8.linear.arg1.scale : tensor<f32>
// DELAYED: %[[WS:.+]] = tensor.extract %[[WST]][] : tensor<f32>
// DELAYED: %[[WQ:.+]], %[[WAMAX:.+]] = fp8.quantize %[[W]], %[[WS]] : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>, f32
// DELAYED: %[[WH1:.+]] = fp8.record_amax %[[WH]], %[[WAMAX]] : tensor<16xf32>
// DELAYED: %[[WS1:.+]] = fp8.compute_scale %[[WH1]], %[[WS]] for f8E4M3FN : tensor<16xf32>
// DELAYED: %[[WH2:.+]] = fp8.roll_history %[[WH1]] : tensor<16xf32>
// DELAYED: %[[WST1:.+]] = tensor.from_elements %[[WS1]] : tensor<f32>
// DELAYED: ml_program.global_store @fp8.linear.arg1.amax_history = %[[WH2]]
// DELAYED: ml_program.global_store @fp8.linear.arg1.scale = %[[WST1]]
// DELAYED: %[[WSINV:.+]] = arith.divf %{{.+}}, %[[WS]] : f32
// DELAYED: %[[A:.+]] = math.tanh %[[X]]
// DELAYED: %[[AQ:.+]], %{{.+}} = fp8.quantize %[[A]], %[[AS:.+]] : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, f32
// DELAYED: %[[ASINV:.+]] = arith.divf %{{.+}}, %[[AS]] : f32
// DELAYED: %[[Y:.+]] = fp8.scaled_matmul %[[AQ]], %[[WQ]] scales %[[ASINV]], %[[WSINV]] : tensor<32x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> -> tensor<32x128xbf16>
// DELAYED-NOT: linalg.matmul
// DELAYED: return %[[Y]]

// Current scaling: amax of the tensor itself, then the cast; no state.
// CURRENT: module attributes {fp8.recipe = #fp8.recipe<scaling = current, margin = 1, power_of_two = true>}
// CURRENT-NOT: ml_program.global
// CURRENT-LABEL: func.func @linear
// CURRENT: %[[AMAX:.+]] = fp8.amax %arg1 : tensor<64x128xbf16>
// CURRENT: %[[S:.+]] = fp8.compute_scale %[[AMAX]] for f8E4M3FN {margin = 1 : i32, power_of_two} : f32
// CURRENT: fp8.quantize %arg1, %[[S]] : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>
// CURRENT-NOT: ml_program
// CURRENT: fp8.scaled_matmul

// E4M3: fp8.compute_scale %{{.+}}, %{{.+}} for f8E4M3FN {algo = #fp8.amax_algo<most_recent>} : tensor<4xf32>

func.func @linear(%x: tensor<32x64xbf16>, %w: tensor<64x128xbf16>) -> tensor<32x128xbf16> {
  %a = math.tanh %x : tensor<32x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<32x128xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  %y = linalg.matmul ins(%a, %w : tensor<32x64xbf16>, tensor<64x128xbf16>) outs(%c : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  return %y : tensor<32x128xbf16>
}

// -----

// One activation feeding two GEMMs (gate and up projections) is quantized
// once; a weight behind a transpose is read K-major through transpose_rhs.
// DELAYED-LABEL: func.func @shared_activation
// DELAYED-COUNT-3: fp8.quantize
// DELAYED-NOT: fp8.quantize
// DELAYED: fp8.scaled_matmul %[[AQ:.+]], %{{.+}} scales %{{.+}}, %{{.+}} {transpose_rhs} : tensor<32x64xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<32x128xf32>
// DELAYED: fp8.scaled_matmul %[[AQ]], %{{.+}} scales
func.func @shared_activation(%x: tensor<32x64xf32>, %wg: tensor<128x64xf32>, %wu: tensor<64x128xf32>) -> (tensor<32x128xf32>, tensor<32x128xf32>) {
  %a = math.tanh %x : tensor<32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<32x128xf32>) -> tensor<32x128xf32>
  %et = tensor.empty() : tensor<64x128xf32>
  %wgt = linalg.transpose ins(%wg : tensor<128x64xf32>) outs(%et : tensor<64x128xf32>) permutation = [1, 0]
  %g = linalg.matmul ins(%a, %wgt : tensor<32x64xf32>, tensor<64x128xf32>) outs(%c : tensor<32x128xf32>) -> tensor<32x128xf32>
  %u = linalg.matmul ins(%a, %wu : tensor<32x64xf32>, tensor<64x128xf32>) outs(%c : tensor<32x128xf32>) -> tensor<32x128xf32>
  return %g, %u : tensor<32x128xf32>, tensor<32x128xf32>
}

// -----

// Gradients are E5M2 under the hybrid format, E4M3 under e4m3.
// DELAYED-LABEL: func.func @dgrad
// DELAYED: fp8.quantize %arg0, %{{.+}} : tensor<64x256xf32> -> tensor<64x256xf8E5M2>, f32
// DELAYED: fp8.compute_scale %{{.+}}, %{{.+}} for f8E5M2
// DELAYED: fp8.scaled_matmul {{.+}} {transpose_rhs} : tensor<64x256xf8E5M2>, tensor<128x256xf8E4M3FN> -> tensor<64x128xf32>
// E4M3-LABEL: func.func @dgrad
// E4M3: fp8.scaled_matmul {{.+}} : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
func.func @dgrad(%dy: tensor<64x256xf32> {fp8.role = "grad"}, %w: tensor<128x256xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
          ins(%dy, %w : tensor<64x256xf32>, tensor<128x256xf32>) outs(%c : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %dx : tensor<64x128xf32>
}

// -----

// Dynamic tokens: the casts keep the dynamic shape.
// DELAYED-LABEL: func.func @dynamic
// DELAYED: fp8.quantize %{{.+}}, %{{.+}} : tensor<?x64xf16> -> tensor<?x64xf8E4M3FN>, f32
// DELAYED: fp8.scaled_matmul {{.+}} : tensor<?x64xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<?x32xf16>
func.func @dynamic(%x: tensor<?x64xf16>, %w: tensor<64x32xf16>) -> tensor<?x32xf16> {
  %a = math.tanh %x : tensor<?x64xf16>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf16>
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty(%m) : tensor<?x32xf16>
  %c = linalg.fill ins(%zero : f16) outs(%e : tensor<?x32xf16>) -> tensor<?x32xf16>
  %y = linalg.matmul ins(%a, %w : tensor<?x64xf16>, tensor<64x32xf16>) outs(%c : tensor<?x32xf16>) -> tensor<?x32xf16>
  return %y : tensor<?x32xf16>
}

// -----

// Foreign IR passes through untouched: LLVM globals, external calls,
// discardable attributes, kept GEMMs.
// DELAYED: llvm.mlir.global internal constant @name("fp8\00") {addr_space = 0 : i32}
// DELAYED-LABEL: func.func @foreign
// DELAYED: %[[T0:.+]] = call @rtclock() {my.tag = 7 : i64} : () -> f64
// DELAYED: linalg.batch_matmul {my.attr} ins
// DELAYED: call @rtclock()
llvm.mlir.global internal constant @name("fp8\00") {addr_space = 0 : i32}
func.func private @rtclock() -> f64
func.func @foreign(%q: tensor<2x16x32xf32>, %k: tensor<2x32x16xf32>) -> (tensor<2x16x16xf32>, f64) {
  %t0 = call @rtclock() {my.tag = 7 : i64} : () -> f64
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul {my.attr} ins(%q, %k : tensor<2x16x32xf32>, tensor<2x32x16xf32>) outs(%c : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %t1 = call @rtclock() : () -> f64
  %dt = arith.subf %t1, %t0 : f64
  return %s, %dt : tensor<2x16x16xf32>, f64
}

// -----

// A weight transposed by a generic with a permuted output map (buddy-mlir,
// torch-mlir) is quantized as stored and read with transpose_rhs: no
// transposed copy of the weight is made.
// CURRENT-LABEL: func.func @output_permuted_weight
// CURRENT-NOT: linalg.generic
// CURRENT: %[[WQ:.+]] = fp8.quantize %arg1, %{{.+}} : tensor<128x64xf32> -> tensor<128x64xf8E4M3FN>
// CURRENT-NOT: linalg.generic
// CURRENT: fp8.scaled_matmul %{{.+}}, %[[WQ]] scales %{{.+}}, %{{.+}} {transpose_rhs} : tensor<32x64xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<32x128xf32>
func.func @output_permuted_weight(%x: tensor<32x64xf32>, %w: tensor<128x64xf32>) -> tensor<32x128xf32> {
  %e0 = tensor.empty() : tensor<64x128xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
       ins(%w : tensor<128x64xf32>) outs(%e0 : tensor<64x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64x128xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e1 : tensor<32x128xf32>) -> tensor<32x128xf32>
  %y = linalg.matmul ins(%x, %t : tensor<32x64xf32>, tensor<64x128xf32>) outs(%c : tensor<32x128xf32>) -> tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}
