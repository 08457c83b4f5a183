// RUN: fp8-opt %s -split-input-file -verify-diagnostics

// One case per verifier error (FP8Ops.cpp, RecipeAttr::verify) and per ODS
// constraint worth pinning down.

//===----------------------------------------------------------------------===//
// fp8.amax
//===----------------------------------------------------------------------===//

func.func @amax_of_fp8(%x: tensor<4xf8E4M3FN>) -> f32 {
  // expected-error @+1 {{'fp8.amax' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xf8E4M3FN>'}}
  %0 = fp8.amax %x : tensor<4xf8E4M3FN>
  return %0 : f32
}

// -----

func.func @amax_of_f64(%x: tensor<4xf64>) -> f32 {
  // expected-error @+1 {{'fp8.amax' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xf64>'}}
  %0 = "fp8.amax"(%x) : (tensor<4xf64>) -> f32
  return %0 : f32
}

// -----

func.func @amax_result_bf16(%x: tensor<4xf32>) -> bf16 {
  // expected-error @+1 {{'fp8.amax' op result #0 must be 32-bit float, but got 'bf16'}}
  %0 = "fp8.amax"(%x) : (tensor<4xf32>) -> bf16
  return %0 : bf16
}

//===----------------------------------------------------------------------===//
// fp8.compute_scale
//===----------------------------------------------------------------------===//

// -----

func.func @compute_scale_f16_format(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op attribute 'fp8_type' failed to satisfy constraint: type attribute of f8E4M3FN or f8E5M2}}
  %0 = "fp8.compute_scale"(%amax) <{fp8_type = f16}> : (f32) -> f32
  return %0 : f32
}

// -----

func.func @compute_scale_missing_format(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op requires attribute 'fp8_type'}}
  %0 = "fp8.compute_scale"(%amax) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @compute_scale_f16_amax(%amax: f16) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op operand #0 must be 32-bit float or 1D tensor of 32-bit float values, but got 'f16'}}
  %0 = fp8.compute_scale %amax for f8E4M3FN : f16
  return %0 : f32
}

// -----

func.func @compute_scale_2d_history(%history: tensor<4x4xf32>) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op operand #0 must be 32-bit float or 1D tensor of 32-bit float values, but got 'tensor<4x4xf32>'}}
  %0 = fp8.compute_scale %history for f8E4M3FN : tensor<4x4xf32>
  return %0 : f32
}

// -----

func.func @compute_scale_f16_previous(%amax: f32, %prev: f16) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op operand #1 must be 32-bit float, but got 'f16'}}
  %0 = "fp8.compute_scale"(%amax, %prev) <{fp8_type = f8E4M3FN}> : (f32, f16) -> f32
  return %0 : f32
}

// -----

func.func @compute_scale_dynamic_history(%history: tensor<?xf32>) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op expects an amax history of static length >= 1, got 'tensor<?xf32>'}}
  %0 = fp8.compute_scale %history for f8E4M3FN : tensor<?xf32>
  return %0 : f32
}

// -----

func.func @compute_scale_empty_history(%history: tensor<0xf32>) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op expects an amax history of static length >= 1, got 'tensor<0xf32>'}}
  %0 = fp8.compute_scale %history for f8E4M3FN : tensor<0xf32>
  return %0 : f32
}

// -----

func.func @compute_scale_algo_on_scalar(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op 'algo' applies only to an amax history}}
  %0 = fp8.compute_scale %amax for f8E4M3FN
      {algo = #fp8.amax_algo<most_recent>} : f32
  return %0 : f32
}

// -----

func.func @compute_scale_epsilon_with_previous(%amax: f32, %prev: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op 'epsilon' applies only to current scaling (no previous scale)}}
  %0 = fp8.compute_scale %amax, %prev for f8E4M3FN {epsilon = 1.0e-12 : f32} : f32
  return %0 : f32
}

// -----

func.func @compute_scale_negative_epsilon(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op 'epsilon' must be a non-negative number}}
  %0 = fp8.compute_scale %amax for f8E4M3FN {epsilon = -1.0e-12 : f32} : f32
  return %0 : f32
}

// -----

func.func @compute_scale_nan_epsilon(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op 'epsilon' must be a non-negative number}}
  %0 = fp8.compute_scale %amax for f8E4M3FN {epsilon = 0x7FC00000 : f32} : f32
  return %0 : f32
}

// -----

func.func @compute_scale_negative_margin(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op 'margin' must be in [0, 127], got -1}}
  %0 = fp8.compute_scale %amax for f8E4M3FN {margin = -1 : i32} : f32
  return %0 : f32
}

// -----

func.func @compute_scale_margin_too_large(%amax: f32) -> f32 {
  // expected-error @+1 {{'fp8.compute_scale' op 'margin' must be in [0, 127], got 128}}
  %0 = fp8.compute_scale %amax for f8E4M3FN {margin = 128 : i32} : f32
  return %0 : f32
}

//===----------------------------------------------------------------------===//
// fp8.record_amax / fp8.roll_history
//===----------------------------------------------------------------------===//

// -----

func.func @record_amax_dynamic(%history: tensor<?xf32>, %amax: f32) -> tensor<?xf32> {
  // expected-error @+1 {{'fp8.record_amax' op expects an amax history of static length >= 1, got 'tensor<?xf32>'}}
  %0 = fp8.record_amax %history, %amax : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @record_amax_type_mismatch(%history: tensor<16xf32>, %amax: f32) -> tensor<8xf32> {
  // expected-error @+1 {{'fp8.record_amax' op failed to verify that all of {history, result} have same type}}
  %0 = "fp8.record_amax"(%history, %amax) : (tensor<16xf32>, f32) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @record_amax_bf16_history(%history: tensor<16xbf16>, %amax: f32) -> tensor<16xbf16> {
  // expected-error @+1 {{'fp8.record_amax' op operand #0 must be 1D tensor of 32-bit float values, but got 'tensor<16xbf16>'}}
  %0 = fp8.record_amax %history, %amax : tensor<16xbf16>
  return %0 : tensor<16xbf16>
}

// -----

func.func @roll_history_dynamic(%history: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'fp8.roll_history' op expects an amax history of static length >= 1, got 'tensor<?xf32>'}}
  %0 = fp8.roll_history %history : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @roll_history_empty(%history: tensor<0xf32>) -> tensor<0xf32> {
  // expected-error @+1 {{'fp8.roll_history' op expects an amax history of static length >= 1, got 'tensor<0xf32>'}}
  %0 = fp8.roll_history %history : tensor<0xf32>
  return %0 : tensor<0xf32>
}

//===----------------------------------------------------------------------===//
// fp8.quantize / fp8.dequantize
//===----------------------------------------------------------------------===//

// -----

func.func @quantize_to_i8(%x: tensor<4xf32>, %s: f32) -> tensor<4xi8> {
  // expected-error @+1 {{'fp8.quantize' op result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi8>'}}
  %0 = "fp8.quantize"(%x, %s) : (tensor<4xf32>, f32) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @quantize_to_bf16(%x: tensor<4xf32>, %s: f32) -> tensor<4xbf16> {
  // expected-error @+1 {{'fp8.quantize' op result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xbf16>'}}
  %0 = fp8.quantize %x, %s : tensor<4xf32> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @quantize_from_f64(%x: tensor<4xf64>, %s: f32) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xf64>'}}
  %0 = "fp8.quantize"(%x, %s) : (tensor<4xf64>, f32) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

func.func @quantize_unranked(%x: tensor<*xf32>, %s: f32) -> tensor<*xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op operand #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<*xf32>'}}
  %0 = "fp8.quantize"(%x, %s) : (tensor<*xf32>, f32) -> tensor<*xf8E4M3FN>
  return %0 : tensor<*xf8E4M3FN>
}

// -----

func.func @quantize_f16_scale(%x: tensor<4xf32>, %s: f16) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op operand #1 must be 32-bit float or ranked tensor of 32-bit float values, but got 'f16'}}
  %0 = "fp8.quantize"(%x, %s) : (tensor<4xf32>, f16) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

func.func @quantize_f16_amax(%x: tensor<4xf32>, %s: f32) -> f16 {
  // expected-error @+1 {{'fp8.quantize' op result #1 must be 32-bit float, but got 'f16'}}
  %0:2 = "fp8.quantize"(%x, %s) : (tensor<4xf32>, f32) -> (tensor<4xf8E4M3FN>, f16)
  return %0#1 : f16
}

// -----

func.func @quantize_shape(%x: tensor<4x8xf32>, %s: f32) -> tensor<8x4xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op result shape 'tensor<8x4xf8E4M3FN>' does not match 'tensor<4x8xf32>'}}
  %0 = fp8.quantize %x, %s : tensor<4x8xf32> -> tensor<8x4xf8E4M3FN>
  return %0 : tensor<8x4xf8E4M3FN>
}

// -----

func.func @quantize_rank(%x: tensor<32xf32>, %s: f32) -> tensor<4x8xf8E5M2> {
  // expected-error @+1 {{'fp8.quantize' op result shape 'tensor<4x8xf8E5M2>' does not match 'tensor<32xf32>'}}
  %0 = fp8.quantize %x, %s : tensor<32xf32> -> tensor<4x8xf8E5M2>
  return %0 : tensor<4x8xf8E5M2>
}

// -----

func.func @dequantize_from_f32(%x: tensor<4xf32>, %s: f32) -> tensor<4xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xf32>'}}
  %0 = fp8.dequantize %x, %s : tensor<4xf32> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @dequantize_to_fp8(%q: tensor<4xf8E4M3FN>, %s: f32) -> tensor<4xf8E5M2> {
  // expected-error @+1 {{'fp8.dequantize' op result #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xf8E5M2>'}}
  %0 = fp8.dequantize %q, %s : tensor<4xf8E4M3FN> -> tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

func.func @dequantize_shape(%q: tensor<4x8xf8E4M3FN>, %s: f32) -> tensor<4x9xbf16> {
  // expected-error @+1 {{'fp8.dequantize' op result shape 'tensor<4x9xbf16>' does not match 'tensor<4x8xf8E4M3FN>'}}
  %0 = fp8.dequantize %q, %s : tensor<4x8xf8E4M3FN> -> tensor<4x9xbf16>
  return %0 : tensor<4x9xbf16>
}

//===----------------------------------------------------------------------===//
// fp8.cast_transpose
//===----------------------------------------------------------------------===//

// -----

func.func @cast_transpose_rank3(%x: tensor<2x4x8xbf16>, %s: f32)
    -> (tensor<2x4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN>) {
  // expected-error @+1 {{'fp8.cast_transpose' op expects a rank-2 input, got 'tensor<2x4x8xbf16>'}}
  %0, %1 = fp8.cast_transpose %x, %s
      : tensor<2x4x8xbf16> -> tensor<2x4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN>
  return %0, %1 : tensor<2x4x8xf8E4M3FN>, tensor<8x4xf8E4M3FN>
}

// -----

func.func @cast_transpose_result_shape(%x: tensor<4x8xbf16>, %s: f32)
    -> (tensor<8x4xf8E4M3FN>, tensor<8x4xf8E4M3FN>) {
  // expected-error @+1 {{'fp8.cast_transpose' op result shape 'tensor<8x4xf8E4M3FN>' does not match 'tensor<4x8xbf16>'}}
  %0, %1 = fp8.cast_transpose %x, %s
      : tensor<4x8xbf16> -> tensor<8x4xf8E4M3FN>, tensor<8x4xf8E4M3FN>
  return %0, %1 : tensor<8x4xf8E4M3FN>, tensor<8x4xf8E4M3FN>
}

// -----

func.func @cast_transpose_not_transposed(%x: tensor<4x8xbf16>, %s: f32)
    -> (tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>) {
  // expected-error @+1 {{'fp8.cast_transpose' op transposed result 'tensor<4x8xf8E4M3FN>' is not the transpose of 'tensor<4x8xbf16>'}}
  %0, %1 = fp8.cast_transpose %x, %s
      : tensor<4x8xbf16> -> tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>
  return %0, %1 : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>
}

// -----

func.func @cast_transpose_transposed_rank(%x: tensor<4x8xbf16>, %s: f32)
    -> (tensor<4x8xf8E4M3FN>, tensor<32xf8E4M3FN>) {
  // expected-error @+1 {{'fp8.cast_transpose' op transposed result 'tensor<32xf8E4M3FN>' is not the transpose of 'tensor<4x8xbf16>'}}
  %0, %1 = fp8.cast_transpose %x, %s
      : tensor<4x8xbf16> -> tensor<4x8xf8E4M3FN>, tensor<32xf8E4M3FN>
  return %0, %1 : tensor<4x8xf8E4M3FN>, tensor<32xf8E4M3FN>
}

// -----

func.func @cast_transpose_dynamic_mismatch(%x: tensor<?x8xbf16>, %s: f32)
    -> (tensor<?x8xf8E4M3FN>, tensor<4x?xf8E4M3FN>) {
  // expected-error @+1 {{'fp8.cast_transpose' op transposed result 'tensor<4x?xf8E4M3FN>' is not the transpose of 'tensor<?x8xbf16>'}}
  %0, %1 = fp8.cast_transpose %x, %s
      : tensor<?x8xbf16> -> tensor<?x8xf8E4M3FN>, tensor<4x?xf8E4M3FN>
  return %0, %1 : tensor<?x8xf8E4M3FN>, tensor<4x?xf8E4M3FN>
}

// -----

func.func @cast_transpose_mixed_formats(%x: tensor<4x8xbf16>, %s: f32)
    -> (tensor<4x8xf8E4M3FN>, tensor<8x4xf8E5M2>) {
  // expected-error @+1 {{'fp8.cast_transpose' op result and transposed result must have the same element type}}
  %0, %1 = fp8.cast_transpose %x, %s
      : tensor<4x8xbf16> -> tensor<4x8xf8E4M3FN>, tensor<8x4xf8E5M2>
  return %0, %1 : tensor<4x8xf8E4M3FN>, tensor<8x4xf8E5M2>
}

//===----------------------------------------------------------------------===//
// fp8.scaled_matmul
//===----------------------------------------------------------------------===//

// -----

func.func @scaled_matmul_f16_accumulator(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<16x8xf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op requires f32 accumulation, got 'f16'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s {accumulator_type = f16}
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xf16>
  return %0 : tensor<16x8xf16>
}

// -----

func.func @scaled_matmul_bf16_accumulator(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op requires f32 accumulation, got 'bf16'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s {accumulator_type = bf16}
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

func.func @scaled_matmul_bf16_lhs(%a: tensor<16x32xbf16>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<16x32xbf16>'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<16x32xbf16>, tensor<32x8xf8E4M3FN> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

func.func @scaled_matmul_fp8_result(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<16x8xf8E4M3FN> {
  // expected-error @+1 {{'fp8.scaled_matmul' op result #0 must be ranked tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16x8xf8E4M3FN>'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xf8E4M3FN>
  return %0 : tensor<16x8xf8E4M3FN>
}

// -----

func.func @scaled_matmul_rank1_result(%a: tensor<32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expects a result of rank >= 2, got 'tensor<8xf32>'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @scaled_matmul_lhs_rank(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<4x32x8xf8E4M3FN>, %s: f32) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expects lhs of rank 3 (the result's), got 'tensor<16x32xf8E4M3FN>'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<16x32xf8E4M3FN>, tensor<4x32x8xf8E4M3FN> -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}

// -----

func.func @scaled_matmul_rhs_rank(%a: tensor<2x4x16x32xf8E4M3FN>,
    %b: tensor<4x32x8xf8E4M3FN>, %s: f32) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op expects rhs of rank 4 or 2 (shared across the batch), got 'tensor<4x32x8xf8E4M3FN>'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<2x4x16x32xf8E4M3FN>, tensor<4x32x8xf8E4M3FN> -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @scaled_matmul_lhs_batch(%a: tensor<3x16x32xf8E4M3FN>,
    %b: tensor<4x32x8xf8E4M3FN>, %s: f32) -> tensor<4x16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op lhs batch dimension 0 does not match the result's}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<3x16x32xf8E4M3FN>, tensor<4x32x8xf8E4M3FN> -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}

// -----

func.func @scaled_matmul_rhs_batch(%a: tensor<2x4x16x32xf8E4M3FN>,
    %b: tensor<2x5x32x8xf8E4M3FN>, %s: f32) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op rhs batch dimension 1 does not match the result's}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<2x4x16x32xf8E4M3FN>, tensor<2x5x32x8xf8E4M3FN> -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

func.func @scaled_matmul_k_mismatch(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<64x8xf8E4M3FN>, %s: f32) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op contraction dimension mismatch: lhs has K = 32, rhs has K = 64}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<16x32xf8E4M3FN>, tensor<64x8xf8E4M3FN> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// Without transpose_rhs, a [N, K] rhs has the wrong K.

func.func @scaled_matmul_k_mismatch_transpose(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<8x32xf8E4M3FN>, %s: f32) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op contraction dimension mismatch: lhs has K = 32, rhs has K = 8}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<16x32xf8E4M3FN>, tensor<8x32xf8E4M3FN> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

// transpose_lhs reads lhs as [K, M]: K = 16 here.

func.func @scaled_matmul_k_mismatch_transpose_lhs(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<32x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op contraction dimension mismatch: lhs has K = 16, rhs has K = 32}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s {transpose_lhs}
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

func.func @scaled_matmul_result_m(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> tensor<17x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op result 'tensor<17x8xf32>' does not match M = 16, N = 8}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<17x8xf32>
  return %0 : tensor<17x8xf32>
}

// -----

func.func @scaled_matmul_result_n(%a: tensor<4x16x32xf8E4M3FN>,
    %w: tensor<8x32xf8E4M3FN>, %s: f32) -> tensor<4x16x32xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op result 'tensor<4x16x32xbf16>' does not match M = 16, N = 8}}
  %0 = fp8.scaled_matmul %a, %w scales %s, %s {transpose_rhs}
      : tensor<4x16x32xf8E4M3FN>, tensor<8x32xf8E4M3FN> -> tensor<4x16x32xbf16>
  return %0 : tensor<4x16x32xbf16>
}

// -----

func.func @scaled_matmul_bias_length(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32, %bias: tensor<16xf32>) -> tensor<16x8xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op bias has 16 elements, expected N = 8}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s bias %bias : tensor<16xf32>
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xbf16>
  return %0 : tensor<16x8xbf16>
}

// -----

func.func @scaled_matmul_bias_element(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32, %bias: tensor<8xf16>) -> tensor<16x8xbf16> {
  // expected-error @+1 {{'fp8.scaled_matmul' op bias element type must be f32 or the result's, got 'f16'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s bias %bias : tensor<8xf16>
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xbf16>
  return %0 : tensor<16x8xbf16>
}

// -----

func.func @scaled_matmul_bias_rank(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32, %bias: tensor<1x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op operand #4 must be 1D tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<1x8xf32>'}}
  %0 = fp8.scaled_matmul %a, %b scales %s, %s bias %bias : tensor<1x8xf32>
      : tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN> -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

func.func @scaled_matmul_bias_fp8(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32, %bias: tensor<8xf8E4M3FN>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op operand #4 must be 1D tensor of 32-bit float or bfloat16 type or 16-bit float values, but got 'tensor<8xf8E4M3FN>'}}
  %0 = "fp8.scaled_matmul"(%a, %b, %s, %s, %bias)
      : (tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN>, f32, f32, tensor<8xf8E4M3FN>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

func.func @scaled_matmul_f16_scale(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32, %t: f16) -> tensor<16x8xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op operand #3 must be 32-bit float or ranked tensor of 32-bit float or f8E8M0FNU type values, but got 'f16'}}
  %0 = "fp8.scaled_matmul"(%a, %b, %s, %t)
      : (tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN>, f32, f16) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

func.func @scaled_matmul_bf16_amax(%a: tensor<16x32xf8E4M3FN>,
    %b: tensor<32x8xf8E4M3FN>, %s: f32) -> bf16 {
  // expected-error @+1 {{'fp8.scaled_matmul' op result #1 must be 32-bit float, but got 'bf16'}}
  %0:2 = "fp8.scaled_matmul"(%a, %b, %s, %s)
      : (tensor<16x32xf8E4M3FN>, tensor<32x8xf8E4M3FN>, f32, f32) -> (tensor<16x8xf32>, bf16)
  return %0#1 : bf16
}

//===----------------------------------------------------------------------===//
// #fp8.recipe
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{amax history length must be at least 1}}
func.func @recipe_history_zero() attributes {fp8.recipe = #fp8.recipe<history = 0>} {
  return
}

// -----

// expected-error @+1 {{margin must be in [0, 127], got -1}}
func.func @recipe_negative_margin() attributes {fp8.recipe = #fp8.recipe<margin = -1>} {
  return
}

// -----

// expected-error @+1 {{margin must be in [0, 127], got 128}}
func.func @recipe_margin_too_large() attributes {fp8.recipe = #fp8.recipe<margin = 128>} {
  return
}

// -----

// expected-error @+2 {{expected one of [hybrid, e4m3] for FP8 format of a recipe, got: e5m2}}
// expected-error @+1 {{failed to parse FP8_RecipeAttr parameter 'format'}}
func.func @recipe_unknown_format() attributes {fp8.recipe = #fp8.recipe<format = e5m2>} {
  return
}

// -----

func.func @block_amax_rank(%x: tensor<64x256xf32>) -> tensor<64x2xf32> {
  // expected-error @+1 {{'fp8.block_amax' op block has 1 dimensions, the tensor 2}}
  %a = fp8.block_amax %x block [128] : tensor<64x256xf32> -> tensor<64x2xf32>
  return %a : tensor<64x2xf32>
}

// -----

func.func @block_amax_zero_extent(%x: tensor<64x256xf32>) -> tensor<64x2xf32> {
  // expected-error @+1 {{'fp8.block_amax' op block extents must be >= 1}}
  %a = fp8.block_amax %x block [0, 128] : tensor<64x256xf32> -> tensor<64x2xf32>
  return %a : tensor<64x2xf32>
}

// -----

func.func @block_amax_shape(%x: tensor<64x300xf32>) -> tensor<64x2xf32> {
  // A partial last block is a block: ceil(300 / 128) = 3.
  // expected-error @+1 {{'fp8.block_amax' op amax shape 'tensor<64x2xf32>' does not match the blocks of 'tensor<64x300xf32>': expected 'tensor<64x3xf32>'}}
  %a = fp8.block_amax %x block [1, 128] : tensor<64x300xf32> -> tensor<64x2xf32>
  return %a : tensor<64x2xf32>
}

// -----

func.func @quantize_block_without_tensor(%x: tensor<64x256xf32>, %s: f32) -> tensor<64x256xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op per-block scale must be a tensor (one value per block), got 'f32'}}
  %q = fp8.quantize %x, %s block [1, 128] : tensor<64x256xf32> -> tensor<64x256xf8E4M3FN>
  return %q : tensor<64x256xf8E4M3FN>
}

// -----

func.func @quantize_tensor_without_block(%x: tensor<64x256xf32>, %s: tensor<64x2xf32>) -> tensor<64x256xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op a per-block scale needs a 'block' shape}}
  %q = fp8.quantize %x, %s : tensor<64x256xf32> scales tensor<64x2xf32> -> tensor<64x256xf8E4M3FN>
  return %q : tensor<64x256xf8E4M3FN>
}

// -----

func.func @quantize_block_amax(%x: tensor<64x256xf32>, %s: tensor<64x2xf32>) -> tensor<64x256xf8E4M3FN> {
  // expected-error @+1 {{'fp8.quantize' op has no amax result with per-block scales}}
  %q, %a = fp8.quantize %x, %s block [1, 128] : tensor<64x256xf32> scales tensor<64x2xf32> -> tensor<64x256xf8E4M3FN>, f32
  return %q : tensor<64x256xf8E4M3FN>
}

// -----

func.func @quantize_e8m0_scale(%x: tensor<64x64xf32>, %s: tensor<64x2xf8E8M0FNU>) -> tensor<64x64xf8E4M3FN> {
  // The quantization multiplier is f32; E8M0 holds scale_invs.
  // expected-error @+1 {{'fp8.quantize' op operand #1 must be 32-bit float or ranked tensor of 32-bit float values, but got 'tensor<64x2xf8E8M0FNU>'}}
  %q = fp8.quantize %x, %s block [1, 32] : tensor<64x64xf32> scales tensor<64x2xf8E8M0FNU> -> tensor<64x64xf8E4M3FN>
  return %q : tensor<64x64xf8E4M3FN>
}

// -----

func.func @block_scales_shape_mismatch(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fp8.compute_block_scales' op failed to verify that all of {amax, scale, scale_inv} have same shape}}
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8x4xf32>
  return %s : tensor<4x8xf32>
}

// -----

func.func @mx_power_of_two(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fp8.compute_block_scales' op E8M0 (MX) scales are powers of two from the amax alone: 'power_of_two' and 'epsilon' do not apply}}
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two} : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf8E8M0FNU>
  return %s : tensor<4x8xf32>
}

// -----

func.func @block_scales_epsilon(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'fp8.compute_block_scales' op 'epsilon' must be a non-negative number}}
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {epsilon = -1.0 : f32} : tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

func.func @matmul_one_block(%a: tensor<64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                            %sa: tensor<64x2xf32>, %sb: f32) -> tensor<64x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op per-block scales need 'blocks' shapes}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb {transpose_rhs} : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN> scales tensor<64x2xf32>, f32 -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @matmul_k_blocks_differ(%a: tensor<64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                                  %sa: tensor<64x2xf32>, %sb: tensor<128x8xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op lhs and rhs blocks must span the same K extent, got 128 and 32}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [1, 32] {transpose_rhs} : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN> scales tensor<64x2xf32>, tensor<128x8xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @matmul_block_scale_shape(%a: tensor<64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                                    %sa: tensor<64x2xf32>, %sb: tensor<2x2xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op rhs scale_inv shape 'tensor<2x2xf32>' does not match the blocks of 'tensor<128x256xf8E4M3FN>': expected 'tensor<1x2xf32>'}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [1, 128], [128, 128] {transpose_rhs} : tensor<64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN> scales tensor<64x2xf32>, tensor<2x2xf32> -> tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}

// -----

func.func @matmul_batch_block(%a: tensor<2x64x256xf8E4M3FN>, %b: tensor<128x256xf8E4M3FN>,
                              %sa: tensor<1x64x2xf32>, %sb: tensor<1x2xf32>) -> tensor<2x64x128xf32> {
  // expected-error @+1 {{'fp8.scaled_matmul' op lhs blocks must span one element of each batch dimension}}
  %y = fp8.scaled_matmul %a, %b scales %sa, %sb blocks [2, 1, 128], [128, 128] {transpose_rhs} : tensor<2x64x256xf8E4M3FN>, tensor<128x256xf8E4M3FN> scales tensor<1x64x2xf32>, tensor<1x2xf32> -> tensor<2x64x128xf32>
  return %y : tensor<2x64x128xf32>
}

// -----

// expected-error @+1 {{granularity block computes every scale from its block's own amax: it needs current scaling}}
module attributes {fp8.recipe = #fp8.recipe<scaling = delayed, granularity = block>} {}

// -----

// expected-error @+1 {{granularity row has no margin (TE's block and MX recipes)}}
module attributes {fp8.recipe = #fp8.recipe<scaling = current, margin = 1, granularity = row>} {}

// -----

// expected-error @+1 {{wgrad_high (torchao's rowwise_with_gw_hp) needs granularity row}}
module attributes {fp8.recipe = #fp8.recipe<scaling = current, granularity = block, wgrad_high = true>} {}

// -----

// expected-error @+1 {{argument #0: 'fp8.sharded' must name a shard.grid, got "dp"}}
func.func @sharded_not_symbol(%x: tensor<8xf32> {fp8.sharded = "dp"}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'fp8.sharded' needs a ranked tensor of rank >= 1 (its first dimension is split over the ranks)}}
func.func @sharded_scalar(%x: f32 {fp8.sharded = @dp}) {
  return
}

// -----

// wgmma_pad_k: TMA rows are 16-byte multiples of the operands' elements.
func.func @wgmma_pad_k_f32(%x: tensor<64x3xf32>, %w: tensor<3x40xf32>, %c: tensor<64x40xf32>) -> tensor<64x40xf32> {
  // expected-error @below {{'fp8.wgmma_pad_k' must be a positive multiple of 4 (16-byte rows)}}
  %y = linalg.matmul {fp8.wgmma_pad_k = 6 : i64} ins(%x, %w : tensor<64x3xf32>, tensor<3x40xf32>) outs(%c : tensor<64x40xf32>) -> tensor<64x40xf32>
  %s = fp8.amax %y : tensor<64x40xf32>
  return %y : tensor<64x40xf32>
}

// -----

func.func @wgmma_pad_k_bf16(%x: tensor<64x3xbf16>, %w: tensor<3x40xbf16>, %c: tensor<64x40xf32>) -> tensor<64x40xf32> {
  // expected-error @below {{'fp8.wgmma_pad_k' must be a positive multiple of 8 (16-byte rows)}}
  %y = linalg.matmul {fp8.wgmma_pad_k = 4 : i64} ins(%x, %w : tensor<64x3xbf16>, tensor<3x40xbf16>) outs(%c : tensor<64x40xf32>) -> tensor<64x40xf32>
  %s = fp8.amax %y : tensor<64x40xf32>
  return %y : tensor<64x40xf32>
}

//===----------------------------------------------------------------------===//
// fp8.attention
//===----------------------------------------------------------------------===//

// -----

func.func @attention_rank(%q: tensor<8x16x64xf32>, %k: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a rank-4 query ([batch, heads, sequence, head_dim]), got 'tensor<8x16x64xf32>'}}
  %0 = "fp8.attention"(%q, %k, %k) <{scale = 1.0 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>}> : (tensor<8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_element_types(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xbf16>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects query, key and value of one element type (or an FP8 query and key with scales) and the output in the value's or in f32}}
  %0 = fp8.attention %q, %k, %k scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x8x16x64xf32>, %k: tensor<1x8x16x64xf32>) -> tensor<2x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects one batch size for query, key and value}}
  %0 = fp8.attention %q, %k, %k scale 1.0 : tensor<2x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return %0 : tensor<2x8x16x64xf32>
}

// -----

func.func @attention_head_dim(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x32xf32>) -> tensor<1x8x16x32xf32> {
  // expected-error @+1 {{'fp8.attention' op expects the key head dimension to equal the query's, got 'tensor<1x8x16x32xf32>' for 'tensor<1x8x16x64xf32>'}}
  %0 = fp8.attention %q, %k, %k scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16x32xf32> -> tensor<1x8x16x32xf32>
  return %0 : tensor<1x8x16x32xf32>
}

// -----

func.func @attention_value_length(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x16x64xf32>, %v: tensor<1x8x12x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects value heads and length to equal the key's}}
  %0 = fp8.attention %q, %k, %v scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x12x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_groups(%q: tensor<1x8x16x64xf32>, %k: tensor<1x3x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects the query heads (8) to be a multiple of the key/value heads (3)}}
  %0 = fp8.attention %q, %k, %k scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x3x16x64xf32>, tensor<1x3x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_output(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x32xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects output shape 'tensor<1x8x16x32xf32>', got 'tensor<1x8x16x64xf32>'}}
  %0 = fp8.attention %q, %k, %v scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_lse(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>) -> tensor<1x8x17xf32> {
  // expected-error @+1 {{'fp8.attention' op expects lse shape 'tensor<1x8x16xf32>', got 'tensor<1x8x17xf32>'}}
  %0, %1 = fp8.attention %q, %k, %k scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x8x16x64xf32>, tensor<1x8x17xf32>
  return %1 : tensor<1x8x17xf32>
}

// -----

func.func @attention_mask_shape(%q: tensor<1x8x16x64xf32>, %k: tensor<1x8x12x64xf32>, %m: tensor<1x1x16x16xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a mask broadcastable to the scores 'tensor<1x8x16x12xf32>' (each dimension 1 or equal), got 'tensor<1x1x16x16xf32>'}}
  %0 = fp8.attention %q, %k, %k mask %m : tensor<1x1x16x16xf32> scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x12x64xf32>, tensor<1x8x12x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_mask_rank(%q: tensor<1x8x16x64xf32>, %m: tensor<16x16xi1>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a mask broadcastable to the scores}}
  %0 = fp8.attention %q, %q, %q mask %m : tensor<16x16xi1> scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_mask_type(%q: tensor<1x8x16x64xbf16>, %m: tensor<1x1x16x16xf16>) -> tensor<1x8x16x64xbf16> {
  // expected-error @+1 {{'fp8.attention' op expects a mask of f32, i1 or the element type 'bf16', got 'tensor<1x1x16x16xf16>'}}
  %0 = fp8.attention %q, %q, %q mask %m : tensor<1x1x16x16xf16> scale 1.0 : tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16> -> tensor<1x8x16x64xbf16>
  return %0 : tensor<1x8x16x64xbf16>
}

// -----

func.func @attention_offset_not_causal(%q: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op has a causal_offset but is not causal}}
  %0 = fp8.attention %q, %q, %q scale 1.0 {causal_offset = 3} : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

func.func @attention_scale(%q: tensor<1x8x16x64xf32>) -> tensor<1x8x16x64xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a finite scale, got 0x7F800000 : f32}}
  %0 = fp8.attention %q, %q, %q scale 0x7F800000 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %0 : tensor<1x8x16x64xf32>
}

// -----

//===----------------------------------------------------------------------===//
// fp8.attention_grad: the forward's rules, and the gradients' types
//===----------------------------------------------------------------------===//

func.func @attention_grad_heads(%q: tensor<1x6x16x64xf32>, %k: tensor<1x4x16x64xf32>, %lse: tensor<1x6x16xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op expects the query heads (6) to be a multiple of the key/value heads (4)}}
  %0:3 = fp8.attention_grad %q, %k, %k, %q, %q, %lse scale 1.0 : tensor<1x6x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x6x16x64xf32>, tensor<1x6x16xf32>
  return
}

// -----

func.func @attention_grad_lse(%q: tensor<1x8x16x64xf32>, %lse: tensor<1x8x15xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op expects lse shape 'tensor<1x8x16xf32>', got 'tensor<1x8x15xf32>'}}
  %0:3 = fp8.attention_grad %q, %q, %q, %q, %q, %lse scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x15xf32>
  return
}

// -----

func.func @attention_grad_output(%q: tensor<1x8x16x64xf32>, %o: tensor<1x8x16x32xf32>, %lse: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op expects output shape 'tensor<1x8x16x64xf32>', got 'tensor<1x8x16x32xf32>'}}
  %0:3 = fp8.attention_grad %q, %q, %q, %o, %o, %lse scale 1.0 : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x32xf32>, tensor<1x8x16xf32>
  return
}

// -----

func.func @attention_grad_result_type(%q: tensor<1x8x16x64xf32>, %lse: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op failed to verify that all of {query, grad_query} have same type}}
  %0:3 = "fp8.attention_grad"(%q, %q, %q, %q, %q, %lse) <{scale = 1.0 : f32}> : (tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16xf32>) -> (tensor<1x8x16x64xbf16>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>)
  return
}

// -----

func.func @attention_grad_offset(%q: tensor<1x8x16x64xf32>, %lse: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op has a causal_offset but is not causal}}
  %0:3 = fp8.attention_grad %q, %q, %q, %q, %q, %lse scale 1.0 {causal_offset = 1} : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16xf32>
  return
}

// -----

func.func @attention_grad_negative_offset(%q: tensor<1x8x16x64xf32>, %lse: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op expects a non-negative causal_offset, got -2}}
  %0:3 = fp8.attention_grad %q, %q, %q, %q, %q, %lse scale 1.0 {causal, causal_offset = -2} : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16xf32>
  return
}

// -----

func.func @attention_output_f16(%q: tensor<1x8x16x64xbf16>) -> tensor<1x8x16x64xf16> {
  // expected-error @+1 {{'fp8.attention' op expects query, key and value of one element type (or an FP8 query and key with scales) and the output in the value's or in f32}}
  %0 = fp8.attention %q, %q, %q scale 1.0 : tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16> -> tensor<1x8x16x64xf16>
  return %0 : tensor<1x8x16x64xf16>
}

// -----

func.func @attention_grad_grad_output(%q: tensor<1x8x16x64xbf16>, %o: tensor<1x8x16x64xf32>, %lse: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'fp8.attention_grad' op expects grad_output shaped as the output, in the element type of query, got 'tensor<1x8x16x64xf32>' for 'tensor<1x8x16x64xf32>'}}
  %0:3 = "fp8.attention_grad"(%q, %q, %q, %o, %o, %lse) <{scale = 1.0 : f32}> : (tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16xf32>) -> (tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>, tensor<1x8x16x64xbf16>)
  return
}

// -----

// A GEMM's own recipe (fp8-quantize honours it) is checked like the module's.
func.func @gemm_recipe_not_a_recipe(%x: tensor<64x256xbf16>, %w: tensor<256x128xbf16>, %c: tensor<64x128xbf16>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{'fp8.recipe' must be a #fp8.recipe, got "row"}}
  %y = linalg.matmul {fp8.recipe = "row"} ins(%x, %w : tensor<64x256xbf16>, tensor<256x128xbf16>) outs(%c : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

// -----

func.func @gemm_recipe_delayed_rows(%x: tensor<64x256xbf16>, %w: tensor<256x128xbf16>, %c: tensor<64x128xbf16>) -> tensor<64x128xbf16> {
  // expected-error @+1 {{granularity row computes every scale from its block's own amax: it needs current scaling}}
  %y = linalg.matmul {fp8.recipe = #fp8.recipe<granularity = row>} ins(%x, %w : tensor<64x256xbf16>, tensor<256x128xbf16>) outs(%c : tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %y : tensor<64x128xbf16>
}

// -----

func.func @attention_fp8_without_scales(%q: tensor<1x2x8x16xf8E4M3FN>, %v: tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16> {
  // expected-error @+1 {{expects scales for an FP8 query and key}}
  %o = fp8.attention %q, %q, %v scale 0.25 : tensor<1x2x8x16xf8E4M3FN>, tensor<1x2x8x16xf8E4M3FN>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o : tensor<1x2x8x16xbf16>
}

// -----

func.func @attention_scales_on_wide_scores(%q: tensor<1x2x8x16xbf16>, %s: tensor<1x2x8xf32>) -> tensor<1x2x8x16xbf16> {
  // expected-error @+1 {{has scales but a query and key of high precision 'bf16'}}
  %o = fp8.attention %q, %q, %q scales %s, %s : tensor<1x2x8xf32>, tensor<1x2x8xf32> scale 0.25 : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o : tensor<1x2x8x16xbf16>
}

// -----

func.func @attention_fp8_key_scale_per_query_token(%q: tensor<1x4x8x16xf8E4M3FN>, %k: tensor<1x2x32x16xf8E4M3FN>, %v: tensor<1x2x32x16xbf16>, %qs: tensor<1x4x8xf32>) -> tensor<1x4x8x16xbf16> {
  // expected-error @+1 {{expects one key scale per token, 'tensor<1x2x32xf32>', got 'tensor<1x4x8xf32>'}}
  %o = fp8.attention %q, %k, %v scales %qs, %qs : tensor<1x4x8xf32>, tensor<1x4x8xf32> scale 0.25 : tensor<1x4x8x16xf8E4M3FN>, tensor<1x2x32x16xf8E4M3FN>, tensor<1x2x32x16xbf16> -> tensor<1x4x8x16xbf16>
  return %o : tensor<1x4x8x16xbf16>
}

// -----

func.func @attention_fp8_query_wide_key(%q: tensor<1x2x8x16xf8E4M3FN>, %k: tensor<1x2x8x16xbf16>, %s: tensor<1x2x8xf32>) -> tensor<1x2x8x16xbf16> {
  // expected-error @+1 {{expects query, key and value of one element type (or an FP8 query and key with scales) and the output in the value's or in f32}}
  %o = fp8.attention %q, %k, %k scales %s, %s : tensor<1x2x8xf32>, tensor<1x2x8xf32> scale 0.25 : tensor<1x2x8x16xf8E4M3FN>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o : tensor<1x2x8x16xbf16>
}

// -----

func.func @attention_fp8_value_no_scale(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf8E4M3FN>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a value_scale for an FP8 value}}
  %o = fp8.attention %q, %q, %v scale 0.5 {block_k = 64, probability_scale = 256.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf8E4M3FN> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_value_scale_high(%q: tensor<1x2x16x8xf32>, %s: tensor<1x2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op has a value_scale but a value of high precision 'f32'}}
  %o = fp8.attention %q, %q, %q value_scale %s : tensor<1x2xf32> scale 0.5 {block_k = 64, probability_scale = 256.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_fp8_value_no_block(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf8E4M3FN>, %s: tensor<1x2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op expects probability_scale and block_k with an FP8 value (P in E4M3 per key tile)}}
  %o = fp8.attention %q, %q, %v value_scale %s : tensor<1x2xf32> scale 0.5 {probability_scale = 256.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf8E4M3FN> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_block_without_fp8_value(%q: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op has probability_scale or block_k without an FP8 value}}
  %o = fp8.attention %q, %q, %q scale 0.5 {block_k = 64}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_value_scale_shape(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf8E4M3FN>, %s: tensor<2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op expects one value scale per key/value head, 'tensor<1x2xf32>', got 'tensor<2xf32>'}}
  %o = fp8.attention %q, %q, %v value_scale %s : tensor<2xf32> scale 0.5 {block_k = 64, probability_scale = 256.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf8E4M3FN> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_probability_scale(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf8E4M3FN>, %s: tensor<1x2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a probability_scale in (0, 448] (P * scale in E4M3 without saturation), got 5.120000e+02}}
  %o = fp8.attention %q, %q, %v value_scale %s : tensor<1x2xf32> scale 0.5 {block_k = 64, probability_scale = 512.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf8E4M3FN> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_block_k(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf8E4M3FN>, %s: tensor<1x2xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a positive block_k, got 0}}
  %o = fp8.attention %q, %q, %v value_scale %s : tensor<1x2xf32> scale 0.5 {block_k = 0, probability_scale = 256.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf8E4M3FN> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @attention_fp8_value_mask(%q: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf8E4M3FN>, %s: tensor<1x2xf32>, %m: tensor<1x1x16x16xf16>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'fp8.attention' op expects a mask of f32, i1 or the element type 'f32', got 'tensor<1x1x16x16xf16>'}}
  %o = fp8.attention %q, %q, %v value_scale %s : tensor<1x2xf32> mask %m : tensor<1x1x16x16xf16> scale 0.5 {block_k = 64, probability_scale = 256.0 : f32}
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf8E4M3FN> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}
