// RUN: fp8-opt %s --fp8-expand-float8 --split-input-file --verify-diagnostics | FileCheck %s

// f32 -> E4M3FN: sign, magnitude, the normal and subnormal roundings, the
// selection, overflow and NaN to 0x7F, then the byte.
// CHECK-LABEL: func.func @trunc_e4m3
// CHECK-SAME: (%[[X:.+]]: f32) -> i8
// CHECK: %[[BITS:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[SIGN:.+]] = arith.andi %{{.+}}, %{{.+}} : i32
// CHECK: %[[ABS:.+]] = arith.andi %[[BITS]], %{{.+}} : i32
// CHECK: %[[REBIASED:.+]] = arith.subi %[[ABS]], %{{.+}} : i32
// CHECK: arith.shrui %[[REBIASED]], %{{.+}} : i32
// CHECK: arith.addi %[[REBIASED]], %{{.+}} : i32
// CHECK: %[[ROUNDED:.+]] = arith.addi %{{.+}}, %{{.+}} : i32
// CHECK: %[[NORMAL:.+]] = arith.shrui %[[ROUNDED]], %{{.+}} : i32
// CHECK: %[[SHIFT:.+]] = arith.minsi %{{.+}}, %{{.+}} : i32
// CHECK: arith.shrui %{{.+}}, %[[SHIFT]] : i32
// CHECK: %[[SUB:.+]] = arith.shrui %{{.+}}, %[[SHIFT]] : i32
// CHECK: %[[TINY:.+]] = arith.cmpi ult, %[[ABS]], %{{.+}} : i32
// CHECK: %[[CODE:.+]] = arith.select %[[TINY]], %[[SUB]], %[[NORMAL]] : i32
// CHECK: %[[OVF:.+]] = arith.cmpi ugt, %[[CODE]], %{{.+}} : i32
// CHECK: %[[NAN:.+]] = arith.cmpi ugt, %[[ABS]], %{{.+}} : i32
// CHECK: %[[TONAN:.+]] = arith.ori %[[OVF]], %[[NAN]] : i1
// CHECK: %[[MAG:.+]] = arith.select %[[TONAN]], %{{.+}}, %[[CODE]] : i32
// CHECK: %[[OR:.+]] = arith.ori %[[SIGN]], %[[MAG]] : i32
// CHECK: %[[BYTE:.+]] = arith.trunci %[[OR]] : i32 to i8
// CHECK: return %[[BYTE]] : i8
// CHECK-NOT: f8E4M3FN
func.func @trunc_e4m3(%x: f32) -> f8E4M3FN {
  %t = arith.truncf %x : f32 to f8E4M3FN
  return %t : f8E4M3FN
}

// -----

// bf16 is widened exactly first; E5M2 keeps a NaN's top payload bit.
// CHECK-LABEL: func.func @trunc_bf16_e5m2
// CHECK-SAME: (%[[X:.+]]: bf16) -> i8
// CHECK: %[[W:.+]] = arith.extf %[[X]] : bf16 to f32
// CHECK: arith.bitcast %[[W]] : f32 to i32
// CHECK: %[[C21:.+]] = arith.constant 21 : i32
// CHECK: arith.shrui %{{.+}}, %[[C21]] : i32
// CHECK: arith.trunci %{{.+}} : i32 to i8
// CHECK-NOT: arith.truncf
func.func @trunc_bf16_e5m2(%x: bf16) -> f8E5M2 {
  %t = arith.truncf %x : bf16 to f8E5M2
  return %t : f8E5M2
}

// -----

// CHECK-LABEL: func.func @trunc_vector
// CHECK-SAME: (%[[X:.+]]: vector<4xf32>) -> vector<4xi8>
// CHECK: arith.bitcast %[[X]] : vector<4xf32> to vector<4xi32>
// CHECK: arith.constant dense<2147483647> : vector<4xi32>
// CHECK: arith.trunci %{{.+}} : vector<4xi32> to vector<4xi8>
// CHECK-NOT: arith.truncf
func.func @trunc_vector(%x: vector<4xf32>) -> vector<4xf8E4M3FN> {
  %t = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
  return %t : vector<4xf8E4M3FN>
}

// -----

// Constant operands fold through the sequence: the non-saturating results
// of arith.truncf (APFloat's). E4M3FN: 464 ties to 448 (0x7E), 465
// overflows to NaN (0x7F), -Inf is NaN with the sign (0xFF), 2^-10 ties to
// 0. E5M2: 61440 overflows to Inf (0x7C), 2^-16 is the smallest subnormal.
// CHECK-LABEL: func.func @trunc_constants
// CHECK-DAG: %[[A:.+]] = arith.constant 126 : i8
// CHECK-DAG: %[[B:.+]] = arith.constant 127 : i8
// CHECK-DAG: %[[C:.+]] = arith.constant -1 : i8
// CHECK-DAG: %[[D:.+]] = arith.constant 0 : i8
// CHECK-DAG: %[[E:.+]] = arith.constant 124 : i8
// CHECK-DAG: %[[F:.+]] = arith.constant 1 : i8
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]]
func.func @trunc_constants() -> (f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E5M2, f8E5M2) {
  %c464 = arith.constant 464.0 : f32
  %c465 = arith.constant 465.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %tiny = arith.constant 0.0009765625 : f32
  %c61440 = arith.constant 61440.0 : f32
  %sub = arith.constant 1.52587890625e-05 : f32
  %a = arith.truncf %c464 : f32 to f8E4M3FN
  %b = arith.truncf %c465 : f32 to f8E4M3FN
  %c = arith.truncf %ninf : f32 to f8E4M3FN
  %d = arith.truncf %tiny : f32 to f8E4M3FN
  %e = arith.truncf %c61440 : f32 to f8E5M2
  %f = arith.truncf %sub : f32 to f8E5M2
  return %a, %b, %c, %d, %e, %f : f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E4M3FN, f8E5M2, f8E5M2
}

// -----

// Widening: integer ops, and a float multiply for subnormals (exact).
// CHECK-LABEL: func.func @ext
// CHECK-SAME: (%[[A:.+]]: i8, %[[B:.+]]: i8, %[[C:.+]]: i8)
// CHECK: %[[AW:.+]] = arith.extui %[[A]] : i8 to i32
// CHECK: arith.uitofp %{{.+}} : i32 to f32
// CHECK: %[[F32:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK: arith.extui %[[B]] : i8 to i32
// CHECK: %[[HIGH:.+]] = arith.trunci %{{.+}} : i32 to i16
// CHECK: %[[BF16:.+]] = arith.bitcast %[[HIGH]] : i16 to bf16
// CHECK: arith.extui %[[C]] : i8 to i32
// CHECK: %[[F16:.+]] = arith.truncf %{{.+}} : f32 to f16
// CHECK: return %[[F32]], %[[BF16]], %[[F16]]
// CHECK-NOT: arith.extf
func.func @ext(%a: f8E4M3FN, %b: f8E5M2, %c: f8E4M3FN) -> (f32, bf16, f16) {
  %x = arith.extf %a : f8E4M3FN to f32
  %y = arith.extf %b : f8E5M2 to bf16
  %z = arith.extf %c : f8E4M3FN to f16
  return %x, %y, %z : f32, bf16, f16
}

// -----

// Constant widening folds: 0x7E is 448, 0xFE is -448, 0x01 is 2^-9; E5M2
// 0x7C is +Inf.
// CHECK-LABEL: func.func @ext_constants
// CHECK-DAG: arith.constant 4.480000e+02 : f32
// CHECK-DAG: arith.constant -4.480000e+02 : f32
// CHECK-DAG: arith.constant 0.001953125 : f32
// CHECK-DAG: arith.constant 0x7F800000 : f32
// CHECK-NOT: arith.extui
func.func @ext_constants() -> (f32, f32, f32, f32) {
  %a = arith.constant 448.0 : f8E4M3FN
  %b = arith.constant -448.0 : f8E4M3FN
  %c = arith.constant 0.001953125 : f8E4M3FN
  %d = arith.constant 0x7C : f8E5M2
  %x = arith.extf %a : f8E4M3FN to f32
  %y = arith.extf %b : f8E4M3FN to f32
  %z = arith.extf %c : f8E4M3FN to f32
  %w = arith.extf %d : f8E5M2 to f32
  return %x, %y, %z, %w : f32, f32, f32, f32
}

// -----

// Tensors, structured ops and their bodies, constants, calls: FP8 becomes
// i8 everywhere.
// CHECK-LABEL: func.func @tensors
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32>) -> tensor<?x4xi8>
// CHECK: %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<?x4xi8>
// CHECK: %[[Q:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xi8>)
// CHECK: ^bb0(%{{.+}}: f32, %{{.+}}: i8):
// CHECK: %[[T:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK: linalg.yield %[[T]] : i8
// CHECK: return %[[Q]] : tensor<?x4xi8>
// CHECK-LABEL: func.func @caller
// CHECK: %[[CST:.+]] = arith.constant dense<[126, -2, 48, 88]> : tensor<4xi8>
// CHECK: call @tensors(%{{.+}}) : (tensor<?x4xf32>) -> tensor<?x4xi8>
// CHECK: return %[[CST]], %{{.+}} : tensor<4xi8>, tensor<?x4xi8>
// CHECK-NOT: f8E4M3FN
func.func @tensors(%x: tensor<?x4xf32>) -> tensor<?x4xf8E4M3FN> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf8E4M3FN>) {
  ^bb0(%in: f32, %out: f8E4M3FN):
    %t = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<?x4xf8E4M3FN>
  return %q : tensor<?x4xf8E4M3FN>
}
func.func @caller(%x: tensor<?x4xf32>) -> (tensor<4xf8E4M3FN>, tensor<?x4xf8E4M3FN>) {
  %c = arith.constant dense<[448.0, -448.0, 0.5, 16.0]> : tensor<4xf8E4M3FN>
  %q = call @tensors(%x) : (tensor<?x4xf32>) -> tensor<?x4xf8E4M3FN>
  return %c, %q : tensor<4xf8E4M3FN>, tensor<?x4xf8E4M3FN>
}

// -----

// A named op's implicit body widens its FP8 operands: generalized first.
// CHECK-LABEL: func.func @named
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xi8>, %[[B:.+]]: tensor<3x4xi8>, %[[C:.+]]: tensor<2x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xi8>, tensor<3x4xi8>)
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
// CHECK-NOT: f8E4M3FN
func.func @named(%a: tensor<2x3xf8E4M3FN>, %b: tensor<3x4xf8E4M3FN>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf8E4M3FN>, tensor<3x4xf8E4M3FN>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: ml_program.global private @weights(dense<[126, 1]> : tensor<2xi8>) : tensor<2xi8>
// CHECK-LABEL: func.func @load
// CHECK: ml_program.global_load_const @weights : tensor<2xi8>
ml_program.global private @weights(dense<[448.0, 0.001953125]> : tensor<2xf8E4M3FN>) : tensor<2xf8E4M3FN>
func.func @load() -> tensor<2xf8E4M3FN> {
  %w = ml_program.global_load_const @weights : tensor<2xf8E4M3FN>
  return %w : tensor<2xf8E4M3FN>
}

// -----

// Arithmetic on FP8 values has no integer form here: reported, not guessed.
func.func @compute_on_fp8(%a: f8E4M3FN, %b: f8E4M3FN) -> f8E4M3FN {
  // expected-error @+1 {{failed to legalize operation 'arith.addf'}}
  %c = arith.addf %a, %b : f8E4M3FN
  return %c : f8E4M3FN
}

// -----

// fp8 ops compute on FP8 values too: convert-fp8-to-linalg comes first, and
// they are reported rather than rebuilt with invalid i8 types.
func.func @fp8_op(%x: tensor<4xf32>, %s: f32) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{failed to legalize operation 'fp8.quantize'}}
  %q = fp8.quantize %x, %s : tensor<4xf32> -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

// f64 through f32 would round twice; not expanded.
func.func @trunc_from_f64(%x: f64) -> f8E5M2 {
  // expected-error @+1 {{failed to legalize operation 'arith.truncf'}}
  %q = arith.truncf %x : f64 to f8E5M2
  return %q : f8E5M2
}
