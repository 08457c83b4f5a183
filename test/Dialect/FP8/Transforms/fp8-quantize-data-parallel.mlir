// RUN: fp8-opt %s -split-input-file --fp8-quantize | FileCheck %s --check-prefix=DELAYED
// RUN: fp8-opt %s -split-input-file --fp8-quantize="scaling=current" | FileCheck %s --check-prefix=CURRENT
// RUN: fp8-opt %s -split-input-file --fp8-quantize | fp8-opt --fp8-verify -split-input-file > /dev/null

// Data parallelism: %x is this rank's slice of the batch (fp8.sharded), the
// weights are the same on every rank. Every amax of a tensor that differs
// between ranks is reduced with MAX over the grid before a scale comes from
// it; the weights' amaxes are not.

module {
  shard.grid @dp(shape = 4)
  func.func @two_layers(%x: tensor<8x16xf32> {fp8.sharded = @dp},
                        %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>)
      -> tensor<8x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<8x32xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>)
                       outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
    %e2 = tensor.empty() : tensor<8x16xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%h, %w2 : tensor<8x32xf32>, tensor<32x16xf32>)
                       outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// Delayed scaling: the two activations' amaxes (x, h) go in one collective
// at the end of the body, as TE does; the weights' state updates stay where
// they were, unreduced.
// DELAYED-LABEL: func.func @two_layers
// DELAYED: %{{.*}}, %[[AW2:.*]] = fp8.quantize %arg2
// DELAYED-NEXT: fp8.record_amax %{{.*}}, %[[AW2]]
// DELAYED: %{{.*}}, %[[AW1:.*]] = fp8.quantize %arg1
// DELAYED-NEXT: fp8.record_amax %{{.*}}, %[[AW1]]
// DELAYED: %{{.*}}, %[[AX:.*]] = fp8.quantize %arg0
// DELAYED-NOT: fp8.record_amax
// DELAYED: %{{.*}}, %[[AH:.*]] = fp8.quantize %{{.*}} : tensor<8x32xf32>
// DELAYED-NOT: fp8.record_amax
// DELAYED: %[[ALL:.*]] = tensor.from_elements %[[AX]], %[[AH]] : tensor<2xf32>
// DELAYED-NEXT: %[[MAX:.*]] = shard.all_reduce %[[ALL]] on @dp grid_axes = [0] reduction = max : tensor<2xf32> -> tensor<2xf32>
// DELAYED: %[[GX:.*]] = tensor.extract %[[MAX]][%{{.*}}] : tensor<2xf32>
// DELAYED-NEXT: fp8.record_amax %fp8.two_layers.arg0.amax_history, %[[GX]]
// DELAYED: %[[GH:.*]] = tensor.extract %[[MAX]][%{{.*}}] : tensor<2xf32>
// DELAYED-NEXT: fp8.record_amax %fp8.two_layers.gemm1.lhs.amax_history, %[[GH]]
// DELAYED-NOT: shard.all_reduce
// DELAYED: return

// Current scaling: each activation's amax is reduced before its scale.
// CURRENT-LABEL: func.func @two_layers
// CURRENT: %[[AW2:.*]] = fp8.amax %arg2
// CURRENT-NEXT: fp8.compute_scale %[[AW2]]
// CURRENT: %[[AW1:.*]] = fp8.amax %arg1
// CURRENT-NEXT: fp8.compute_scale %[[AW1]]
// CURRENT: %[[AX:.*]] = fp8.amax %arg0
// CURRENT-NEXT: %[[T:.*]] = tensor.from_elements %[[AX]] : tensor<f32>
// CURRENT-NEXT: %[[R:.*]] = shard.all_reduce %[[T]] on @dp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
// CURRENT-NEXT: %[[G:.*]] = tensor.extract %[[R]][] : tensor<f32>
// CURRENT-NEXT: fp8.compute_scale %[[G]]
// CURRENT: fp8.amax %{{.*}} : tensor<8x32xf32>
// CURRENT-NEXT: tensor.from_elements
// CURRENT-NEXT: shard.all_reduce
// CURRENT-NOT: shard.all_reduce
// CURRENT: return

// -----

// After a collective over the whole grid a tensor is the same on every rank
// (here, a mean gradient): no reduction. Without fp8.sharded nothing is.
module {
  shard.grid @dp(shape = 2)
  func.func @reduced(%g: tensor<8x16xf32> {fp8.sharded = @dp},
                     %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %sum = shard.all_reduce %g on @dp grid_axes = [0] : tensor<8x16xf32> -> tensor<8x16xf32>
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %y = linalg.matmul ins(%sum, %w : tensor<8x16xf32>, tensor<16x4xf32>)
                       outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
  func.func @replicated(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>)
                       outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}

// DELAYED-LABEL: func.func @reduced
// DELAYED: shard.all_reduce %arg0
// DELAYED-NOT: shard.all_reduce
// DELAYED-LABEL: func.func @replicated
// DELAYED-NOT: shard.all_reduce
// DELAYED: return
// CURRENT-LABEL: func.func @reduced
// CURRENT: shard.all_reduce %arg0
// CURRENT-NOT: shard.all_reduce
// CURRENT-LABEL: func.func @replicated
// CURRENT-NOT: shard.all_reduce
// CURRENT: return

// -----

// In a loop with constant bounds every rank reduces the same number of
// times: the loop's tensor gets its own collective inside the loop.
module {
  shard.grid @dp(shape = 2)
  func.func @loop(%x: tensor<8x16xf32> {fp8.sharded = @dp},
                  %w: tensor<16x16xf32>) -> tensor<8x16xf32> {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> tensor<8x16xf32> {
      %e = tensor.empty() : tensor<8x16xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
      %y = linalg.matmul ins(%h, %w : tensor<8x16xf32>, tensor<16x16xf32>)
                         outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
      scf.yield %y : tensor<8x16xf32>
    }
    return %r : tensor<8x16xf32>
  }
}

// DELAYED-LABEL: func.func @loop
// DELAYED: scf.for
// DELAYED: %{{.*}}, %[[A:.*]] = fp8.quantize %arg3
// DELAYED-NEXT: %[[T:.*]] = tensor.from_elements %[[A]] : tensor<f32>
// DELAYED-NEXT: %[[R:.*]] = shard.all_reduce %[[T]] on @dp grid_axes = [0] reduction = max
// DELAYED-NEXT: %[[G:.*]] = tensor.extract %[[R]][]
// DELAYED-NEXT: fp8.record_amax %{{.*}}, %[[G]]
// DELAYED: scf.yield
