//===- Passes.td - fp8 dialect passes ----------------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8Verify : Pass<"fp8-verify", "ModuleOp"> {
  let summary = "Prove that FP8 is used only where it is safe";
  let description = [{
    A lint over IR produced by the fp8 passes or by anyone else. It fails,
    with a located error per violation, on the pitfalls of FP8 training:

    - a cast to an FP8 type that is not an `fp8.quantize` /
      `fp8.cast_transpose` (an `arith.truncf` to f8 has no scale: values
      outside the tiny FP8 range collapse or overflow);
    - an FP8 value reaching anything but FP8-aware ops and pure data
      movement: norms, softmax, reductions, residual adds, losses and any
      other arithmetic must see high-precision values;
    - FP8 accumulation: a contraction whose accumulator (and so result) is
      FP8, or FP8 operands reaching a contraction other than
      `fp8.scaled_matmul`, which would drop their scales;
    - FP8 master weights or optimizer state: a mutable global, or a value
      written back to one, of FP8 type.
  }];
}

//===----------------------------------------------------------------------===//
// The FP8 rewrite
//===----------------------------------------------------------------------===//

// Which GEMMs go to FP8: shared by fp8-classify and fp8-quantize so that what
// is reported is what is done.
defvar FP8PolicyOptions = [
  Option<"fp8Attention", "fp8-attention", "bool", /*default=*/"false",
         "Also FP8: activation x activation GEMMs (attention's scores and "
         "context as written), and fused attention inside (query and key "
         "in E4M3 with one power-of-two scale per token, the value with a "
         "delayed scale, P in E4M3 per key tile)">,
  Option<"keepFirstLast", "keep-first-last", "bool", /*default=*/"false",
         "Keep the first and the last eligible GEMM in high precision">,
  Option<"minFlops", "min-flops", "int64_t", /*default=*/"0",
         "Keep GEMMs with 2*M*N*K below this in high precision">,
  ListOption<"exclude", "exclude", "std::string",
             "Regular expressions: GEMMs whose function name or location "
             "matches one stay in high precision">,
  Option<"report", "report", "std::string", /*default=*/"\"\"",
         "Write one JSON record per GEMM plus totals to this file">,
  Option<"remarks", "remarks", "bool", /*default=*/"false",
         "Explain every decision with a remark">,
];

// The recipe: shared by fp8-quantize and fp8-tune-variants (whose
// alternatives derive from it).
defvar FP8RecipeOptions = [
  Option<"scaling", "scaling", "std::string", /*default=*/"\"\"",
         "Scaling recipe: delayed | current (default: delayed per tensor, "
         "current for finer granularities)">,
  Option<"format", "format", "std::string", /*default=*/"\"\"",
         "FP8 format: hybrid (E5M2 gradients) | e4m3 (default: hybrid per "
         "tensor, e4m3 for finer granularities)">,
  Option<"history", "history", "unsigned", /*default=*/"1024",
         "Amax history length (delayed scaling)">,
  Option<"algo", "algo", "std::string", /*default=*/"\"max\"",
         "Amax from the history: max | most_recent">,
  Option<"margin", "margin", "int", /*default=*/"0",
         "Scale headroom in powers of two">,
  Option<"powerOfTwo", "power-of-two", "bool", /*default=*/"false",
         "Round scales down to powers of two">,
  Option<"granularity", "granularity", "std::string",
         /*default=*/"\"tensor\"",
         "What one scale covers: tensor | row (along K) | block (1x128 "
         "activations and gradients, 128x128 weights) | mx (1x32, E8M0)">,
  Option<"exactScales", "exact-scales", "bool", /*default=*/"false",
         "granularity=row|block: plain f32 scales instead of powers of two">,
  Option<"wgradHigh", "wgrad-high", "bool", /*default=*/"false",
         "granularity=row: keep weight-gradient GEMMs in high precision "
         "and scale the weight of the input-gradient GEMM per tensor "
         "(torchao rowwise_with_gw_hp)">,
];

def FP8Classify : Pass<"fp8-classify", "ModuleOp"> {
  let summary = "Find the GEMMs and decide, with a reason, which go to FP8";
  let description = [{
    Recognises every GEMM by structure (linalg contractions with one M, N and
    K dimension and any batch dimensions: `linalg.matmul` with or without
    `indexing_maps`, `batch_matmul`, `contract`, generic contractions with
    `arith.extf` on their operands), traces each operand through views
    (transpose, broadcast, reshape, cast generics) to its origin to decide
    its role (weight, activation, gradient), and decides per GEMM, with a
    reason code. The decisions are attached to the ops as `fp8.decision` and
    `fp8.reason` attributes, explained with remarks on request, and written as
    JSON with `report=<file>`. Nothing else changes.
  }];
  let options = FP8PolicyOptions;
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8Quantize : Pass<"fp8-quantize", "ModuleOp"> {
  let summary = "Rewrite the eligible GEMMs to scaled FP8 GEMMs";
  let description = [{
    For every GEMM that fp8-classify's analysis sends to FP8: each operand is
    quantized (E4M3, or E5M2 for gradients under the hybrid format) with a
    per-tensor scale, and the GEMM becomes an `fp8.scaled_matmul` that
    accumulates in f32 and returns the original result type.

    - `scaling=delayed`: each quantized tensor owns an amax history and a
      scale, kept in public mutable `ml_program.global`s named
      `@fp8.<function>.<tensor>.amax_history` / `.scale`, where `<tensor>` is
      `arg<i>` for function arguments and `gemm<i>.lhs|rhs` otherwise (the
      i-th GEMM of the function in walk order). The cast uses the stored
      scale and measures the amax in the same pass; the update then follows
      Transformer Engine: record the amax in row 0, compute the new scale from
      the history, roll the history.
    - `state=arguments` threads the same state through the function instead:
      one extra argument (state in) and one extra result (state out) per
      global, in that order, each named by an `fp8.state` attribute. The
      function must not be called from the module and the GEMM operands must
      be in its body.
    - `scaling=current`: amax of the tensor itself, then the cast; no state.
    - `granularity=row|block|mx`: one scale per block of each operand, in
      its own layout (`fp8.block_amax`, `fp8.compute_block_scales`, a
      block-scaled `fp8.quantize` and `fp8.scaled_matmul`): rows along K
      (torchao rowwise), 1x128 tiles along K for activations and gradients
      and 128x128 blocks for weights (DeepSeek-V3, TE Float8BlockScaling),
      or 32 elements along K with E8M0 scales (OCP MXFP8). Current scaling,
      E4M3 unless `format` says otherwise, power-of-two scales for row and
      block unless `exact-scales`. A tensor used with K along another
      dimension (the backward GEMMs) is quantized again from high precision
      with blocks along that K, never transposed from the forward copy.
      GEMMs with dynamic sizes stay in high precision.

    Data parallelism: a function written per rank whose arguments carry
    `fp8.sharded = @grid` (this rank's slice along the first dimension, over
    every axis of that `shard.grid`) has every amax of a tensor that differs
    between ranks reduced with `shard.all_reduce` (MAX) over the grid before
    a scale comes from it, so every rank quantizes with the same scale.
    Under delayed scaling the updates of the function body's tensors share
    one collective at the end of the body (their amaxes concatenated,
    reduced, split), as Transformer Engine does; current scaling reduces
    each tensor's amax before its cast. Weights and anything else the same
    on every rank need none. An amax under a conditional or a loop without
    constant bounds is an error (ranks could disagree on the collectives).
    Per-block scales follow which dimensions are split (the batch, through
    linalg maps, reshapes and element-wise ops): blocks that tile each
    rank's chunk are the single process's blocks and need nothing; rows
    along a split K (a weight gradient under granularity=row) have their
    amaxes reduced; blocks that would straddle ranks, or a split the
    analysis cannot follow, are errors.

    Constant weights are always scaled from their own amax and fold to FP8
    constants. A tensor feeding several GEMMs is quantized once. A GEMM
    accumulating into a live tensor (C += A B) becomes the scaled product in
    f32 plus C, rounded once. The module records the recipe as `fp8.recipe`.

    The rest of the program is left as it was: the pass folds only the ops it
    created and erases only what the replaced GEMMs alone used (their zero
    fills, broadcast or transposed weight copies).
  }];
  let options = !listconcat(FP8PolicyOptions, FP8RecipeOptions, [
    Option<"state", "state", "std::string", /*default=*/"\"globals\"",
           "Delayed-scaling state: globals (ml_program) | arguments (extra "
           "function arguments and results)">,
    Option<"attentionScales", "attention-scales", "std::string",
           /*default=*/"\"token\"",
           "fp8-attention's scales: token (query and key one per token, the "
           "value a delayed one: causal) | head (query, key and value one "
           "per batch and head from their own amax: current scaling, as "
           "TE's fp8_dpa; a later token moves earlier outputs)">,
  ]);
  let dependentDialects = [
    "::mlir::fp8::FP8Dialect",
    "::mlir::arith::ArithDialect",
    "::mlir::ml_program::MLProgramDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def FP8TuneVariants : Pass<"fp8-tune-variants", "ModuleOp"> {
  let summary = "Make each FP8 candidate GEMM's precision a run-time choice";
  let description = [{
    What `fp8-tune` compiles once for all its trials. Every GEMM that the
    GEMM analysis sends to FP8 under the given policy and recipe (the same
    options as `fp8-pipeline`'s) becomes an `scf.index_switch` on element
    `i` of the module's choice vector, a public mutable
    `ml_program.global @fp8.tune.choice : tensor<Nxi32>`, where `i` numbers
    the candidates of the module in walk order and `N` is their count:

    - 1 (the initial value): the GEMM with `fp8.precision = "fp8"`, which
      `fp8-pipeline` quantizes under the pipeline's recipe;
    - 2 + k: the GEMM with `fp8.precision = "fp8"` and the k-th of
      `alternatives` as its own `fp8.recipe`, where that recipe quantizes
      this GEMM differently from the pipeline's (E4M3 gradients change
      nothing for a GEMM without a gradient operand; no finer granularity
      applies to dynamic sizes): otherwise the case is left out;
    - anything else (0 by convention): the GEMM with
      `fp8.precision = "high"`.

    A runner then chooses each GEMM's precision and recipe per call by
    writing the vector. GEMMs that are not candidates (and those already
    marked `fp8.precision = "high"`) are left as they were.

    Alternatives: `row`, `block` and `mx` are the complete recipes at that
    granularity (current scaling, E4M3, power-of-two scales for rows and
    blocks as TE and torchao use them, E8M0 for MX); `e4m3` and `current`
    are the pipeline's recipe with E4M3 gradients or current scaling. One
    equal to the pipeline's recipe is an error.

    ```mlir
    %y = linalg.matmul ins(%x, %w : ...) outs(%z : ...) -> tensor<32x16xf32>
    // becomes, with alternatives=row
    %choices = ml_program.global_load @fp8.tune.choice : tensor<1xi32>
    %choice = tensor.extract %choices[%c0] : tensor<1xi32>
    %index = arith.index_cast %choice : i32 to index
    %y = scf.index_switch %index -> tensor<32x16xf32>
    case 1 {
      %a = linalg.matmul {fp8.precision = "fp8"} ins(%x, %w : ...) ...
      scf.yield %a : tensor<32x16xf32>
    }
    case 2 {
      %b = linalg.matmul {fp8.precision = "fp8", fp8.recipe = #fp8.recipe<
          format = e4m3, scaling = current, power_of_two = true,
          granularity = row>} ins(%x, %w : ...) ...
      scf.yield %b : tensor<32x16xf32>
    }
    default {
      %c = linalg.matmul {fp8.precision = "high"} ins(%x, %w : ...) ...
      scf.yield %c : tensor<32x16xf32>
    }
    ```

    The pass fails when no GEMM is a candidate (there is nothing to tune),
    on an unknown or redundant alternative, and when the module already has
    a `@fp8.tune.choice`.
  }];
  let options = !listconcat(FP8PolicyOptions, FP8RecipeOptions, [
    ListOption<"alternatives", "alternatives", "std::string",
               "Other ways into FP8 to offer each candidate: row | block | mx "
               "(TE's and torchao's recipes at that granularity), e4m3 (the "
               "pipeline's recipe with E4M3 gradients), current (the "
               "pipeline's recipe with current scaling)">,
  ]);
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::ml_program::MLProgramDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// Lowering support
//===----------------------------------------------------------------------===//

def FP8ExpandFloat8 : Pass<"fp8-expand-float8", "ModuleOp"> {
  let summary = "Expand FP8 casts into integer operations and FP8 types to i8";
  let description = [{
    Removes `f8E4M3FN` and `f8E5M2` from a module so that targets without
    FP8 support (LLVM on a CPU) can run it:

    - `arith.truncf` from f32, f16 or bf16 to FP8 becomes integer operations
      on the f32 encoding (round to nearest even once; overflow, Inf and NaN
      as `arith.truncf` defines them, i.e. LLVM APFloat), bit-exact to the
      numerics library;
    - `arith.extf` from FP8 becomes integer operations (exact);
    - FP8 values become i8 holding their encoding: tensor, vector and memref
      element types, function signatures, the bodies of structured ops
      (named ones are generalized first), constants and globals.

    Saturating quantization is not a different cast: `convert-fp8-to-linalg`
    clamps to the finite range and canonicalizes NaN before an ordinary
    `arith.truncf`, which this pass then expands.

    Scalars, vectors and statically shaped tensors are expanded; ops that
    compute on FP8 values (other than the casts) are reported as errors.

    ```mlir
    %q = arith.truncf %x : f32 to f8E4M3FN
    // becomes, among others:
    %bits = arith.bitcast %x : f32 to i32
    %abs = arith.andi %bits, %c2147483647_i32 : i32
    ...
    %q = arith.trunci %code : i32 to i8
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FP8Optimize : Pass<"fp8-optimize"> {
  let summary = "Exact clean-ups of FP8 IR: fused cast+transpose, scaled GEMMs";
  let description = [{
    Rewrites that keep every value bit-identical, for IR from fp8-quantize or
    from elsewhere:

    - a transpose of a quantized matrix, or a second quantization of its
      transpose with the same scale, becomes one `fp8.cast_transpose` (the
      input is read once and both layouts are written, as Hopper's backward
      GEMMs need);
    - a contraction of two `fp8.dequantize`d tensors (pre-quantized weights
      imported as FP8 plus dequantize) accumulating from zero becomes an
      `fp8.scaled_matmul` on the FP8 operands with their `scale_inv`s. This
      one is not bit-identical: the products are formed from the FP8 values
      and accumulated in f32 instead of rounding each dequantized operand to
      the wide type first, which is at least as accurate.
  }];
  let dependentDialects = ["::mlir::fp8::FP8Dialect"];
}

def FP8FuseAttention : Pass<"fp8-fuse-attention"> {
  let summary = "Replace attention written op by op with fp8.attention";
  let description = [{
    Finds `P V` where `P = softmax(scale * Q K^T [causal -inf mask])` is
    written out as exporters do (fp8-gen's named and generic forms): Q K^T
    as a batched contraction from zero with K as `[b, n, k]`
    (`linalg.batch_matmul` with transposing indexing maps or a
    `linalg.generic`), an optional rounding of the scores, an elementwise
    generic that widens them to f32, multiplies by a constant (or divides by
    a power of two) and optionally selects -inf where `j > i`, the softmax
    over the last axis as a max from -inf, `sum(exp(s - max))` and
    `exp(s - max) / sum` (optionally rounded), and `P V` as a batched
    contraction from zero (optionally rounded). The chain becomes one
    `fp8.attention` on `[1, b, s, d]` views of Q, K and V (the reshaped
    heads stay in the batch dimension; K/V heads the graph repeated for GQA
    are read unrepeated). Attention written one op per step (TOSA's import)
    and masks are matched too (docs/attention.md).

    In a training step P is also read by the backward written out:
    `dV = P^T dO`, `dP = dO V^T`, `D = rowsum(P dP)`, `dS = P (dP - D)`
    times the forward's scale, `dQ = dS K`, `dK = dS^T Q` (each
    contraction optionally rounded, transposes by indexing maps or by
    `linalg.transpose`). Then the forward keeps its log-sum-exp and the
    backward becomes one `fp8.attention_grad`, so no `sq x sk` tensor is
    saved or computed.

    The match is strict: a softmax over another axis, a score modifier
    other than the scale, the causal mask and a mask tensor, or scores and
    probabilities with other users leave the graph as written; `remarks`
    says which attention was fused and why the others were not.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for each attention found: fused, or the reason not">,
  ];
  let dependentDialects = ["::mlir::fp8::FP8Dialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8DecomposeAttention : Pass<"fp8-decompose-attention"> {
  let summary = "Rewrite fp8.attention and fp8.attention_grad as the math "
                "they mean, op by op";
  let description = [{
    Replaces each `fp8.attention` by its documented semantics on whole
    tensors: `S = Q K^T` as a contraction generic (f32 products summed in
    f32, K/V head `h / (hq / hkv)` by indexing map), scale, the mask (added,
    or `-inf` where a boolean mask is false), the causal mask from
    `linalg.index` comparisons, the row max from `-inf`, `E = exp(S - max)`,
    `l = sum E`, `O = E V` (f32), `output = round(O / l)` and
    `lse = max + log(l)` (`-inf` for a fully masked row, whose output is
    NaN). The `sq x sk` scores are materialized: this is the GPU route's
    lowering of the attentions no flash kernel takes (an op that
    `convert-fp8-attention-to-wgmma` named a kernel for, `fp8.wgmma_kernel`,
    is left alone), and a CPU reference for the flash lowering.

    Each `fp8.attention_grad` becomes its documented backward, everything
    in f32: the same masked, scaled `S`, `P = exp(S - lse)` (the forward's
    lse: no row max or sum again), `dP = dO V^T`, `D = rowsum(dO * O)`, `dS = P * (dP - D)`,
    `dQ = round(scale * dS K)`, and `scale * dS^T Q` and `P^T dO` per query
    head, summed in f32 over the query heads of each key/value head before
    the one rounding of `dK` and `dV`. With a constant head group K and V
    are repeated to the query heads, as for the forward.

    `round-probabilities` (what `fp8-lower-to-gpu` uses): for bf16 / f16
    attention with a static head group, `E` is rounded to the element type
    where it is computed, `l` sums the rounded values and `O = E V` takes
    the rounded `E` and V as they are (products and sums in f32), as
    FlashAttention's P V GEMM does: both contractions on the 16-bit GEMM
    kernel and half the bytes of `E`, at a relative error of the element
    type's half ulp per weight (what the written bf16 graph's rounding of
    P costs too). Without it, `E` stays f32 (the op's exact semantics).
    The option does not apply to `fp8.attention_grad`, whose probabilities
    stay f32.
  }];
  let options = [
    Option<"roundProbabilities", "round-probabilities", "bool",
           /*default=*/"false",
           "Round exp(S - max) to the element type (bf16 / f16) before the "
           "row sum and E V">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_TD
