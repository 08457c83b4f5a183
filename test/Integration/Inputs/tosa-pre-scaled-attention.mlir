// The attention of tosa-op-by-op-attention.mlir with its scale applied
// before Q K^T instead: Q and K (4-D, before K's transpose and the
// reshapes for tosa.matmul) each multiplied by (1/32)^(1/4), as PyTorch's
// math SDPA scales both operands. fp8-fuse-attention.mlir checks that it
// fuses with scale 1/sqrt(32); fp8-fuse-attention-run.test runs it.
func.func @pre_scaled_attention(%q: tensor<1x4x16x32xf32>, %k: tensor<1x4x16x32xf32>,
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
  %c4 = "tosa.const"() <{values = dense<0.420448214> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %qs = tosa.mul %q, %c4, %shift : (tensor<1x4x16x32xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x16x32xf32>
  %ks = tosa.mul %k, %c4, %shift : (tensor<1x4x16x32xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x16x32xf32>
  %kt = tosa.transpose %ks {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x16x32xf32>) -> tensor<1x4x32x16xf32>
  %q3 = tosa.reshape %qs, %s3q : (tensor<1x4x16x32xf32>, !tosa.shape<3>) -> tensor<4x16x32xf32>
  %kt3 = tosa.reshape %kt, %s3kt : (tensor<1x4x32x16xf32>, !tosa.shape<3>) -> tensor<4x32x16xf32>
  %qk = tosa.matmul %q3, %kt3, %zp, %zp : (tensor<4x16x32xf32>, tensor<4x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x16x16xf32>
  %qk4 = tosa.reshape %qk, %s4s : (tensor<4x16x16xf32>, !tosa.shape<4>) -> tensor<1x4x16x16xf32>
  %keep4 = tosa.reshape %keep, %s4m : (tensor<1x16xf32>, !tosa.shape<4>) -> tensor<1x1x1x16xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1x16xf32>}> : () -> tensor<1x1x1x16xf32>
  %drop = tosa.sub %one, %keep4 : (tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x16xf32>
  %big = "tosa.const"() <{values = dense<-10000.0> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %mask = tosa.mul %drop, %big, %shift : (tensor<1x1x1x16xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x1x1x16xf32>
  %s = tosa.add %qk4, %mask : (tensor<1x4x16x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x4x16x16xf32>
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
