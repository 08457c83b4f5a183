// RUN: fp8-opt %s -split-input-file --fp8-quantize -verify-diagnostics

// A sharded tensor quantized under a conditional: the ranks could disagree
// on running the collective (TE hangs in that case).
module {
  shard.grid @dp(shape = 2)
  func.func @conditional(%x: tensor<8x16xf32> {fp8.sharded = @dp},
                         %w: tensor<16x16xf32>, %c: i1) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    // expected-note @+1 {{this op}}
    %r = scf.if %c -> tensor<8x16xf32> {
      %h = arith.negf %x : tensor<8x16xf32>
      %e = tensor.empty() : tensor<8x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
      // expected-error @+1 {{the amax of this GEMM's lhs operand must be reduced over @dp, but it is computed under a 'scf.if' that ranks may run a different number of times (the collective would hang); hoist the tensor out of it}}
      %y = linalg.matmul ins(%h, %w : tensor<8x16xf32>, tensor<16x16xf32>)
                         outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
      scf.yield %y : tensor<8x16xf32>
    } else {
      scf.yield %x : tensor<8x16xf32>
    }
    return %r : tensor<8x16xf32>
  }
}

// -----

// A loop whose trip count is not a constant: the same.
module {
  shard.grid @dp(shape = 2)
  func.func @dynamic_loop(%x: tensor<8x16xf32> {fp8.sharded = @dp},
                          %w: tensor<16x16xf32>, %n: index) -> tensor<8x16xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    // expected-note @+1 {{this op}}
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> tensor<8x16xf32> {
      %e = tensor.empty() : tensor<8x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
      // expected-error @+1 {{computed under a 'scf.for'}}
      %y = linalg.matmul ins(%h, %w : tensor<8x16xf32>, tensor<16x16xf32>)
                         outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
      scf.yield %y : tensor<8x16xf32>
    }
    return %r : tensor<8x16xf32>
  }
}

// -----

// fp8.sharded must name a grid.
module {
  func.func private @not_a_grid()
  // expected-error @+1 {{'fp8.sharded' names @not_a_grid, which is not a shard.grid}}
  func.func @bad_grid(%x: tensor<8x16xf32> {fp8.sharded = @not_a_grid},
                      %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>)
                       outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// -----

module {
  shard.grid @a(shape = 2)
  shard.grid @b(shape = 2)
  // expected-error @+1 {{arguments sharded over two grids, @a and @b: data parallelism over one grid is supported}}
  func.func @two_grids(%x: tensor<8x16xf32> {fp8.sharded = @a},
                       %w: tensor<16x16xf32> {fp8.sharded = @b}) -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>)
                       outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

