//===- KernelABI.h - The FP8 Hopper kernels' launch contract ----*- C++ -*-===//
//
// What convert-fp8-to-nvvm generates and what a host that launches the
// kernels without MLIR (bench/gpu, fp8-run) must agree on: kernel names,
// parameter lists and launch geometry. Header-only, no MLIR dependency.
//
// Every kernel is a gpu.func on memrefs: convert-gpu-to-nvvm expands each
// memref into its descriptor, consecutive parameters of 8 bytes: allocated
// and aligned pointers (device addresses), offset, then the sizes and the
// strides (memref<f32> 3 parameters, memref<?xT> 5, memref<?x?xT> 7); an
// `index` is an i64. Tensors are passed as flat views (memref<?xT>, a
// tensor of any rank; FP8 and E8M0 as i8 bytes), scalars (scales, amaxes)
// as memref<f32> in device memory. The memrefs have identity layouts: the
// kernels read neither the offset nor the strides, so a host passes a
// sub-view as its own address in both pointers, offset 0.
//
// The per-tensor casts, 1-D grid-stride (elementwiseGridSize; n is the size
// of the first view):
//   quantize_<in>_<fp8>        (x, q, scale)
//   quantize_amax_<in>_<fp8>   (x, q, scale, amax)            amax must be 0
//   amax_<in>                  (x, amax)                      amax must be 0
//   dequantize_<fp8>_<out>     (q, y, scale_inv)
//   cast_transpose_<in>_<fp8>[_amax]
//                              (x, q, qt, scale, [amax,] rows, cols)
//                                  grid-stride over tiles (castTransposeGridSize)
//
// The per-tensor scaling state; a history is memref<?xf32> (an amax passed
// as a history of one), a scalar memref<f32>:
//   compute_scale              (history, previous, scale, scaled_max: f32,
//                               epsilon: f32, flags: i32)     one warp
//   record_amax                (history, amax, result)        one block
//   roll_history               (history, result)              one block
// `previous` is read only with kScaleDelayed.
//
// Per-block scaling (a tensor viewed as [batch, rows, cols], blocks of
// <br> x <bc> elements over the last two dimensions, scales in the dialect's
// block layout [batch, ceil(rows/br), ceil(cols/bc)], row-major; each flat):
//   block_cast_<in>_<fp8>_<br>x<bc><recipe>
//                              (x, q, amax, scale, scale_inv, batch, rows,
//                               cols)   amax, scale, cast in one pass
//   block_amax_<in>_<br>x<bc>  (x, amax, batch, rows, cols)
//   block_quantize_<in>_<fp8>_<br>x<bc>
//                              (x, q, scale, batch, rows, cols)
//   block_dequantize_<fp8>_<out>_<br>x<bc>[_mx]
//                              (q, y, scale_inv, batch, rows, cols)
//   block_scales_<fp8><recipe> (amax, scale, scale_inv)       1-D
// <recipe> is `_mx` (E8M0 scale_inv, one byte per block), or f32 scales
// with `_pow2` for power-of-two scales and `_eps<hex f32 bits>` for a
// non-zero epsilon. One group of blockGroupSize(br, bc) threads per block:
// a segment of a warp for 1 x bc blocks, the whole thread block otherwise;
// a thread block takes kBlockSize / group blocks per iteration of its
// grid-stride loop (blockKernelGridSize).
//
// The transposing block cast, on matrices (memref<?x?xT>):
//   block_cast_transpose_<in>_<fp8>_<bc>x1<recipe>
//                              (x [rows, cols], q [cols, rows],
//                               amax, scale, scale_inv [cols, ceil(rows/bc)])
// quantizes x in blocks of bc rows of one column (bc = 32, 64 or 128) and
// writes q transposed: q's blocks are 1 x bc along its rows, and its scales
// are in their block layout. Grid (ceil(cols / kTransposeCastColumns),
// ceil(rows / bc)), kBlockSize threads, one bc x 32 tile each.
//
// <in>/<out> is f32, bf16 or f16; <fp8> is e4m3 or e5m2. Buffers from
// cuMemAlloc (256-byte aligned) take the vector paths (16-byte accesses in
// the element-wise kernels, 4-element runs in the block kernels, whose
// rows must also be a multiple of 4 elements); any other alignment is still
// correct through the element-by-element path.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_FP8TONVVM_KERNELABI_H
#define FP8_CONVERSION_FP8TONVVM_KERNELABI_H

#include <algorithm>
#include <cstdint>

namespace mlir::fp8::nvvm_abi {

/// Name of the gpu.module that holds every kernel.
inline constexpr const char *kKernelModuleName = "fp8_kernels";

/// Element-wise kernels: threads per block, elements per thread and
/// iteration (one 16-byte FP8 store), and the grid cap of the grid-stride
/// loop (8 resident 256-thread blocks on each of an H100/H200's 132 SMs;
/// fewer blocks means fewer amax atomics).
inline constexpr int64_t kBlockSize = 256;
inline constexpr int64_t kChunk = 16;
inline constexpr int64_t kMaxGridSize = 132 * 8;

/// cast_transpose: square tiles of kTile x kTile elements, kBlockSize
/// threads, each thread one 16-element row segment of the tile.
inline constexpr int64_t kTile = 64;
/// Row pitch of the shared-memory transposed tile in bytes (16-byte aligned
/// rows for vector reads).
inline constexpr int64_t kTilePitch = kTile + 16;

/// Small kernels: compute_scale runs one warp; record/roll 256 threads.
inline constexpr int64_t kWarpSize = 32;

/// compute_scale `flags` bits.
inline constexpr int32_t kScaleDelayed = 1;
inline constexpr int32_t kScalePowerOfTwo = 2;
inline constexpr int32_t kScaleMostRecent = 4;

/// Grid of the element-wise kernels for `n` elements.
inline constexpr int64_t elementwiseGridSize(int64_t n) {
  return std::clamp<int64_t>((n + kBlockSize * kChunk - 1) /
                                 (kBlockSize * kChunk),
                             1, kMaxGridSize);
}

/// Grid of cast_transpose (1-D): one block per kTile x kTile tile of the
/// rows x cols input, capped; blocks stride over the remaining tiles.
inline constexpr int64_t castTransposeGridSize(int64_t rows, int64_t cols) {
  int64_t tiles = ((rows + kTile - 1) / kTile) * ((cols + kTile - 1) / kTile);
  return std::clamp<int64_t>(tiles, 1, kMaxGridSize);
}

/// Elements per thread and step of the block kernels.
inline constexpr int64_t kBlockVector = 4;

/// The most runs a thread of a block kernel holds in registers (a 128x128
/// block: 16 runs of 4 f32).
inline constexpr int64_t kMaxBlockSteps = 16;

/// Threads that cover one br x bc block: bc / 4 lanes of a warp for a 1 x bc
/// block (bc a power of two from 4 to 128), all kBlockSize threads for a
/// larger block (bc a power of two from 4 to 1024, br * bc a multiple of
/// kBlockSize * 4 and at most kMaxBlockSteps times that: 32x32 .. 128x128).
/// 0: no kernel for that shape.
inline constexpr int64_t blockGroupSize(int64_t br, int64_t bc) {
  bool powerOfTwo = bc >= kBlockVector && (bc & (bc - 1)) == 0;
  if (!powerOfTwo)
    return 0;
  if (br == 1)
    return bc <= kBlockVector * kWarpSize ? bc / kBlockVector : 0;
  int64_t perStep = kBlockSize * kBlockVector;
  if (br < 1 || bc > perStep || (br * bc) % perStep != 0 ||
      br * bc > kMaxBlockSteps * perStep)
    return 0;
  return kBlockSize;
}

/// The kBlockVector-element runs each thread of a group takes in a block.
inline constexpr int64_t blockSteps(int64_t br, int64_t bc) {
  return br * bc / (blockGroupSize(br, bc) * kBlockVector);
}

/// Grid of a block kernel over `blocks` blocks of group size `group`.
inline constexpr int64_t blockKernelGridSize(int64_t blocks, int64_t group) {
  int64_t perThreadBlock = kBlockSize / group;
  return std::clamp<int64_t>((blocks + perThreadBlock - 1) / perThreadBlock,
                             1, kMaxGridSize);
}

/// The transposing block cast: columns per tile, and the block heights it
/// takes (each tile is staged in shared memory with a row pitch of
/// kTransposeCastColumns + 1 floats, free of bank conflicts both ways).
inline constexpr int64_t kTransposeCastColumns = 32;
inline constexpr bool isTransposeCastBlock(int64_t bc) {
  return bc == 32 || bc == 64 || bc == 128;
}
/// Grid y (one per bc rows) may not pass CUDA's limit.
inline constexpr int64_t kMaxTransposeCastGridY = 65535;

} // namespace mlir::fp8::nvvm_abi

#endif // FP8_CONVERSION_FP8TONVVM_KERNELABI_H
