// GEMMs with several M, N or K dimensions, as torch-mlir writes nn.Linear on
// 3-D activations once named ops are generalized, and heads split as
// [.., h, d]: one GEMM over the collapsed dimensions. The operands are
// collapsed with tensor.collapse_shape (no copies), the product expanded
// back; the report gives m / n / k as products and the dimensions.
//
// RUN: fp8-opt %s -split-input-file --fp8-quantize="scaling=current" | FileCheck %s
// RUN: split-file %s %t
// RUN: fp8-opt %t/linear3d.mlir --fp8-classify="report=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// And the numbers: the 3-D Linear through fp8-run, weights N(0, 1/64).
// RUN: fp8-run %t/linear3d.mlir --arg=1:normal:0.125 --steps=2 --json > %t.run.json
// RUN: %python %S/../../../Integration/Inputs/check_json.py %t.run.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= 25' 'steps.1.outputs.0.sqnr_db >= 25'
// Dynamic batch and sequence: the collapse and expand are dynamic, and run.
// RUN: fp8-run %t/dynamic.mlir --function=dynamic --arg=1:normal:0.125 --dynamic-size=3 --json > %t.dyn.json
// RUN: %python %S/../../../Integration/Inputs/check_json.py %t.dyn.json \
// RUN:   'steps.0.outputs.0.sqnr_db >= 25'

// REPORT: "k": 64
// REPORT-NEXT: "k_dims": [
// REPORT-NEXT: 64
// REPORT: "m": 16
// REPORT-NEXT: "m_dims": [
// REPORT-NEXT: 2,
// REPORT-NEXT: 8
// REPORT: "n": 32

//--- linear3d.mlir
#x = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#y = affine_map<(b, s, n, k) -> (b, s, n)>
// CHECK-LABEL: func.func @linear3d
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x64xf32>, %[[W:.+]]: tensor<64x32xf32>)
// CHECK: %[[WQ:.+]] = fp8.quantize %[[W]]
// CHECK: %[[X2:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
// CHECK: %[[XQ:.+]] = fp8.quantize %[[X2]]
// CHECK: %[[P:.+]] = fp8.scaled_matmul %[[XQ]], %[[WQ]] {{.*}} -> tensor<16x32xf32>
// CHECK: %[[Y:.+]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 8, 32] : tensor<16x32xf32> into tensor<2x8x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @linear3d(%x: tensor<2x8x64xf32>, %w: tensor<64x32xf32>) -> tensor<2x8x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x8x64xf32>, tensor<64x32xf32>) outs(%c : tensor<2x8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

//--- dynamic.mlir
// torch-mlir's form, bf16 with extf operands, batch and sequence dynamic.
#x = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (n, k)>
#y = affine_map<(b, s, n, k) -> (b, s, n)>
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[X2:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2]] : tensor<?x?x64xbf16> into tensor<?x64xbf16>
// CHECK: %[[XQ:.+]] = fp8.quantize %[[X2]]
// CHECK: %[[P:.+]] = fp8.scaled_matmul %[[XQ]], %{{.+}} {{.*}}transpose_rhs{{.*}} -> tensor<?x32xbf16>
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [%{{.+}}, %{{.+}}, 32] : tensor<?x32xbf16> into tensor<?x?x32xbf16>
func.func @dynamic(%x: tensor<?x?x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x?x32xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x64xbf16>
  %s = tensor.dim %x, %c1 : tensor<?x?x64xbf16>
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty(%b, %s) : tensor<?x?x32xbf16>
  %c = linalg.fill ins(%z : bf16) outs(%e : tensor<?x?x32xbf16>) -> tensor<?x?x32xbf16>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?x64xbf16>, tensor<32x64xbf16>) outs(%c : tensor<?x?x32xbf16>) {
  ^bb0(%a: bf16, %b2: bf16, %acc: bf16):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b2 : bf16 to f32
    %acc32 = arith.extf %acc : bf16 to f32
    %m = arith.mulf %a32, %b32 : f32
    %s2 = arith.addf %acc32, %m : f32
    %r = arith.truncf %s2 : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x?x32xbf16>
  return %y : tensor<?x?x32xbf16>
}

// -----

// Heads split on the output, [s, k] x [k, h, d] -> [s, h, d]: two N
// dimensions; the weight and the result are collapsed, x is not.
// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[X:.+]]: tensor<8x64xf32>, %[[W:.+]]: tensor<64x4x16xf32>)
// CHECK-DAG: %[[XQ:.+]] = fp8.quantize %[[X]]
// CHECK-DAG: %[[W2:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2]] : tensor<64x4x16xf32> into tensor<64x64xf32>
// CHECK-DAG: %[[WQ:.+]] = fp8.quantize %[[W2]]
// CHECK: %[[P:.+]] = fp8.scaled_matmul %[[XQ]], %[[WQ]] {{.*}} -> tensor<8x64xf32>
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] output_shape [8, 4, 16]
func.func @heads(%x: tensor<8x64xf32>, %w: tensor<64x4x16xf32>) -> tensor<8x4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  %y = linalg.contract indexing_maps = [affine_map<(s, h, d, k) -> (s, k)>, affine_map<(s, h, d, k) -> (k, h, d)>, affine_map<(s, h, d, k) -> (s, h, d)>]
         ins(%x, %w : tensor<8x64xf32>, tensor<64x4x16xf32>) outs(%c : tensor<8x4x16xf32>) -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}

// -----

// Heads merged on the input (the attention output projection): [s, h, d] x
// [h, d, n], two K dimensions.
// CHECK-LABEL: func.func @merge_heads
// CHECK-DAG: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<8x4x16xf32> into tensor<8x64xf32>
// CHECK-DAG: tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2]] : tensor<4x16x32xf32> into tensor<64x32xf32>
// CHECK: fp8.scaled_matmul {{.*}} -> tensor<8x32xf32>
// CHECK-NOT: tensor.expand_shape
func.func @merge_heads(%x: tensor<8x4x16xf32>, %w: tensor<4x16x32xf32>) -> tensor<8x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %y = linalg.contract indexing_maps = [affine_map<(s, n, h, d) -> (s, h, d)>, affine_map<(s, n, h, d) -> (h, d, n)>, affine_map<(s, n, h, d) -> (s, n)>]
         ins(%x, %w : tensor<8x4x16xf32>, tensor<4x16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// Q, K and V read the same 3-D x: one collapse and one cast serve all three.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[C:.+]] = tensor.collapse_shape
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[CQ:.+]] = fp8.quantize %[[C]]
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: fp8.quantize %[[C]]
// CHECK-COUNT-3: fp8.scaled_matmul %[[CQ]]
// CHECK: return
#xq = affine_map<(b, s, n, k) -> (b, s, k)>
#wq = affine_map<(b, s, n, k) -> (k, n)>
#yq = affine_map<(b, s, n, k) -> (b, s, n)>
func.func @qkv(%x: tensor<2x8x64xf32>, %wq: tensor<64x32xf32>, %wk: tensor<64x32xf32>, %wv: tensor<64x32xf32>)
    -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %q = linalg.contract indexing_maps = [#xq, #wq, #yq] ins(%x, %wq : tensor<2x8x64xf32>, tensor<64x32xf32>) outs(%c : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %k = linalg.contract indexing_maps = [#xq, #wq, #yq] ins(%x, %wk : tensor<2x8x64xf32>, tensor<64x32xf32>) outs(%c : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %v = linalg.contract indexing_maps = [#xq, #wq, #yq] ins(%x, %wv : tensor<2x8x64xf32>, tensor<64x32xf32>) outs(%c : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %q, %k, %v : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// Refused, each kept in high precision with unsupported_layout
// (docs/rewrite.md): M dimensions split by K in x, and a result laid out
// [N, M].
// CHECK-LABEL: func.func @interleaved
// CHECK: linalg.contract
// CHECK-NOT: fp8.scaled_matmul
func.func @interleaved(%x: tensor<2x64x8xf32>, %w: tensor<64x32xf32>) -> tensor<2x8x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x32xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %y = linalg.contract indexing_maps = [affine_map<(b, s, n, k) -> (b, k, s)>, affine_map<(b, s, n, k) -> (k, n)>, affine_map<(b, s, n, k) -> (b, s, n)>]
         ins(%x, %w : tensor<2x64x8xf32>, tensor<64x32xf32>) outs(%c : tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}
// CHECK-LABEL: func.func @transposed_result
// CHECK: linalg.contract
// CHECK-NOT: fp8.scaled_matmul
func.func @transposed_result(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<32x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x16xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<32x16xf32>) -> tensor<32x16xf32>
  %y = linalg.contract indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>]
         ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%c : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
