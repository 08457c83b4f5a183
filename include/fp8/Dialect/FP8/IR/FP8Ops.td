//===- FP8Ops.td - fp8 dialect operations ------------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8OPS_TD
#define FP8_DIALECT_FP8_IR_FP8OPS_TD

include "fp8/Dialect/FP8/IR/FP8Base.td"
include "fp8/Dialect/FP8/IR/FP8Attrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Scaling state
//===----------------------------------------------------------------------===//

def FP8_AmaxOp : FP8_Op<"amax", [Pure]> {
  let summary = "maximum absolute value of a tensor, in f32";
  let description = [{
    Computes `max(|x|)` over every element of `input`, widened exactly to f32.
    NaN elements are ignored (as `fmaxf` does in Transformer Engine's amax
    kernels), so one NaN does not poison the scale; +-Inf gives +Inf, which the
    scale computation then treats as "keep the previous scale". An empty or
    all-NaN tensor has amax 0.

    ```mlir
    %amax = fp8.amax %x : tensor<128x4096xbf16>
    ```
  }];
  let arguments = (ins FP8_WideTensor:$input);
  let results = (outs F32:$amax);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let builders = [
    OpBuilder<(ins "Value":$input), [{
      build($_builder, $_state, $_builder.getF32Type(), input);
    }]>,
  ];
}

def FP8_ComputeScaleOp : FP8_Op<"compute_scale", [Pure]> {
  let summary = "scale from an amax or an amax history (TE recipes)";
  let description = [{
    Computes the f32 scale that maps `amax` onto the largest finite value of
    `fp8_type`, with `margin` powers of two of headroom:
    `scale = (fp8_max * 2^-margin) / amax`.

    `amax` is either one f32 value or an amax history `tensor<N x f32>`,
    reduced per `algo` (`max` over all rows, NaN ignored, or `most_recent`,
    row 0).

    - With `previous` (delayed scaling, TE `DelayedScaling`): the scale is
      recomputed only when the amax is finite and > 0; otherwise `previous`
      is kept. An infinite scale becomes FLT_MAX.
    - Without `previous` (current scaling, TE `Float8CurrentScaling`): amax
      is first raised to `epsilon`; amax 0, Inf or NaN gives scale 1; an
      infinite scale becomes FLT_MAX.

    With `power_of_two` the scale keeps only its sign and exponent bits
    (rounded down to a power of two), which makes scaling exact.

    ```mlir
    // Delayed scaling from a 16-entry history.
    %s = fp8.compute_scale %history, %prev for f8E4M3FN {margin = 1 : i32}
        : tensor<16xf32>
    // Current scaling from this tensor's amax.
    %c = fp8.compute_scale %amax for f8E5M2 : f32
    ```
  }];
  let arguments = (ins
    AnyTypeOf<[F32, FP8_AmaxHistory]>:$amax,
    Optional<F32>:$previous,
    FP8_Float8TypeAttr:$fp8_type,
    DefaultValuedAttr<FP8_AmaxAlgoAttr, "AmaxAlgo::max">:$algo,
    DefaultValuedAttr<I32Attr, "0">:$margin,
    UnitAttr:$power_of_two,
    DefaultValuedAttr<F32Attr, "0.0f">:$epsilon);
  let results = (outs F32:$scale);
  let assemblyFormat = [{
    $amax (`,` $previous^)? `for` $fp8_type attr-dict `:` type($amax)
  }];
  let builders = [
    // Default recipe fields; set algo / margin / power_of_two afterwards.
    OpBuilder<(ins "Value":$amax, "Value":$previous, "Type":$fp8Type), [{
      build($_builder, $_state, $_builder.getF32Type(), amax, previous,
            TypeAttr::get(fp8Type),
            AmaxAlgoAttr::get($_builder.getContext(), AmaxAlgo::max),
            $_builder.getI32IntegerAttr(0), UnitAttr(),
            $_builder.getF32FloatAttr(0.0f));
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// True for the delayed-scaling form (a previous scale to fall back to).
    bool isDelayed() { return static_cast<bool>(getPrevious()); }
  }];
}

def FP8_RecordAmaxOp : FP8_Op<"record_amax", [Pure,
    AllTypesMatch<["history", "result"]>]> {
  let summary = "write a step's amax into row 0 of an amax history";
  let description = [{
    Returns `history` with row 0 replaced by `max(history[0], amax)` (NaN
    ignored). Row 0 is the slot Transformer Engine's casts write during a step
    (it is 0 after each update), and taking the max lets several casts of one
    tensor in a step share the slot, as TE's atomic max does.

    ```mlir
    %h1 = fp8.record_amax %h, %amax : tensor<16xf32>
    ```
  }];
  let arguments = (ins FP8_AmaxHistory:$history, F32:$amax);
  let results = (outs FP8_AmaxHistory:$result);
  let assemblyFormat = "$history `,` $amax attr-dict `:` type($history)";
  let builders = [
    OpBuilder<(ins "Value":$history, "Value":$amax), [{
      build($_builder, $_state, history.getType(), history, amax);
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_RollHistoryOp : FP8_Op<"roll_history", [Pure,
    AllTypesMatch<["history", "result"]>]> {
  let summary = "advance an amax history after a scale update (TE order)";
  let description = [{
    Transformer Engine's roll, applied after the scale has been computed from
    the history: `new[i] = old[i+1]`, `new[N-1] = old[0]`, `new[0] = 0`.
    The step's amax (row 0) thus moves to the back and row 0 is cleared for
    the next step's casts.

    ```mlir
    %h2 = fp8.roll_history %h1 : tensor<16xf32>
    ```
  }];
  let arguments = (ins FP8_AmaxHistory:$history);
  let results = (outs FP8_AmaxHistory:$result);
  let assemblyFormat = "$history attr-dict `:` type($history)";
  let builders = [
    OpBuilder<(ins "Value":$history), [{
      build($_builder, $_state, history.getType(), history);
    }]>,
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_BlockAmaxOp : FP8_Op<"block_amax", [Pure]> {
  let summary = "maximum absolute value of every block of a tensor, in f32";
  let description = [{
    The amax of each block of `input` (as `fp8.amax` computes it: NaN
    ignored, +-Inf gives +Inf, 0 for a block of zeros), one f32 per block.
    `block` gives the block's extent in each dimension; the result has
    `ceil(size / block)` elements in each. A partial last block covers the
    elements that are left.

    ```mlir
    // 1x128 tiles along K (activations, gradients).
    %a = fp8.block_amax %x block [1, 128]
        : tensor<256x4096xbf16> -> tensor<256x32xf32>
    // 128x128 blocks (weights).
    %w = fp8.block_amax %y block [128, 128]
        : tensor<1024x4096xbf16> -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins FP8_WideTensor:$input, DenseI64ArrayAttr:$block_shape);
  let results = (outs FP8_BlockTensor:$amax);
  let assemblyFormat = [{
    $input `block` $block_shape attr-dict `:` type($input) `->` type($amax)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_ComputeBlockScalesOp : FP8_Op<"compute_block_scales", [Pure,
    AllShapesMatch<["amax", "scale", "scale_inv"]>]> {
  let summary = "per-block scales and their inverses from per-block amaxes";
  let description = [{
    Element-wise over `amax`, current scaling with Transformer Engine's
    per-block rules. Two forms, chosen by the element type of `scale_inv`:

    - f32 (`Float8BlockScaling`, DeepSeek-V3, torchao rowwise): amax is
      raised to `epsilon`; amax 0, Inf or NaN gives scale 1; otherwise
      `scale = fp8_max / amax`, an infinite scale becoming FLT_MAX, and with
      `power_of_two` only the sign and exponent bits kept.
      `scale_inv = 1 / scale`, rounded to f32 (exact for a power of two).
      (TE substitutes the input type's largest value for an infinite scale;
      that differs from FLT_MAX only for bf16 inputs with an amax below
      448 / FLT_MAX and exact scales.)
    - `f8E8M0FNU` (OCP MXFP8, TE's MXFP8 recipe): `scale_inv = 2^(e - 127)`
      with `e` the biased exponent of `amax * (1 / fp8_max)` (the reciprocal
      rounded to f32 first) rounded up, so no element of the block
      saturates; at most 0xFE; 0 for an all-zero block, 0xFE for an Inf amax
      (TE's `float_to_e8m0`). `scale = 2^(127 - e)` exactly (TE's
      `exp2f_rcp`). `power_of_two` and `epsilon` do not apply.

    ```mlir
    %s, %si = fp8.compute_block_scales %amax for f8E4M3FN {power_of_two}
        : tensor<256x32xf32> -> tensor<256x32xf32>, tensor<256x32xf32>
    %ms, %msi = fp8.compute_block_scales %amax for f8E4M3FN
        : tensor<256x128xf32> -> tensor<256x128xf32>, tensor<256x128xf8E8M0FNU>
    ```
  }];
  let arguments = (ins
    FP8_BlockTensor:$amax,
    FP8_Float8TypeAttr:$fp8_type,
    UnitAttr:$power_of_two,
    DefaultValuedAttr<F32Attr, "0.0f">:$epsilon);
  let results = (outs FP8_BlockTensor:$scale,
                      FP8_BlockScaleInvTensor:$scale_inv);
  let builders = [
    // Set power_of_two / epsilon afterwards.
    OpBuilder<(ins "Type":$scale, "Type":$scaleInv, "Value":$amax,
                   "Type":$fp8Type), [{
      build($_builder, $_state, scale, scaleInv, amax, TypeAttr::get(fp8Type),
            UnitAttr(), $_builder.getF32FloatAttr(0.0f));
    }]>,
  ];
  let assemblyFormat = [{
    $amax `for` $fp8_type attr-dict `:` type($amax) `->` type($scale) `,`
    type($scale_inv)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// True for OCP MX scales (E8M0 powers of two).
    bool isMX() {
      return ::llvm::isa<::mlir::Float8E8M0FNUType>(
          getScaleInv().getType().getElementType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

def FP8_QuantizeOp : FP8_Op<"quantize", [Pure]> {
  let summary = "scale and cast a tensor to FP8, saturating";
  let description = [{
    `result = sat_rne(f32(input) * scale)`: the product is rounded to f32,
    then converted to the FP8 element type with round-to-nearest-even and
    saturation to the finite range (+-Inf -> +-max, NaN -> NaN), bit-exact to
    Hopper's `cvt.rn.satfinite`.

    The optional second result is the input's amax (as `fp8.amax`), computed
    in the same pass over the data: delayed scaling casts and measures at
    once.

    With `block`, `scale` is a tensor of per-block scales (the dialect's
    block layout) and each element is multiplied by its block's scale; there
    is no amax result (`fp8.block_amax` measures blocks).

    ```mlir
    %q = fp8.quantize %x, %scale : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>
    %q2, %amax = fp8.quantize %x, %scale
        : tensor<64x64xf32> -> tensor<64x64xf8E4M3FN>, f32
    %q3 = fp8.quantize %x, %scales block [1, 32]
        : tensor<64x64xf32> scales tensor<64x2xf32> -> tensor<64x64xf8E4M3FN>
    ```
  }];
  let arguments = (ins FP8_WideTensor:$input, FP8_Scale:$scale,
                       OptionalAttr<DenseI64ArrayAttr>:$block_shape);
  let results = (outs FP8_Float8Tensor:$result, Optional<F32>:$amax);
  let builders = [
    // Per-tensor: an f32 scale, no block shape.
    OpBuilder<(ins "Type":$result, "Type":$amax, "Value":$input,
                   "Value":$scale), [{
      build($_builder, $_state, result, amax, input, scale,
            DenseI64ArrayAttr());
    }]>,
  ];
  let assemblyFormat = [{
    $input `,` $scale (`block` $block_shape^)? attr-dict `:` type($input)
    custom<ScaleType>(type($scale)) `->` type($result) (`,` type($amax)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_DequantizeOp : FP8_Op<"dequantize", [Pure]> {
  let summary = "FP8 tensor back to high precision";
  let description = [{
    `result = convert(f32(input) * scale_inv)`: the FP8 value is widened
    exactly, multiplied by `scale_inv` in f32 and rounded (nearest even) to
    the result element type. With `block`, `scale_inv` holds one value per
    block (f32, or E8M0 for MX), widened exactly to f32.

    ```mlir
    %x = fp8.dequantize %q, %scale_inv
        : tensor<64x64xf8E4M3FN> -> tensor<64x64xbf16>
    %y = fp8.dequantize %q, %scale_invs block [1, 32]
        : tensor<64x64xf8E4M3FN> scales tensor<64x2xf8E8M0FNU>
        -> tensor<64x64xbf16>
    ```
  }];
  let arguments = (ins FP8_Float8Tensor:$input, FP8_ScaleInv:$scale_inv,
                       OptionalAttr<DenseI64ArrayAttr>:$block_shape);
  let results = (outs FP8_WideTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale_inv (`block` $block_shape^)? attr-dict `:` type($input)
    custom<ScaleType>(type($scale_inv)) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_CastTransposeOp : FP8_Op<"cast_transpose",
    [Pure]> {
  let summary = "quantize a matrix and write its transpose in the same pass";
  let description = [{
    Quantizes a rank-2 `input` exactly as `fp8.quantize` does and yields both
    the FP8 matrix and its transpose. Hopper's FP8 tensor cores take both
    operands K-major, so the backward GEMMs need the transposed copy;
    producing both layouts in one pass reads the input once (Transformer
    Engine's fused cast+transpose). The optional amax result is the input's
    amax. Per-tensor scales only: a block-scaled backward copy is quantized
    again from high precision with blocks along its own K, never transposed
    from the forward copy (whose blocks run along the wrong dimension).

    ```mlir
    %q, %qt = fp8.cast_transpose %x, %scale
        : tensor<128x64xbf16> -> tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>
    ```
  }];
  let arguments = (ins FP8_WideTensor:$input, F32:$scale);
  let results = (outs FP8_Float8Tensor:$result, FP8_Float8Tensor:$transposed,
                      Optional<F32>:$amax);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `->` type($result) `,`
    type($transposed) (`,` type($amax)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

def FP8_ScaledMatmulOp : FP8_Op<"scaled_matmul",
    [Pure]> {
  let summary = "FP8 x FP8 matrix multiplication, FP32 accumulation";
  let description = [{
    `result = convert(acc * (lhs_scale_inv * rhs_scale_inv) + bias)` where
    `acc[b, m, n] = sum_k f32(lhs[b, m, k]) * f32(rhs[b, k, n])` accumulated
    in f32. An explicit `accumulator_type` must be f32 (the verifier rejects
    anything less: FP8 products summed in less precision lose the low bits of
    every partial sum); it is f32 when absent. The element types of `lhs` and `rhs`
    may differ (E4M3 x E5M2 for gradients).

    Layouts: `lhs` is `[batch..., M, K]`, or `[batch..., K, M]` with
    `transpose_lhs`; `rhs` is `[batch..., K, N]`, or `[batch..., N, K]` with
    `transpose_rhs` (the K-major "TN" layout of Hopper's FP8 tensor cores).
    `rhs` may have no batch dimensions, in which case it is shared by every
    batch (a weight). The result is `[batch..., M, N]` in f32, bf16 or f16.

    The optional `bias` is a vector of N elements of the result element type
    or f32, added in f32 before the final conversion. The optional second
    result is the amax of the result as stored, for the next cast's scaling.

    Block scales (`blocks lhs_block, rhs_block`, each in its operand's own
    layout, scale_invs in the dialect's block layout, f32 or E8M0): both
    operands' blocks span the same `bk` elements of K and one element of
    every batch dimension. Per K block `kb` (ascending), the partial sum
    `p = sum_{k in kb} f32(lhs) * f32(rhs)` is accumulated in f32 from zero,
    then `acc = fma(p, lhs_scale_inv[m, kb] * rhs_scale_inv[kb, n], acc)`
    (DeepGEMM's promotion, the product of the two scales rounded to f32
    first); `result = convert(acc + bias)`. Rows along K (`bk = K`) are the
    case of one K block.

    ```mlir
    %y = fp8.scaled_matmul %x, %w scales %sx, %sw {transpose_rhs}
        : tensor<4x128x1024xf8E4M3FN>, tensor<4096x1024xf8E4M3FN>
        -> tensor<4x128x4096xbf16>
    // 1x128 activation tiles, 128x128 weight blocks.
    %z = fp8.scaled_matmul %a, %b scales %sa, %sb
        blocks [1, 128], [128, 128] {transpose_rhs}
        : tensor<256x1024xf8E4M3FN>, tensor<512x1024xf8E4M3FN>
        scales tensor<256x8xf32>, tensor<4x8xf32> -> tensor<256x512xbf16>
    ```
  }];
  let arguments = (ins
    FP8_Float8Tensor:$lhs,
    FP8_Float8Tensor:$rhs,
    FP8_ScaleInv:$lhs_scale_inv,
    FP8_ScaleInv:$rhs_scale_inv,
    Optional<1DTensorOf<[F32, BF16, F16]>>:$bias,
    UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs,
    OptionalAttr<TypeAttr>:$accumulator_type,
    OptionalAttr<DenseI64ArrayAttr>:$lhs_block,
    OptionalAttr<DenseI64ArrayAttr>:$rhs_block);
  let results = (outs FP8_WideTensor:$result, Optional<F32>:$result_amax);
  let assemblyFormat = [{
    $lhs `,` $rhs `scales` $lhs_scale_inv `,` $rhs_scale_inv
    (`blocks` $lhs_block^ `,` $rhs_block)?
    (`bias` $bias^ `:` type($bias))? attr-dict `:` type($lhs) `,` type($rhs)
    custom<ScaleTypes>(type($lhs_scale_inv), type($rhs_scale_inv))
    `->` type($result) (`,` type($result_amax)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of leading batch dimensions of the result.
    unsigned getNumBatchDims() { return getResult().getType().getRank() - 2; }
    /// Checks `blocks` and the scale_inv shapes against them.
    ::mlir::LogicalResult verifyBlocks();
    /// True when the operands carry per-block scales.
    bool isBlockScaled() { return static_cast<bool>(getLhsBlock()); }
    /// The K extent of one block (block-scaled form only).
    int64_t getBlockK() {
      ArrayRef<int64_t> block = *getLhsBlock();
      return block[block.size() - (getTransposeLhs() ? 2 : 1)];
    }
  }];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def FP8_AttentionOp : FP8_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention, softmax in f32";
  let description = [{
    Multi-head attention with grouped-query heads, computed without the
    `sq x sk` score matrix (the lowerings are flash-style: online softmax
    over tiles of keys, docs/attention.md).

    Shapes: `query` is `[b, hq, sq, d]`, `key` `[b, hkv, sk, d]`, `value`
    `[b, hkv, sk, dv]` (the value head dimension `dv` may differ from `d`),
    `output` `[b, hq, sq, dv]`; `hq` is a multiple of `hkv` and query head
    `h` reads key/value head `h / (hq / hkv)` (GQA; MQA is `hkv = 1`). Query,
    key and value share one element type (f32, bf16 or f16); the output is
    in it or in f32 (unrounded: what a training step's backward reads).

    Semantics, for each `(n, h, i)` with `g = h / (hq / hkv)`, everything in
    f32 (the element types widen exactly):

    ```
    s[j]  = (sum_c query[n, h, i, c] * key[n, g, j, c]) * scale     (+ mask)
    s[j]  = -inf   where the boolean mask is false, or causal and j > i + causal_offset
    m     = max_j s[j]
    l     = sum_j exp(s[j] - m)
    output[n, h, i, c] = round((sum_j exp(s[j] - m) * value[n, g, j, c]) / l)
    lse[n, h, i]       = m + log(l)
    ```

    `round` is one round-to-nearest-even to the output's type. The scores and
    the probabilities are never rounded to the element type (a graph that
    writes `Q K^T` and `P` in bf16 rounds both; the op is at least as
    accurate). Sums run in f32 in an order the lowering chooses.

    - `mask` (optional) has rank 4, each dimension 1 (broadcast) or equal to
      `[b, hq, sq, sk]`. f32 or the element type: added to the scaled score
      (widened to f32); i1: `true` keeps the score, `false` makes it `-inf`.
    - `causal`: query row `i` attends keys `j <= i + causal_offset`. Offset
      0 is the square causal mask; a prefill after a KV-cache prefix of `p`
      tokens has `causal_offset = p = sk - sq`; one decoded token (`sq = 1`)
      has `causal_offset = sk - 1`. `causal_offset` needs `causal`.
    - A row whose every score is `-inf` (fully masked) gives NaN in `output`
      (`0 / 0`, as the written softmax gives `exp(-inf - -inf)` = NaN) and
      `-inf` in `lse` (the log of an empty sum). Inf or NaN inputs make the
      rows they reach NaN, as in the written graph.
    - `lse` (optional result) is the f32 log-sum-exp of each row's scores,
      what a backward pass needs to recompute `P`.
    - Canonicalization (exact): a constant mask that changes no score (a
      boolean splat of `true`, an additive splat of `+0` or `-0`) is
      dropped, and so is `causal` when it masks nothing (a static `sk` and
      `causal_offset >= sk - 1`); a constant boolean mask `[.., sq, sk]`
      that keeps exactly the keys `j <= i + p` (`p >= 0`) of every row in
      every batch and head becomes `causal` with `causal_offset = p` (the
      smaller offset when the op is causal already).
    - FP8 scores: `query` and `key` may be FP8 (one type for both, E4M3 or
      E5M2) with `scales`: `query_scale_inv [b, hq, sq]` and
      `key_scale_inv [b, hkv, sk]`, one f32 per token, which multiply each
      product sum: `s[j] = ((sum_c query[n, h, i, c] * key[n, g, j, c]) *
      query_scale_inv[n, h, i]) * key_scale_inv[n, g, j] * scale`. Products
      of FP8 values are exact in f32, and so are these multiplications when
      the scales are powers of two (what `fp8-quantize` makes). A token's
      scale depends on that token alone, so a later token cannot change an
      earlier output through it (causality, docs/attention.md). `value`
      may stay in high precision (the output is then in its type or in f32,
      and an f32 or boolean mask, or one of the value's type) or be FP8
      too (below).
    - FP8 probabilities and values: `value` may be FP8 (E4M3 or E5M2) with
      `value_scale %vsi` (`[b, hkv]`, one f32 per key/value head) and the
      attributes `probability_scale` (`ps`, in (0, 448]) and `block_k` (a
      key-tile size). Then `P V` is an FP8 product as FlashAttention-3
      computes it: the keys are taken in tiles of `block_k` (`t(j) = j /
      block_k`), `M[t]` is the running max after tile `t` (the max of the
      scores of keys `0 .. (t + 1) block_k - 1`), and

      ```
      p8[j] = e4m3(exp(s[j] - M[t(j)]) * ps)       (0 where M[t(j)] = -inf)
      output[n, h, i, c] = round((sum_j exp(M[t(j)] - m) * p8[j] * value[n, g, j, c])
                                 * (vsi[n, g] / ps) / l)
      ```

      `e4m3` rounds to nearest even (`p * ps <= ps` never saturates); `l`
      sums the unrounded `exp(s[j] - m)` (the rows of weights sum to one up
      to the rounding of P). The result depends on where key tiles start,
      so the tile is part of the op: the lowerings use tiles of `block_k`
      keys. The output is in f32, bf16 or f16; a mask in f32, i1 or the
      output's type. Power-of-two scales keep the scaling exact.

    ```mlir
    // Llama-style causal prefill: 32 query heads share 8 key/value heads.
    %o = fp8.attention %q, %k, %v scale 0.0883883461 {causal}
        : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>,
          tensor<1x8x4096x128xbf16> -> tensor<1x32x4096x128xbf16>
    // Padding mask as a boolean per key, the log-sum-exp kept.
    %o2, %lse = fp8.attention %q2, %k2, %v2 mask %keep : tensor<2x1x1x?xi1>
        scale 1.250000e-01
        : tensor<2x12x?x64xf32>, tensor<2x12x?x64xf32>, tensor<2x12x?x64xf32>
        -> tensor<2x12x?x64xf32>, tensor<2x12x?xf32>
    // FP8 scores: E4M3 query and key with one scale per token.
    %o3 = fp8.attention %q8, %k8, %v scales %qs, %ks
        : tensor<1x32x4096xf32>, tensor<1x8x4096xf32> scale 0.0883883461
        {causal} : tensor<1x32x4096x128xf8E4M3FN>,
          tensor<1x8x4096x128xf8E4M3FN>, tensor<1x8x4096x128xbf16>
          -> tensor<1x32x4096x128xbf16>
    // Everything FP8: P in E4M3 per key tile of 64, V with a scale per head.
    %o4 = fp8.attention %q8, %k8, %v8 scales %qs, %ks
        : tensor<1x32x4096xf32>, tensor<1x8x4096xf32>
        value_scale %vs : tensor<1x8xf32> scale 0.0883883461
        {block_k = 64, causal, probability_scale = 2.560000e+02}
        : tensor<1x32x4096x128xf8E4M3FN>, tensor<1x8x4096x128xf8E4M3FN>,
          tensor<1x8x4096x128xf8E4M3FN> -> tensor<1x32x4096x128xbf16>
    ```
  }];
  let arguments = (ins
    RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$query,
    RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$key,
    RankedTensorOf<[F32, BF16, F16, F8E4M3FN, F8E5M2]>:$value,
    Optional<RankedTensorOf<[F32]>>:$query_scale_inv,
    Optional<RankedTensorOf<[F32]>>:$key_scale_inv,
    Optional<RankedTensorOf<[F32]>>:$value_scale_inv,
    Optional<RankedTensorOf<[F32, BF16, F16, I1]>>:$mask,
    F32Attr:$scale,
    UnitAttr:$causal,
    DefaultValuedAttr<I64Attr, "0">:$causal_offset,
    OptionalAttr<F32Attr>:$probability_scale,
    OptionalAttr<I64Attr>:$block_k);
  let results = (outs FP8_WideTensor:$output,
                      Optional<RankedTensorOf<[F32]>>:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`scales` $query_scale_inv^ `,` $key_scale_inv `:`
        type($query_scale_inv) `,` type($key_scale_inv))?
    (`value_scale` $value_scale_inv^ `:` type($value_scale_inv))?
    (`mask` $mask^ `:` type($mask))?
    `scale` $scale attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type($output) (`,` type($lse)^)?
  }];
  let builders = [
    // High-precision scores: no scales.
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Type":$lse,
                   "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::Value":$mask,
                   "::mlir::FloatAttr":$scale, "::mlir::UnitAttr":$causal,
                   "::mlir::IntegerAttr":$causal_offset), [{
      build($_builder, $_state, output, lse, query, key, value,
            /*query_scale_inv=*/::mlir::Value(),
            /*key_scale_inv=*/::mlir::Value(),
            /*value_scale_inv=*/::mlir::Value(), mask, scale, causal,
            causal_offset, /*probability_scale=*/::mlir::FloatAttr(),
            /*block_k=*/::mlir::IntegerAttr());
    }]>,
  ];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// True when `mask` is boolean (i1: true keeps the score).
    bool hasBooleanMask() {
      return getMask() &&
             ::llvm::cast<::mlir::RankedTensorType>(getMask().getType())
                 .getElementType().isInteger(1);
    }
    /// True when the query and the key are FP8 with per-token scales.
    bool hasFP8Scores() { return getQueryScaleInv() != nullptr; }
    /// True when the value is FP8 and P is rounded to E4M3 per key tile.
    bool hasFP8Values() { return getValueScaleInv() != nullptr; }
    /// The FP8-value rules of the verifier.
    ::mlir::LogicalResult verifyFP8Values();
  }];
}

def FP8_AttentionGradOp : FP8_Op<"attention_grad", [Pure,
    AllTypesMatch<["query", "grad_query"]>, AllTypesMatch<["key", "grad_key"]>,
    AllTypesMatch<["value", "grad_value"]>]> {
  let summary = "the gradients of fp8.attention, probabilities recomputed";
  let description = [{
    The backward of `fp8.attention` as FlashAttention-2 computes it: the
    probabilities are recomputed from the forward's log-sum-exp, so no
    `sq x sk` tensor is saved or materialized (the lowerings work by tiles,
    docs/attention.md).

    `query`, `key`, `value`, `mask`, `scale`, `causal` and `causal_offset`
    are the forward's, with its shape rules (and a non-negative
    `causal_offset`: every row sees at least its first key); `output` is its
    result (in the element type, or in f32 as the forward can keep it) and
    `lse` its log-sum-exp, `grad_output` the gradient of the loss with
    respect to `output`, in the element type. For each `(n, h, i, j)` with
    `g = h / (hq / hkv)`, everything in f32:

    ```
    s[i, j]  = the forward's masked, scaled score (-inf where masked)
    p[i, j]  = exp(s[i, j] - lse[n, h, i])
    dp[i, j] = sum_c grad_output[n, h, i, c] * value[n, g, j, c]
    D[i]     = sum_c grad_output[n, h, i, c] * output[n, h, i, c]
    ds[i, j] = p[i, j] * (dp[i, j] - D[i])
    grad_query[n, h, i, c] = round(scale * sum_j ds[i, j] * key[n, g, j, c])
    grad_key[n, g, j, c]   = round(scale * sum_{h in g, i} ds[i, j] * query[n, h, i, c])
    grad_value[n, g, j, c] = round(sum_{h in g, i} p[i, j] * grad_output[n, h, i, c])
    ```

    `D` is the row sum of `p * dp` when `output` is exactly `p value`
    (FlashAttention-2 computes it from the output, as here). From an output
    rounded to bf16, `D` is off by about 2^-9 of `|dO| |O|` and the row of
    `ds` no longer sums to 0, an error that `dp - D` can amplify; from the
    forward's f32 output it is the f32 rounding of the sums. A graph that
    writes the backward out sums the rounded `p * dp`. The key and value gradients sum over the query
    heads that share a key/value head (GQA). `round` is one
    round-to-nearest-even to the element type. A fully masked row (`lse`
    is `-inf`) has NaN probabilities, as the written softmax's `0 / 0`, and
    makes the gradients it reaches NaN; a masked score elsewhere has `p = 0`
    and contributes nothing.

    ```mlir
    %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
        scale 0.0883883461 {causal}
        : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>,
          tensor<1x8x4096x128xbf16>, tensor<1x32x4096x128xbf16>,
          tensor<1x32x4096xf32>
    ```
  }];
  let arguments = (ins
    FP8_WideTensor:$query,
    FP8_WideTensor:$key,
    FP8_WideTensor:$value,
    FP8_WideTensor:$output,
    FP8_WideTensor:$grad_output,
    RankedTensorOf<[F32]>:$lse,
    Optional<RankedTensorOf<[F32, BF16, F16, I1]>>:$mask,
    F32Attr:$scale,
    UnitAttr:$causal,
    DefaultValuedAttr<I64Attr, "0">:$causal_offset);
  let results = (outs FP8_WideTensor:$grad_query,
                      FP8_WideTensor:$grad_key,
                      FP8_WideTensor:$grad_value);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $grad_output `,` $lse
    (`mask` $mask^ `:` type($mask))? `scale` $scale attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,`
    custom<GradOutputType>(ref(type($query)), type($output),
                           type($grad_output)) `,`
    type($lse)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// True when `mask` is boolean (i1: true keeps the score).
    bool hasBooleanMask() {
      return getMask() &&
             ::llvm::cast<::mlir::RankedTensorType>(getMask().getType())
                 .getElementType().isInteger(1);
    }
  }];
}

#endif // FP8_DIALECT_FP8_IR_FP8OPS_TD
