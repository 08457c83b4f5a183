// RUN: fp8-opt %s -split-input-file --fp8-lower-shard-to-mpi | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-lower-to-cpu | FileCheck %s --check-prefix=LLVM

// A reduction over the whole grid: an in-place MPI_Allreduce over
// MPI_COMM_WORLD on a one-dimensional copy (MLIR 22's MPI lowering would
// send only the first dimension's elements of a 2-D buffer). The grid and
// the fp8.sharded marks go; the module is compiled for OpenMPI's ABI.

module {
  shard.grid @dp(shape = 2)
  func.func @mean(%g: tensor<8x4xf32> {fp8.sharded = @dp}) -> tensor<8x4xf32> {
    %r = shard.all_reduce %g on @dp grid_axes = [0] reduction = sum : tensor<8x4xf32> -> tensor<8x4xf32>
    return %r : tensor<8x4xf32>
  }
}

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @mean(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<8x4xf32> into tensor<32xf32>
// CHECK: %[[IN:.*]] = bufferization.to_buffer %[[FLAT]] : tensor<32xf32> to memref<32xf32>
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<32xf32>
// CHECK: linalg.copy ins(%[[IN]] : memref<32xf32>) outs(%[[BUF]] : memref<32xf32>)
// CHECK: %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK: mpi.allreduce(%[[BUF]], %[[BUF]], MPI_SUM, %[[WORLD]]) : memref<32xf32>, memref<32xf32>
// CHECK: %[[OUT:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<32xf32> to tensor<32xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[OUT]] {{\[\[}}0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
// CHECK: return %[[R]]

// 32 elements, summed with OpenMPI's ompi_mpi_op_sum (MLIR 22 names it
// ompi_mpi_sum, which libmpi does not export); nothing of mpi is left.
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_op_sum()
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_comm_world()
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_float()
// LLVM-LABEL: llvm.func @mean
// LLVM: %[[COUNT:.*]] = llvm.mlir.constant(32 : index) : i64
// LLVM: %[[N:.*]] = llvm.trunc %[[COUNT]] : i64 to i32
// LLVM: llvm.call @MPI_Allreduce(%{{.*}}, %{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %{{.*}})
// LLVM-NOT: mpi.
// LLVM-NOT: unrealized_conversion_cast

// -----

// A scalar (the loss) travels as one element: MLIR 22 would leave a rank-0
// buffer's mpi.allreduce unconverted. A module that names its MPI keeps it.

module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {
  shard.grid @dp(shape = 4)
  func.func @loss(%l: tensor<f32>) -> tensor<f32> {
    %r = shard.all_reduce %l on @dp grid_axes = [0] reduction = max : tensor<f32> -> tensor<f32>
    return %r : tensor<f32>
  }
}

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-LABEL: func.func @loss
// CHECK: tensor.expand_shape %arg0 [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: mpi.allreduce(%{{.*}}, %{{.*}}, MPI_MAX, %{{.*}}) : memref<1xf32>, memref<1xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>

// LLVM-LABEL: llvm.func @loss
// LLVM: llvm.call @MPI_Allreduce
// LLVM-NOT: mpi.
