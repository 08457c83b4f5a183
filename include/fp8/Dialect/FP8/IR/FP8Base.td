//===- FP8Base.td - fp8 dialect definition -----------------*- tablegen -*-===//

#ifndef FP8_DIALECT_FP8_IR_FP8BASE_TD
#define FP8_DIALECT_FP8_IR_FP8BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def FP8_Dialect : Dialect {
  let name = "fp8";
  let cppNamespace = "::mlir::fp8";
  let summary = "FP8 mixed-precision training: scaling, quantization, GEMMs";
  let description = [{
    The `fp8` dialect spells out per-tensor FP8 scaling as explicit IR: the
    amax of a tensor, the scale computed from an amax or an amax history
    (Transformer Engine's delayed and current scaling recipes, bit-exact),
    the history update, saturating quantization to the builtin `f8E4M3FN` and
    `f8E5M2` types, dequantization, fused cast+transpose, and the scaled FP8
    matrix multiplication with FP32 accumulation.

    Scale convention (Transformer Engine): `q = sat_rne(x * scale)`,
    `x ~= q * scale_inv`, `scale = fp8_max * 2^-margin / amax`, all in f32.
    Per-tensor scalars (amax, scale, scale_inv) are `f32` SSA values; amax
    histories are `tensor<N x f32>` with row 0 holding the current step's
    amax.

    Finer granularities (rows, 1x128 / 128x128 blocks, MX) give each block
    of a tensor its own scale. A `block` attribute lists the block's extent
    in every dimension of the scaled tensor, and the scales form a tensor of
    the same rank holding one value per block, row-major in block
    coordinates: a `[M, K]` tensor with `block [1, 128]` has scales
    `[M, ceil(K / 128)]`, scale `(i, j)` covering elements
    `(i, 128 j) .. (i, 128 j + 127)`. A partial last block covers what is
    left (as if zero-padded). Rows along K are blocks `[1, K]`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // The discardable attributes the passes read (`fp8.precision`, `fp8.role`,
  // `fp8.state`, `fp8.backward`, ...) are checked like any other IR: a
  // misspelt value is an error, never a silent default.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

class FP8_Op<string mnemonic, list<Trait> traits = []>
    : Op<FP8_Dialect, mnemonic, traits>;

class FP8_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FP8_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def FP8_Float8 : AnyTypeOf<[F8E4M3FN, F8E5M2], "f8E4M3FN or f8E5M2">;
def FP8_WideFloat : AnyTypeOf<[F32, BF16, F16], "f32, bf16 or f16">;

def FP8_Float8Tensor : RankedTensorOf<[F8E4M3FN, F8E5M2]>;
def FP8_WideTensor : RankedTensorOf<[F32, BF16, F16]>;
def FP8_AmaxHistory : 1DTensorOf<[F32]>;
/// Per-block amaxes and scales, and what a GEMM or a dequantize takes as
/// per-block scale_inv: f32, or E8M0 (OCP MX: a power of two per block).
def FP8_BlockTensor : RankedTensorOf<[F32]>;
def FP8_BlockScaleInvTensor : RankedTensorOf<[F32, F8E8M0FNU]>;
/// One f32 scale for the whole tensor, or a tensor of per-block scales.
def FP8_Scale : AnyTypeOf<[F32, FP8_BlockTensor]>;
def FP8_ScaleInv : AnyTypeOf<[F32, FP8_BlockScaleInvTensor]>;
def FP8_Float8TypeAttr : TypeAttrOf<FP8_Float8>;

#endif // FP8_DIALECT_FP8_IR_FP8BASE_TD
