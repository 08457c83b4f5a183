//===- Passes.td - fp8 conversion passes -------------------*- tablegen -*-===//

#ifndef FP8_CONVERSION_PASSES_TD
#define FP8_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// FP8ToLinalg
//===----------------------------------------------------------------------===//

def ConvertFP8ToLinalg : Pass<"convert-fp8-to-linalg"> {
  let summary = "Lower the fp8 dialect to linalg, tensor, arith and math";
  let description = [{
    Rewrites every `fp8` op into target-independent ops on tensors, with the
    exact semantics of the op descriptions and folders:

    - `fp8.amax`: a `linalg.generic` reduction of `|x|` with `arith.maxnumf`
      (NaN ignored) from 0;
    - `fp8.compute_scale`: scalar `arith` with Transformer Engine's guards
      (amax 0 / Inf / NaN, infinite scale to FLT_MAX, power-of-two scales by
      masking the f32 encoding), the history reduced by a `linalg.generic`;
    - `fp8.record_amax`, `fp8.roll_history`: `tensor.extract` / `insert` /
      `extract_slice` / `insert_slice`;
    - `fp8.quantize`, `fp8.cast_transpose`: element-wise `linalg.generic`s
      that widen to f32, multiply by the scale and cast saturating: clamp to
      the finite range, NaN to the canonical positive NaN, then
      `arith.truncf` (equal to `cvt.rn.satfinite` bit for bit);
    - `fp8.dequantize`: widen, multiply, round to the result type;
    - `fp8.scaled_matmul`: a `linalg.generic` contraction accumulating
      `f32(lhs) * f32(rhs)` in f32 (transposes and a shared rank-2 rhs in its
      indexing maps), then the scales and the bias;
    - `fp8.attention`: the FlashAttention-2 forward algorithm, an
      `scf.forall` over (batch, query head, 64 query rows) around an `scf.for`
      over 64-key tiles that carries the running row max, the running sum and
      an f32 accumulator, with `linalg.generic`s on tile-sized tensors; causal
      tiles past the diagonal are never visited; no `sq x sk` tensor exists
      (docs/attention.md).

    Dynamic shapes are supported. FP8 element types remain; run
    `fp8-expand-float8` to lower them for a CPU. The module's `fp8.recipe`
    attribute is dropped: the lowered ops carry the recipe.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// FP8ToNVVM
//===----------------------------------------------------------------------===//

def ConvertFP8ToNVVM : Pass<"convert-fp8-to-nvvm", "ModuleOp"> {
  let summary = "Lower fp8 ops to GPU kernels for Hopper and a host launcher";
  let description = [{
    Every function that contains `fp8` ops (other than `fp8.scaled_matmul`)
    is rewritten into a host function on memrefs that launches one kernel per
    op, in program order, from a `gpu.module @fp8_kernels` with an NVVM
    target. Kernels are `llvm.func`s built from NVVM, LLVM, arith, math and
    scf ops, generic over the tensor sizes (passed as i64 arguments), so
    dynamic shapes work:

    - `fp8.quantize` (with its fused amax) and `fp8.amax`: a grid-stride
      loop over 16-element chunks with 16-byte loads and stores,
      `nvvm.convert.f32x2.to.f8x2` rn/satfinite, a per-thread NaN-ignoring
      max, five `nvvm.shfl.sync bfly` steps and an `atomicrmw umax` on the
      f32 bits (`atom.global.max.u32`); a scalar tail for odd sizes and
      unaligned buffers;
    - `fp8.cast_transpose`: 64x64 tiles, coalesced 16-byte row reads and
      writes, the transpose through shared memory;
    - `fp8.dequantize`: `nvvm.convert.f8x2.to.f16x2`, exact widening, the
      f32 multiply and one rounding to the result type;
    - `fp8.compute_scale`, `fp8.record_amax`, `fp8.roll_history`: tiny
      kernels that read their scalars from device memory (no host sync).

    Function arguments and results become memrefs (results are appended
    out-parameters); f32 scalars become `memref<f32>` in device memory.
    Unsupported ops or types are a located error. See docs/hopper-lowering.md.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "NVVM target chip">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "NVVM target features (PTX version)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ConvertFP8ToGPULaunches : Pass<"convert-fp8-to-gpu-launches", "ModuleOp"> {
  let summary = "Launch the fp8 ops of a whole program as the Hopper kernels";
  let description = [{
    For fp8-lower-to-gpu: every fp8 op (a fused block cast: block_amax,
    compute_block_scales and quantize together) is outlined into a private
    host function on memrefs, marked `fp8.gpu_launcher`, that launches the
    project's kernel for it (`gpu.module @fp8_kernels`, as
    convert-fp8-to-nvvm builds them; an `fp8.scaled_matmul` that
    convert-fp8-scaled-matmul-to-wgmma annotated: its wgmma kernel, with
    the tensor maps encoded and the SM count read through the GPU runtime
    library) and returns its results in buffers it allocates. The op is
    replaced, on tensors and before bufferization, by
    `bufferization.to_buffer` of its operands, a call, and
    `bufferization.to_tensor ... restrict` of the results; f32 scalars
    travel in `memref<f32>`. The caller's buffer deallocation frees the
    results.

    Scalars stay where the kernels are, so that the host never reads what
    a kernel wrote (a page migration of managed memory each time): a
    launcher's scalar result goes to the next launcher in its buffer, and
    becomes the 0-d tensor it is stored as (the next delayed-scaling
    scale); the element of a 0-d tensor (a scale loaded from its global)
    is passed as that tensor's buffer; one arith op on such elements and
    constants (the reciprocal of a scale for a GEMM) becomes a one-element
    `linalg.generic` at the point the elements are read, which the rest of
    fp8-lower-to-gpu maps onto a one-warp kernel. Bufferization gives
    `ml_program.global_load` the global's own buffer without ordering it
    against `global_store`, so an element is passed in place only to
    kernels that come before any store to its global; otherwise, and for
    any other scalar, the host stores it into a buffer of its own where it
    is defined.

    An op no kernel takes (an unsupported element type or block shape, a
    GEMM without a wgmma kernel) stays as it is and lowers with the rest of
    the program (convert-fp8-to-linalg): slower, never different.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "NVVM target chip">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "NVVM target features (PTX version)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def ConvertFP8AttentionToWGMMA
    : Pass<"convert-fp8-attention-to-wgmma", "ModuleOp"> {
  let summary = "Generate Hopper flash attention kernels for fp8.attention";
  let description = [{
    For every `fp8.attention` a kernel computes, builds an sm_90a
    FlashAttention forward kernel in `gpu.module @fp8_gemm_kernels` and
    names it in the op's `fp8.wgmma_kernel` attribute, with its launch
    shape in `fp8.wgmma_tile` ([BM, BN, threads, dynamic shared bytes]);
    AttentionKernelABI.h is the launch contract and
    `convert-fp8-to-gpu-launches` launches it.

    The kernel is warp-specialized like the GEMM: a producer warpgroup
    loads the query tile once and tiles of 128 keys and values through a
    TMA and mbarrier ring; two consumer warpgroups of 64 query rows each
    run `S = Q K^T` on wgmma, the online softmax in registers (f32, running
    max and sum per row, causal and length masks on the tiles that need
    them, tiles past a causal row's last key never loaded) and `O += P V`
    on wgmma with `P` in registers. 16-bit attention rounds P to the
    value's type (FlashAttention's P V); FP8 values get E4M3 P scaled by
    `probability_scale` in the op's tiles (`block_k` must be 128), with
    the value transposed by the host into keys permuted within each 16 so
    that the registers need no shuffle. GQA / MQA read the shared key and
    value head; sizes are run-time values.

    Kernels exist for query / key / value of one 16-bit type (D = 64 or
    128), or FP8 query and key (D = 128) with a 16-bit or FP8 value; an
    output in bf16, f16 or f32; an optional `lse`. An op with a mask
    operand, other head dimensions or types is left as it is (with
    `remarks`, a remark says why); `fp8-decompose-attention` then lowers
    it. See docs/attention.md.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "NVVM target chip">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "NVVM target features (PTX version)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "A remark on every attention: its kernel, or why it has none">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def ConvertFP8ScaledMatmulToWGMMA
    : Pass<"convert-fp8-scaled-matmul-to-wgmma", "ModuleOp"> {
  let summary = "Generate Hopper FP8 wgmma GEMM kernels for fp8.scaled_matmul";
  let description = [{
    For every `fp8.scaled_matmul`, builds an sm_90a GEMM kernel in
    `gpu.module @fp8_gemm_kernels` and names it in the op's
    `fp8.wgmma_kernel` attribute (GemmKernelABI.h is the launch contract).
    The kernel: TMA loads of 128-byte-swizzled FP8 tiles into a multi-stage
    mbarrier pipeline, a producer warpgroup (setmaxnreg 40) and BM/64
    consumer warpgroups (setmaxnreg 232) running `nvvm.wgmma.mma_async`
    m64nNk32 (e4m3/e5m2 in any mix, f32 accumulators), a persistent tile
    loop, and an epilogue that scales by `lhs_scale_inv * rhs_scale_inv`,
    adds the bias, converts, reduces the amax and stores with edge
    predication. Tiles follow the shape (64xN for M <= 64, 128x128, 128x256
    for large N without promotion).

    FP8 wgmma reads both operands K-major: an lhs in `[K, M]` or an rhs in
    `[K, N]` is replaced by the other result of its `fp8.cast_transpose`
    (a rank-2 `fp8.quantize` becomes one); otherwise the op gets a located
    error. K that is not a multiple of 16 gets `fp8.wgmma_pad_k`: the host
    copies the operands into zero-padded rows (TMA needs 16-byte pitches).

    With `whole-graph` (fp8-lower-to-gpu), the program's high-precision
    `linalg` contractions (one M, N and K dimension, any batch dimensions)
    get the same kernel structure with bf16 / f16 operands (m64nNk16) or
    f32 operands as tf32 (m64nNk8; `f32-contractions`: the 3xTF32 split by
    default). A contraction into anything but a zero fill is computed into
    a zero f32 result and added to its init by an elementwise op after it.
    See docs/hopper-gemm.md.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "NVVM target chip">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "NVVM target features (PTX version)">,
    Option<"promote", "promote", "bool", /*default=*/"false",
           "Promote the wgmma partial sums into a separate f32 accumulator "
           "every 4 wgmma (128 K), as DeepGEMM and CUTLASS do for accuracy">,
    Option<"tmaStore", "tma-store", "bool", /*default=*/"false",
           "Store the result through shared memory with TMA (when N is "
           "static and its rows are 16-byte multiples) instead of from the "
           "registers">,
    Option<"wholeGraph", "whole-graph", "bool", /*default=*/"false",
           "In a whole program (fp8-lower-to-gpu): an operand in the wrong "
           "orientation with no cast_transpose copy gets a transposed copy "
           "(linalg.transpose of its bytes, exact), and a block-scaled GEMM "
           "no kernel applies is left unannotated (it lowers with the rest "
           "of the program) instead of being an error; the program's "
           "high-precision contractions get wgmma kernels too">,
    Option<"f32Contractions", "f32-contractions", "std::string",
           /*default=*/"\"3xtf32\"",
           "With whole-graph, how f32 contractions run: 3xtf32 (each "
           "operand split into tf32 hi and lo terms, hi*hi + hi*lo + lo*hi "
           "over a tripled K: f32 accuracy on tensor cores), tf32 (the "
           "operands rounded to 10-bit mantissas, PyTorch's allow_tf32), or "
           "none (they stay for the rest of the program's lowering)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // FP8_CONVERSION_PASSES_TD
