// A GEMM with its own `fp8.recipe` (what fp8-tune writes) is quantized under
// that recipe; the other GEMMs follow the pass options. A tensor shared by
// GEMMs of different recipes is quantized once per recipe, each time from
// high precision, and each delayed recipe keeps its own state.
//
// RUN: fp8-opt %s -split-input-file --fp8-quantize -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-quantize | fp8-opt -split-input-file --fp8-verify > /dev/null
// RUN: fp8-opt %s -split-input-file --fp8-quantize="remarks" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: fp8-opt %s --fp8-quantize="report=%t.json" -o /dev/null
// RUN: %python %S/../../../Integration/Inputs/check_json.py %t.json \
// RUN:   'recipe.granularity == "tensor"' 'recipe.scaling == "delayed"' \
// RUN:   'gemms.1.recipe.granularity == "row"' \
// RUN:   'gemms.1.recipe.scales == "power_of_two"' 'gemms.1.lhs.block == [1, 256]' \
// RUN:   'gemms.1.rhs.block == [256, 1]' \
// RUN:   'gemms.2.recipe.scaling == "delayed"'

// x feeds three GEMMs: @fp8.shared.arg0 is the module recipe's state (the
// first GEMM); the row-wise GEMM quantizes x again with one scale per row;
// the third GEMM's history of 16 is a state of its own, named after the GEMM
// because arg0's name is taken. Its weight, used by it alone, keeps the
// argument's name.
// CHECK-LABEL: module attributes {fp8.recipe = #fp8.recipe<>}
// CHECK-DAG: ml_program.global public mutable @fp8.shared.arg0.amax_history({{.+}}) : tensor<1024xf32>
// CHECK-DAG: ml_program.global public mutable @fp8.shared.arg1.amax_history({{.+}}) : tensor<1024xf32>
// CHECK-DAG: ml_program.global public mutable @fp8.shared.gemm2.lhs.amax_history({{.+}}) : tensor<16xf32>
// CHECK-DAG: ml_program.global public mutable @fp8.shared.arg3.amax_history({{.+}}) : tensor<16xf32>
// CHECK-NOT: @fp8.shared.arg2
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:[^:]+]]: tensor<64x256xbf16>, %[[W0:[^:]+]]: tensor<256x128xbf16>, %[[W1:[^:]+]]: tensor<256x128xbf16>, %[[W2:[^:]+]]: tensor<256x128xbf16>)
// CHECK-DAG: %[[XR:.+]], %{{.+}} = fp8.quantize %[[X]], %{{.+}} : tensor<64x256xbf16> -> tensor<64x256xf8E4M3FN>, f32
// CHECK-DAG: %[[XRA:.+]] = fp8.block_amax %[[X]] block [1, 256] : tensor<64x256xbf16> -> tensor<64x1xf32>
// CHECK-DAG: %{{.+}}, %[[XRSI:.+]] = fp8.compute_block_scales %[[XRA]] for f8E4M3FN {epsilon = {{.+}}, power_of_two} : tensor<64x1xf32>
// CHECK-DAG: %[[XB:.+]] = fp8.quantize %[[X]], %{{.+}} block [1, 256] : tensor<64x256xbf16> scales tensor<64x1xf32> -> tensor<64x256xf8E4M3FN>
// CHECK-DAG: %[[W1R:.+]] = fp8.quantize %[[W1]], %{{.+}} block [256, 1] : tensor<256x128xbf16> scales tensor<1x128xf32> -> tensor<256x128xf8E4M3FN>
// CHECK-DAG: %{{.+}} = fp8.record_amax %fp8.shared.gemm2.lhs.amax_history, %{{.+}} : tensor<16xf32>
// CHECK-DAG: %{{.+}} = fp8.record_amax %fp8.shared.arg0.amax_history, %{{.+}} : tensor<1024xf32>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<64x256xf8E4M3FN>, tensor<256x128xf8E4M3FN> -> tensor<64x128xbf16>
// CHECK: fp8.scaled_matmul %[[XB]], %[[W1R]] scales %[[XRSI]], %{{.+}} blocks [1, 256], [256, 1]
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} : tensor<64x256xf8E4M3FN>, tensor<256x128xf8E4M3FN> -> tensor<64x128xbf16>
// CHECK-NOT: linalg.matmul

// REMARK: remark: FP8 (weight_gemm): lhs activation as 'f8E4M3FN', rhs weight as 'f8E4M3FN'{{$}}
// REMARK: remark: FP8 (weight_gemm): lhs activation as 'f8E4M3FN', rhs weight as 'f8E4M3FN', under its own recipe #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = row>
// REMARK: remark: FP8 (weight_gemm): lhs activation as 'f8E4M3FN', rhs weight as 'f8E4M3FN', under its own recipe #fp8.recipe<history = 16>
func.func @shared(%x: tensor<64x256xbf16>, %w0: tensor<256x128xbf16>, %w1: tensor<256x128xbf16>, %w2: tensor<256x128xbf16>) -> (tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<64x128xbf16>
  %c = linalg.fill ins(%zero : bf16) outs(%e : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y0 = linalg.matmul ins(%x, %w0 : tensor<64x256xbf16>, tensor<256x128xbf16>) outs(%c : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y1 = linalg.matmul {fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = row>} ins(%x, %w1 : tensor<64x256xbf16>, tensor<256x128xbf16>) outs(%c : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y2 = linalg.matmul {fp8.recipe = #fp8.recipe<history = 16>} ins(%x, %w2 : tensor<64x256xbf16>, tensor<256x128xbf16>) outs(%c : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %y0, %y1, %y2 : tensor<64x128xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>
}

// -----

// A linear layer's backward under the hybrid default: dy is E5M2 for the
// input gradient, and E4M3 (current scaling, its own amax) for the weight
// gradient, whose own recipe says e4m3. An activation operand is E4M3 under
// both formats: the same cast serves a GEMM of either (here w, shared by
// the forward and the input gradient, whose recipes differ in format only).
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[X:[^:]+]]: tensor<64x256xbf16> {fp8.role = "activation"}, %[[W:[^:]+]]: tensor<128x256xbf16>, %[[DY:[^:]+]]: tensor<64x128xbf16> {fp8.role = "grad"})
// CHECK-DAG: %[[DY5:.+]], %{{.+}} = fp8.quantize %[[DY]], %{{.+}} : tensor<64x128xbf16> -> tensor<64x128xf8E5M2>, f32
// CHECK-DAG: %[[DYA:.+]] = fp8.amax %[[DY]] : tensor<64x128xbf16>
// CHECK-DAG: %[[DYS:.+]] = fp8.compute_scale %[[DYA]] for f8E4M3FN
// CHECK-DAG: %[[DY4:.+]] = fp8.quantize %[[DY]], %[[DYS]] : tensor<64x128xbf16> -> tensor<64x128xf8E4M3FN>
// CHECK: fp8.scaled_matmul %{{.+}}, %[[WQ:[^ ]+]] scales %{{.+}}, %{{.+}} {transpose_rhs} : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>
// CHECK: fp8.scaled_matmul %[[DY5]], %[[WQ]] scales
// CHECK: fp8.scaled_matmul %[[DY4]], %{{.+}} scales %{{.+}}, %{{.+}} {transpose_lhs} : tensor<64x128xf8E4M3FN>, tensor<64x256xf8E4M3FN>
// CHECK-NOT: linalg.matmul
// REMARK: remark: FP8 (weight_gemm): lhs gradient as 'f8E5M2', rhs weight as 'f8E4M3FN', under its own recipe #fp8.recipe<>
// REMARK: remark: FP8 (weight_gemm): lhs gradient as 'f8E4M3FN', rhs activation as 'f8E4M3FN', under its own recipe #fp8.recipe<format = e4m3, scaling = current>
func.func @backward(%x: tensor<64x256xbf16> {fp8.role = "activation"}, %w: tensor<128x256xbf16>, %dy: tensor<64x128xbf16> {fp8.role = "grad"}) -> (tensor<64x128xbf16>, tensor<64x256xbf16>, tensor<128x256xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %ey = tensor.empty() : tensor<64x128xbf16>
  %cy = linalg.fill ins(%zero : bf16) outs(%ey : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<64x256xbf16>, tensor<128x256xbf16>) outs(%cy : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  %ex = tensor.empty() : tensor<64x256xbf16>
  %cx = linalg.fill ins(%zero : bf16) outs(%ex : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %dx = linalg.matmul {fp8.recipe = #fp8.recipe<history = 1024>} ins(%dy, %w : tensor<64x128xbf16>, tensor<128x256xbf16>) outs(%cx : tensor<64x256xbf16>) -> tensor<64x256xbf16>
  %ew = tensor.empty() : tensor<128x256xbf16>
  %cw = linalg.fill ins(%zero : bf16) outs(%ew : tensor<128x256xbf16>) -> tensor<128x256xbf16>
  %dw = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : tensor<64x128xbf16>, tensor<64x256xbf16>) outs(%cw : tensor<128x256xbf16>)
      {fp8.recipe = #fp8.recipe<format = e4m3, scaling = current>} -> tensor<128x256xbf16>
  return %y, %dx, %dw : tensor<64x128xbf16>, tensor<64x256xbf16>, tensor<128x256xbf16>
}

// -----

// A GEMM's own finer recipe needs static sizes, as the module's would: with
// a dynamic M it stays in high precision, with the reason.
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.matmul {fp8.recipe
// CHECK-NOT: fp8.scaled_matmul
// REMARK: remark: kept in high precision: dynamic_shape_with_block_scales
func.func @dynamic(%x: tensor<?x256xbf16>, %w: tensor<256x128xbf16>, %c: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %y = linalg.matmul {fp8.recipe = #fp8.recipe<scaling = current, granularity = block>} ins(%x, %w : tensor<?x256xbf16>, tensor<256x128xbf16>) outs(%c : tensor<?x128xbf16>) -> tensor<?x128xbf16>
  return %y : tensor<?x128xbf16>
}
