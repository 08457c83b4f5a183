// RUN: fp8-opt %s -split-input-file --fp8-lower-shard-to-mpi -verify-diagnostics

module {
  shard.grid @g(shape = 2x2)
  func.func @part_of_the_grid(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{only reductions over every axis of @g lower to MPI here (upstream's per-axis communicators are miscompiled for OpenMPI in MLIR 22)}}
    %r = shard.all_reduce %x on @g grid_axes = [1] : tensor<4xf32> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @bf16(%x: tensor<4xbf16>) -> tensor<4xbf16> {
    // expected-error @+1 {{MPI reduces f32, f64 and integers, not 'bf16'}}
    %r = shard.all_reduce %x on @dp grid_axes = [0] : tensor<4xbf16> -> tensor<4xbf16>
    return %r : tensor<4xbf16>
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @average(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @+1 {{reduction 'average' has no MPI counterpart}}
    %r = shard.all_reduce %x on @dp grid_axes = [0] reduction = average : tensor<4xf32> -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

module {
  shard.grid @dp(shape = 2)
  func.func @widening(%x: tensor<4xf32>) -> tensor<4xf64> {
    // expected-error @+1 {{lowering to MPI needs a statically shaped tensor reduced in its own type, got 'tensor<4xf32>' -> 'tensor<4xf64>'}}
    %r = shard.all_reduce %x on @dp grid_axes = [0] : tensor<4xf32> -> tensor<4xf64>
    return %r : tensor<4xf64>
  }
}
