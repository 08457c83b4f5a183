// Attention one TOSA op per step with a boolean padding mask applied by
// select: the scores where the mask says a key is hidden (keep < 0.5,
// computed from an input) become -inf, as PyTorch's masked_fill does; the
// rest as in tosa-op-by-op-attention.mlir (K transposed in 4-D, the scale
// a multiply, the softmax reduce_max / sub / exp / reduce_sum /
// reciprocal / mul, P V).
func.func @attention(%q: tensor<1x4x16x32xf32>, %k: tensor<1x4x16x32xf32>,
                     %v: tensor<1x4x16x32xf32>, %keep: tensor<1x16xf32>)
    -> tensor<1x4x16x32xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s3q = tosa.const_shape {values = dense<[4, 16, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3kt = tosa.const_shape {values = dense<[4, 32, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4s = tosa.const_shape {values = dense<[1, 4, 16, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3p = tosa.const_shape {values = dense<[4, 16, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4o = tosa.const_shape {values = dense<[1, 4, 16, 32]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s4m = tosa.const_shape {values = dense<[1, 1, 1, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %kt = tosa.transpose %k {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x16x32xf32>) -> tensor<1x4x32x16xf32>
  %q3 = tosa.reshape %q, %s3q : (tensor<1x4x16x32xf32>, !tosa.shape<3>) -> tensor<4x16x32xf32>
  %kt3 = tosa.reshape %kt, %s3kt : (tensor<1x4x32x16xf32>, !tosa.shape<3>) -> tensor<4x32x16xf32>
  %qk = tosa.matmul %q3, %kt3, %zp, %zp : (tensor<4x16x32xf32>, tensor<4x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x16xf32>
  %qk4 = tosa.reshape %qk, %s4s : (tensor<4x16x16xf32>, !tosa.shape<4>) -> tensor<1x4x16x16xf32>
  %c = "tosa.const"() <{values = dense<0.176776695> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %scaled = tosa.mul %qk4, %c, %shift : (tensor<1x4x16x16xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x16x16xf32>
  %keep4 = tosa.reshape %keep, %s4m : (tensor<1x16xf32>, !tosa.shape<4>) -> tensor<1x1x1x16xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1x16xf32>}> : () -> tensor<1x1x1x16xf32>
  %hide = tosa.greater %half, %keep4 : (tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xi1>
  %ninf = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %s = tosa.select %hide, %ninf, %scaled : (tensor<1x1x1x16xi1>, tensor<1x1x1x1xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %max = tosa.reduce_max %s {axis = 3 : i32} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x1xf32>
  %d = tosa.sub %s, %max : (tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
  %e = tosa.exp %d : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x1xf32>
  %r = tosa.reciprocal %sum : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<1x4x16x16xf32>, tensor<1x4x16x1xf32>, tensor<1xi8>) -> tensor<1x4x16x16xf32>
  %p3 = tosa.reshape %p, %s3p : (tensor<1x4x16x16xf32>, !tosa.shape<3>) -> tensor<4x16x16xf32>
  %v3 = tosa.reshape %v, %s3q : (tensor<1x4x16x32xf32>, !tosa.shape<3>) -> tensor<4x16x32xf32>
  %o = tosa.matmul %p3, %v3, %zp, %zp : (tensor<4x16x16xf32>, tensor<4x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x32xf32>
  %o4 = tosa.reshape %o, %s4o : (tensor<4x16x32xf32>, !tosa.shape<4>) -> tensor<1x4x16x32xf32>
  return %o4 : tensor<1x4x16x32xf32>
}
