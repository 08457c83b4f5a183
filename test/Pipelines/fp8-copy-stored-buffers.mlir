// RUN: fp8-opt %s --fp8-copy-stored-buffers | FileCheck %s
// The values the globals hold afterwards, run on the CPU (without the pass,
// MLIR 22 stores uninitialized buffers for @set and @copy_global):
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s --check-prefix=VALUES

ml_program.global private mutable @a(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) : tensor<4xf32>
ml_program.global private mutable @b(dense<0.0> : tensor<4xf32>) : tensor<4xf32>
ml_program.global private mutable @c(dense<0.0> : tensor<2x2xf32>) : tensor<2x2xf32>
ml_program.global private mutable @d(dense<0.0> : tensor<4xf32>) : tensor<4xf32>

// A read-only argument is stored through a copy.
// CHECK-LABEL: func.func @set
//  CHECK-SAME: (%[[V:.*]]: tensor<4xf32>
//       CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[V]])
//       CHECK: ml_program.global_store @b = %[[COPY]]
func.func @set(%v: tensor<4xf32> {bufferization.writable = false}) {
  ml_program.global_store @b = %v : tensor<4xf32>
  return
}

// So is another global, also through a reshape.
// CHECK-LABEL: func.func @copy_global
//       CHECK: %[[A:.*]] = ml_program.global_load @a
//       CHECK: %[[R:.*]] = tensor.expand_shape %[[A]]
//       CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[R]])
//       CHECK: ml_program.global_store @c = %[[COPY]]
func.func @copy_global() {
  %a = ml_program.global_load @a : tensor<4xf32>
  %r = tensor.expand_shape %a [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  ml_program.global_store @c = %r : tensor<2x2xf32>
  return
}

// So is a computed value: whether its buffer is read-only is for
// bufferization to know (an identity op folds away, below an scf.if).
// CHECK-LABEL: func.func @scale_b
//       CHECK: %[[M:.*]] = linalg.generic
//       CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[M]])
//       CHECK: ml_program.global_store @b = %[[COPY]] : tensor<4xf32>
func.func @scale_b(%s: f32) {
  %b = ml_program.global_load @b : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %s : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  ml_program.global_store @b = %m : tensor<4xf32>
  return
}

// The argument, or not, depending on a flag.
// CHECK-LABEL: func.func @set_either
//       CHECK: %[[R:.*]] = scf.if
//       CHECK: bufferization.alloc_tensor() copy(%[[R]])
func.func @set_either(%v: tensor<4xf32> {bufferization.writable = false}, %c: i1) {
  %r = scf.if %c -> tensor<4xf32> {
    scf.yield %v : tensor<4xf32>
  } else {
    %z = arith.constant dense<0.0> : tensor<4xf32>
    scf.yield %z : tensor<4xf32>
  }
  ml_program.global_store @d = %r : tensor<4xf32>
  return
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %v = arith.constant dense<[5.0, 6.0, 7.0, 8.0]> : tensor<4xf32>
  call @set(%v) : (tensor<4xf32>) -> ()
  %two = arith.constant 2.0 : f32
  call @scale_b(%two) : (f32) -> ()
  call @copy_global() : () -> ()
  %b = ml_program.global_load @b : tensor<4xf32>
  %bu = tensor.cast %b : tensor<4xf32> to tensor<*xf32>
  %bm = bufferization.to_buffer %bu : tensor<*xf32> to memref<*xf32>
  // VALUES: [10, 12, 14, 16]
  call @printMemrefF32(%bm) : (memref<*xf32>) -> ()
  %c = ml_program.global_load @c : tensor<2x2xf32>
  %cu = tensor.cast %c : tensor<2x2xf32> to tensor<*xf32>
  %cm = bufferization.to_buffer %cu : tensor<*xf32> to memref<*xf32>
  // VALUES: {{\[}}[1, 2],
  // VALUES-NEXT: [3, 4]]
  call @printMemrefF32(%cm) : (memref<*xf32>) -> ()
  %true = arith.constant true
  call @set_either(%v, %true) : (tensor<4xf32>, i1) -> ()
  %d = ml_program.global_load @d : tensor<4xf32>
  %du = tensor.cast %d : tensor<4xf32> to tensor<*xf32>
  %dm = bufferization.to_buffer %du : tensor<*xf32> to memref<*xf32>
  // VALUES: [5, 6, 7, 8]
  call @printMemrefF32(%dm) : (memref<*xf32>) -> ()
  return
}
