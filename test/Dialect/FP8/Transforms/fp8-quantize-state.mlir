// Delayed-scaling state threaded through the function (state=arguments), and
// GEMMs that accumulate into a live tensor.
// RUN: fp8-opt %s -split-input-file --fp8-quantize="state=arguments history=4" -verify-diagnostics | FileCheck %s

// One argument in and one result out per state tensor, same order, named.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: %[[X:[^:]+]]: tensor<32x64xbf16>, %[[W:[^:]+]]: tensor<64x128xbf16>, %[[ACC:[^:]+]]: tensor<32x128xbf16>,
// CHECK-SAME: %[[AH:[^:]+]]: tensor<4xf32> {fp8.state = "fp8.linear.gemm0.lhs.amax_history"},
// CHECK-SAME: %[[AS:[^:]+]]: tensor<f32> {fp8.state = "fp8.linear.gemm0.lhs.scale"},
// CHECK-SAME: %[[WH:[^:]+]]: tensor<4xf32> {fp8.state = "fp8.linear.arg1.amax_history"},
// CHECK-SAME: %[[WS:[^:]+]]: tensor<f32> {fp8.state = "fp8.linear.arg1.scale"})
// CHECK-SAME: -> (tensor<32x128xbf16>, tensor<4xf32> {fp8.state = "fp8.linear.gemm0.lhs.amax_history"}, tensor<f32> {fp8.state = "fp8.linear.gemm0.lhs.scale"}, tensor<4xf32> {fp8.state = "fp8.linear.arg1.amax_history"}, tensor<f32> {fp8.state = "fp8.linear.arg1.scale"})
// CHECK-NOT: ml_program
// CHECK: %[[WSV:.+]] = tensor.extract %[[WS]][]
// CHECK: %[[WQ:.+]], %[[WAMAX:.+]] = fp8.quantize %[[W]], %[[WSV]]
// CHECK: %[[WH1:.+]] = fp8.record_amax %[[WH]], %[[WAMAX]]
// CHECK: %[[WS1:.+]] = fp8.compute_scale %[[WH1]], %[[WSV]] for f8E4M3FN : tensor<4xf32>
// CHECK: %[[WH2:.+]] = fp8.roll_history %[[WH1]]
// CHECK: %[[WS1T:.+]] = tensor.from_elements %[[WS1]]
// CHECK: %[[ASV:.+]] = tensor.extract %[[AS]][]
// CHECK: %[[AH2:.+]] = fp8.roll_history
// CHECK: %[[AS1T:.+]] = tensor.from_elements
// C += A B: the product in f32, plus C, rounded once.
// CHECK: %[[P:.+]] = fp8.scaled_matmul {{.+}} -> tensor<32x128xf32>
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[P]], %[[ACC]] : tensor<32x128xf32>, tensor<32x128xbf16>)
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.addf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: return %[[SUM]], %[[AH2]], %[[AS1T]], %[[WH2]], %[[WS1T]]
func.func @linear(%x: tensor<32x64xbf16>, %w: tensor<64x128xbf16>, %acc: tensor<32x128xbf16>) -> tensor<32x128xbf16> {
  %a = math.tanh %x : tensor<32x64xbf16>
  %y = linalg.matmul ins(%a, %w : tensor<32x64xbf16>, tensor<64x128xbf16>) outs(%acc : tensor<32x128xbf16>) -> tensor<32x128xbf16>
  return %y : tensor<32x128xbf16>
}

// -----

// A called function keeps its signature: the state can't be threaded.
func.func @callee(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
func.func @caller(%x: tensor<16x32xf32>, %w: tensor<32x16xf32>) -> tensor<16x16xf32> {
  // expected-error @below {{state=arguments would change the signature of @callee, which this op uses; use state=globals}}
  %y = func.call @callee(%x, %w) : (tensor<16x32xf32>, tensor<32x16xf32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// -----

// A GEMM inside a loop: its state can't be returned from the function.
func.func @in_loop(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>) -> tensor<16x32xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> tensor<16x32xf32> {
    %e = tensor.empty() : tensor<16x32xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
    // expected-error @below {{state=arguments needs the quantized tensor in the body of a single-block func.func}}
    %y = linalg.matmul ins(%h, %w : tensor<16x32xf32>, tensor<32x32xf32>) outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
    scf.yield %y : tensor<16x32xf32>
  }
  return %r : tensor<16x32xf32>
}
