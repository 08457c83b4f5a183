// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=block" | FileCheck %s --check-prefix=BLOCK
// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=block exact-scales format=hybrid" | FileCheck %s --check-prefix=EXACT
// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=row" | FileCheck %s --check-prefix=ROW
// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=row wgrad-high" | FileCheck %s --check-prefix=GWHP
// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=mx" | FileCheck %s --check-prefix=MX
// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=block" | fp8-opt --fp8-verify -split-input-file > /dev/null
// The report: the recipe, each operand's blocks in its logical layout
// ([M, K], [K, N]), and whether a partial last block is zero-padded (320
// tokens are the weight gradient's K; the constant weight has N = 32).
// RUN: fp8-opt %s --fp8-quantize="granularity=block report=%t.block.json" -o /dev/null
// RUN: %python %S/../../../Integration/Inputs/check_json.py %t.block.json \
// RUN:   'recipe.granularity == "block"' 'recipe.scales == "power_of_two"' 'recipe.format == "e4m3"' \
// RUN:   'gemms.0.lhs.block == [1, 128]' 'gemms.0.rhs.block == [128, 128]' 'gemms.0.padded_blocks == 0' \
// RUN:   'gemms.2.lhs.block == [1, 128]' 'gemms.2.rhs.block == [128, 1]' 'gemms.2.padded_blocks == 1'
// RUN: fp8-opt %s --fp8-quantize="granularity=mx report=%t.mx.json" -o /dev/null
// RUN: %python %S/../../../Integration/Inputs/check_json.py %t.mx.json \
// RUN:   'recipe.scales == "e8m0"' 'recipe.sm_90 == "emulated: Hopper has no MX tensor cores; the GEMM applies the E8M0 scales per 32-deep K block"' \
// RUN:   'gemms.0.lhs.block == [1, 32]' 'gemms.0.rhs.block == [32, 1]'
// RUN: not fp8-opt %s --fp8-quantize="granularity=block scaling=delayed" 2>&1 | FileCheck %s --check-prefix=DELAYED
// RUN: not fp8-opt %s --fp8-quantize="granularity=row margin=1" 2>&1 | FileCheck %s --check-prefix=MARGIN
// RUN: not fp8-opt %s --fp8-quantize="granularity=block wgrad-high" 2>&1 | FileCheck %s --check-prefix=GWHPBLOCK
// RUN: not fp8-opt %s --fp8-quantize="exact-scales" 2>&1 | FileCheck %s --check-prefix=EXACTTENSOR
// RUN: not fp8-opt %s --fp8-quantize="granularity=mx exact-scales" 2>&1 | FileCheck %s --check-prefix=EXACTTENSOR
// RUN: not fp8-opt %s --fp8-quantize="granularity=channel" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not fp8-opt %s --fp8-quantize="granularity=block scaling=sometimes" 2>&1 | FileCheck %s --check-prefix=BADSCALING

// DELAYED: error: granularity=block computes each scale from its block's own amax (current scaling); scaling=delayed is not supported with it
// MARGIN: error: granularity=row follows TE's block and MX recipes, which have no margin
// GWHPBLOCK: error: wgrad-high is torchao's rowwise_with_gw_hp: it needs granularity=row
// EXACTTENSOR: error: exact-scales applies to granularity=row and block
// UNKNOWN: error: unknown granularity 'channel' (expected tensor, row, block or mx)
// BADSCALING: error: unknown scaling 'sometimes' (expected delayed or current)

// A linear layer's forward and backward (x: [tokens, in], w: [out, in]):
//   y = x w^T, dx = dy w, dw = dy^T x.
// Activations and gradients get 1x128 tiles along their GEMM's K, weights
// 128x128 blocks; the GEMMs whose K is the forward's M or N (dw's K is the
// tokens) quantize x and dy again from high precision with blocks along
// that K: never a transposed forward copy. The weight's square blocks serve
// both y (K = in) and dx (K = out), so it is quantized once. 320 tokens:
// the last block along them is partial.

// BLOCK: module attributes {fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = block>}
// BLOCK-LABEL: func.func @linear_fwd_bwd
// BLOCK-SAME: (%[[X:[^:]+]]: tensor<320x256xbf16> {fp8.role = "activation"}, %[[W:[^:]+]]: tensor<384x256xbf16>, %[[DY:[^:]+]]: tensor<320x384xbf16>
// BLOCK-NOT: ml_program
// BLOCK-DAG: %[[WA:.+]] = fp8.block_amax %[[W]] block [128, 128] : tensor<384x256xbf16> -> tensor<3x2xf32>
// BLOCK-DAG: %[[XA:.+]] = fp8.block_amax %[[X]] block [1, 128] : tensor<320x256xbf16> -> tensor<320x2xf32>
// BLOCK-DAG: %[[XS:.+]], %[[XSI:.+]] = fp8.compute_block_scales %[[XA]] for f8E4M3FN {power_of_two} : tensor<320x2xf32> -> tensor<320x2xf32>, tensor<320x2xf32>
// BLOCK-DAG: %[[XQ:.+]] = fp8.quantize %[[X]], %[[XS]] block [1, 128] : tensor<320x256xbf16> scales tensor<320x2xf32> -> tensor<320x256xf8E4M3FN>
// BLOCK-DAG: %[[WQ:.+]] = fp8.quantize %[[W]], %{{.+}} block [128, 128] : tensor<384x256xbf16> scales tensor<3x2xf32> -> tensor<384x256xf8E4M3FN>
// BLOCK-DAG: fp8.scaled_matmul %[[XQ]], %[[WQ]] scales %[[XSI]], %{{.+}} blocks [1, 128], [128, 128] {transpose_rhs} : tensor<320x256xf8E4M3FN>, tensor<384x256xf8E4M3FN> scales tensor<320x2xf32>, tensor<3x2xf32> -> tensor<320x384xbf16>
// BLOCK-DAG: %[[DYQ:.+]] = fp8.quantize %[[DY]], %{{.+}} block [1, 128] : tensor<320x384xbf16> scales tensor<320x3xf32> -> tensor<320x384xf8E4M3FN>
// BLOCK-DAG: fp8.scaled_matmul %[[DYQ]], %[[WQ]] scales %{{.+}}, %{{.+}} blocks [1, 128], [128, 128] : tensor<320x384xf8E4M3FN>, tensor<384x256xf8E4M3FN> scales tensor<320x3xf32>, tensor<3x2xf32> -> tensor<320x256xbf16>
// BLOCK-DAG: %[[DYQT:.+]] = fp8.quantize %[[DY]], %{{.+}} block [128, 1] : tensor<320x384xbf16> scales tensor<3x384xf32> -> tensor<320x384xf8E4M3FN>
// BLOCK-DAG: %[[XQT:.+]] = fp8.quantize %[[X]], %{{.+}} block [128, 1] : tensor<320x256xbf16> scales tensor<3x256xf32> -> tensor<320x256xf8E4M3FN>
// BLOCK-DAG: fp8.scaled_matmul %[[DYQT]], %[[XQT]] scales %{{.+}}, %{{.+}} blocks [128, 1], [128, 1] {transpose_lhs} : tensor<320x384xf8E4M3FN>, tensor<320x256xf8E4M3FN> scales tensor<3x384xf32>, tensor<3x256xf32> -> tensor<384x256xbf16>
// BLOCK-NOT: linalg.matmul
// BLOCK-NOT: linalg.transpose
// BLOCK-NOT: fp8.cast_transpose
// BLOCK: return

// Exact f32 scales on request; an explicit hybrid format still gives the
// gradients E5M2.
// EXACT: module attributes {fp8.recipe = #fp8.recipe<scaling = current, granularity = block>}
// EXACT-NOT: power_of_two
// EXACT: fp8.compute_block_scales %{{.+}} for f8E5M2 : tensor<320x3xf32>
// EXACT: fp8.quantize %{{.+}} block [1, 128] : tensor<320x384xbf16> scales tensor<320x3xf32> -> tensor<320x384xf8E5M2>

// Rows: one scale per row along K (per token for activations and
// gradients, per output channel for the weight of y = x w^T).
// ROW: module attributes {fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = row>}
// ROW-DAG: fp8.block_amax %{{.+}} block [1, 256] : tensor<384x256xbf16> -> tensor<384x1xf32>
// ROW-DAG: fp8.compute_block_scales %{{.+}} for f8E4M3FN {epsilon = 9.99999996E-13 : f32, power_of_two} : tensor<384x1xf32>
// ROW-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 256], [1, 256] {transpose_rhs}
// ROW-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 384], [384, 1] : {{.+}} scales tensor<320x1xf32>, tensor<1x256xf32>
// ROW-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [320, 1], [320, 1] {transpose_lhs}

// torchao's rowwise_with_gw_hp: the weight gradient stays as it was, and
// the input gradient's GEMM takes the weight scaled per tensor (one block
// over the whole [384, 256] matrix) next to the gradient's rows.
// GWHP: module attributes {fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, power_of_two = true, granularity = row, wgrad_high = true>}
// GWHP-LABEL: func.func @linear_fwd_bwd
// GWHP-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 256], [1, 256] {transpose_rhs}
// GWHP-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 384], [384, 256] : {{.+}} scales tensor<320x1xf32>, tensor<1x1xf32>
// GWHP-NOT: fp8.scaled_matmul
// GWHP: linalg.matmul
// GWHP-LABEL: func.func @constant_weight

// The OCP format: 32-element blocks along K with E8M0 scale_invs, weights too.
// MX: module attributes {fp8.recipe = #fp8.recipe<format = e4m3, scaling = current, granularity = mx>}
// MX-DAG: fp8.compute_block_scales %{{.+}} for f8E4M3FN : tensor<384x8xf32> -> tensor<384x8xf32>, tensor<384x8xf8E8M0FNU>
// MX-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 32], [1, 32] {transpose_rhs} : tensor<320x256xf8E4M3FN>, tensor<384x256xf8E4M3FN> scales tensor<320x8xf8E8M0FNU>, tensor<384x8xf8E8M0FNU> -> tensor<320x384xbf16>
// MX-DAG: fp8.scaled_matmul %{{.+}}, %{{.+}} scales %{{.+}}, %{{.+}} blocks [1, 32], [32, 1] : tensor<320x384xf8E4M3FN>, tensor<384x256xf8E4M3FN> scales tensor<320x12xf8E8M0FNU>, tensor<12x256xf8E8M0FNU> -> tensor<320x256xbf16>

func.func @linear_fwd_bwd(%x: tensor<320x256xbf16> {fp8.role = "activation"}, %w: tensor<384x256xbf16>,
                          %dy: tensor<320x384xbf16> {fp8.role = "grad"})
    -> (tensor<320x384xbf16>, tensor<320x256xbf16>, tensor<384x256xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e0 = tensor.empty() : tensor<320x384xbf16>
  %c0 = linalg.fill ins(%zero : bf16) outs(%e0 : tensor<320x384xbf16>) -> tensor<320x384xbf16>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<320x256xbf16>, tensor<384x256xbf16>)
      outs(%c0 : tensor<320x384xbf16>) -> tensor<320x384xbf16>
  %e1 = tensor.empty() : tensor<320x256xbf16>
  %c1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<320x256xbf16>) -> tensor<320x256xbf16>
  %dx = linalg.matmul ins(%dy, %w : tensor<320x384xbf16>, tensor<384x256xbf16>)
      outs(%c1 : tensor<320x256xbf16>) -> tensor<320x256xbf16>
  %e2 = tensor.empty() : tensor<384x256xbf16>
  %c2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<384x256xbf16>) -> tensor<384x256xbf16>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                                       affine_map<(m, n, k) -> (k, n)>,
                                       affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %x : tensor<320x384xbf16>, tensor<320x256xbf16>)
      outs(%c2 : tensor<384x256xbf16>) -> tensor<384x256xbf16>
  return %y, %dx, %dw : tensor<320x384xbf16>, tensor<320x256xbf16>, tensor<384x256xbf16>
}

// -----

// Constant weights fold to FP8 constants and constant scales under every
// granularity, as they do per tensor.
// BLOCK-LABEL: func.func @constant_weight
// BLOCK-NOT: fp8.block_amax %cst
// amax 0.5 -> 448 / 0.5 = 896 -> 512: every element 256, scale_inv 2^-9.
// BLOCK-DAG: %[[WQ:.+]] = arith.constant dense<2.560000e+02> : tensor<32x128xf8E4M3FN>
// BLOCK-DAG: %[[WSI:.+]] = arith.constant dense<0.001953125> : tensor<1x1xf32>
// BLOCK: fp8.scaled_matmul %{{.+}}, %[[WQ]] scales %{{.+}}, %[[WSI]] blocks [1, 128], [128, 128] {transpose_rhs}
func.func @constant_weight(%x: tensor<16x128xf32>) -> tensor<16x32xf32> {
  %w = arith.constant dense<0.5> : tensor<32x128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<16x128xf32>, tensor<32x128xf32>)
      outs(%c : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Dynamic sizes cannot be split into blocks: the GEMM stays as it was, even
// when asked for FP8 (fp8.precision), under every finer granularity.
// BLOCK-LABEL: func.func @dynamic_tokens
// BLOCK-NOT: fp8.
// BLOCK: linalg.matmul
// BLOCK-NOT: fp8.
// BLOCK: linalg.matmul
// ROW-LABEL: func.func @dynamic_tokens
// ROW-NOT: fp8.
// ROW: linalg.matmul
// ROW-NOT: fp8.
// ROW: linalg.matmul
func.func @dynamic_tokens(%x: tensor<?x128xf32>, %w: tensor<128x64xf32>, %init: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %zero = arith.constant 0.0 : f32
  %c = linalg.fill ins(%zero : f32) outs(%init : tensor<?x64xf32>) -> tensor<?x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x128xf32>, tensor<128x64xf32>)
      outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
  %z = linalg.matmul {fp8.precision = "fp8"} ins(%x, %w : tensor<?x128xf32>, tensor<128x64xf32>)
      outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
  %s = arith.addf %y, %z : tensor<?x64xf32>
  return %s : tensor<?x64xf32>
}
