// RUN: fp8-opt %s -split-input-file --fp8-quantize="granularity=block" -verify-diagnostics

// Each rank holds 64 tokens, the K of the weight gradient: a 1x128 tile of
// the single process would straddle two ranks.
module {
  shard.grid @dp(shape = 2)
  func.func @straddle(%x: tensor<64x64xf32> {fp8.sharded = @dp},
                      %dy: tensor<64x32xf32> {fp8.sharded = @dp, fp8.role = "grad"})
      -> tensor<64x32xf32> {
    %zero = arith.constant 0.0 : f32
    %ew = tensor.empty() : tensor<64x32xf32>
    %fw = linalg.fill ins(%zero : f32) outs(%ew : tensor<64x32xf32>) -> tensor<64x32xf32>
    // expected-error @+2 {{per-block scales of this GEMM's lhs operand: blocks of 128 along dimension 0, which each rank holds 64 of, would reach across some ranks but not all; make each rank's share a multiple of 128}}
    // expected-error @+1 {{per-block scales of this GEMM's rhs operand: blocks of 128 along dimension 0}}
    %dw = linalg.matmul
        indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                         affine_map<(m, n, k) -> (k, n)>,
                         affine_map<(m, n, k) -> (m, n)>]
        ins(%x, %dy : tensor<64x64xf32>, tensor<64x32xf32>)
        outs(%fw : tensor<64x32xf32>) -> tensor<64x32xf32>
    return %dw : tensor<64x32xf32>
  }
}

// -----

// A tensor computed in a way the analysis does not follow (a slice): which
// dimension is split is unknown.
module {
  shard.grid @dp(shape = 2)
  func.func @unknown(%x: tensor<512x64xf32> {fp8.sharded = @dp},
                     %w: tensor<64x32xf32>) -> tensor<256x32xf32> {
    %zero = arith.constant 0.0 : f32
    %s = tensor.extract_slice %x[0, 0] [256, 64] [1, 1] : tensor<512x64xf32> to tensor<256x64xf32>
    %e = tensor.empty() : tensor<256x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x32xf32>) -> tensor<256x32xf32>
    // expected-error @+1 {{per-block scales of this GEMM's lhs operand: cannot tell which of its dimensions are split over @dp (it is computed in a way the analysis does not follow); use granularity=tensor}}
    %y = linalg.matmul ins(%s, %w : tensor<256x64xf32>, tensor<64x32xf32>)
                       outs(%f : tensor<256x32xf32>) -> tensor<256x32xf32>
    return %y : tensor<256x32xf32>
  }
}
