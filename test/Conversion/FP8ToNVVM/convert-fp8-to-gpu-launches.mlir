// RUN: fp8-opt %s --convert-fp8-to-gpu-launches -split-input-file | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-scaled-matmul-to-wgmma="whole-graph promote" --convert-fp8-to-gpu-launches -split-input-file | FileCheck %s --check-prefix=GEMM
// RUN: not fp8-opt %s --convert-fp8-to-gpu-launches=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: chip 'sm_80' cannot run the FP8 kernels

// Each fp8 op becomes a call of a private launcher on buffers of its
// operands (read-only), its tensor results tensors of the buffers the
// launcher returns (restrict: nothing else aliases them). f32 scalars
// travel in one-element buffers: the caller's once, where it is defined;
// a launcher's result by the buffer it came in (the amax goes from
// quantize to record_amax on the device).

// CHECK-LABEL: func.func private @__fp8_gpu_dequantize(
// CHECK-SAME: %[[Q:.*]]: memref<4x100xf8E4M3FN>, %[[S:.*]]: memref<f32>) -> memref<4x100xf32> attributes {fp8.gpu_launcher}
// CHECK: %[[Y:.*]] = memref.alloc() : memref<4x100xf32>
// CHECK: gpu.launch_func @fp8_kernels::@dequantize_e4m3_f32
// CHECK: return %[[Y]]

// compute_scale: delayed scaling (its previous scale is an input).
// CHECK-LABEL: func.func private @__fp8_gpu_compute_scale(
// CHECK-SAME: memref<16xf32>, %{{.*}}: memref<f32>) -> memref<f32>
// CHECK: gpu.launch_func @fp8_kernels::@compute_scale blocks in ({{.*}}) threads in (%c32,

// CHECK-LABEL: func.func private @__fp8_gpu_record_amax(
// CHECK: gpu.launch_func @fp8_kernels::@record_amax

// The amax accumulator is zeroed by a host store (managed memory) before
// the launch.
// CHECK-LABEL: func.func private @__fp8_gpu_quantize(
// CHECK-SAME: -> (memref<4x100xf8E4M3FN>, memref<f32>)
// CHECK: %[[AMAX:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: memref.store %[[ZERO]], %[[AMAX]][] : memref<f32>
// CHECK: gpu.launch_func @fp8_kernels::@quantize_amax_f32_e4m3

// CHECK: gpu.module @fp8_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">]

// CHECK-LABEL: func.func @casts(
// CHECK-SAME: %[[X:.*]]: tensor<4x100xf32>, %[[HIST:.*]]: tensor<16xf32>, %[[PREV:.*]]: f32)
// CHECK: %[[PB:.*]] = memref.alloc() : memref<f32>
// CHECK: memref.store %[[PREV]], %[[PB]][] : memref<f32>
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<4x100xf32> to memref<4x100xf32>
// CHECK: %[[QA:.*]]:2 = call @__fp8_gpu_quantize(%[[XB]], %[[PB]])
// CHECK: %[[QT:.*]] = bufferization.to_tensor %[[QA]]#0 restrict writable : memref<4x100xf8E4M3FN> to tensor<4x100xf8E4M3FN>
// CHECK: %[[HB:.*]] = bufferization.to_buffer %[[HIST]] read_only
// CHECK: %[[H:.*]] = call @__fp8_gpu_record_amax(%[[HB]], %[[QA]]#1)
// CHECK: %[[HT:.*]] = bufferization.to_tensor %[[H]] restrict writable
// CHECK: %[[HB2:.*]] = bufferization.to_buffer %[[HT]] read_only
// CHECK: %[[SB:.*]] = call @__fp8_gpu_compute_scale(%[[HB2]], %[[PB]])
// CHECK: %[[SCALE:.*]] = memref.load %[[SB]][] : memref<f32>
// CHECK: %[[QB:.*]] = bufferization.to_buffer %[[QT]] read_only
// CHECK: %[[YB:.*]] = call @__fp8_gpu_dequantize(%[[QB]], %[[SB]])
// CHECK: %[[YT:.*]] = bufferization.to_tensor %[[YB]] restrict writable
// CHECK-NOT: fp8.
// CHECK: return %[[YT]], %[[HT]], %[[SCALE]]
func.func @casts(%x: tensor<4x100xf32>, %hist: tensor<16xf32>, %prev: f32)
    -> (tensor<4x100xf32>, tensor<16xf32>, f32) {
  %q, %amax = fp8.quantize %x, %prev : tensor<4x100xf32> -> tensor<4x100xf8E4M3FN>, f32
  %h = fp8.record_amax %hist, %amax : tensor<16xf32>
  %s = fp8.compute_scale %h, %prev for f8E4M3FN : tensor<16xf32>
  %y = fp8.dequantize %q, %s : tensor<4x100xf8E4M3FN> -> tensor<4x100xf32>
  return %y, %h, %s : tensor<4x100xf32>, tensor<16xf32>, f32
}

// -----

// What fp8-quantize emits for per-block scaling (block_amax,
// compute_block_scales, quantize of the same tensor and blocks) is one
// launcher and one block_cast kernel; the scales, used only inside, are
// not returned (the launcher's deallocation frees them). 1x96 blocks,
// which no GPU kernel takes, stay for the rest of the program's lowering.

// CHECK-LABEL: func.func private @__fp8_gpu_block_amax(
// CHECK-SAME: memref<96x300xbf16>) -> (memref<96x3xf32>, memref<96x300xf8E4M3FN>)
// CHECK: gpu.launch_func @fp8_kernels::@block_cast_bf16_e4m3_1x128_pow2 blocks in (%c36,
// CHECK-NOT: gpu.launch_func
// CHECK: return
// CHECK-LABEL: func.func @blocks(
// CHECK: %[[R:.*]]:2 = call @__fp8_gpu_block_amax(
// CHECK-DAG: %[[SI:.*]] = bufferization.to_tensor %[[R]]#0 restrict writable : memref<96x3xf32>
// CHECK-DAG: %[[Q:.*]] = bufferization.to_tensor %[[R]]#1 restrict writable : memref<96x300xf8E4M3FN>
// CHECK: %[[D:.*]] = fp8.block_amax %{{.*}} block [1, 96]
// CHECK: return %[[Q]], %[[SI]], %[[D]]
func.func @blocks(%x: tensor<96x300xbf16>, %d: tensor<8x192xbf16>)
    -> (tensor<96x300xf8E4M3FN>, tensor<96x3xf32>, tensor<8x2xf32>) {
  %a = fp8.block_amax %x block [1, 128] : tensor<96x300xbf16> -> tensor<96x3xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<96x3xf32> -> tensor<96x3xf32>, tensor<96x3xf32>
  %q = fp8.quantize %x, %s block [1, 128]
      : tensor<96x300xbf16> scales tensor<96x3xf32> -> tensor<96x300xf8E4M3FN>
  %da = fp8.block_amax %d block [1, 96] : tensor<8x192xbf16> -> tensor<8x2xf32>
  return %q, %si, %da : tensor<96x300xf8E4M3FN>, tensor<96x3xf32>, tensor<8x2xf32>
}

// -----

// The wgmma kernel's launcher: K = 40 is padded to 48-byte rows (zero fill, then the
// operand copied in); the tensor maps {K, rows, batch} keep K = 40 with a
// 48-byte pitch, boxes 128 x BM = 64 and 128 x BN = 128, one-byte
// elements; the weight is shared by the 2 batches (rhs_batched 0); the
// amax is zeroed before the launch; the grid is min(SMs, 2 x 1 x 2 tiles);
// 256 threads and 1024 + 8 x 192 x 128 + 8 x 16 = 197760 bytes of dynamic
// shared memory.

// The runtime library's functions, declared once:
// GEMM-DAG: func.func private @fp8GpuEncodeTensorMap(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i32, i32, i32, i32)
// GEMM-DAG: func.func private @fp8GpuMultiprocessorCount() -> i32
// GEMM-LABEL: func.func private @__fp8_gpu_scaled_matmul(
// GEMM-SAME: %[[A:.*]]: memref<2x16x40xf8E4M3FN>, %[[W:.*]]: memref<200x40xf8E4M3FN>, %[[SA:.*]]: memref<f32>, %[[SW:.*]]: memref<f32>, %[[BIAS:.*]]: memref<200xf32>) -> (memref<2x16x200xbf16>, memref<f32>)
// GEMM: %[[OUT:.*]] = memref.alloc() : memref<2x16x200xbf16>
// GEMM: %[[PA:.*]] = memref.alloc() : memref<2x16x48xf8E4M3FN>
// GEMM: linalg.fill ins(%{{.*}} : f8E4M3FN) outs(%[[PA]] : memref<2x16x48xf8E4M3FN>)
// GEMM: %[[VA:.*]] = memref.subview %[[PA]][0, 0, 0] [2, 16, 40] [1, 1, 1]
// GEMM: linalg.copy ins(%[[A]] : memref<2x16x40xf8E4M3FN>) outs(%[[VA]] :
// GEMM: %[[PW:.*]] = memref.alloc() : memref<200x48xf8E4M3FN>
// GEMM: linalg.copy ins(%[[W]]
// GEMM: %[[AMAX:.*]] = memref.alloc() : memref<f32>
// GEMM: memref.store %{{.*}}, %[[AMAX]][] : memref<f32>
// GEMM: call @fp8GpuEncodeTensorMap(%{{.*}}, %{{.*}}, %[[K1:.*]], %[[M1:.*]], %[[B1:.*]], %[[P1:.*]], %c128_i32, %c64_i32, %c1_i32, %c1_i32{{.*}})
// GEMM: %[[MAPA:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.array<16 x i64>
// GEMM: call @fp8GpuEncodeTensorMap(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c128_i32{{.*}}, %c128_i32{{.*}}, %c1_i32{{.*}})
// GEMM: %[[MAPB:.*]] = llvm.load
// GEMM: %[[SMS:.*]] = {{(func\.)?}}call @fp8GpuMultiprocessorCount() : () -> i32
// GEMM: gpu.launch_func @fp8_gemm_kernels::@scaled_matmul_e4m3_e4m3_bf16_bias_f32_amax_promote_64x128x128_s8 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c256, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c197760_i32 args(%[[MAPA]] : !llvm.array<16 x i64>, %[[MAPB]] : !llvm.array<16 x i64>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32, %c0_i32 : i32, %{{.*}} : !llvm.array<16 x i64>)
// GEMM: return %[[OUT]], %[[AMAX]]
// GEMM-LABEL: func.func @gemm(
// GEMM: call @__fp8_gpu_scaled_matmul(
// GEMM-NOT: fp8.scaled_matmul
func.func @gemm(%a: tensor<2x16x40xf8E4M3FN>, %w: tensor<200x40xf8E4M3FN>, %sa: f32, %sw: f32,
                %b: tensor<200xf32>) -> (tensor<2x16x200xbf16>, f32) {
  %y, %amax = fp8.scaled_matmul %a, %w scales %sa, %sw bias %b : tensor<200xf32> {transpose_rhs}
      : tensor<2x16x40xf8E4M3FN>, tensor<200x40xf8E4M3FN> -> tensor<2x16x200xbf16>, f32
  return %y, %amax : tensor<2x16x200xbf16>, f32
}

// -----

// Tokens known at run time only: when there are none, the result is empty,
// it has no tiles, so the grid has no blocks and the runtime makes no launch
// (MgpuRuntime.cpp); the tensor maps, never read then, describe at least
// one row (TMA cannot describe an empty operand); the amax stays zero. No
// control flow: the launcher stays one block (fp8-async-gpu-host inlines
// it into the caller's stream).
// GEMM-LABEL: func.func private @__fp8_gpu_scaled_matmul(
// GEMM-SAME: %[[A:.*]]: memref<?x64xf8E4M3FN>, %[[W:.*]]: memref<128x64xf8E4M3FN>
// GEMM: %[[M:.*]] = memref.dim %[[A]], %c0
// GEMM: %[[AMAX:.*]] = memref.alloc() : memref<f32>
// GEMM: memref.store %{{.*}}, %[[AMAX]][] : memref<f32>
// GEMM-NOT: scf.if
// GEMM: %[[ROWS:.*]] = arith.maxui %[[M]], %c1{{.*}} : index
// GEMM: %[[ROWS64:.*]] = arith.index_cast %[[ROWS]] : index to i64
// GEMM: call @fp8GpuEncodeTensorMap(%{{.*}}, %{{.*}}, %{{.*}}, %[[ROWS64]],
// GEMM: call @fp8GpuEncodeTensorMap(
// GEMM: %[[TILESM:.*]] = arith.ceildivui %[[M]], %c128
// GEMM: %[[TILES:.*]] = arith.muli %[[TILESM]], %{{.*}} : index
// GEMM: %[[ALL:.*]] = arith.muli %c1{{.*}}, %[[TILES]] : index
// GEMM: %[[GRID:.*]] = arith.minui %{{.*}}, %[[ALL]] : index
// GEMM: gpu.launch_func @fp8_gemm_kernels::{{.*}} blocks in (%[[GRID]],
// GEMM-NEXT: return
// GEMM-LABEL: func.func @dynamic_tokens(
func.func @dynamic_tokens(%a: tensor<?x64xf8E4M3FN>, %w: tensor<128x64xf8E4M3FN>, %sa: f32, %sw: f32) -> (tensor<?x128xbf16>, f32) {
  %y, %amax = fp8.scaled_matmul %a, %w scales %sa, %sw {transpose_rhs}
      : tensor<?x64xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<?x128xbf16>, f32
  return %y, %amax : tensor<?x128xbf16>, f32
}

// -----

// A high-precision contraction the wgmma pass planned (bf16, [b, M, K] x
// [b, N, K]): the 16-bit kernel, its zero init not an input (the kernel
// stores every element), tensor maps of 2-byte elements with boxes of 64
// (one 128-byte swizzle span) x BM / BN, and no scales (null pointers).
// GEMM-LABEL: func.func private @__fp8_gpu_gemm(
// GEMM-SAME: memref<4x16x32xbf16>, %{{.*}}: memref<4x16x32xbf16>) -> memref<4x16x16xbf16>
// GEMM: call @fp8GpuEncodeTensorMap(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c64_i32, %c64_i32{{.*}}, %c2_i32, %c1_i32)
// GEMM: call @fp8GpuEncodeTensorMap(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c64_i32{{.*}}, %c128_i32, %c2_i32{{.*}}, %c1_i32{{.*}})
// GEMM: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr<1>
// GEMM: gpu.launch_func @fp8_gemm_kernels::@scaled_matmul_bf16_bf16_bf16_64x128x64_s8 {{.*}} dynamic_shared_memory_size %c197760_i32 args(%{{.*}} : !llvm.array<16 x i64>, %{{.*}} : !llvm.array<16 x i64>, %{{.*}} : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>, %[[NULL]] : !llvm.ptr<1>,
// GEMM-LABEL: func.func @pv(
// GEMM: %[[P:.*]] = bufferization.to_buffer %arg0 read_only
// GEMM: %[[V:.*]] = bufferization.to_buffer %arg1 read_only
// GEMM: call @__fp8_gpu_gemm(%[[P]], %[[V]])
// GEMM-NOT: linalg.generic
func.func @pv(%p: tensor<4x16x32xbf16>, %v: tensor<4x16x32xbf16>) -> tensor<4x16x16xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x16x16xbf16>
  %i = linalg.fill ins(%z : bf16) outs(%e : tensor<4x16x16xbf16>) -> tensor<4x16x16xbf16>
  %y = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%p, %v : tensor<4x16x32xbf16>, tensor<4x16x32xbf16>)
      outs(%i : tensor<4x16x16xbf16>) -> tensor<4x16x16xbf16>
  return %y : tensor<4x16x16xbf16>
}

// -----

// Delayed scaling with its state in globals, as fp8-pipeline emits it: the
// scale read from its one-element tensor reaches the kernels as that
// tensor's buffer (no host load and store), and the next scale, which only
// becomes the tensor stored to the global, is the tensor of the buffer
// compute_scale wrote. The reciprocal for the GEMM is a one-element
// linalg.generic on the scale's tensor, placed where the scale was read:
// before the store, which bufferization does not order against the
// global's loads.
ml_program.global private mutable @hist(dense<0.0> : tensor<16xf32>) : tensor<16xf32>
ml_program.global private mutable @scale(dense<1.0> : tensor<f32>) : tensor<f32>

// CHECK-LABEL: func.func @state(
// GEMM-LABEL: func.func @state(
// CHECK: %[[H:.*]] = ml_program.global_load @hist
// CHECK: %[[S:.*]] = ml_program.global_load @scale
// CHECK: %[[SB:.*]] = bufferization.to_buffer %[[S]] read_only : tensor<f32> to memref<f32>
// CHECK: %[[OLD:.*]] = tensor.extract %[[S]][]
// CHECK-NEXT: %[[S1:.*]] = tensor.expand_shape %[[S]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1xf32>
// CHECK-NEXT: %[[R1:.*]] = linalg.generic {{.*}} ins(%[[S1]] : tensor<1xf32>) outs(%[[E]] : tensor<1xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[DIV:.*]] = arith.divf %[[ONE]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[DIV]]
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[R1]] [] : tensor<1xf32> into tensor<f32>
// CHECK-NEXT: %[[RB:.*]] = bufferization.to_buffer %[[R]] read_only
// CHECK-NOT: memref.store
// CHECK: %[[QA:.*]]:2 = call @__fp8_gpu_quantize(%{{.*}}, %[[SB]])
// CHECK: %[[NEXT:.*]] = call @__fp8_gpu_compute_scale(%{{.*}}, %[[SB]])
// CHECK: %[[NT:.*]] = bufferization.to_tensor %[[NEXT]] restrict : memref<f32> to tensor<f32>
// CHECK-NOT: tensor.from_elements
// CHECK: ml_program.global_store @scale = %[[NT]]
// CHECK: call @__fp8_gpu_dequantize(%{{.*}}, %[[RB]])
func.func @state(%x: tensor<4x100xf32>) -> tensor<4x100xf32> {
  %h0 = ml_program.global_load @hist : tensor<16xf32>
  %s0 = ml_program.global_load @scale : tensor<f32>
  %prev = tensor.extract %s0[] : tensor<f32>
  %q, %amax = fp8.quantize %x, %prev : tensor<4x100xf32> -> tensor<4x100xf8E4M3FN>, f32
  %h = fp8.record_amax %h0, %amax : tensor<16xf32>
  %s = fp8.compute_scale %h, %prev for f8E4M3FN : tensor<16xf32>
  %st = tensor.from_elements %s : tensor<f32>
  ml_program.global_store @scale = %st : tensor<f32>
  %one = arith.constant 1.0 : f32
  %inv = arith.divf %one, %prev : f32
  %y = fp8.dequantize %q, %inv : tensor<4x100xf8E4M3FN> -> tensor<4x100xf32>
  return %y : tensor<4x100xf32>
}

// A kernel taking the element after the global is stored must see the old
// value: the element goes in a buffer of its own, made where it was read.
// CHECK-LABEL: func.func @after_store(
// CHECK: %[[S:.*]] = ml_program.global_load @scale
// CHECK-NEXT: %[[OLD:.*]] = tensor.extract %[[S]][]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.store %[[OLD]], %[[B]][]
// CHECK: ml_program.global_store @scale
// CHECK: call @__fp8_gpu_quantize{{.*}}(%{{.*}}, %[[B]])
func.func @after_store(%x: tensor<4x100xf32>, %next: tensor<f32>) -> tensor<4x100xf8E4M3FN> {
  %s0 = ml_program.global_load @scale : tensor<f32>
  %prev = tensor.extract %s0[] : tensor<f32>
  ml_program.global_store @scale = %next : tensor<f32>
  %q, %amax = fp8.quantize %x, %prev : tensor<4x100xf32> -> tensor<4x100xf8E4M3FN>, f32
  return %q : tensor<4x100xf8E4M3FN>
}

// -----

// Kernels of the project's modules that nothing launches (left by a
// launcher that could not be built, or a wgmma kernel planned for one) are
// erased, and a module left without kernels with them; a module the input
// brought is never touched.
// CHECK-LABEL: gpu.module @fp8_kernels
// CHECK-NOT: @stale
// CHECK: gpu.func @quantize_amax_f32_e4m3
// CHECK-NOT: @stale
// CHECK-NOT: gpu.module @fp8_gemm_kernels
// CHECK: gpu.module @user
// CHECK-NEXT: gpu.func @unlaunched() kernel
// CHECK-LABEL: func.func @stale_kernels(
module attributes {gpu.container_module} {
  gpu.module @fp8_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">] {
    llvm.func @stale() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  gpu.module @fp8_gemm_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">] {
    llvm.func @stale_gemm() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  gpu.module @user {
    gpu.func @unlaunched() kernel {
      gpu.return
    }
  }
  func.func @stale_kernels(%x: tensor<4x100xf32>, %s: f32) -> tensor<4x100xf8E4M3FN> {
    %q, %amax = fp8.quantize %x, %s : tensor<4x100xf32> -> tensor<4x100xf8E4M3FN>, f32
    return %q : tensor<4x100xf8E4M3FN>
  }
}

// -----

// A block cast of x^T that only reads x through the transpose (what
// convert-fp8-scaled-matmul-to-wgmma makes of a weight-gradient operand)
// is one launch of block_cast_transpose, a gpu.func on memrefs, on x
// itself: a grid of 128x32 tiles (ceil(96/32) = 3 by ceil(200/128) = 2),
// FP8 handed over as bytes. The kernel stages the tile in shared memory
// with a pitch of 33 floats, reduces each column's amax over 8 lanes with
// xor shuffles, and writes 4-byte runs of q (bytes at the ragged end).
// CHECK-LABEL: func.func private @__fp8_gpu_block_cast_transpose(
// CHECK-SAME: %[[X:.*]]: memref<200x96xbf16>) -> (memref<96x2xf32>, memref<96x200xf8E4M3FN>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[Q:.*]] = memref.alloc() : memref<96x200xf8E4M3FN>
// CHECK: %[[XD:.*]] = memref.cast %[[X]] : memref<200x96xbf16> to memref<?x?xbf16>
// CHECK: %[[QD:.*]] = memref.cast %[[Q]] : memref<96x200xf8E4M3FN> to memref<?x?xf8E4M3FN>
// CHECK: %[[QB:.*]] = builtin.unrealized_conversion_cast %[[QD]] : memref<?x?xf8E4M3FN> to memref<?x?xi8>
// CHECK: gpu.launch_func  @fp8_kernels::@block_cast_transpose_bf16_e4m3_128x1_pow2 blocks in (%c3, %c2, %c1) threads in (%c256, %c1, %c1)  args(%[[XD]] : memref<?x?xbf16>, %[[QB]] : memref<?x?xi8>,
// CHECK: gpu.func @block_cast_transpose_bf16_e4m3_128x1_pow2(%{{.*}}: memref<?x?xbf16>, %{{.*}}: memref<?x?xi8>, %{{.*}}: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>) workgroup(%{{.*}} : memref<4224xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: gpu.barrier
// CHECK-COUNT-16: math.absf
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32{{.*}} : f32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32{{.*}} : f32
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<?x?xi8>, vector<4xi8>
func.func @wgrad_operand(%x: tensor<200x96xbf16>) -> (tensor<96x200xf8E4M3FN>, tensor<96x2xf32>) {
  %e = tensor.empty() : tensor<96x200xbf16>
  %xt = linalg.transpose ins(%x : tensor<200x96xbf16>) outs(%e : tensor<96x200xbf16>) permutation = [1, 0]
  %a = fp8.block_amax %xt block [1, 128] : tensor<96x200xbf16> -> tensor<96x2xf32>
  %s, %si = fp8.compute_block_scales %a for f8E4M3FN {power_of_two}
      : tensor<96x2xf32> -> tensor<96x2xf32>, tensor<96x2xf32>
  %q = fp8.quantize %xt, %s block [1, 128] : tensor<96x200xbf16> scales tensor<96x2xf32> -> tensor<96x200xf8E4M3FN>
  return %q, %si : tensor<96x200xf8E4M3FN>, tensor<96x2xf32>
}

// -----

// x^T that something else reads too is a transpose of its own; the cast
// is then the plain block_cast on it.
// CHECK-LABEL: func.func private @__fp8_gpu_block_amax(
// CHECK: gpu.launch_func  @fp8_kernels::@block_cast_f32_e5m2_1x32_mx
// CHECK-LABEL: func.func @shared_transpose(
// CHECK: linalg.transpose
// CHECK: call @__fp8_gpu_block_amax(
func.func @shared_transpose(%x: tensor<64x96xf32>) -> (tensor<96x64xf8E5M2>, tensor<96x2xf8E8M0FNU>, tensor<96x64xf32>) {
  %e = tensor.empty() : tensor<96x64xf32>
  %xt = linalg.transpose ins(%x : tensor<64x96xf32>) outs(%e : tensor<96x64xf32>) permutation = [1, 0]
  %a = fp8.block_amax %xt block [1, 32] : tensor<96x64xf32> -> tensor<96x2xf32>
  %s, %si = fp8.compute_block_scales %a for f8E5M2
      : tensor<96x2xf32> -> tensor<96x2xf32>, tensor<96x2xf8E8M0FNU>
  %q = fp8.quantize %xt, %s block [1, 32] : tensor<96x64xf32> scales tensor<96x2xf32> -> tensor<96x64xf8E5M2>
  return %q, %si, %xt : tensor<96x64xf8E5M2>, tensor<96x2xf8E8M0FNU>, tensor<96x64xf32>
}
