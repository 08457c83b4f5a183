// RUN: fp8-opt %s --fp8-quantize="granularity=row" | FileCheck %s --check-prefix=ROW
// RUN: fp8-opt %s --fp8-quantize="granularity=block" | FileCheck %s --check-prefix=BLOCK
// RUN: fp8-opt %s --fp8-quantize="granularity=mx" | FileCheck %s --check-prefix=MX

// Per-block scales: a weight gradient dW = dY^T X sums over this rank's 256
// tokens, its K. Rows along K (granularity=row) span every rank: their
// amaxes are reduced over the grid. 1x128 tiles along K tile each rank's
// 256 tokens exactly, so they are the single process's tiles: no
// reduction. The forward GEMM's token rows (M) are local either way.
module {
  shard.grid @dp(shape = 2)
  func.func @linear(%x: tensor<256x64xf32> {fp8.sharded = @dp, fp8.role = "activation"},
                    %dy: tensor<256x32xf32> {fp8.sharded = @dp, fp8.role = "grad"},
                    %w: tensor<64x32xf32>) -> (tensor<256x32xf32>, tensor<64x32xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<256x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x32xf32>) -> tensor<256x32xf32>
    %y = linalg.matmul ins(%x, %w : tensor<256x64xf32>, tensor<64x32xf32>)
                       outs(%f : tensor<256x32xf32>) -> tensor<256x32xf32>
    %ew = tensor.empty() : tensor<64x32xf32>
    %fw = linalg.fill ins(%zero : f32) outs(%ew : tensor<64x32xf32>) -> tensor<64x32xf32>
    %dw = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                         affine_map<(m, n, k) -> (k, n)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %dy : tensor<256x64xf32>, tensor<256x32xf32>)
        outs(%fw : tensor<64x32xf32>) -> tensor<64x32xf32>
    return %y, %dw : tensor<256x32xf32>, tensor<64x32xf32>
  }
}

// MX-LABEL: func.func @linear
// MX-NOT: shard.all_reduce
// MX: return

// ROW-LABEL: func.func @linear
// The weight gradient's operands, rows along the 256 tokens: reduced.
// ROW: %[[ADY:.*]] = fp8.block_amax %arg1 block [256, 1] : tensor<256x32xf32> -> tensor<1x32xf32>
// ROW-NEXT: %[[RDY:.*]] = shard.all_reduce %[[ADY]] on @dp grid_axes = [0] reduction = max : tensor<1x32xf32> -> tensor<1x32xf32>
// ROW-NEXT: fp8.compute_block_scales %[[RDY]]
// ROW: %[[AXT:.*]] = fp8.block_amax %arg0 block [256, 1] : tensor<256x64xf32> -> tensor<1x64xf32>
// ROW-NEXT: %[[RXT:.*]] = shard.all_reduce %[[AXT]] on @dp grid_axes = [0] reduction = max : tensor<1x64xf32> -> tensor<1x64xf32>
// ROW-NEXT: fp8.compute_block_scales %[[RXT]]
// The weight (the same everywhere), and the forward GEMM's x with rows along
// its features (each rank's own tokens): local.
// ROW: %[[AW:.*]] = fp8.block_amax %arg2 block [64, 1] : tensor<64x32xf32> -> tensor<1x32xf32>
// ROW-NEXT: fp8.compute_block_scales %[[AW]]
// ROW: %[[AX:.*]] = fp8.block_amax %arg0 block [1, 64] : tensor<256x64xf32> -> tensor<256x1xf32>
// ROW-NEXT: fp8.compute_block_scales %[[AX]]
// ROW-NOT: shard.all_reduce
// ROW: return

// BLOCK-LABEL: func.func @linear
// BLOCK-DAG: fp8.block_amax %arg0 block [128, 1] : tensor<256x64xf32> -> tensor<2x64xf32>
// BLOCK-DAG: fp8.block_amax %arg1 block [128, 1] : tensor<256x32xf32> -> tensor<2x32xf32>
// BLOCK-NOT: shard.all_reduce
// BLOCK: return
