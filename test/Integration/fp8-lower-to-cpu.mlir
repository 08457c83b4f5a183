// fp8 ops run on the CPU (fp8-lower-to-cpu, then mlir-runner) against values
// derived independently from the FP8 format definitions and Transformer
// Engine's scaling formulas by Inputs/fp8_reference.py (exact rationals; run
// it to see every number below). The second RUN folds what can be folded
// first (the fp8 folders on constants, in @main's last section): the folded
// constants and the run results must print the same.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --canonicalize --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --canonicalize | FileCheck %s --check-prefix=FOLDED

// FOLDED-LABEL: func.func @main
// FOLDED-NOT: fp8.

#id = affine_map<(d0) -> (d0)>

func.func private @printMemrefI32(memref<*xi32>)
func.func private @printMemrefF32(memref<*xf32>)

//===----------------------------------------------------------------------===//
// Printing (dynamic shapes on purpose)
//===----------------------------------------------------------------------===//

func.func @print_i32(%x: tensor<?xi32>) {
  %u = tensor.cast %x : tensor<?xi32> to tensor<*xi32>
  %m = bufferization.to_buffer %u : tensor<*xi32> to memref<*xi32>
  call @printMemrefI32(%m) : (memref<*xi32>) -> ()
  return
}

func.func @print_f32(%x: tensor<?xf32>) {
  %u = tensor.cast %x : tensor<?xf32> to tensor<*xf32>
  %m = bufferization.to_buffer %u : tensor<*xf32> to memref<*xf32>
  call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}

// The FP8 encodings, as unsigned bytes.
func.func @print_e4m3(%q: tensor<?xf8E4M3FN>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %q, %c0 : tensor<?xf8E4M3FN>
  %e = tensor.empty(%n) : tensor<?xi32>
  %codes = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%q : tensor<?xf8E4M3FN>) outs(%e : tensor<?xi32>) {
  ^bb0(%in: f8E4M3FN, %out: i32):
    %b = arith.bitcast %in : f8E4M3FN to i8
    %i = arith.extui %b : i8 to i32
    linalg.yield %i : i32
  } -> tensor<?xi32>
  call @print_i32(%codes) : (tensor<?xi32>) -> ()
  return
}

func.func @print_e5m2(%q: tensor<?xf8E5M2>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %q, %c0 : tensor<?xf8E5M2>
  %e = tensor.empty(%n) : tensor<?xi32>
  %codes = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%q : tensor<?xf8E5M2>) outs(%e : tensor<?xi32>) {
  ^bb0(%in: f8E5M2, %out: i32):
    %b = arith.bitcast %in : f8E5M2 to i8
    %i = arith.extui %b : i8 to i32
    linalg.yield %i : i32
  } -> tensor<?xi32>
  call @print_i32(%codes) : (tensor<?xi32>) -> ()
  return
}

// f32 values by their encodings: scales must match bit for bit.
func.func @print_bits(%x: tensor<?xf32>) {
  %bits = arith.bitcast %x : tensor<?xf32> to tensor<?xi32>
  call @print_i32(%bits) : (tensor<?xi32>) -> ()
  return
}

//===----------------------------------------------------------------------===//
// Computations, behind calls so that nothing folds them
//===----------------------------------------------------------------------===//

func.func @quantize_e4m3(%x: tensor<?xf32>, %s: f32) -> (tensor<?xf8E4M3FN>, f32) {
  %q, %a = fp8.quantize %x, %s : tensor<?xf32> -> tensor<?xf8E4M3FN>, f32
  return %q, %a : tensor<?xf8E4M3FN>, f32
}

func.func @quantize_e5m2(%x: tensor<?xf32>, %s: f32) -> tensor<?xf8E5M2> {
  %q = fp8.quantize %x, %s : tensor<?xf32> -> tensor<?xf8E5M2>
  return %q : tensor<?xf8E5M2>
}

// Delayed scaling from this tensor's amax, then the cast with that scale.
func.func @scale_and_quantize(%x: tensor<?xf32>, %prev: f32) -> (f32, tensor<?xf8E4M3FN>) {
  %a = fp8.amax %x : tensor<?xf32>
  %s = fp8.compute_scale %a, %prev for f8E4M3FN : f32
  %q = fp8.quantize %x, %s : tensor<?xf32> -> tensor<?xf8E4M3FN>
  return %s, %q : f32, tensor<?xf8E4M3FN>
}

func.func @scale_variants(%x: tensor<?xf32>, %prev: f32) -> (f32, f32, f32) {
  %a = fp8.amax %x : tensor<?xf32>
  %m = fp8.compute_scale %a, %prev for f8E4M3FN {margin = 1 : i32} : f32
  %p = fp8.compute_scale %a, %prev for f8E4M3FN {power_of_two} : f32
  %e = fp8.compute_scale %a, %prev for f8E5M2 : f32
  return %m, %p, %e : f32, f32, f32
}

func.func @delayed(%amax: f32, %prev: f32) -> f32 {
  %s = fp8.compute_scale %amax, %prev for f8E4M3FN : f32
  return %s : f32
}

func.func @current(%amax: f32) -> f32 {
  %s = fp8.compute_scale %amax for f8E4M3FN : f32
  return %s : f32
}

func.func @current_eps(%amax: f32) -> f32 {
  %s = fp8.compute_scale %amax for f8E4M3FN {epsilon = 1.0e-3 : f32} : f32
  return %s : f32
}

func.func @from_history(%h: tensor<4xf32>, %prev: f32) -> (f32, f32) {
  %m = fp8.compute_scale %h, %prev for f8E4M3FN : tensor<4xf32>
  %r = fp8.compute_scale %h, %prev for f8E4M3FN {algo = #fp8.amax_algo<most_recent>} : tensor<4xf32>
  return %m, %r : f32, f32
}

func.func @update(%h: tensor<4xf32>, %amax: f32) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = fp8.record_amax %h, %amax : tensor<4xf32>
  %o = fp8.roll_history %r : tensor<4xf32>
  return %r, %o : tensor<4xf32>, tensor<4xf32>
}

func.func @gemm(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %bias: tensor<2xf32>,
                %sa: f32, %sb: f32) -> (tensor<2x2xf32>, f32) {
  %one = arith.constant 1.0 : f32
  %qa = fp8.quantize %a, %one : tensor<2x3xf32> -> tensor<2x3xf8E4M3FN>
  %qb = fp8.quantize %b, %one : tensor<2x3xf32> -> tensor<2x3xf8E5M2>
  %d, %amax = fp8.scaled_matmul %qa, %qb scales %sa, %sb bias %bias : tensor<2xf32> {transpose_rhs}
      : tensor<2x3xf8E4M3FN>, tensor<2x3xf8E5M2> -> tensor<2x2xf32>, f32
  return %d, %amax : tensor<2x2xf32>, f32
}

// Batched lhs, shared rank-2 rhs (K x N), bf16 result.
func.func @batch_gemm(%a: tensor<2x2x3xf32>, %bt: tensor<3x2xf32>, %bias: tensor<2xbf16>,
                      %sa: f32, %sb: f32) -> tensor<2x2x2xbf16> {
  %one = arith.constant 1.0 : f32
  %qa = fp8.quantize %a, %one : tensor<2x2x3xf32> -> tensor<2x2x3xf8E4M3FN>
  %qb = fp8.quantize %bt, %one : tensor<3x2xf32> -> tensor<3x2xf8E5M2>
  %d = fp8.scaled_matmul %qa, %qb scales %sa, %sb bias %bias : tensor<2xbf16>
      : tensor<2x2x3xf8E4M3FN>, tensor<3x2xf8E5M2> -> tensor<2x2x2xbf16>
  return %d : tensor<2x2x2xbf16>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %prev = arith.constant 2.5 : f32

  // E4M3 saturating casts: 464 is the tie between 448 and 480 (to even: 448),
  // 465 and 1000 saturate, +-Inf to +-448, any NaN to 0x7F, 2^-9 is the
  // smallest subnormal, 2^-10 ties to 0, 1.5 * 2^-10 rounds up to 2^-9, 17
  // ties to 16. The amax ignores NaN and sees Inf.
  %x4 = arith.constant dense<[464.0, 465.0, 1000.0, 0xFF800000, 0x7F800000, 0x7FC00000,
      0xFFC00001, 0.001953125, 0.0009765625, 0.00146484375, 0.0, -0.0, 448.0, 17.0,
      -465.0, 0.3]> : tensor<16xf32>
  %x4d = tensor.cast %x4 : tensor<16xf32> to tensor<?xf32>
  %q4, %a4 = call @quantize_e4m3(%x4d, %one) : (tensor<?xf32>, f32) -> (tensor<?xf8E4M3FN>, f32)
  call @print_e4m3(%q4) : (tensor<?xf8E4M3FN>) -> ()
  // CHECK: [126,  126,  126,  254,  126,  127,  127,  1,  0,  1,  0,  128,  126,  88,  254,  42]
  %a4t = tensor.from_elements %a4 : tensor<1xf32>
  %a4d = tensor.cast %a4t : tensor<1xf32> to tensor<?xf32>
  call @print_f32(%a4d) : (tensor<?xf32>) -> ()
  // CHECK: [inf]

  // E5M2: max 57344; 59392 (the tie above it) and 61440 saturate; 2^-16 is
  // the smallest subnormal, 2^-17 ties to 0, 1.5 * 2^-16 ties up to 2^-15.
  %x5 = arith.constant dense<[57344.0, 59392.0, 61440.0, 1.0e6, 0xFF800000, 0x7FC00000,
      1.52587890625e-05, 7.62939453125e-06, 2.288818359375e-05, 0.1]> : tensor<10xf32>
  %x5d = tensor.cast %x5 : tensor<10xf32> to tensor<?xf32>
  %q5 = call @quantize_e5m2(%x5d, %one) : (tensor<?xf32>, f32) -> tensor<?xf8E5M2>
  call @print_e5m2(%q5) : (tensor<?xf8E5M2>) -> ()
  // CHECK: [123,  123,  123,  123,  251,  127,  1,  0,  2,  46]

  // The seeds' vectors: amax 0.03 -> 14933.333984375, 1000 -> 0.448000014,
  // 0.05 -> 8960, 1200 -> 0.373333335; and each tensor cast with its scale.
  %v1 = arith.constant dense<[0.03, -0.02, 0.001]> : tensor<3xf32>
  %v2 = arith.constant dense<[1000.0, -1000.0, 1.0]> : tensor<3xf32>
  %v3 = arith.constant dense<[-0.05, 0.01]> : tensor<2xf32>
  %v4 = arith.constant dense<[1200.0, -3.0]> : tensor<2xf32>
  %v1d = tensor.cast %v1 : tensor<3xf32> to tensor<?xf32>
  %v2d = tensor.cast %v2 : tensor<3xf32> to tensor<?xf32>
  %v3d = tensor.cast %v3 : tensor<2xf32> to tensor<?xf32>
  %v4d = tensor.cast %v4 : tensor<2xf32> to tensor<?xf32>
  %s1, %q1 = call @scale_and_quantize(%v1d, %prev) : (tensor<?xf32>, f32) -> (f32, tensor<?xf8E4M3FN>)
  %s2, %q2 = call @scale_and_quantize(%v2d, %prev) : (tensor<?xf32>, f32) -> (f32, tensor<?xf8E4M3FN>)
  %s3, %q3 = call @scale_and_quantize(%v3d, %prev) : (tensor<?xf32>, f32) -> (f32, tensor<?xf8E4M3FN>)
  %s4, %q4b = call @scale_and_quantize(%v4d, %prev) : (tensor<?xf32>, f32) -> (f32, tensor<?xf8E4M3FN>)
  %seeds = tensor.from_elements %s1, %s2, %s3, %s4 : tensor<4xf32>
  %seedsd = tensor.cast %seeds : tensor<4xf32> to tensor<?xf32>
  call @print_bits(%seedsd) : (tensor<?xf32>) -> ()
  // CHECK: [1181308246,  1055219778,  1175191552,  1052714380]
  call @print_e4m3(%q1) : (tensor<?xf8E4M3FN>) -> ()
  // CHECK: [126,  249,  87]
  call @print_e4m3(%q2) : (tensor<?xf8E4M3FN>) -> ()
  // CHECK: [126,  254,  46]

  // amax 0.03 with margin 1 (7466.66699), power of two (8192), and for
  // E5M2 (57344 / 0.03 = 1911466.75).
  %m, %p, %e = call @scale_variants(%v1d, %prev) : (tensor<?xf32>, f32) -> (f32, f32, f32)
  %variants = tensor.from_elements %m, %p, %e : tensor<3xf32>
  %variantsd = tensor.cast %variants : tensor<3xf32> to tensor<?xf32>
  call @print_bits(%variantsd) : (tensor<?xf32>) -> ()
  // CHECK: [1172919638,  1174405120,  1240028502]

  // Guards: delayed scaling keeps the previous scale (2.5) for amax 0, Inf
  // and NaN; current scaling gives 1.
  %zero = arith.constant 0.0 : f32
  %inf = arith.constant 0x7F800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %g1 = call @delayed(%zero, %prev) : (f32, f32) -> f32
  %g2 = call @delayed(%inf, %prev) : (f32, f32) -> f32
  %g3 = call @delayed(%nan, %prev) : (f32, f32) -> f32
  %g4 = call @current(%zero) : (f32) -> f32
  %g5 = call @current(%inf) : (f32) -> f32
  %g6 = call @current(%nan) : (f32) -> f32
  %guards = tensor.from_elements %g1, %g2, %g3, %g4, %g5, %g6 : tensor<6xf32>
  %guardsd = tensor.cast %guards : tensor<6xf32> to tensor<?xf32>
  call @print_f32(%guardsd) : (tensor<?xf32>) -> ()
  // CHECK: [2.5,  2.5,  2.5,  1,  1,  1]

  // An infinite scale becomes FLT_MAX (0x7F7FFFFF); epsilon 1e-3 raises
  // amax 0 to it (448 / 1e-3 = 447999.96875).
  %tiny = arith.constant 1.0e-45 : f32
  %t1 = call @current(%tiny) : (f32) -> f32
  %t2 = call @current_eps(%zero) : (f32) -> f32
  %limits = tensor.from_elements %t1, %t2 : tensor<2xf32>
  %limitsd = tensor.cast %limits : tensor<2xf32> to tensor<?xf32>
  call @print_bits(%limitsd) : (tensor<?xf32>) -> ()
  // CHECK: [2139095039,  1222295551]

  // Histories: max over [0.5, 3, NaN, 1] is 3 (448 / 3 = 149.333328),
  // most_recent is row 0 (896).
  %h = arith.constant dense<[0.5, 3.0, 0x7FC00000, 1.0]> : tensor<4xf32>
  %hm, %hr = call @from_history(%h, %prev) : (tensor<4xf32>, f32) -> (f32, f32)
  %hs = tensor.from_elements %hm, %hr : tensor<2xf32>
  %hsd = tensor.cast %hs : tensor<2xf32> to tensor<?xf32>
  call @print_bits(%hsd) : (tensor<?xf32>) -> ()
  // CHECK: [1125471573,  1147142144]

  // Record 0.75 into row 0 (max with 0.25), then roll: new[i] = old[i+1],
  // new[N-1] = old[0], new[0] = 0.
  %h2 = arith.constant dense<[0.25, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %amax = arith.constant 0.75 : f32
  %rec, %rol = call @update(%h2, %amax) : (tensor<4xf32>, f32) -> (tensor<4xf32>, tensor<4xf32>)
  %recd = tensor.cast %rec : tensor<4xf32> to tensor<?xf32>
  %rold = tensor.cast %rol : tensor<4xf32> to tensor<?xf32>
  call @print_f32(%recd) : (tensor<?xf32>) -> ()
  // CHECK: [0.75,  1,  2,  3]
  call @print_f32(%rold) : (tensor<?xf32>) -> ()
  // CHECK: [0,  2,  3,  0.75]

  // GEMM against the exact (rational) product of the FP8 operands:
  // [[0.125, -0.6875], [1.4375, -0.984375]], amax 1.4375.
  %A = arith.constant dense<[[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]]> : tensor<2x3xf32>
  %B = arith.constant dense<[[2.0, 1.0, -4.0], [0.5, -0.75, 1.0]]> : tensor<2x3xf32>
  %bias = arith.constant dense<[0.125, -1.0]> : tensor<2xf32>
  %sa = arith.constant 0.5 : f32
  %sb = arith.constant 0.25 : f32
  %D, %Damax = call @gemm(%A, %B, %bias, %sa, %sb)
      : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>, f32, f32) -> (tensor<2x2xf32>, f32)
  %Dflat = tensor.collapse_shape %D [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %Dd = tensor.cast %Dflat : tensor<4xf32> to tensor<?xf32>
  call @print_f32(%Dd) : (tensor<?xf32>) -> ()
  // CHECK: [0.125,  -0.6875,  1.4375,  -0.984375]
  %Dat = tensor.from_elements %Damax : tensor<1xf32>
  %Dad = tensor.cast %Dat : tensor<1xf32> to tensor<?xf32>
  call @print_f32(%Dad) : (tensor<?xf32>) -> ()
  // CHECK: [1.4375]

  // Batch 0 is the GEMM above, batch 1 doubles lhs:
  // [[0.125, -0.375], [2.75, -0.96875]].
  %A2 = arith.constant dense<[[[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]],
                              [[3.0, -4.0, 0.5], [6.0, 1.0, -2.0]]]> : tensor<2x2x3xf32>
  %Bt = arith.constant dense<[[2.0, 0.5], [1.0, -0.75], [-4.0, 1.0]]> : tensor<3x2xf32>
  %biasb = arith.constant dense<[0.125, -1.0]> : tensor<2xbf16>
  %Db = call @batch_gemm(%A2, %Bt, %biasb, %sa, %sb)
      : (tensor<2x2x3xf32>, tensor<3x2xf32>, tensor<2xbf16>, f32, f32) -> tensor<2x2x2xbf16>
  %Dbf = tensor.collapse_shape %Db [[0, 1, 2]] : tensor<2x2x2xbf16> into tensor<8xbf16>
  %Dbw = arith.extf %Dbf : tensor<8xbf16> to tensor<8xf32>
  %Dbd = tensor.cast %Dbw : tensor<8xf32> to tensor<?xf32>
  call @print_f32(%Dbd) : (tensor<?xf32>) -> ()
  // CHECK: [0.125,  -0.6875,  1.4375,  -0.984375,  0.125,  -0.375,  2.75,  -0.96875]

  // On constants: the second RUN folds these with the fp8 folders, the first
  // runs them. cast_transpose of [[1, 2, 3], [4, 5, 6]] (codes 56 64 68 /
  // 72 74 76), dequantize of [448, -448, 0.5, 16] by 0.25, and a delayed
  // scale from a constant history.
  %ct = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %ctq, %ctt, %cta = fp8.cast_transpose %ct, %one
      : tensor<2x3xf32> -> tensor<2x3xf8E4M3FN>, tensor<3x2xf8E4M3FN>, f32
  %ctqf = tensor.collapse_shape %ctq [[0, 1]] : tensor<2x3xf8E4M3FN> into tensor<6xf8E4M3FN>
  %cttf = tensor.collapse_shape %ctt [[0, 1]] : tensor<3x2xf8E4M3FN> into tensor<6xf8E4M3FN>
  %ctqd = tensor.cast %ctqf : tensor<6xf8E4M3FN> to tensor<?xf8E4M3FN>
  %cttd = tensor.cast %cttf : tensor<6xf8E4M3FN> to tensor<?xf8E4M3FN>
  call @print_e4m3(%ctqd) : (tensor<?xf8E4M3FN>) -> ()
  // CHECK: [56,  64,  68,  72,  74,  76]
  call @print_e4m3(%cttd) : (tensor<?xf8E4M3FN>) -> ()
  // CHECK: [56,  72,  64,  74,  68,  76]
  %dq = arith.constant dense<[448.0, -448.0, 0.5, 16.0]> : tensor<4xf8E4M3FN>
  %quarter = arith.constant 0.25 : f32
  %dqx = fp8.dequantize %dq, %quarter : tensor<4xf8E4M3FN> -> tensor<4xf32>
  %dqxd = tensor.cast %dqx : tensor<4xf32> to tensor<?xf32>
  call @print_f32(%dqxd) : (tensor<?xf32>) -> ()
  // CHECK: [112,  -112,  0.125,  4]
  %hc = arith.constant dense<[0.0, 0.03, 0x7FC00000, 0.01]> : tensor<4xf32>
  %hcr = fp8.record_amax %hc, %cta : tensor<4xf32>
  %hcs = fp8.compute_scale %hcr, %prev for f8E4M3FN : tensor<4xf32>
  %hco = fp8.roll_history %hcr : tensor<4xf32>
  %hcst = tensor.from_elements %hcs : tensor<1xf32>
  %hcsd = tensor.cast %hcst : tensor<1xf32> to tensor<?xf32>
  call @print_bits(%hcsd) : (tensor<?xf32>) -> ()
  // 448 / 6 = 74.6666641 (amax 6 from the cast, recorded into row 0)
  // CHECK: [1117082965]
  %hcod = tensor.cast %hco : tensor<4xf32> to tensor<?xf32>
  call @print_f32(%hcod) : (tensor<?xf32>) -> ()
  // CHECK: [0,  nan,  0.01,  6]
  return
}
