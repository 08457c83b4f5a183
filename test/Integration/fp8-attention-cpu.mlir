// fp8.attention on the CPU (the FlashAttention-2 lowering of
// convert-fp8-to-linalg) against the as-written math in f64: Q K^T, scale,
// mask, softmax and P V over whole tensors, in this file. Shapes with
// tails (70 query rows and 133 keys against 64 x 64 tiles), GQA (4 query
// heads on 2 key/value heads), a KV-cache prefix (causal_offset = 63), an
// additive -inf mask that hides a whole key tile from some rows, a boolean
// mask with a fully masked row, dynamic shapes, bf16, FP8 scores (an
// E4M3 query and key with a scale per token), and FP8 probabilities and
// values (P rounded to E4M3 per key tile of 32, against an f64 reference
// of that rounding: tiles of another size, or P not rounded, fail it by
// far). Each check prints 1
// when the largest difference is within the tolerance; a NaN where the f64
// graph has none (or none where it has one) is never within it.
//
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-cpu="vectorize=false threads=false" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
//
// fp8-decompose-attention (the GPU route's lowering: the op's math on whole
// tensors, scores materialized) passes the same checks against the f64
// graph, so the flash lowering and the decomposition agree within them.
// RUN: fp8-opt %s --fp8-decompose-attention --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
//
// With round-probabilities (what fp8-lower-to-gpu runs: exp(S - max)
// rounded to bf16 before the row sum and P V, as FlashAttention's P V GEMM
// takes it) the bf16 case stays within its tolerance (f32 ones are not
// rounded).
// RUN: fp8-opt %s --fp8-decompose-attention=round-probabilities --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

#id4 = affine_map<(n, h, i, j) -> (n, h, i, j)>
#id3 = affine_map<(n, h, i) -> (n, h, i)>
#row = affine_map<(n, h, i, j) -> (n, h, i)>
#mask = affine_map<(n, h, i, j) -> (0, 0, i, j)>
#qk_q = affine_map<(n, h, i, j, c) -> (n, h, i, c)>
#qk_k = affine_map<(n, h, i, j, c) -> (n, h floordiv 2, j, c)>
#qk_s = affine_map<(n, h, i, j, c) -> (n, h, i, j)>
#pv_p = affine_map<(n, h, i, c, j) -> (n, h, i, j)>
#pv_v = affine_map<(n, h, i, c, j) -> (n, h floordiv 2, j, c)>
#pv_o = affine_map<(n, h, i, c, j) -> (n, h, i, c)>
#key_tile = affine_map<(n, h, i, j) -> (n, h, i, j floordiv 32)>
#tiles_u = affine_map<(n, h, i, t, u) -> (n, h, i, u)>
#tiles_t = affine_map<(n, h, i, t, u) -> (n, h, i, t)>
#head_scale = affine_map<(n, h, i, c) -> (n, h floordiv 2)>

func.func private @printMemrefF32(memref<*xf32>)

//===----------------------------------------------------------------------===//
// Inputs and the f64 reference
//===----------------------------------------------------------------------===//

/// sin(phase + step * (flat index)): smooth values in [-1, 1], in f64.
func.func @wave(%init: tensor<?x?x?x?xf64>, %phase: f64, %step: f64)
    -> tensor<?x?x?x?xf64> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d1 = tensor.dim %init, %c1 : tensor<?x?x?x?xf64>
  %d2 = tensor.dim %init, %c2 : tensor<?x?x?x?xf64>
  %d3 = tensor.dim %init, %c3 : tensor<?x?x?x?xf64>
  %r = linalg.generic {indexing_maps = [#id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%init : tensor<?x?x?x?xf64>) {
  ^bb0(%out: f64):
    %h = linalg.index 1 : index
    %i = linalg.index 2 : index
    %c = linalg.index 3 : index
    %a = arith.muli %h, %d2 : index
    %b = arith.addi %a, %i : index
    %e = arith.muli %b, %d3 : index
    %f = arith.addi %e, %c : index
    %g = arith.index_cast %f : index to i64
    %x = arith.sitofp %g : i64 to f64
    %y = arith.mulf %x, %step : f64
    %z = arith.addf %y, %phase : f64
    %s = math.sin %z : f64
    linalg.yield %s : f64
  } -> tensor<?x?x?x?xf64>
  return %r : tensor<?x?x?x?xf64>
}

/// The graph as exporters write it, in f64: s = Q K^T * scale + bias,
/// softmax over the keys (max, exp(s - max), sum, divide), P V; and
/// lse = max + log(sum). Key/value head h / 2 serves query head h.
func.func @reference(%q: tensor<1x4x70x4xf64>, %k: tensor<1x2x133x4xf64>,
                     %v: tensor<1x2x133x3xf64>, %bias: tensor<1x4x70x133xf64>,
                     %scale: f64)
    -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>) {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %se = tensor.empty() : tensor<1x4x70x133xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%se : tensor<1x4x70x133xf64>) -> tensor<1x4x70x133xf64>
  %qk = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>) outs(%s0 : tensor<1x4x70x133xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x133xf64>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%qk, %bias : tensor<1x4x70x133xf64>, tensor<1x4x70x133xf64>) outs(%se : tensor<1x4x70x133xf64>) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %m = arith.mulf %a, %scale : f64
    %r = arith.addf %m, %b : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x133xf64>
  %re = tensor.empty() : tensor<1x4x70xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%re : tensor<1x4x70xf64>) -> tensor<1x4x70xf64>
  %max = linalg.generic {indexing_maps = [#id4, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x4x70x133xf64>) outs(%m0 : tensor<1x4x70xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70xf64>
  %l0 = linalg.fill ins(%zero : f64) outs(%re : tensor<1x4x70xf64>) -> tensor<1x4x70xf64>
  %sum = linalg.generic {indexing_maps = [#id4, #row, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %max : tensor<1x4x70x133xf64>, tensor<1x4x70xf64>) outs(%l0 : tensor<1x4x70xf64>) {
  ^bb0(%a: f64, %mx: f64, %acc: f64):
    %d = arith.subf %a, %mx : f64
    %e = math.exp %d : f64
    %r = arith.addf %acc, %e : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70xf64>
  %p = linalg.generic {indexing_maps = [#id4, #row, #row, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %max, %sum : tensor<1x4x70x133xf64>, tensor<1x4x70xf64>, tensor<1x4x70xf64>)
      outs(%se : tensor<1x4x70x133xf64>) {
  ^bb0(%a: f64, %mx: f64, %l: f64, %out: f64):
    %d = arith.subf %a, %mx : f64
    %e = math.exp %d : f64
    %r = arith.divf %e, %l : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x133xf64>
  %oe = tensor.empty() : tensor<1x4x70x3xf64>
  %o0 = linalg.fill ins(%zero : f64) outs(%oe : tensor<1x4x70x3xf64>) -> tensor<1x4x70x3xf64>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<1x4x70x133xf64>, tensor<1x2x133x3xf64>) outs(%o0 : tensor<1x4x70x3xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %m : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x3xf64>
  %lse = linalg.generic {indexing_maps = [#id3, #id3, #id3],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%max, %sum : tensor<1x4x70xf64>, tensor<1x4x70xf64>) outs(%re : tensor<1x4x70xf64>) {
  ^bb0(%mx: f64, %l: f64, %out: f64):
    %g = math.log %l : f64
    %r = arith.addf %mx, %g : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70xf64>
  return %o, %lse : tensor<1x4x70x3xf64>, tensor<1x4x70xf64>
}

/// The op's FP8-value semantics in f64: M[t] the running max through key
/// tile t (32 keys), p8 = e4m3(exp(s - M[t]) * ps) (rounded through f32:
/// p * ps is exact in f32's 24 bits only approximately, but never near an
/// E4M3 midpoint for these inputs), O = sum_j exp(M[t] - m) p8 v8 times
/// vs[head] / ps / l, l = sum_j exp(s - m) unrounded.
func.func @reference_fp8_values(%q: tensor<1x4x70x4xf64>, %k: tensor<1x2x133x4xf64>,
                                %v8: tensor<1x2x133x3xf64>, %vs: tensor<1x2xf64>,
                                %bias: tensor<1x4x70x133xf64>, %scale: f64,
                                %ps: f64) -> tensor<1x4x70x3xf64> {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %se = tensor.empty() : tensor<1x4x70x133xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%se : tensor<1x4x70x133xf64>) -> tensor<1x4x70x133xf64>
  %qk = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>) outs(%s0 : tensor<1x4x70x133xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %p : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x133xf64>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%qk, %bias : tensor<1x4x70x133xf64>, tensor<1x4x70x133xf64>) outs(%se : tensor<1x4x70x133xf64>) {
  ^bb0(%a: f64, %b: f64, %out: f64):
    %m = arith.mulf %a, %scale : f64
    %r = arith.addf %m, %b : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x133xf64>
  %re = tensor.empty() : tensor<1x4x70xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%re : tensor<1x4x70xf64>) -> tensor<1x4x70xf64>
  %max = linalg.generic {indexing_maps = [#id4, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x4x70x133xf64>) outs(%m0 : tensor<1x4x70xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70xf64>
  %l0 = linalg.fill ins(%zero : f64) outs(%re : tensor<1x4x70xf64>) -> tensor<1x4x70xf64>
  %sum = linalg.generic {indexing_maps = [#id4, #row, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %max : tensor<1x4x70x133xf64>, tensor<1x4x70xf64>) outs(%l0 : tensor<1x4x70xf64>) {
  ^bb0(%a: f64, %mx: f64, %acc: f64):
    %d = arith.subf %a, %mx : f64
    %e = math.exp %d : f64
    %r = arith.addf %acc, %e : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70xf64>
  // Each tile's max (133 keys: 4 tiles of 32 and one of 5), then the
  // running max through each tile.
  %te = tensor.empty() : tensor<1x4x70x5xf64>
  %t0 = linalg.fill ins(%ninf : f64) outs(%te : tensor<1x4x70x5xf64>) -> tensor<1x4x70x5xf64>
  %tmax = linalg.generic {indexing_maps = [#id4, #key_tile],
                          iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x4x70x133xf64>) outs(%t0 : tensor<1x4x70x5xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x5xf64>
  %run = linalg.generic {indexing_maps = [#tiles_u, #tiles_t],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%tmax : tensor<1x4x70x5xf64>) outs(%t0 : tensor<1x4x70x5xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %t = linalg.index 3 : index
    %u = linalg.index 4 : index
    %before = arith.cmpi ule, %u, %t : index
    %m = arith.maximumf %acc, %a : f64
    %r = arith.select %before, %m, %acc : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x5xf64>
  %w = linalg.generic {indexing_maps = [#id4, #key_tile, #row, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %run, %max : tensor<1x4x70x133xf64>, tensor<1x4x70x5xf64>, tensor<1x4x70xf64>)
      outs(%se : tensor<1x4x70x133xf64>) {
  ^bb0(%a: f64, %mt: f64, %mx: f64, %out: f64):
    %none = arith.cmpf oeq, %mt, %ninf : f64
    %d = arith.subf %a, %mt : f64
    %e = math.exp %d : f64
    %p = arith.select %none, %zero, %e : f64
    %sp = arith.mulf %p, %ps : f64
    %sp32 = arith.truncf %sp : f64 to f32
    %p8 = arith.truncf %sp32 : f32 to f8E4M3FN
    %p8w = arith.extf %p8 : f8E4M3FN to f64
    %dm = arith.subf %mt, %mx : f64
    %rescale = math.exp %dm : f64
    %r = arith.mulf %p8w, %rescale : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x133xf64>
  %oe = tensor.empty() : tensor<1x4x70x3xf64>
  %o0 = linalg.fill ins(%zero : f64) outs(%oe : tensor<1x4x70x3xf64>) -> tensor<1x4x70x3xf64>
  %o = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %v8 : tensor<1x4x70x133xf64>, tensor<1x2x133x3xf64>) outs(%o0 : tensor<1x4x70x3xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %m : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x3xf64>
  %out = linalg.generic {indexing_maps = [#id4, #head_scale, #row, #id4],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o, %vs, %sum : tensor<1x4x70x3xf64>, tensor<1x2xf64>, tensor<1x4x70xf64>)
      outs(%oe : tensor<1x4x70x3xf64>) {
  ^bb0(%a: f64, %v: f64, %l: f64, %x: f64):
    %f = arith.mulf %a, %v : f64
    %g = arith.divf %f, %ps : f64
    %r = arith.divf %g, %l : f64
    linalg.yield %r : f64
  } -> tensor<1x4x70x3xf64>
  return %out : tensor<1x4x70x3xf64>
}

/// The reference's bias: -inf above the causal diagonal (j > i + offset)
/// when %causal, plus %mask (f64, broadcast over batch and heads).
func.func @bias(%mask: tensor<1x1x70x133xf64>, %causal: i1, %offset: index)
    -> tensor<1x4x70x133xf64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %e = tensor.empty() : tensor<1x4x70x133xf64>
  %r = linalg.generic {indexing_maps = [#mask, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%mask : tensor<1x1x70x133xf64>) outs(%e : tensor<1x4x70x133xf64>) {
  ^bb0(%m: f64, %out: f64):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %lim = arith.addi %i, %offset : index
    %after = arith.cmpi sgt, %j, %lim : index
    %hide = arith.andi %after, %causal : i1
    %b = arith.select %hide, %ninf, %m : f64
    linalg.yield %b : f64
  } -> tensor<1x4x70x133xf64>
  return %r : tensor<1x4x70x133xf64>
}

/// Largest |got - ref|; a NaN on either side that the other does not have
/// counts as +inf, NaN on both as 0.
func.func @max_error(%got: tensor<?x?x?x?xf32>, %ref: tensor<?x?x?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %e = tensor.empty() : tensor<f64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r = linalg.generic {indexing_maps = [#id4, #id4, affine_map<(n, h, i, j) -> ()>],
                       iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%got, %ref : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>) outs(%init : tensor<f64>) {
  ^bb0(%g: f32, %f: f64, %acc: f64):
    %gx = arith.extf %g : f32 to f64
    %gn = arith.cmpf uno, %gx, %gx : f64
    %fn = arith.cmpf uno, %f, %f : f64
    %d = arith.subf %gx, %f : f64
    %a = math.absf %d : f64
    %same = arith.cmpi eq, %gn, %fn : i1
    %bad = arith.select %same, %zero, %inf : f64
    %err = arith.select %fn, %bad, %a : f64
    %err2 = arith.select %gn, %bad, %err : f64
    %m = arith.maximumf %acc, %err2 : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %x = tensor.extract %r[] : tensor<f64>
  return %x : f64
}

/// Largest |lse - ref| where the f64 row is not fully masked; where it is
/// (its f64 lse is NaN or -inf, depending on what exp(-inf - -inf) gives),
/// the op's must be -inf.
func.func @lse_error(%got: tensor<1x4x70xf32>, %ref: tensor<1x4x70xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %e = tensor.empty() : tensor<f64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r = linalg.generic {indexing_maps = [#id3, #id3, affine_map<(n, h, i) -> ()>],
                       iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%got, %ref : tensor<1x4x70xf32>, tensor<1x4x70xf64>) outs(%init : tensor<f64>) {
  ^bb0(%g: f32, %f: f64, %acc: f64):
    %gx = arith.extf %g : f32 to f64
    %fnan = arith.cmpf uno, %f, %f : f64
    %fninf = arith.cmpf oeq, %f, %ninf : f64
    %fn = arith.ori %fnan, %fninf : i1
    %isninf = arith.cmpf oeq, %gx, %ninf : f64
    %ok = arith.select %isninf, %zero, %inf : f64
    %d = arith.subf %gx, %f : f64
    %a = math.absf %d : f64
    %nan = arith.cmpf uno, %a, %a : f64
    %a2 = arith.select %nan, %inf, %a : f64
    %err = arith.select %fn, %ok, %a2 : f64
    %m = arith.maximumf %acc, %err : f64
    linalg.yield %m : f64
  } -> tensor<f64>
  %x = tensor.extract %r[] : tensor<f64>
  return %x : f64
}

func.func @check(%got: tensor<1x4x70x3xf32>, %ref: tensor<1x4x70x3xf64>, %tol: f64) {
  %g = tensor.cast %got : tensor<1x4x70x3xf32> to tensor<?x?x?x?xf32>
  %r = tensor.cast %ref : tensor<1x4x70x3xf64> to tensor<?x?x?x?xf64>
  %err = call @max_error(%g, %r) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>) -> f64
  %ok = arith.cmpf olt, %err, %tol : f64
  vector.print %ok : i1
  return
}

func.func @check_lse(%got: tensor<1x4x70xf32>, %ref: tensor<1x4x70xf64>, %tol: f64) {
  %err = call @lse_error(%got, %ref) : (tensor<1x4x70xf32>, tensor<1x4x70xf64>) -> f64
  %ok = arith.cmpf olt, %err, %tol : f64
  vector.print %ok : i1
  return
}

//===----------------------------------------------------------------------===//
// The fused op
//===----------------------------------------------------------------------===//

func.func @causal_gqa(%q: tensor<1x4x70x4xf32>, %k: tensor<1x2x133x4xf32>,
                      %v: tensor<1x2x133x3xf32>)
    -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  return %o, %lse : tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
}

func.func @causal_gqa_dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                              %v: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
      -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}

func.func @additive_mask(%q: tensor<1x4x70x4xf32>, %k: tensor<1x2x133x4xf32>,
                         %v: tensor<1x2x133x3xf32>, %m: tensor<1x1x70x133xf32>)
    -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>) {
  %o, %lse = fp8.attention %q, %k, %v mask %m : tensor<1x1x70x133xf32> scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  return %o, %lse : tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
}

func.func @boolean_mask(%q: tensor<1x4x70x4xf32>, %k: tensor<1x2x133x4xf32>,
                        %v: tensor<1x2x133x3xf32>, %m: tensor<1x1x70x133xi1>)
    -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>) {
  %o, %lse = fp8.attention %q, %k, %v mask %m : tensor<1x1x70x133xi1> scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  return %o, %lse : tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
}

func.func @causal_bf16(%q: tensor<1x4x70x4xbf16>, %k: tensor<1x2x133x4xbf16>,
                       %v: tensor<1x2x133x3xbf16>) -> tensor<1x4x70x3xbf16> {
  %o = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>
      -> tensor<1x4x70x3xbf16>
  return %o : tensor<1x4x70x3xbf16>
}

/// FP8 scores: E4M3 query and key, one scale per token.
func.func @fp8_scores(%q: tensor<1x4x70x4xf8E4M3FN>, %k: tensor<1x2x133x4xf8E4M3FN>,
                      %v: tensor<1x2x133x3xf32>, %qs: tensor<1x4x70xf32>,
                      %ks: tensor<1x2x133xf32>)
    -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x4x70xf32>, tensor<1x2x133xf32> scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xf8E4M3FN>, tensor<1x2x133x4xf8E4M3FN>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  return %o, %lse : tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
}

/// FP8 probabilities and values: P in E4M3 per key tile of 32 (133 keys:
/// a tail tile of 5), the value E4M3 with one scale per key/value head.
func.func @fp8_values(%q: tensor<1x4x70x4xf8E4M3FN>, %k: tensor<1x2x133x4xf8E4M3FN>,
                      %v: tensor<1x2x133x3xf8E4M3FN>, %qs: tensor<1x4x70xf32>,
                      %ks: tensor<1x2x133xf32>, %vs: tensor<1x2xf32>)
    -> tensor<1x4x70x3xf32> {
  %o = fp8.attention %q, %k, %v scales %qs, %ks
      : tensor<1x4x70xf32>, tensor<1x2x133xf32> value_scale %vs : tensor<1x2xf32>
      scale 0.5 {block_k = 32, causal, causal_offset = 63, probability_scale = 256.0 : f32}
      : tensor<1x4x70x4xf8E4M3FN>, tensor<1x2x133x4xf8E4M3FN>, tensor<1x2x133x3xf8E4M3FN>
      -> tensor<1x4x70x3xf32>
  return %o : tensor<1x4x70x3xf32>
}

/// base + di * token + dh * head: one scale per token, none a power of two
/// (the op multiplies the sums by them; only powers of two are exact).
func.func @token_scales(%init: tensor<?x?x?xf32>, %base: f32, %di: f32,
                        %dh: f32) -> tensor<?x?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%init : tensor<?x?x?xf32>) {
  ^bb0(%out: f32):
    %h = linalg.index 1 : index
    %i = linalg.index 2 : index
    %hi = arith.index_cast %h : index to i64
    %ii = arith.index_cast %i : index to i64
    %hf = arith.sitofp %hi : i64 to f32
    %if = arith.sitofp %ii : i64 to f32
    %a = arith.mulf %if, %di : f32
    %b = arith.mulf %hf, %dh : f32
    %c = arith.addf %base, %a : f32
    %d = arith.addf %c, %b : f32
    linalg.yield %d : f32
  } -> tensor<?x?x?xf32>
  return %r : tensor<?x?x?xf32>
}

/// x * scale[n, h, i] in f64: an FP8 operand as its real values.
func.func @dequantize(%x: tensor<?x?x?x?xf64>, %s: tensor<?x?x?xf32>) -> tensor<?x?x?x?xf64> {
  %r = linalg.generic {indexing_maps = [#row, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<?x?x?xf32>) outs(%x : tensor<?x?x?x?xf64>) {
  ^bb0(%sv: f32, %xv: f64):
    %s64 = arith.extf %sv : f32 to f64
    %p = arith.mulf %xv, %s64 : f64
    linalg.yield %p : f64
  } -> tensor<?x?x?x?xf64>
  return %r : tensor<?x?x?x?xf64>
}

/// Q = 0 makes every visible key equally likely: row i of a causal
/// attention over v[j] = j is the mean of 0..i, i / 2, and its lse is
/// log(i + 1).
func.func @uniform(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x3x2xf32>,
                   %v: tensor<1x1x3x1xf32>)
    -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 1.0 {causal}
      : tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x1xf32>
      -> tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
  return %o, %lse : tensor<1x1x3x1xf32>, tensor<1x1x3xf32>
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

func.func @main() {
  %c0 = arith.constant 0 : index
  %c63 = arith.constant 63 : index
  %true = arith.constant true
  %false = arith.constant false
  %scale = arith.constant 0.5 : f64
  %tol = arith.constant 1.0e-5 : f64
  %tol_bf16 = arith.constant 1.0e-2 : f64
  %ninf = arith.constant 0xFF800000 : f32

  %qe = tensor.empty() : tensor<1x4x70x4xf64>
  %ke = tensor.empty() : tensor<1x2x133x4xf64>
  %ve = tensor.empty() : tensor<1x2x133x3xf64>
  %p1 = arith.constant 0.3 : f64
  %p2 = arith.constant 1.1 : f64
  %p3 = arith.constant 2.0 : f64
  %s1 = arith.constant 0.37 : f64
  %s2 = arith.constant 0.23 : f64
  %s3 = arith.constant 0.71 : f64
  %qd = tensor.cast %qe : tensor<1x4x70x4xf64> to tensor<?x?x?x?xf64>
  %kd = tensor.cast %ke : tensor<1x2x133x4xf64> to tensor<?x?x?x?xf64>
  %vd = tensor.cast %ve : tensor<1x2x133x3xf64> to tensor<?x?x?x?xf64>
  %qw = call @wave(%qd, %p1, %s1) : (tensor<?x?x?x?xf64>, f64, f64) -> tensor<?x?x?x?xf64>
  %kw = call @wave(%kd, %p2, %s2) : (tensor<?x?x?x?xf64>, f64, f64) -> tensor<?x?x?x?xf64>
  %vw = call @wave(%vd, %p3, %s3) : (tensor<?x?x?x?xf64>, f64, f64) -> tensor<?x?x?x?xf64>
  %q64w = tensor.cast %qw : tensor<?x?x?x?xf64> to tensor<1x4x70x4xf64>
  %k64w = tensor.cast %kw : tensor<?x?x?x?xf64> to tensor<1x2x133x4xf64>
  %v64w = tensor.cast %vw : tensor<?x?x?x?xf64> to tensor<1x2x133x3xf64>
  // The op's inputs in f32, and the reference on exactly those values.
  %q = arith.truncf %q64w : tensor<1x4x70x4xf64> to tensor<1x4x70x4xf32>
  %k = arith.truncf %k64w : tensor<1x2x133x4xf64> to tensor<1x2x133x4xf32>
  %v = arith.truncf %v64w : tensor<1x2x133x3xf64> to tensor<1x2x133x3xf32>
  %q64 = arith.extf %q : tensor<1x4x70x4xf32> to tensor<1x4x70x4xf64>
  %k64 = arith.extf %k : tensor<1x2x133x4xf32> to tensor<1x2x133x4xf64>
  %v64 = arith.extf %v : tensor<1x2x133x3xf32> to tensor<1x2x133x3xf64>

  // Causal with a 63-token prefix, GQA, tails on both tile sizes.
  %zmask = arith.constant dense<0.0> : tensor<1x1x70x133xf64>
  %causal_bias = call @bias(%zmask, %true, %c63)
      : (tensor<1x1x70x133xf64>, i1, index) -> tensor<1x4x70x133xf64>
  %ref_o, %ref_lse = call @reference(%q64, %k64, %v64, %causal_bias, %scale)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x4x70x133xf64>, f64)
     -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>)
  %o, %lse = call @causal_gqa(%q, %k, %v)
      : (tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>)
     -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>)
  // CHECK: 1
  // CHECK-NEXT: 1
  call @check(%o, %ref_o, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  call @check_lse(%lse, %ref_lse, %tol) : (tensor<1x4x70xf32>, tensor<1x4x70xf64>, f64) -> ()

  // The same with every size dynamic: tiles of dynamic size.
  %qdyn = tensor.cast %q : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %kdyn = tensor.cast %k : tensor<1x2x133x4xf32> to tensor<?x?x?x?xf32>
  %vdyn = tensor.cast %v : tensor<1x2x133x3xf32> to tensor<?x?x?x?xf32>
  %od, %lsed = call @causal_gqa_dynamic(%qdyn, %kdyn, %vdyn)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>)
  %ods = tensor.cast %od : tensor<?x?x?x?xf32> to tensor<1x4x70x3xf32>
  %lseds = tensor.cast %lsed : tensor<?x?x?xf32> to tensor<1x4x70xf32>
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%ods, %ref_o, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  call @check_lse(%lseds, %ref_lse, %tol) : (tensor<1x4x70xf32>, tensor<1x4x70xf64>, f64) -> ()

  // Additive mask: -inf over the whole first key tile (keys 0..63) for even
  // rows and on every fifth key, 0.01 j elsewhere. Even rows start the
  // online softmax with a tile that is all -inf.
  %me = tensor.empty() : tensor<1x1x70x133xf32>
  %madd = linalg.generic {indexing_maps = [#id4],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%me : tensor<1x1x70x133xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %c64 = arith.constant 64 : index
    %ir = arith.remui %i, %c2 : index
    %even = arith.cmpi eq, %ir, %c0 : index
    %first = arith.cmpi ult, %j, %c64 : index
    %a = arith.andi %even, %first : i1
    %jr = arith.remui %j, %c5 : index
    %fifth = arith.cmpi eq, %jr, %c0 : index
    %hide = arith.ori %a, %fifth : i1
    %jx = arith.index_cast %j : index to i64
    %jf = arith.sitofp %jx : i64 to f32
    %cst = arith.constant 0.01 : f32
    %w = arith.mulf %jf, %cst : f32
    %r = arith.select %hide, %ninf, %w : f32
    linalg.yield %r : f32
  } -> tensor<1x1x70x133xf32>
  %madd64 = arith.extf %madd : tensor<1x1x70x133xf32> to tensor<1x1x70x133xf64>
  %add_bias = call @bias(%madd64, %false, %c0)
      : (tensor<1x1x70x133xf64>, i1, index) -> tensor<1x4x70x133xf64>
  %ref_ao, %ref_alse = call @reference(%q64, %k64, %v64, %add_bias, %scale)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x4x70x133xf64>, f64)
     -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>)
  %ao, %alse = call @additive_mask(%q, %k, %v, %madd)
      : (tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>, tensor<1x1x70x133xf32>)
     -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%ao, %ref_ao, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  call @check_lse(%alse, %ref_alse, %tol) : (tensor<1x4x70xf32>, tensor<1x4x70xf64>, f64) -> ()

  // Boolean mask: row 3 keeps nothing (NaN in the f64 graph and the op,
  // lse -inf), every other row drops every seventh key.
  %be = tensor.empty() : tensor<1x1x70x133xi1>
  %keep = linalg.generic {indexing_maps = [#id4],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%be : tensor<1x1x70x133xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %row3 = arith.cmpi eq, %i, %c3 : index
    %jr = arith.remui %j, %c7 : index
    %seventh = arith.cmpi eq, %jr, %c0 : index
    %hide = arith.ori %row3, %seventh : i1
    %t = arith.constant true
    %r = arith.xori %hide, %t : i1
    linalg.yield %r : i1
  } -> tensor<1x1x70x133xi1>
  %kb64e = tensor.empty() : tensor<1x1x70x133xf64>
  %kb64 = linalg.generic {indexing_maps = [#id4, #id4],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%keep : tensor<1x1x70x133xi1>) outs(%kb64e : tensor<1x1x70x133xf64>) {
  ^bb0(%in: i1, %out: f64):
    %z = arith.constant 0.0 : f64
    %n = arith.constant 0xFFF0000000000000 : f64
    %r = arith.select %in, %z, %n : f64
    linalg.yield %r : f64
  } -> tensor<1x1x70x133xf64>
  %bool_bias = call @bias(%kb64, %false, %c0)
      : (tensor<1x1x70x133xf64>, i1, index) -> tensor<1x4x70x133xf64>
  %ref_bo, %ref_blse = call @reference(%q64, %k64, %v64, %bool_bias, %scale)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x4x70x133xf64>, f64)
     -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>)
  %bo, %blse = call @boolean_mask(%q, %k, %v, %keep)
      : (tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>, tensor<1x1x70x133xi1>)
     -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%bo, %ref_bo, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  call @check_lse(%blse, %ref_blse, %tol) : (tensor<1x4x70xf32>, tensor<1x4x70xf64>, f64) -> ()
  // The fully masked row itself: NaN, and lse -inf.
  %c1 = arith.constant 1 : index
  %c3i = arith.constant 3 : index
  %nanrow = tensor.extract %bo[%c0, %c1, %c3i, %c0] : tensor<1x4x70x3xf32>
  %ninfrow = tensor.extract %blse[%c0, %c1, %c3i] : tensor<1x4x70xf32>
  // CHECK-NEXT: nan
  // CHECK-NEXT: -inf
  vector.print %nanrow : f32
  vector.print %ninfrow : f32

  // bf16 in and out: the f64 graph on the bf16 inputs, the output rounded
  // once to bf16 (relative 2^-9 of values below 1).
  %qb = arith.truncf %q : tensor<1x4x70x4xf32> to tensor<1x4x70x4xbf16>
  %kb = arith.truncf %k : tensor<1x2x133x4xf32> to tensor<1x2x133x4xbf16>
  %vb = arith.truncf %v : tensor<1x2x133x3xf32> to tensor<1x2x133x3xbf16>
  %qb64 = arith.extf %qb : tensor<1x4x70x4xbf16> to tensor<1x4x70x4xf64>
  %kb64x = arith.extf %kb : tensor<1x2x133x4xbf16> to tensor<1x2x133x4xf64>
  %vb64 = arith.extf %vb : tensor<1x2x133x3xbf16> to tensor<1x2x133x3xf64>
  %ref_bfo, %ref_bflse = call @reference(%qb64, %kb64x, %vb64, %causal_bias, %scale)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x4x70x133xf64>, f64)
     -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>)
  %bfo = call @causal_bf16(%qb, %kb, %vb)
      : (tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>) -> tensor<1x4x70x3xbf16>
  %bfo32 = arith.extf %bfo : tensor<1x4x70x3xbf16> to tensor<1x4x70x3xf32>
  // CHECK-NEXT: 1
  call @check(%bfo32, %ref_bfo, %tol_bf16) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()

  // FP8 scores (E4M3 query and key with a scale per token, f32 value)
  // against the f64 graph on the dequantized values.
  %q8 = arith.truncf %q : tensor<1x4x70x4xf32> to tensor<1x4x70x4xf8E4M3FN>
  %k8 = arith.truncf %k : tensor<1x2x133x4xf32> to tensor<1x2x133x4xf8E4M3FN>
  %qse = tensor.empty() : tensor<1x4x70xf32>
  %kse = tensor.empty() : tensor<1x2x133xf32>
  %qsd = tensor.cast %qse : tensor<1x4x70xf32> to tensor<?x?x?xf32>
  %ksd = tensor.cast %kse : tensor<1x2x133xf32> to tensor<?x?x?xf32>
  %qsb = arith.constant 0.3 : f32
  %qsi = arith.constant 0.017 : f32
  %qsh = arith.constant 0.11 : f32
  %ksb = arith.constant 1.7 : f32
  %ksi = arith.constant -0.009 : f32
  %ksh = arith.constant 0.37 : f32
  %qsw = call @token_scales(%qsd, %qsb, %qsi, %qsh) : (tensor<?x?x?xf32>, f32, f32, f32) -> tensor<?x?x?xf32>
  %ksw = call @token_scales(%ksd, %ksb, %ksi, %ksh) : (tensor<?x?x?xf32>, f32, f32, f32) -> tensor<?x?x?xf32>
  %qs = tensor.cast %qsw : tensor<?x?x?xf32> to tensor<1x4x70xf32>
  %ks = tensor.cast %ksw : tensor<?x?x?xf32> to tensor<1x2x133xf32>
  %q8w = arith.extf %q8 : tensor<1x4x70x4xf8E4M3FN> to tensor<1x4x70x4xf32>
  %k8w = arith.extf %k8 : tensor<1x2x133x4xf8E4M3FN> to tensor<1x2x133x4xf32>
  %q8d = arith.extf %q8w : tensor<1x4x70x4xf32> to tensor<1x4x70x4xf64>
  %k8d = arith.extf %k8w : tensor<1x2x133x4xf32> to tensor<1x2x133x4xf64>
  %q8dd = tensor.cast %q8d : tensor<1x4x70x4xf64> to tensor<?x?x?x?xf64>
  %k8dd = tensor.cast %k8d : tensor<1x2x133x4xf64> to tensor<?x?x?x?xf64>
  %qr = call @dequantize(%q8dd, %qsw) : (tensor<?x?x?x?xf64>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf64>
  %kr = call @dequantize(%k8dd, %ksw) : (tensor<?x?x?x?xf64>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf64>
  %qrs = tensor.cast %qr : tensor<?x?x?x?xf64> to tensor<1x4x70x4xf64>
  %krs = tensor.cast %kr : tensor<?x?x?x?xf64> to tensor<1x2x133x4xf64>
  %ref_fo, %ref_flse = call @reference(%qrs, %krs, %v64, %causal_bias, %scale)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x4x70x133xf64>, f64)
     -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>)
  %fo, %flse = call @fp8_scores(%q8, %k8, %v, %qs, %ks)
      : (tensor<1x4x70x4xf8E4M3FN>, tensor<1x2x133x4xf8E4M3FN>, tensor<1x2x133x3xf32>, tensor<1x4x70xf32>, tensor<1x2x133xf32>)
     -> (tensor<1x4x70x3xf32>, tensor<1x4x70xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%fo, %ref_fo, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  call @check_lse(%flse, %ref_flse, %tol) : (tensor<1x4x70xf32>, tensor<1x4x70xf64>, f64) -> ()

  // FP8 probabilities and values: E4M3 P per tile of 32 keys, an E4M3
  // value with a scale per key/value head, against the f64 semantics. The
  // key scales grow along the sequence, so the running max grows from tile
  // to tile (where the first tile holds every row's max, the tiles would
  // not matter).
  %ks2b = arith.constant 0.3 : f32
  %ks2i = arith.constant 0.04 : f32
  %ks2w = call @token_scales(%ksd, %ks2b, %ks2i, %ksh) : (tensor<?x?x?xf32>, f32, f32, f32) -> tensor<?x?x?xf32>
  %ks2 = tensor.cast %ks2w : tensor<?x?x?xf32> to tensor<1x2x133xf32>
  %kr2 = call @dequantize(%k8dd, %ks2w) : (tensor<?x?x?x?xf64>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf64>
  %krs2 = tensor.cast %kr2 : tensor<?x?x?x?xf64> to tensor<1x2x133x4xf64>
  %v8 = arith.truncf %v : tensor<1x2x133x3xf32> to tensor<1x2x133x3xf8E4M3FN>
  %v8w = arith.extf %v8 : tensor<1x2x133x3xf8E4M3FN> to tensor<1x2x133x3xf32>
  %v8d = arith.extf %v8w : tensor<1x2x133x3xf32> to tensor<1x2x133x3xf64>
  %vs = arith.constant dense<[[0.75, 1.25]]> : tensor<1x2xf32>
  %vs64 = arith.constant dense<[[0.75, 1.25]]> : tensor<1x2xf64>
  %ps = arith.constant 256.0 : f64
  %ref_vo = call @reference_fp8_values(%qrs, %krs2, %v8d, %vs64, %causal_bias, %scale, %ps)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x2xf64>, tensor<1x4x70x133xf64>, f64, f64)
     -> tensor<1x4x70x3xf64>
  %vo = call @fp8_values(%q8, %k8, %v8, %qs, %ks2, %vs)
      : (tensor<1x4x70x4xf8E4M3FN>, tensor<1x2x133x4xf8E4M3FN>, tensor<1x2x133x3xf8E4M3FN>, tensor<1x4x70xf32>, tensor<1x2x133xf32>, tensor<1x2xf32>)
     -> tensor<1x4x70x3xf32>
  // CHECK-NEXT: 1
  call @check(%vo, %ref_vo, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  // Against the unrounded softmax on the same (dequantized) values: P's
  // E4M3 rounding moves the output by more than the tolerance, and by less
  // than 2e-2.
  %vhs = arith.constant dense<[[[0.75, 0.75, 0.75]], [[1.25, 1.25, 1.25]]]> : tensor<2x1x3xf32>
  %vhsc = tensor.collapse_shape %vhs [[0, 1], [2]] : tensor<2x1x3xf32> into tensor<2x3xf32>
  %vhse = tensor.expand_shape %vhsc [[0, 1], [2]] output_shape [1, 2, 3] : tensor<2x3xf32> into tensor<1x2x3xf32>
  %vhsd = tensor.cast %vhse : tensor<1x2x3xf32> to tensor<?x?x?xf32>
  %vtr = tensor.empty() : tensor<1x2x3x133xf64>
  %v8t = linalg.transpose ins(%v8d : tensor<1x2x133x3xf64>) outs(%vtr : tensor<1x2x3x133xf64>) permutation = [0, 1, 3, 2]
  %v8td = tensor.cast %v8t : tensor<1x2x3x133xf64> to tensor<?x?x?x?xf64>
  %vreal_t = call @dequantize(%v8td, %vhsd) : (tensor<?x?x?x?xf64>, tensor<?x?x?xf32>) -> tensor<?x?x?x?xf64>
  %vreal_ts = tensor.cast %vreal_t : tensor<?x?x?x?xf64> to tensor<1x2x3x133xf64>
  %vre = tensor.empty() : tensor<1x2x133x3xf64>
  %vreal = linalg.transpose ins(%vreal_ts : tensor<1x2x3x133xf64>) outs(%vre : tensor<1x2x133x3xf64>) permutation = [0, 1, 3, 2]
  %ref_uo, %ref_ulse = call @reference(%qrs, %krs2, %vreal, %causal_bias, %scale)
      : (tensor<1x4x70x4xf64>, tensor<1x2x133x4xf64>, tensor<1x2x133x3xf64>, tensor<1x4x70x133xf64>, f64)
     -> (tensor<1x4x70x3xf64>, tensor<1x4x70xf64>)
  %tol_p8 = arith.constant 2.0e-2 : f64
  // CHECK-NEXT: 0
  // CHECK-NEXT: 1
  call @check(%vo, %ref_uo, %tol) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()
  call @check(%vo, %ref_uo, %tol_p8) : (tensor<1x4x70x3xf32>, tensor<1x4x70x3xf64>, f64) -> ()

  // Hand-derived: means of 0..i and log(i + 1).
  %uq = arith.constant dense<0.0> : tensor<1x1x3x2xf32>
  %uk = arith.constant dense<[[[[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]]]]> : tensor<1x1x3x2xf32>
  %uv = arith.constant dense<[[[[0.0], [1.0], [2.0]]]]> : tensor<1x1x3x1xf32>
  %uo, %ulse = call @uniform(%uq, %uk, %uv)
      : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x1xf32>)
     -> (tensor<1x1x3x1xf32>, tensor<1x1x3xf32>)
  %uou = tensor.cast %uo : tensor<1x1x3x1xf32> to tensor<*xf32>
  %uom = bufferization.to_buffer %uou : tensor<*xf32> to memref<*xf32>
  // CHECK: [0],
  // CHECK-NEXT: [0.5],
  // CHECK-NEXT: [1]
  call @printMemrefF32(%uom) : (memref<*xf32>) -> ()
  %ulu = tensor.cast %ulse : tensor<1x1x3xf32> to tensor<*xf32>
  %ulm = bufferization.to_buffer %ulu : tensor<*xf32> to memref<*xf32>
  // CHECK: [0,  0.693147,  1.09861]
  call @printMemrefF32(%ulm) : (memref<*xf32>) -> ()
  return
}
