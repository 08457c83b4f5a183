//===- Passes.td - Passes of the fp8 pipelines -------------*- tablegen -*-===//

#ifndef FP8_PIPELINES_PASSES_TD
#define FP8_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8ImportTosa : Pass<"fp8-import-tosa", "ModuleOp"> {
  let summary = "Bring TOSA graphs to linalg on tensors, if there are any";
  let description = [{
    The front end of `fp8-pipeline`: when the module holds TOSA ops, runs
    upstream's TOSA to linalg / arith / tensor conversions (the sequence that
    converts real exports completely in MLIR 22, whose stock
    `tosa-to-linalg-pipeline` rejects `tosa.cast` i64 -> f32), then
    canonicalize and CSE. The conversions to linalg are partial
    (`fp8-tosa-to-linalg-named`, `fp8-tosa-to-linalg`): a TOSA op none of
    them converts (`tosa.custom`) is left as it was and the rest of the
    graph is imported around it. On a module without TOSA it does nothing,
    so linalg input pays nothing for it.

    With `complete` (the lowerings, which nothing after converts TOSA), a
    TOSA op the import leaves is a located error naming it, where
    bufferization would only say "op was not bufferized".
  }];
  let options = [
    Option<"complete", "complete", "bool", /*default=*/"false",
           "A TOSA op the import cannot convert is an error">,
  ];
}

def FP8TosaToLinalgNamed
    : InterfacePass<"fp8-tosa-to-linalg-named", "::mlir::FunctionOpInterface"> {
  let summary = "Upstream's tosa-to-linalg-named, leaving what it cannot "
                "convert";
  let description = [{
    Part of `fp8-import-tosa`. Upstream's named-op patterns (convolutions,
    pooling, `tosa.matmul`, `tosa.transpose`) under a partial conversion:
    each op they convert is converted; one they cannot (an unsupported type,
    a shape no pattern takes) is left exactly as it was, where upstream's
    `tosa-to-linalg-named` fails the whole module.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8TosaToLinalg
    : InterfacePass<"fp8-tosa-to-linalg", "::mlir::FunctionOpInterface"> {
  let summary = "Upstream's tosa-to-linalg, leaving what it cannot convert";
  let description = [{
    Part of `fp8-import-tosa`. Upstream's TOSA to linalg patterns
    (element-wise ops, reductions, casts, gathers, ...) under a partial
    conversion: every TOSA op they convert is converted, and one they
    cannot is left exactly as it was (DESIGN.md decision 8). A graph with a
    foreign op (`tosa.custom`, which nothing lowers, as a paged-attention
    export fetches its KV pages) is imported around it, where upstream's
    `tosa-to-linalg` fails the whole module on it ("failed to legalize
    operation"). The ops upstream leaves to later passes (constants,
    control flow, reshapes, slices, concatenations, pads, apply_scale) are
    left to them here too.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::index::IndexDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8ReshapeDynamicExpands : Pass<"fp8-reshape-dynamic-expands"> {
  let summary = "Turn expand_shapes that split one dimension into several "
                "dynamic ones into tensor.reshape";
  let description = [{
    Part of `fp8-lower-to-cpu` and `fp8-lower-to-gpu`, before
    bufferization (on the GPU path again after the element-wise fusion,
    which makes new expand_shapes). A `tensor.expand_shape` with two or more dynamic sizes in one reassociation group (`[?, 32]` to
    `[?, ?, 32]`: a batch and a sequence, both dynamic) makes upstream
    `expand-strided-metadata` crash in MLIR 22 (llvm#186830: it builds a
    `memref.reinterpret_cast` from a null static size). The same reshape as
    `tensor.reshape` with its output shape as a tensor lowers through
    `memref.reshape`, which needs no strided-metadata expansion. Other
    expand_shapes are left alone.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def FP8DecomposeAggregatedOps : Pass<"fp8-decompose-aggregated-ops"> {
  let summary = "Decompose linalg.softmax and every other aggregated linalg "
                "op into the structured ops it stands for";
  let description = [{
    Part of `fp8-lower-to-cpu` and `fp8-lower-to-gpu`, before
    bufferization. `linalg.softmax` (a Stable Diffusion export uses the
    named op for its attention) is not a structured op: neither
    `convert-linalg-to-loops` nor the GPU path's parallel loops take it,
    and it was left after the lowering. Every op with upstream's
    `AggregatedOpInterface` is replaced by its `decomposeOperation`: a
    softmax by a max reduction, the exponentials of the shifted input,
    their sum and the division, each a `linalg.generic` that both
    lowerings take. An op whose decomposition fails is left (the
    lowering's check then names it).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8DefineExternGlobals : Pass<"fp8-define-extern-globals", "ModuleOp"> {
  let summary = "Give ml_program globals declared #ml_program.extern storage "
                "that the caller fills";
  let description = [{
    Part of `fp8-lower-to-cpu`, before bufferization. A global whose value is
    `#ml_program.extern` (weights that `fp8-gen --weights=globals` leaves to
    the caller) becomes a public, mutable global without an initial value
    (`unit`): exported, uninitialized storage that the program's user writes
    before the first call, as `fp8-run` does; its `global_load_const`s
    become `global_load`s. Upstream One-Shot Bufferize would copy the extern
    attribute into a `memref.global`, which fails to verify (MLIR 22). Extern globals of other than a statically shaped tensor
    type are left alone; bufferization reports them.
  }];
}

def FP8CopyStoredBuffers : Pass<"fp8-copy-stored-buffers", "ModuleOp"> {
  let summary = "Give ml_program.global_store a fresh tensor when its value "
                "may be a read-only buffer";
  let description = [{
    Part of `fp8-lower-to-cpu`, before bufferization. MLIR 22's bufferization
    of `ml_program.global_store` declares that the op writes its operand and
    does not read it, so when the operand's buffer is read-only (a function
    argument marked `bufferization.writable = false`, as fp8-run and
    fp8-compile mark every input, or another global's `global_load`) One-Shot
    Bufferize gives the store a new, uninitialized buffer instead of the
    value: the global silently receives garbage. Whether a value's buffer
    is read-only is only known to bufferization (an identity linalg op is
    folded away, an `scf.if` may yield an argument, a callee may return
    one), so this pass, run right before One-Shot Bufferize, stores a copy
    of every value (`bufferization.alloc_tensor() copy(%v)`). The cost is
    one copy of each stored global per store (scales and amax histories;
    weights kept in globals by an optimizer step).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def FP8TileParallelLoopsForGPU
    : Pass<"fp8-tile-parallel-loops-for-gpu", "::mlir::func::FuncOp"> {
  let summary = "Map each outermost scf.parallel onto a grid of full blocks";
  let description = [{
    Part of `fp8-lower-to-gpu`, before `convert-parallel-loops-to-gpu`.
    Every outermost `scf.parallel` without reductions (what
    `convert-linalg-to-parallel-loops` makes of a linalg op: its parallel
    dimensions; reductions stay sequential loops inside, untouched) becomes
    a loop over blocks holding a loop over threads, with the GPU mapping
    set; every parallel dimension is spread over the grid, none left
    sequential in a thread.

    The iteration space is viewed as rows (every dimension but the
    innermost, collapsed) of columns (the innermost). A block is `threads`
    threads: a row of up to `threads` adjacent columns on thread x (a warp
    multiple, the blocks of a row about even: 4096 columns are 16 blocks
    of 256), and when rows are shorter, as many rows as fit on thread y
    (rows of 64: 64 x 4 threads; rows of 100: 100 x 2), so that adjacent
    threads walk adjacent columns and, row after row, adjacent elements of
    a dense buffer. The tiles, numbered row-major, go on grid x (up to
    2^31 - 1), the rest on grid y and then z (65,535 each), and what even
    that does not hold in a sequential loop around the block; the tile's
    row is delinearized over the outer trip counts (`arith.divui` /
    `arith.remui`, by constants when the sizes are static). A thread past
    the last row or column (a short last tile; the grid's last blocks)
    does nothing (an `scf.if`); statically exact tiles have no guard.

    Dynamic sizes are computed before the loop: the block's shape (up to
    `threads` columns, `threads` / columns rows), the grid on x, y and z
    sized at run time, and a sequential loop of, in practice, one trip
    (the grid's bound cannot be proven), every thread guarded. A size of
    0 is a grid of 0 blocks, which the runtime does not launch.
    Upstream's `gpu-map-parallel-loops` maps dimensions one to one,
    outermost first: a rank-3 op's threads on z (at most 64 per block),
    the dimensions past three sequential.
  }];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"256",
           "Threads of a block (1 to 1024)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect"];
}

def FP8SplitReductionsForGPU : Pass<"fp8-split-reductions-for-gpu"> {
  let summary = "Reductions as parallel partial reductions and short finals, "
                "every loop in a kernel";
  let description = [{
    Part of `fp8-lower-to-gpu`, on tensors before bufferization. A linalg op
    whose every loop is a reduction into rank-0 results (a loss, a sum over
    a whole tensor) gives `convert-linalg-to-parallel-loops` nothing to put
    on threads: it would run on one CPU thread in the host code. Each one
    whose combiner has a neutral element (`arith.addf`, `maxnumf`,
    `minimumf`, ...) becomes a partial reduction and a final one: the first
    keeps one loop parallel (the one the first input's innermost dimension
    walks, so that adjacent threads read adjacent elements; the longest when
    that one is statically shorter than a warp) and reduces everything else
    into a vector of partial results initialized with the neutral element.
    A rank-1 reduction over identity-indexed inputs is first viewed as
    [K / r, r] with r the largest power of two up to 1024 that divides K;
    when K is dynamic or has no such factor (or the body reads the index),
    the inputs are padded with zeros to a multiple of r = 256 and viewed as
    [ceil(K / r), r], and a padding element leaves its lane's accumulator
    unchanged (a select on i * r + j < K; the index the body reads is that
    position). More than 256 partials (static, with a power-of-two factor)
    are reduced once more the same way; the rest into the original init
    with the combiner, by an op with a unit parallel loop in front (its
    init viewed as [1]): a one-thread kernel. A full reduction that cannot
    be split (no neutral element, several results, at most 256 elements)
    runs whole in such an op.

    A reduction along rows (parallel loops and one reduction loop that
    every input indexing it walks as its innermost dimension: softmax's
    max and sum, a norm's sum of squares), which would run one thread per
    row with adjacent threads a row apart, is split likewise: each row of
    static length K (at least 256) viewed as [K / r, r] with r = 32 lanes
    (128 when there are fewer than 4096 rows), the partials [rows, r]
    reduced over K / r with the r lanes reading adjacent elements, then
    each row's r partials into the original init. A body that uses
    `linalg.index`, an input walking the row in another dimension, or a
    shorter row stays.

    Last, every op on tensors gets its parallel loops outermost (each kind
    in its order; `linalg.interchange`): `convert-linalg-to-parallel-loops`
    nests loops as they come, and a reduction loop outside a parallel one
    (a column sum, a weight gradient's sum over tokens) would stay in the
    host code, launching a kernel per iteration.

    Only the order of combination changes: max and min are exact, sums
    round differently.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8CopiesToGPU : Pass<"fp8-copies-to-gpu", "ModuleOp"> {
  let summary = "Buffer copies of the host code as GPU copies or kernels";
  let description = [{
    Part of `fp8-lower-to-gpu`, after bufferization and before
    `convert-linalg-to-parallel-loops`. There every host buffer is CUDA
    managed memory that the kernels mostly touched last, so a
    `memref.copy` lowered as a host `memcpy` would migrate both buffers'
    pages to the host and back (bufferization copies whole activations;
    the delayed-scaling state is copied at every step). Each
    `memref.copy` outside kernels becomes instead, when both sides are
    dense (identity layout), a `gpu.memcpy` on a stream of its own, waited
    for at once (`mgpuMemcpy`: the driver's copy, on the device where the
    pages are), and otherwise, when it has a dimension, a `linalg.copy`
    that the following passes map onto a kernel. A strided copy of a
    single element stays on the host. First, a copy into a fresh buffer
    that nothing else uses but the next op, a copy out of it (how
    bufferization stores a global: the state's history and scale), becomes
    one copy, and the buffer goes.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def FP8MergeGPUModules : Pass<"fp8-merge-gpu-modules", "ModuleOp"> {
  let summary = "The kernels gpu-kernel-outlining made, in one gpu.module";
  let description = [{
    Part of `fp8-lower-to-gpu`, after `gpu-kernel-outlining` and before
    `nvvm-attach-target`. Outlining puts every kernel in a gpu.module of
    its own; each becomes a binary of its own, serialized by its own LLVM
    target machine at compile time and loaded (PTX JIT-compiled by the
    driver) at start-up: in a training step, well over a hundred. This
    pass moves every kernel of the modules that hold nothing but
    `gpu.func` kernels and have no target yet (what outlining makes; the
    project's own kernel modules keep theirs) into the first such module,
    renaming a kernel whose name is taken (`_1`, `_2`, ...) and updating
    each `gpu.launch_func`, and erases the emptied modules. Kernels that
    differ only in their names and locations (printed in generic form under
    one name) become one, the first: a model's layers launch the same
    kernels (32 Llama blocks: 1190 kernels before, 26 after), each a PTX
    function the back end compiles and the driver loads.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FP8ExpandMathForGPU : Pass<"fp8-expand-math-for-gpu"> {
  let summary = "Math functions as arithmetic, so that kernels need no "
                "libdevice";
  let description = [{
    Part of `fp8-lower-to-gpu`, on the kernels' gpu.modules before
    `convert-math-to-llvm` and `convert-gpu-to-nvvm`. The latter turns
    `math.exp`, `math.rsqrt`, `math.tanh`, ... into calls of libdevice
    (`__nv_expf`), which only a CUDA toolkit provides and which PTX taken by
    the driver cannot resolve. Upstream's expansions (`math-expand-ops`:
    tanh, sinh, ... through exp), polynomial approximations (exp, log,
    tanh, erf, sin, cos, atan, ...; bf16 and f16 through f32) replace them
    with arithmetic (log10 as log's approximation times log10(e), which
    upstream lacks); what is left becomes one PTX instruction each, as
    inline assembly (sqrt.rn; rsqrt as 1 / sqrt.rn; abs; floor, ceil,
    trunc and round-to-even as cvt.rmi/rpi/rzi/rni; f32 `arith.maxnumf` /
    `minnumf` as LLVM's maxnum / minnum, i.e. max.f32 / min.f32). The
    approximations are not libm's: wide values differ from the CPU run in
    the last bits.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def FP8ReadOnlyArguments : Pass<"fp8-read-only-arguments", "ModuleOp"> {
  let summary = "Never write the caller's tensors";
  let description = [{
    First step of `fp8-lower-to-gpu`: every tensor argument of a public
    function becomes `bufferization.writable = false` (One-Shot Bufferize
    then copies instead of updating an input in place), and the function is
    marked so that `fp8-stage-buffers-for-gpu` never copies anything back
    into the caller's memory, which may be read-only or shared.
  }];
}

def FP8StageBuffersForGPU : Pass<"fp8-stage-buffers-for-gpu", "ModuleOp"> {
  let summary = "Give kernels device-accessible arguments, and globals "
                "that live in managed memory";
  let description = [{
    Part of `fp8-lower-to-gpu`, after `convert-parallel-loops-to-gpu` and
    before `gpu-kernel-outlining`. In that pipeline every host allocation
    is CUDA managed memory (`finalize-memref-to-llvm{use-generic-functions}`
    and libfp8_gpu_runtime's `_mlir_memref_to_llvm_alloc`), which both the
    host and the kernels address; the caller's arguments and the module's
    globals (`memref.get_global`: constants, delayed-scaling state) are
    plain host memory, or may be (a caller can pass device or managed
    memory). Each global symbol that a `gpu.launch` or a launcher of the
    fp8 kernels (`fp8.gpu_launcher`) reads or writes (through views or not)
    lives in managed memory for the program's lifetime: an LLVM pointer
    global `@__fp8_device_<symbol>` (null at load) holds its copy, made
    from the global's value by the first function entry that finds it
    null; every `get_global` of the symbol, in every function (state
    accessors included), uses the copy, so delayed-scaling state stays on
    the device across calls and a checkpoint reads or sets it there; a
    global destructor (`llvm.mlir.global_dtors`) frees the copies when the
    program is unloaded. An argument that a kernel reads or writes, or that
    host code touches (any use, through views and addresses, other than by
    a kernel, a `gpu.launch_func`, a driver copy or memset, a tensor map's
    address, `memref.dim` or the return), is asked about at the entry
    (`fp8GpuMemoryKind`, the runtime library: the driver's pointer
    attributes; 0 host, 1 managed, 2 device) and used where it is when
    everything that uses it can address it there: managed memory always,
    device memory when no host code touches it, host memory when no kernel
    uses it. Otherwise it gets a managed copy, copied back only when the
    function may write it and `fp8-read-only-arguments` did not forbid
    that; device memory is copied by the driver (`gpu.memcpy`), never read
    by the host. An unranked argument read by a kernel, or a global in
    another layout or memory space, is a located error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def FP8InlineGPULaunchers : Pass<"fp8-inline-gpu-launchers", "ModuleOp"> {
  let summary = "Inline the fp8 kernels' one-block host launchers";
  let description = [{
    Part of `fp8-lower-to-gpu`, right after one-shot bufferization: every
    call of a one-block `fp8.gpu_launcher` function (what
    `convert-fp8-to-gpu-launches` makes) is replaced by its body, and the
    launchers nothing calls any more are erased. Buffer deallocation then
    sees the buffers a launcher allocates as the caller's own allocations,
    not as call results that may alias anything: their frees need no run-time
    alias check (a call of the dealloc helper over every buffer of the
    function, and a conditional free each), and `fp8-async-gpu-host` can
    tell which buffers only the GPU touches. Constant-size stack
    allocations (tensor maps) go to the caller's entry block.
  }];
}

def FP8AsyncGPUHost : Pass<"fp8-async-gpu-host", "ModuleOp"> {
  let summary = "Queue a host function's GPU work on one stream, waited "
                "for only where the host needs it";
  let description = [{
    Part of `fp8-lower-to-gpu`, after `convert-scf-to-cf` and before
    `gpu-to-llvm`. Without it every `gpu.launch_func` is synchronous: upstream
    lowers each to a stream of its own, created, launched on, synchronized
    and destroyed, so the GPU idles while the host issues the next kernel,
    and a whole block pays that well over a hundred times per call.

    First the launchers of the fp8 kernels (`fp8.gpu_launcher` functions,
    one block after `convert-scf-to-cf`) are inlined into their callers, so
    their launches join the caller's. Then, in each block of each host
    function, the GPU work becomes one chain of `!gpu.async.token`s (what
    upstream's `gpu-async-region` makes; gpu-to-llvm turns it into one
    stream): the first GPU op starts it (`gpu.wait async`), every
    `gpu.launch_func`, `gpu.memcpy` and `gpu.memset` is queued after the one
    before, and the `gpu.wait` pairs that made copies synchronous are
    dropped. A host store of a 16- or 32-bit value into a one-element
    buffer the function allocated (an amax zeroed for its kernel, a scale a
    kernel reads) becomes a `gpu.memset` on the chain: written by the
    device, the buffer's managed page does not move to the host and fault
    back at the next kernel. The host waits (`gpu.wait` on the chain) only
    before:
    - a block terminator (return, branch): results and state are complete
      when a function returns, and tokens never cross blocks;
    - an op that may read, write or free memory the queued work may use.
      Unlike `gpu-async-region`, which waits before any op with side
      effects, this does not count allocations, host stack memory
      (`llvm.alloca`, `memref.alloca`), host globals (`llvm.mlir.addressof`:
      the delayed-scaling state's pointer slots), a buffer allocated in the
      function that no queued op has been given (through views and pointer
      casts), and the runtime library's host-side calls (`fp8Gpu*`
      declarations: tensor-map encoding, the SM count, pointer queries;
      the buffers they are given count as used by the GPU from then on).
    Anything else (unknown calls, ops with regions or unknown effects) is
    waited for: the pass may only remove synchronization the program
    provably does not need.

    A buffer allocated in the block that only queued work touches (every
    use, through views, metadata and address arithmetic, in the block, is
    an operand of a launch, copy or memset, a tensor map's address, a
    one-element store that becomes a memset, or its one `memref.dealloc`)
    becomes stream-ordered device memory: `gpu.alloc async` and
    `gpu.dealloc async` on the chain (`mgpuMemAlloc` / `mgpuMemFree` with
    the stream: cuMemAllocAsync / cuMemFreeAsync in libfp8_gpu_runtime).
    Its free takes effect where the stream gets to it, so later allocations
    reuse its memory within the call, where a managed buffer's free must
    wait for the next host wait. Other frees of buffers the queued work may
    use move to the next wait.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FP8SplitDeallocs : Pass<"fp8-split-deallocs"> {
  let summary = "Free each fresh allocation with a bufferization.dealloc of "
                "its own";
  let description = [{
    Part of the buffer deallocation passes of `fp8-lower-to-cpu` and
    `fp8-lower-to-gpu`, between `ownership-based-buffer-deallocation` and
    `buffer-deallocation-simplification`. The former frees everything a
    block allocates with one `bufferization.dealloc` at its end, thousands
    of memrefs in a whole model; the latter compares each memref of a
    dealloc with every other for aliasing, quadratic: seconds. When every
    memref of a dealloc, and the buffer every retained value views, is
    memory of its own (an allocation or a function argument), each
    `memref.alloc` that no retained value views goes to a dealloc of its
    own, with its condition and nothing retained: distinct buffers never
    alias, and one no retained value views cannot change what the dealloc
    reports for them. A dealloc with anything that may be any buffer (a
    loop's or a select's result, a call's, a block argument) stays whole,
    for upstream's alias analysis.
  }];
}

def FP8FreeAfterLastUse : Pass<"fp8-free-after-last-use"> {
  let summary = "Free each buffer right after its last use, not at the end "
                "of its block";
  let description = [{
    Last step of the tensor-to-buffer passes of `fp8-lower-to-cpu` and
    `fp8-lower-to-gpu`. Ownership-based buffer deallocation frees what a
    block allocates at the block's end: in a whole model's one-block
    function every intermediate buffer lives until the function returns,
    and a call's peak memory is the sum of all of them. This pass moves
    each `memref.dealloc` of a `memref.alloc` of the same block right after
    the op of the block that holds the last use of the buffer's memory:
    through views (view-like ops, `extract_strided_metadata`'s base buffer)
    and inside nested regions (a loop that uses it). A use may only read or
    write the memory and be done with it when it returns (an op with read
    or write effects on it, `memref.dim`, a `gpu.launch_func`,
    `gpu.memcpy` or `gpu.memset` without a token or stream), with no
    result that may carry it on (a memref, tensor, pointer or async
    token); anything else (a call, a store of the buffer, its address
    taken as an integer, `bufferization.to_tensor`, asynchronous GPU work,
    a loop or branch that carries it, a terminator) leaves the free where
    it was.
  }];
}

def FP8SplitBlocksAtSCF : Pass<"fp8-split-blocks-at-scf"> {
  let summary = "End a function's block after each scf op, so that "
                "convert-scf-to-cf takes linear time";
  let description = [{
    Part of `fp8-lower-to-cpu` and `fp8-lower-to-gpu`, right before
    `convert-scf-to-cf`. Upstream lowers each `scf.if`, `scf.for`,
    `scf.while`, `scf.index_switch` and `scf.execute_region` by splitting
    its block at the op, which moves every op after it to a new block: in a
    whole model's one-block function (a thousand loop nests, or a thousand
    argument checks on the GPU host) that is quadratic, several seconds.
    This pass splits each block of a function body (not nested regions:
    scf bodies are single blocks) after every such op with a `cf.br` to the
    rest, from the last op up, so that each split, here and in
    `convert-scf-to-cf`, moves the few ops up to the next one. Semantics and
    dominance are unchanged (each new block has one predecessor, the one
    before it), and the blocks are those `convert-scf-to-cf` makes anyway,
    so later passes that work per block see the same blocks. Every
    function body is split (`func.func`, `gpu.func`, `llvm.func`); LLVM
    merges the straight-line ones.
  }];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
}

def FP8WidenAccumulation : Pass<"fp8-widen-accumulation"> {
  let summary = "Make bf16 and f16 contractions accumulate in f32 and round "
                "once";
  let description = [{
    Part of `fp8-lower-to-cpu` and `fp8-lower-to-gpu` (unless
    `accumulation=as-written`), on tensors before anything else: DESIGN.md
    decision 15. A `linalg` contraction (`isaContractionOpInterface`:
    `matmul` in any layout, `batch_matmul`, `batch_reduce_matmul`,
    `matvec`, contraction generics) or convolution
    (`isaConvolutionOpInterface`) whose operands and result are all bf16, or
    all f16, accumulates in that type as linalg defines it: every
    multiply-add is rounded to 8 (11) significant bits, so a long K loses
    every term below half an ulp of the running sum. cuBLAS, PyTorch,
    Transformer Engine and this project's Hopper wgmma kernels accumulate
    such GEMMs in f32 and round once.

    The op becomes that computation: the same op (a named op stays that
    named op, with its indexing maps) on the same bf16 / f16 operands into
    an f32 init, with the mixed-type body linalg's named ops have (each
    operand extended to f32, exact; the multiply-add in f32), then one
    rounding of the result to its type, nearest even with subnormals kept,
    as the GPU's `cvt.rn` rounds. The init is extended to f32 (a
    `linalg.fill` init becomes the same fill in f32, so that a zero-filled
    GEMM stays one). A product of two bf16 (two f16) values is exact in
    f32, so the only roundings are the f32 additions and the last one.
    The operands are read as they are, not copied into f32 tensors: the
    GEMM moves 16-bit data, and fp8-tile-and-vectorize-for-cpu's register
    tiles extend each vector they load (f32 copies made a 512^3 GEMM 4.5x
    slower, bench/bf16-gemm.sh).

    Left alone: ops whose body is anything but `yield(acc + a * b)` on the
    block arguments, mixed types (bf16 operands into f32 already
    accumulate in f32), f32 and FP8 ops, ops on buffers, and ops annotated
    for a wgmma kernel (`fp8.wgmma_kernel`), which accumulate in f32
    already.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8PackContractionsForCPU
    : Pass<"fp8-pack-contractions-for-cpu", "::mlir::func::FuncOp"> {
  let summary = "Give contractions a B operand whose rows run along N";
  let description = [{
    Part of `fp8-lower-to-cpu`, on tensors before bufferization. A
    contraction whose B operand is laid out with K innermost (weights
    `[N, K]`, `matmul_transpose_b`, `fp8.scaled_matmul {transpose_rhs}`,
    attention's `Q K^T`) reads B with a stride along N, which
    `fp8-tile-and-vectorize-for-cpu` cannot turn into vector loads. Such B
    is copied once into `[.., K, N]` (a `linalg.generic` transposing copy)
    and the contraction reads the copy: O(N K) data movement for an
    O(M N K) contraction. A producer computed element by element (the FP8
    decode of `fp8.scaled_matmul`) is fused into the copy, so that the
    operand is still written once.

    A contraction whose B (in `[.., K, N]`) is widened element by element
    without a transposition (the FP8 decode: i8 codes in, f32 out) decodes
    it panel by panel instead of into a whole f32 copy, GotoBLAS-style:
    `scf.forall` over 512 x 256 blocks of M x N (the threads), `scf.for` over
    256-deep K panels in order, and in each panel the decode of its
    256 x 256 panel of B (and of its 512 x 256 panel of A when A is decoded
    too) into tiles that stay in cache, then the contraction of the panel
    (upstream `scf::tileConsumerAndFuseProducersUsingSCF`, twice). The
    accumulator's fill moves into the blocks, and an element-wise epilogue
    that alone reads the result (the scaling) writes into its buffer. A
    large f32 contraction (2^27 multiply-adds or more, static sizes) gets
    the same blocks with a copy of each B panel (contiguous rows).
    Contractions inside loops are left alone. `fp8-tile-and-vectorize-for-cpu`
    then tiles each panel's contraction for registers.

    Values do not change: every output still sums its products in K order,
    one rounding per step.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FP8TileAndVectorizeForCPU
    : Pass<"fp8-tile-and-vectorize-for-cpu", "::mlir::func::FuncOp"> {
  let summary = "Tile linalg ops on buffers for threads, caches and "
                "registers, and vectorize them";
  let description = [{
    Part of `fp8-lower-to-cpu`, after bufferization. Upstream transforms
    only: `linalg::tileLinalgOp`, `linalg::vectorize`, hoisting of
    loop-invariant vector transfers and the vector dialect's lowerings.

    A buffer of static size allocated and freed in each iteration of an
    `scf.for` (the panels above), used by linalg ops only, is allocated once
    around the loop.

    Contractions (one reduction dimension, a multiply-add body: matmuls,
    batch matmuls, the decoded FP8 GEMM of `fp8.scaled_matmul`) get three
    levels of tiles: `scf.parallel` over `cache-tile` blocks of M and N (the
    threads' work, when `threads` is set; clamped to static sizes),
    `scf.for` over K blocks, and a `register-tile` M x N accumulator that
    stays in vector registers while the innermost loop walks K, 8 steps per
    `vector.contract`, one outer product (FMA per row) per step. Each output element is
    still accumulated in K order, one rounding per step: FP8 products are
    exact in f32, so the fused multiply-add gives the bits the scalar loops
    give.

    Other linalg ops whose operands are contiguous in the innermost loop
    (element-wise ops, row reductions, fills, broadcasts) are vectorized
    along it, 16 lanes at a time with masks at the ends, with outer loops
    in `scf.parallel` when they are large. Reductions along the innermost
    loop stay in order (ordered vector reductions); reductions of a
    loop-invariant value stay scalar (MLIR 22's vectorizer counts them once
    per vector). Transposing copies run as scalar 32 x 32 blocks. Anything
    the vectorizer declines (gathers) is left for `convert-linalg-to-loops`.
    docs/cpu-codegen.md has the schedule, the numbers and why FP8 bits do
    not change.
  }];
  let options = [
    Option<"threads", "threads", "bool", /*default=*/"true",
           "Outer tiles in scf.parallel loops (OpenMP threads in "
           "fp8-lower-to-cpu)">,
    ListOption<"cacheTile", "cache-tile", "int64_t",
               "Contraction blocks M,N,K (default 128,256,256)">,
    ListOption<"registerTile", "register-tile", "int64_t",
               "Contraction accumulator M,N in registers (default 8,32)">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def FP8LowerNestedModulesToCPU
    : Pass<"fp8-lower-nested-modules-to-cpu", "ModuleOp"> {
  let summary = "Run fp8-lower-to-cpu on every nested module, innermost first";
  let description = [{
    The first step of `fp8-lower-to-cpu`. Module passes act on the module
    they run on, but conversions reach into nested modules, so a function in
    a `module @m { ... }` would be half lowered. Each nested module is
    lowered completely, as its own unit (its globals, its functions), before
    the enclosing one.
  }];
  let options = [
    Option<"vectorize", "vectorize", "bool", /*default=*/"true",
           "As fp8-lower-to-cpu's option">,
    Option<"threads", "threads", "bool", /*default=*/"true",
           "As fp8-lower-to-cpu's option">,
    Option<"accumulation", "accumulation", "::mlir::fp8::Accumulation",
           /*default=*/"::mlir::fp8::Accumulation::F32",
           "As fp8-lower-to-cpu's option",
           "::mlir::fp8::accumulationValues()">,
  ];
}

def FP8LowerShardToMPI : Pass<"fp8-lower-shard-to-mpi", "ModuleOp"> {
  let summary = "Lower the collectives of a data-parallel program to MPI";
  let description = [{
    Part of `fp8-lower-to-cpu`, on tensors. A `shard.all_reduce` over every
    axis of its grid (data parallelism: each rank one device of the grid)
    becomes an in-place `mpi.allreduce` on a copy of its input over
    `MPI_COMM_WORLD`, whose size the launcher checks against the grid. The
    remaining shard ops go through upstream `convert-shard-to-mpi`, and the
    grids, now unused, are erased. Upstream would give the whole-grid
    reduction a communicator of its own from `MPI_Comm_split` on every call
    (a collective, and a handle never freed), and its OpenMPI lowering of
    that handle loads a pointer as an i32 (MLIR 22), so a reduction over part
    of the grid is refused here with an error rather than miscompiled.

    Sets the module's `MPI:Implementation` to `mpi` (DLTI) unless the module
    already names one: OpenMPI, as Debian's libopenmpi-dev, or MPICH.
  }];
  let options = [
    Option<"mpi", "mpi", "std::string", /*default=*/"\"OpenMPI\"",
           "MPI implementation whose ABI the program is compiled for: "
           "OpenMPI | MPICH">,
  ];
  let dependentDialects = [
    "::mlir::DLTIDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::mpi::MPIDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def FP8FixOpenMPISymbols : Pass<"fp8-fix-openmpi-symbols", "ModuleOp"> {
  let summary = "Name OpenMPI's predefined reduction ops as libmpi exports "
                "them";
  let description = [{
    Part of `fp8-lower-to-cpu`, after the LLVM conversions. MLIR 22's MPI to
    LLVM lowering for OpenMPI refers to the predefined reductions as
    `@ompi_mpi_max`, `@ompi_mpi_sum`, ...; OpenMPI's libmpi (4.x, Debian 12)
    exports them as `ompi_mpi_op_max`, `ompi_mpi_op_sum`, ..., so the
    program would not link. Renames those external globals and their uses.
  }];
}

def FP8MathToLibm : Pass<"fp8-math-to-libm", "ModuleOp"> {
  let summary = "Call libm for the math ops that LLVM has no intrinsic for";
  let description = [{
    Part of `fp8-lower-to-cpu` and of the host side of `fp8-lower-to-gpu`,
    before the LLVM conversions. `convert-math-to-llvm` lowers most math ops
    to LLVM intrinsics (which the backend turns into instructions or libm
    calls), but `math.erf` (exact GELU, in BERT, CLIP and torch exports
    generally), `math.erfc`, `math.cbrt`, `math.acosh`, `math.asinh` and
    `math.atanh` have none, and would be left behind. These become calls of
    libm's `erff`, `erf`, ... (upstream's math-to-libm patterns, applied to
    these ops only): f32 and f64 directly, f16 and bf16 through f32,
    vectors element by element. Other types are left alone (and
    refused by `fp8-check-llvm-lowering`).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::vector::VectorDialect"];
}

def FP8GpuModuleToBinary : Pass<"fp8-gpu-module-to-binary", "ModuleOp"> {
  let summary = "Upstream's gpu-module-to-binary, failing on every error it "
                "reports";
  let description = [{
    The serialization step of `fp8-lower-to-nvvm`, `fp8-lower-gemm-to-nvvm`
    and `fp8-lower-to-gpu`. Upstream's NVVM serializer reports some errors
    and carries on (in MLIR 22 a `toolkit` that is not a directory: "CUDA
    path: ... does not exist", then a cubin made by whichever `ptxas` is on
    the PATH, and exit status 0). This pass runs `gpu-module-to-binary` and
    fails when it failed or reported an error; the diagnostics are
    printed as upstream wrote them. The one exception is a toolkit without
    libdevice (`nvvm/libdevice/libdevice.10.bc`, absent from a bare `ptxas`
    install): upstream reports it as an error and goes on without it, which
    is right when no kernel calls a libdevice (`__nv_*`) function, so the
    report is dropped then; it fails the pass when a kernel does.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"isa\"",
           "isa | bin | fatbin (upstream's compilation target)">,
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit path">,
  ];
}

def FP8CheckLLVMLowering : Pass<"fp8-check-llvm-lowering", "ModuleOp"> {
  let summary = "Refuse a module that is not all LLVM dialect after the "
                "lowering";
  let description = [{
    Last pass of `fp8-lower-to-cpu` and `fp8-lower-to-gpu`. The dialect
    conversions to LLVM are partial: an op that nothing lowers stays, with
    `builtin.unrealized_conversion_cast`s around it, and the module only
    fails much later, in translation to LLVM IR, without saying what was
    missing. Every op must be of the LLVM or OpenMP dialect (or a
    `gpu.binary` or `gpu.launch_func`, which the GPU dialect's offloading
    translation handles, or a nested `builtin.module`); the first op that
    is not is an error at its location, naming it, and one
    `builtin.unrealized_conversion_cast` left between converted values is
    an error naming the types it failed to convert between.
  }];
}

def FP8OutlineLoopNests : Pass<"fp8-outline-loop-nests", "ModuleOp"> {
  let summary = "Move each loop nest into a function of its own, one of "
                "each";
  let description = [{
    Part of `fp8-lower-to-cpu`, before `convert-scf-to-openmp`. A whole
    model is one function with a loop nest per op, about fifty per layer.
    Translating each `omp.parallel` to LLVM IR (OpenMPIRBuilder's
    outlining with LLVM's CodeExtractor) scans the whole function it is
    in: for a one-function model that is quadratic, 86 of the 90 seconds of
    translating a 32-layer model. And LLVM compiles every layer's copy of
    the same nest.

    In the module's own functions (nested modules have their own run of
    the pipeline), each outermost loop nest becomes a call of a new private
    function with internal linkage, after its caller, that holds it: an
    `scf.parallel`, or an `scf.for` with no `scf.parallel` inside and at
    most one loop directly in its body. A loop around several nests (a
    layer's or a training step's, or one around parallel loops) stays,
    and the nests inside it are outlined. The values a nest uses from above
    are the function's arguments, except constants and what is computed
    from constants alone by ops without effects (lower-affine's bounds),
    which are recomputed in it: LLVM sees constant trip counts. The loop's
    results are the function's. A loop that returns a memref and allocates
    stack memory (`memref.alloca`) stays: the callee's return would free
    it. Functions that are the same but for their names (the layers of a
    model run the same nests on other buffers) are one. Nothing else
    changes.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // FP8_PIPELINES_PASSES_TD
