// fp8.attention_grad on the CPU against the backward written out in f64 in
// this file: the softmax P recomputed from the scores (max, exp, sum,
// divide), dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(P * dP)),
// dQ = scale * dS K, dK = scale * dS^T Q, the key and value gradients
// summed over the query heads of each key/value head. O and lse come from
// fp8.attention in each case, so forward and backward are checked together.
// GQA (4 query heads on 2 key/value heads) throughout; causal with 70 x 70
// and with 70 x 133 and a 63-token prefix (tails on 64 x 64 tiles); an
// additive mask whose -inf hides the whole first 64-key block from even
// rows; a boolean mask (one row keeps a single key); bf16; dynamic shapes.
// Each check prints 1 when the largest difference is within the tolerance
// (relative to the largest magnitude of that gradient); a NaN where the f64
// graph has none (or none where it has one) is never within it.
//
// The tiled lowering of convert-fp8-to-linalg (FlashAttention-2's backward:
// key tiles for dK and dV, query tiles for dQ, P recomputed from lse),
// vectorized and threaded, then scalar:
// RUN: fp8-opt %s --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
// RUN: fp8-opt %s --fp8-lower-to-cpu="vectorize=false threads=false" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s
//
// fp8-decompose-attention (the GPU route: the math on whole tensors):
// RUN: fp8-opt %s --fp8-decompose-attention --fp8-lower-to-cpu \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_libs \
// RUN: | FileCheck %s

#id4 = affine_map<(n, h, i, j) -> (n, h, i, j)>
#row = affine_map<(n, h, i, j) -> (n, h, i)>
#mask = affine_map<(n, h, i, j) -> (0, 0, i, j)>
#all = affine_map<(n, h, i, j) -> ()>
// out[n, h, i, j] = sum_c a[n, h, i, c] b[n, h / 2, j, c]: Q K^T, dO V^T.
#rows_a = affine_map<(n, h, i, j, c) -> (n, h, i, c)>
#rows_b = affine_map<(n, h, i, j, c) -> (n, h floordiv 2, j, c)>
#rows_o = affine_map<(n, h, i, j, c) -> (n, h, i, j)>
// out[n, h, i, c] = sum_j p[n, h, i, j] b[n, h / 2, j, c]: dS K.
#keys_p = affine_map<(n, h, i, c, j) -> (n, h, i, j)>
#keys_b = affine_map<(n, h, i, c, j) -> (n, h floordiv 2, j, c)>
#keys_o = affine_map<(n, h, i, c, j) -> (n, h, i, c)>
// out[n, g, j, c] = sum_{h / 2 = g} sum_i p[n, h, i, j] a[n, h, i, c]:
// dS^T Q, P^T dO with the sum over each head group.
#heads_p = affine_map<(n, h, j, c, i) -> (n, h, i, j)>
#heads_a = affine_map<(n, h, j, c, i) -> (n, h, i, c)>
#heads_o = affine_map<(n, h, j, c, i) -> (n, h floordiv 2, j, c)>

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

/// A wave of shape [1, d1, d2, d3] in f32, and the same values in f64.
func.func @input(%d1: index, %d2: index, %d3: index, %phase: f64, %step: f64)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>) {
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%c1, %d1, %d2, %d3) : tensor<?x?x?x?xf64>
  %w = call @wave(%e, %phase, %step) : (tensor<?x?x?x?xf64>, f64, f64) -> tensor<?x?x?x?xf64>
  %x = arith.truncf %w : tensor<?x?x?x?xf64> to tensor<?x?x?x?xf32>
  %x64 = arith.extf %x : tensor<?x?x?x?xf32> to tensor<?x?x?x?xf64>
  return %x, %x64 : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>
}

func.func @zeros(%d0: index, %d1: index, %d2: index, %d3: index)
    -> tensor<?x?x?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty(%d0, %d1, %d2, %d3) : tensor<?x?x?x?xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<?x?x?x?xf64>) -> tensor<?x?x?x?xf64>
  return %z : tensor<?x?x?x?xf64>
}

/// out[n, h, i, j] = sum_c a[n, h, i, c] b[n, h / 2, j, c].
func.func @rows(%a: tensor<?x?x?x?xf64>, %b: tensor<?x?x?x?xf64>) -> tensor<?x?x?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %a, %c0 : tensor<?x?x?x?xf64>
  %h = tensor.dim %a, %c1 : tensor<?x?x?x?xf64>
  %i = tensor.dim %a, %c2 : tensor<?x?x?x?xf64>
  %j = tensor.dim %b, %c2 : tensor<?x?x?x?xf64>
  %z = call @zeros(%n, %h, %i, %j) : (index, index, index, index) -> tensor<?x?x?x?xf64>
  %r = linalg.generic {indexing_maps = [#rows_a, #rows_b, #rows_o],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) outs(%z : tensor<?x?x?x?xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %m = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<?x?x?x?xf64>
  return %r : tensor<?x?x?x?xf64>
}

/// out[n, h, i, c] = scale * sum_j p[n, h, i, j] b[n, h / 2, j, c].
func.func @keys(%p: tensor<?x?x?x?xf64>, %b: tensor<?x?x?x?xf64>, %scale: f64)
    -> tensor<?x?x?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %p, %c0 : tensor<?x?x?x?xf64>
  %h = tensor.dim %p, %c1 : tensor<?x?x?x?xf64>
  %i = tensor.dim %p, %c2 : tensor<?x?x?x?xf64>
  %c = tensor.dim %b, %c3 : tensor<?x?x?x?xf64>
  %z = call @zeros(%n, %h, %i, %c) : (index, index, index, index) -> tensor<?x?x?x?xf64>
  %r = linalg.generic {indexing_maps = [#keys_p, #keys_b, #keys_o],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %b : tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) outs(%z : tensor<?x?x?x?xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %m = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<?x?x?x?xf64>
  %out = call @scaled(%r, %scale) : (tensor<?x?x?x?xf64>, f64) -> tensor<?x?x?x?xf64>
  return %out : tensor<?x?x?x?xf64>
}

/// out[n, g, j, c] = scale * sum_{h / 2 = g} sum_i p[n, h, i, j] a[n, h, i, c].
func.func @heads(%p: tensor<?x?x?x?xf64>, %a: tensor<?x?x?x?xf64>, %scale: f64)
    -> tensor<?x?x?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %p, %c0 : tensor<?x?x?x?xf64>
  %hq = tensor.dim %p, %c1 : tensor<?x?x?x?xf64>
  %g = arith.divui %hq, %c2 : index
  %j = tensor.dim %p, %c3 : tensor<?x?x?x?xf64>
  %c = tensor.dim %a, %c3 : tensor<?x?x?x?xf64>
  %z = call @zeros(%n, %g, %j, %c) : (index, index, index, index) -> tensor<?x?x?x?xf64>
  %r = linalg.generic {indexing_maps = [#heads_p, #heads_a, #heads_o],
                       iterator_types = ["parallel", "reduction", "parallel", "parallel", "reduction"]}
      ins(%p, %a : tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) outs(%z : tensor<?x?x?x?xf64>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %m = arith.mulf %x, %y : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<?x?x?x?xf64>
  %out = call @scaled(%r, %scale) : (tensor<?x?x?x?xf64>, f64) -> tensor<?x?x?x?xf64>
  return %out : tensor<?x?x?x?xf64>
}

func.func @scaled(%x: tensor<?x?x?x?xf64>, %scale: f64) -> tensor<?x?x?x?xf64> {
  %r = linalg.generic {indexing_maps = [#id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%x : tensor<?x?x?x?xf64>) {
  ^bb0(%a: f64):
    %m = arith.mulf %a, %scale : f64
    linalg.yield %m : f64
  } -> tensor<?x?x?x?xf64>
  return %r : tensor<?x?x?x?xf64>
}

/// The backward as a graph writes it, in f64: s = Q K^T * scale + bias,
/// P = softmax(s) over the keys, dV = P^T dO, dP = dO V^T,
/// dS = P * (dP - rowsum(P * dP)), dQ = scale * dS K, dK = scale * dS^T Q,
/// dK and dV summed over the two query heads of each key/value head.
func.func @reference(%q: tensor<?x?x?x?xf64>, %k: tensor<?x?x?x?xf64>,
                     %v: tensor<?x?x?x?xf64>, %do: tensor<?x?x?x?xf64>,
                     %bias: tensor<?x?x?x?xf64>, %scale: f64)
    -> (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %qk = call @rows(%q, %k) : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) -> tensor<?x?x?x?xf64>
  %s = linalg.generic {indexing_maps = [#id4, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<?x?x?x?xf64>) outs(%qk : tensor<?x?x?x?xf64>) {
  ^bb0(%b: f64, %a: f64):
    %m = arith.mulf %a, %scale : f64
    %r = arith.addf %m, %b : f64
    linalg.yield %r : f64
  } -> tensor<?x?x?x?xf64>
  %n = tensor.dim %q, %c0 : tensor<?x?x?x?xf64>
  %h = tensor.dim %q, %c1 : tensor<?x?x?x?xf64>
  %i = tensor.dim %q, %c2 : tensor<?x?x?x?xf64>
  %re = tensor.empty(%n, %h, %i) : tensor<?x?x?xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%re : tensor<?x?x?xf64>) -> tensor<?x?x?xf64>
  %max = linalg.generic {indexing_maps = [#id4, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<?x?x?x?xf64>) outs(%m0 : tensor<?x?x?xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<?x?x?xf64>
  %l0 = linalg.fill ins(%zero : f64) outs(%re : tensor<?x?x?xf64>) -> tensor<?x?x?xf64>
  %sum = linalg.generic {indexing_maps = [#id4, #row, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %max : tensor<?x?x?x?xf64>, tensor<?x?x?xf64>) outs(%l0 : tensor<?x?x?xf64>) {
  ^bb0(%a: f64, %mx: f64, %acc: f64):
    %d = arith.subf %a, %mx : f64
    %e = math.exp %d : f64
    %r = arith.addf %acc, %e : f64
    linalg.yield %r : f64
  } -> tensor<?x?x?xf64>
  %p = linalg.generic {indexing_maps = [#row, #row, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%max, %sum : tensor<?x?x?xf64>, tensor<?x?x?xf64>) outs(%s : tensor<?x?x?x?xf64>) {
  ^bb0(%mx: f64, %l: f64, %a: f64):
    %d = arith.subf %a, %mx : f64
    %e = math.exp %d : f64
    %r = arith.divf %e, %l : f64
    linalg.yield %r : f64
  } -> tensor<?x?x?x?xf64>
  %dv = call @heads(%p, %do, %one) : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> tensor<?x?x?x?xf64>
  %dp = call @rows(%do, %v) : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) -> tensor<?x?x?x?xf64>
  %pdp = linalg.generic {indexing_maps = [#id4, #id4, #row],
                         iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %dp : tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>) outs(%l0 : tensor<?x?x?xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %m : f64
    linalg.yield %r : f64
  } -> tensor<?x?x?xf64>
  %ds = linalg.generic {indexing_maps = [#id4, #row, #id4],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %pdp : tensor<?x?x?x?xf64>, tensor<?x?x?xf64>) outs(%dp : tensor<?x?x?x?xf64>) {
  ^bb0(%a: f64, %r: f64, %b: f64):
    %d = arith.subf %b, %r : f64
    %m = arith.mulf %a, %d : f64
    linalg.yield %m : f64
  } -> tensor<?x?x?x?xf64>
  %dq = call @keys(%ds, %k, %scale) : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> tensor<?x?x?x?xf64>
  %dk = call @heads(%ds, %q, %scale) : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> tensor<?x?x?x?xf64>
  return %dq, %dk, %dv : tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>
}

/// The reference's bias [1, 4, sq, sk]: -inf above the causal diagonal
/// (j > i + offset) when %causal, plus %mask (broadcast over the heads).
func.func @bias(%mask: tensor<?x?x?x?xf64>, %causal: i1, %offset: index)
    -> tensor<?x?x?x?xf64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %sq = tensor.dim %mask, %c2 : tensor<?x?x?x?xf64>
  %sk = tensor.dim %mask, %c3 : tensor<?x?x?x?xf64>
  %e = tensor.empty(%c1, %c4, %sq, %sk) : tensor<?x?x?x?xf64>
  %r = linalg.generic {indexing_maps = [#mask, #id4],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%mask : tensor<?x?x?x?xf64>) outs(%e : tensor<?x?x?x?xf64>) {
  ^bb0(%m: f64, %out: f64):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %lim = arith.addi %i, %offset : index
    %after = arith.cmpi sgt, %j, %lim : index
    %hide = arith.andi %after, %causal : i1
    %b = arith.select %hide, %ninf, %m : f64
    linalg.yield %b : f64
  } -> tensor<?x?x?x?xf64>
  return %r : tensor<?x?x?x?xf64>
}

/// Largest |got - ref| over the largest |ref|; a NaN on either side that
/// the other does not have counts as +inf, NaN on both as 0.
func.func @relative_error(%got: tensor<?x?x?x?xf32>, %ref: tensor<?x?x?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %inf = arith.constant 0x7FF0000000000000 : f64
  %e = tensor.empty() : tensor<f64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %r:2 = linalg.generic {indexing_maps = [#id4, #id4, #all, #all],
                         iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%got, %ref : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)
      outs(%init, %init : tensor<f64>, tensor<f64>) {
  ^bb0(%g: f32, %f: f64, %acc: f64, %mag: f64):
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
    %fa = math.absf %f : f64
    %fa2 = arith.select %fn, %zero, %fa : f64
    %mg = arith.maximumf %mag, %fa2 : f64
    linalg.yield %m, %mg : f64, f64
  } -> (tensor<f64>, tensor<f64>)
  %x = tensor.extract %r#0[] : tensor<f64>
  %y = tensor.extract %r#1[] : tensor<f64>
  %rel = arith.divf %x, %y : f64
  return %rel : f64
}

/// Prints 1 for each gradient within `tol` of the reference, relative to
/// the gradient's largest magnitude.
func.func @check(%dq: tensor<?x?x?x?xf32>, %dk: tensor<?x?x?x?xf32>,
                 %dv: tensor<?x?x?x?xf32>, %rq: tensor<?x?x?x?xf64>,
                 %rk: tensor<?x?x?x?xf64>, %rv: tensor<?x?x?x?xf64>, %tol: f64) {
  %eq = call @relative_error(%dq, %rq) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>) -> f64
  %ek = call @relative_error(%dk, %rk) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>) -> f64
  %ev = call @relative_error(%dv, %rv) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>) -> f64
  %okq = arith.cmpf olt, %eq, %tol : f64
  %okk = arith.cmpf olt, %ek, %tol : f64
  %okv = arith.cmpf olt, %ev, %tol : f64
  vector.print %okq : i1
  vector.print %okk : i1
  vector.print %okv : i1
  return
}

//===----------------------------------------------------------------------===//
// The fused ops: the forward for O and lse, then the backward
//===----------------------------------------------------------------------===//

func.func @causal_square(%qd: tensor<?x?x?x?xf32>, %kd: tensor<?x?x?x?xf32>,
                         %vd: tensor<?x?x?x?xf32>, %dod: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %q = tensor.cast %qd : tensor<?x?x?x?xf32> to tensor<1x4x70x4xf32>
  %k = tensor.cast %kd : tensor<?x?x?x?xf32> to tensor<1x2x70x4xf32>
  %v = tensor.cast %vd : tensor<?x?x?x?xf32> to tensor<1x2x70x3xf32>
  %do = tensor.cast %dod : tensor<?x?x?x?xf32> to tensor<1x4x70x3xf32>
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal}
      : tensor<1x4x70x4xf32>, tensor<1x2x70x4xf32>, tensor<1x2x70x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5 {causal}
      : tensor<1x4x70x4xf32>, tensor<1x2x70x4xf32>, tensor<1x2x70x3xf32>,
        tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %a = tensor.cast %dq : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %b = tensor.cast %dk : tensor<1x2x70x4xf32> to tensor<?x?x?x?xf32>
  %c = tensor.cast %dv : tensor<1x2x70x3xf32> to tensor<?x?x?x?xf32>
  return %a, %b, %c : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

func.func @causal_prefix(%qd: tensor<?x?x?x?xf32>, %kd: tensor<?x?x?x?xf32>,
                         %vd: tensor<?x?x?x?xf32>, %dod: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %q = tensor.cast %qd : tensor<?x?x?x?xf32> to tensor<1x4x70x4xf32>
  %k = tensor.cast %kd : tensor<?x?x?x?xf32> to tensor<1x2x133x4xf32>
  %v = tensor.cast %vd : tensor<?x?x?x?xf32> to tensor<1x2x133x3xf32>
  %do = tensor.cast %dod : tensor<?x?x?x?xf32> to tensor<1x4x70x3xf32>
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5
      {causal, causal_offset = 63}
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>,
        tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %a = tensor.cast %dq : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %b = tensor.cast %dk : tensor<1x2x133x4xf32> to tensor<?x?x?x?xf32>
  %c = tensor.cast %dv : tensor<1x2x133x3xf32> to tensor<?x?x?x?xf32>
  return %a, %b, %c : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

func.func @causal_dynamic(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>,
                          %v: tensor<?x?x?x?xf32>, %do: tensor<?x?x?x?xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
      -> tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5
      {causal, causal_offset = 63}
      : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>,
        tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
  return %dq, %dk, %dv : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

func.func @additive_mask(%qd: tensor<?x?x?x?xf32>, %kd: tensor<?x?x?x?xf32>,
                         %vd: tensor<?x?x?x?xf32>, %dod: tensor<?x?x?x?xf32>,
                         %m: tensor<1x1x70x133xf32>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %q = tensor.cast %qd : tensor<?x?x?x?xf32> to tensor<1x4x70x4xf32>
  %k = tensor.cast %kd : tensor<?x?x?x?xf32> to tensor<1x2x133x4xf32>
  %v = tensor.cast %vd : tensor<?x?x?x?xf32> to tensor<1x2x133x3xf32>
  %do = tensor.cast %dod : tensor<?x?x?x?xf32> to tensor<1x4x70x3xf32>
  %o, %lse = fp8.attention %q, %k, %v mask %m : tensor<1x1x70x133xf32> scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      mask %m : tensor<1x1x70x133xf32> scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>,
        tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %a = tensor.cast %dq : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %b = tensor.cast %dk : tensor<1x2x133x4xf32> to tensor<?x?x?x?xf32>
  %c = tensor.cast %dv : tensor<1x2x133x3xf32> to tensor<?x?x?x?xf32>
  return %a, %b, %c : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

func.func @boolean_mask(%qd: tensor<?x?x?x?xf32>, %kd: tensor<?x?x?x?xf32>,
                        %vd: tensor<?x?x?x?xf32>, %dod: tensor<?x?x?x?xf32>,
                        %m: tensor<1x1x70x133xi1>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %q = tensor.cast %qd : tensor<?x?x?x?xf32> to tensor<1x4x70x4xf32>
  %k = tensor.cast %kd : tensor<?x?x?x?xf32> to tensor<1x2x133x4xf32>
  %v = tensor.cast %vd : tensor<?x?x?x?xf32> to tensor<1x2x133x3xf32>
  %do = tensor.cast %dod : tensor<?x?x?x?xf32> to tensor<1x4x70x3xf32>
  %o, %lse = fp8.attention %q, %k, %v mask %m : tensor<1x1x70x133xi1> scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse
      mask %m : tensor<1x1x70x133xi1> scale 0.5
      : tensor<1x4x70x4xf32>, tensor<1x2x133x4xf32>, tensor<1x2x133x3xf32>,
        tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %a = tensor.cast %dq : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %b = tensor.cast %dk : tensor<1x2x133x4xf32> to tensor<?x?x?x?xf32>
  %c = tensor.cast %dv : tensor<1x2x133x3xf32> to tensor<?x?x?x?xf32>
  return %a, %b, %c : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

/// bf16 in and out; the gradients come back widened to f32.
func.func @causal_bf16(%qd: tensor<?x?x?x?xbf16>, %kd: tensor<?x?x?x?xbf16>,
                       %vd: tensor<?x?x?x?xbf16>, %dod: tensor<?x?x?x?xbf16>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %q = tensor.cast %qd : tensor<?x?x?x?xbf16> to tensor<1x4x70x4xbf16>
  %k = tensor.cast %kd : tensor<?x?x?x?xbf16> to tensor<1x2x133x4xbf16>
  %v = tensor.cast %vd : tensor<?x?x?x?xbf16> to tensor<1x2x133x3xbf16>
  %do = tensor.cast %dod : tensor<?x?x?x?xbf16> to tensor<1x4x70x3xbf16>
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>
      -> tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5
      {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>,
        tensor<1x4x70x3xbf16>, tensor<1x4x70xf32>
  %a = arith.extf %dq : tensor<1x4x70x4xbf16> to tensor<1x4x70x4xf32>
  %b = arith.extf %dk : tensor<1x2x133x4xbf16> to tensor<1x2x133x4xf32>
  %c = arith.extf %dv : tensor<1x2x133x3xbf16> to tensor<1x2x133x3xf32>
  %ad = tensor.cast %a : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %bd = tensor.cast %b : tensor<1x2x133x4xf32> to tensor<?x?x?x?xf32>
  %cd = tensor.cast %c : tensor<1x2x133x3xf32> to tensor<?x?x?x?xf32>
  return %ad, %bd, %cd : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// The same with the forward's output kept in f32, as a fused training step
// keeps it for D = rowsum(dO O).
func.func @causal_bf16_f32_output(%qd: tensor<?x?x?x?xbf16>, %kd: tensor<?x?x?x?xbf16>,
                       %vd: tensor<?x?x?x?xbf16>, %dod: tensor<?x?x?x?xbf16>)
    -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %q = tensor.cast %qd : tensor<?x?x?x?xbf16> to tensor<1x4x70x4xbf16>
  %k = tensor.cast %kd : tensor<?x?x?x?xbf16> to tensor<1x2x133x4xbf16>
  %v = tensor.cast %vd : tensor<?x?x?x?xbf16> to tensor<1x2x133x3xbf16>
  %do = tensor.cast %dod : tensor<?x?x?x?xbf16> to tensor<1x4x70x3xbf16>
  %o, %lse = fp8.attention %q, %k, %v scale 0.5 {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>
      -> tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %dq, %dk, %dv = fp8.attention_grad %q, %k, %v, %o, %do, %lse scale 0.5
      {causal, causal_offset = 63}
      : tensor<1x4x70x4xbf16>, tensor<1x2x133x4xbf16>, tensor<1x2x133x3xbf16>,
        tensor<1x4x70x3xf32>, tensor<1x4x70xf32>
  %a = arith.extf %dq : tensor<1x4x70x4xbf16> to tensor<1x4x70x4xf32>
  %b = arith.extf %dk : tensor<1x2x133x4xbf16> to tensor<1x2x133x4xf32>
  %c = arith.extf %dv : tensor<1x2x133x3xbf16> to tensor<1x2x133x3xf32>
  %ad = tensor.cast %a : tensor<1x4x70x4xf32> to tensor<?x?x?x?xf32>
  %bd = tensor.cast %b : tensor<1x2x133x4xf32> to tensor<?x?x?x?xf32>
  %cd = tensor.cast %c : tensor<1x2x133x3xf32> to tensor<?x?x?x?xf32>
  return %ad, %bd, %cd : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

func.func @main() {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c63 = arith.constant 63 : index
  %c70 = arith.constant 70 : index
  %c133 = arith.constant 133 : index
  %true = arith.constant true
  %false = arith.constant false
  %scale = arith.constant 0.5 : f64
  %ninf = arith.constant 0xFF800000 : f32
  // f32 against f64, relative to each gradient's largest magnitude. The
  // op rounds products and sums of at most 133 terms in f32 (unit roundoff
  // 2^-24 = 6e-8), and dS = P (dP - D) cancels: dP and D, of the size of
  // |dO| |V|, are each a few f32 roundings off, and their difference can be
  // far smaller than they are (row 3 of the boolean mask, with P = 1 on one
  // key, has dS = 0 exactly). Measured: at most 4e-6 (decomposed) and
  // 5.8e-6 (tiled, whose sums run in another order; dQ, boolean mask),
  // elsewhere below 2e-6. A wrong sign or scale, a missing group sum or an
  // off-by-one causal diagonal in the backward moves a gradient by 0.2 to 4
  // of its largest magnitude.
  %tol = arith.constant 2.0e-5 : f64
  // bf16: each gradient is rounded once to bf16, relative 2^-8 (bf16's unit
  // roundoff) of its value, so at most 2^-8 of the largest magnitude; and
  // D = rowsum(dO * O) reads O rounded to bf16 by the forward (relative
  // 2^-8 of |dO| |O| in each row), an error of the same order in dS and so
  // in dQ (measured alone: 2.4e-3 of dQ's largest magnitude, 4e-5 of dK's).
  // Both together: 2^-7 (measured: at most 3.3e-3).
  %tol_bf16 = arith.constant 7.8125e-3 : f64
  %tol_bf16_f32_output = arith.constant 3.90625e-3 : f64

  %p1 = arith.constant 0.3 : f64
  %p2 = arith.constant 1.1 : f64
  %p3 = arith.constant 2.0 : f64
  %p4 = arith.constant 0.7 : f64
  %s1 = arith.constant 0.37 : f64
  %s2 = arith.constant 0.23 : f64
  %s3 = arith.constant 0.71 : f64
  %s4 = arith.constant 0.53 : f64
  // The op's inputs in f32 and the same values in f64 for the reference.
  %q, %q64 = call @input(%c4, %c70, %c4, %p1, %s1)
      : (index, index, index, f64, f64) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)
  %do, %do64 = call @input(%c4, %c70, %c3, %p4, %s4)
      : (index, index, index, f64, f64) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)
  %ks, %ks64 = call @input(%c2, %c70, %c4, %p2, %s2)
      : (index, index, index, f64, f64) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)
  %vs, %vs64 = call @input(%c2, %c70, %c3, %p3, %s3)
      : (index, index, index, f64, f64) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)
  %k, %k64 = call @input(%c2, %c133, %c4, %p2, %s2)
      : (index, index, index, f64, f64) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)
  %v, %v64 = call @input(%c2, %c133, %c3, %p3, %s3)
      : (index, index, index, f64, f64) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>)

  // Square causal (offset 0): 70 rows and keys, a tail on 64 x 64 tiles.
  %zsquare0 = arith.constant dense<0.0> : tensor<1x1x70x70xf64>
  %zsquare = tensor.cast %zsquare0 : tensor<1x1x70x70xf64> to tensor<?x?x?x?xf64>
  %square_bias = call @bias(%zsquare, %true, %c0)
      : (tensor<?x?x?x?xf64>, i1, index) -> tensor<?x?x?x?xf64>
  %rq1, %rk1, %rv1 = call @reference(%q64, %ks64, %vs64, %do64, %square_bias, %scale)
      : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64)
     -> (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>)
  %dq1, %dk1, %dv1 = call @causal_square(%q, %ks, %vs, %do)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq1, %dk1, %dv1, %rq1, %rk1, %rv1, %tol)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()

  // Causal after a 63-token prefix: 70 rows on 133 keys.
  %zprefix0 = arith.constant dense<0.0> : tensor<1x1x70x133xf64>
  %zprefix = tensor.cast %zprefix0 : tensor<1x1x70x133xf64> to tensor<?x?x?x?xf64>
  %prefix_bias = call @bias(%zprefix, %true, %c63)
      : (tensor<?x?x?x?xf64>, i1, index) -> tensor<?x?x?x?xf64>
  %rq2, %rk2, %rv2 = call @reference(%q64, %k64, %v64, %do64, %prefix_bias, %scale)
      : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64)
     -> (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>)
  %dq2, %dk2, %dv2 = call @causal_prefix(%q, %k, %v, %do)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq2, %dk2, %dv2, %rq2, %rk2, %rv2, %tol)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()

  // The same with every size dynamic.
  %dq3, %dk3, %dv3 = call @causal_dynamic(%q, %k, %v, %do)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq3, %dk3, %dv3, %rq2, %rk2, %rv2, %tol)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()

  // Additive mask, not causal: -inf over the whole first key block (keys
  // 0..63) for even rows and on every fifth key, 0.01 j elsewhere.
  %me = tensor.empty() : tensor<1x1x70x133xf32>
  %madd = linalg.generic {indexing_maps = [#id4],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%me : tensor<1x1x70x133xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
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
  %madd64d = tensor.cast %madd64 : tensor<1x1x70x133xf64> to tensor<?x?x?x?xf64>
  %add_bias = call @bias(%madd64d, %false, %c0)
      : (tensor<?x?x?x?xf64>, i1, index) -> tensor<?x?x?x?xf64>
  %rq4, %rk4, %rv4 = call @reference(%q64, %k64, %v64, %do64, %add_bias, %scale)
      : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64)
     -> (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>)
  %dq4, %dk4, %dv4 = call @additive_mask(%q, %k, %v, %do, %madd)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<1x1x70x133xf32>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq4, %dk4, %dv4, %rq4, %rk4, %rv4, %tol)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()

  // Boolean mask: every seventh key dropped, and row 3 keeps key 5 alone
  // (P = 1 there, so its dS row is 0). No row is fully masked: its NaN
  // would reach every key and value gradient through the sums over rows.
  %be = tensor.empty() : tensor<1x1x70x133xi1>
  %keep = linalg.generic {indexing_maps = [#id4],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%be : tensor<1x1x70x133xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %row3 = arith.cmpi eq, %i, %c3 : index
    %key5 = arith.cmpi eq, %j, %c5 : index
    %jr = arith.remui %j, %c7 : index
    %other = arith.cmpi ne, %jr, %c0 : index
    %r = arith.select %row3, %key5, %other : i1
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
  %kb64d = tensor.cast %kb64 : tensor<1x1x70x133xf64> to tensor<?x?x?x?xf64>
  %bool_bias = call @bias(%kb64d, %false, %c0)
      : (tensor<?x?x?x?xf64>, i1, index) -> tensor<?x?x?x?xf64>
  %rq5, %rk5, %rv5 = call @reference(%q64, %k64, %v64, %do64, %bool_bias, %scale)
      : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64)
     -> (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>)
  %dq5, %dk5, %dv5 = call @boolean_mask(%q, %k, %v, %do, %keep)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<1x1x70x133xi1>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq5, %dk5, %dv5, %rq5, %rk5, %rv5, %tol)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()

  // bf16 in and out (causal after the prefix): the f64 graph on the bf16
  // inputs.
  %qb = arith.truncf %q : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %kb = arith.truncf %k : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %vb = arith.truncf %v : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %dob = arith.truncf %do : tensor<?x?x?x?xf32> to tensor<?x?x?x?xbf16>
  %qb64 = arith.extf %qb : tensor<?x?x?x?xbf16> to tensor<?x?x?x?xf64>
  %kb64x = arith.extf %kb : tensor<?x?x?x?xbf16> to tensor<?x?x?x?xf64>
  %vb64 = arith.extf %vb : tensor<?x?x?x?xbf16> to tensor<?x?x?x?xf64>
  %dob64 = arith.extf %dob : tensor<?x?x?x?xbf16> to tensor<?x?x?x?xf64>
  %rq6, %rk6, %rv6 = call @reference(%qb64, %kb64x, %vb64, %dob64, %prefix_bias, %scale)
      : (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64)
     -> (tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>)
  %dq6, %dk6, %dv6 = call @causal_bf16(%qb, %kb, %vb, %dob)
      : (tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq6, %dk6, %dv6, %rq6, %rk6, %rv6, %tol_bf16)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()

  // The forward's output in f32: D exact to f32, only the gradients' own
  // rounding is left (2^-8 of each value).
  %dq7, %dk7, %dv7 = call @causal_bf16_f32_output(%qb, %kb, %vb, %dob)
      : (tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>, tensor<?x?x?x?xbf16>)
     -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>)
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  // CHECK-NEXT: 1
  call @check(%dq7, %dk7, %dv7, %rq6, %rk6, %rv6, %tol_bf16_f32_output)
      : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, tensor<?x?x?x?xf64>, f64) -> ()
  return
}
