//===- Kernels.h - Shared pieces of the fp8 kernels -------------*- C++ -*-===//
//
// Private to lib/Conversion/FP8ToNVVM: the builder the kernels (gpu.funcs
// on memrefs) are written with, the recipe pieces they share so that the
// same recipe computes the same scales in all of them, and the functions
// that create each kernel once in a gpu.module.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP8TONVVM_KERNELS_H
#define LIB_CONVERSION_FP8TONVVM_KERNELS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <string>

namespace mlir::fp8 {

/// compute_block_scales' rule, as the kernels build it.
struct BlockRecipe {
  bool mx = false;
  bool powerOfTwo = false;
  float epsilon = 0.0f;

  /// The kernel-name suffix (KernelABI.h).
  std::string getSuffix() const;
};

/// Short type names used in kernel names (KernelABI.h); empty for a type
/// no kernel takes.
StringRef getKernelTypeTag(Type type);

/// The largest finite value of E4M3FN or E5M2.
float getFloat8MaxFinite(Type float8Type);

/// compute_block_scales on one f32 amax: the f32 scale and the scale_inv to
/// store (an f32, or for MX the E8M0 code as an i8).
std::pair<Value, Value> createBlockScale(OpBuilder &builder, Location loc,
                                         Value amax, Type float8Type,
                                         const BlockRecipe &recipe);

/// cvt.rn.satfinite.<fp8>x2.f32 of (hi, lo): `lo` in the low byte.
Value createFloat8Pair(OpBuilder &builder, Location loc, Value hi, Value lo,
                       Type float8Type);

/// memref<?x?xelement>: a matrix parameter of the gpu.func kernels.
MemRefType getDynamicMatrixType(Type element);

/// memref<?xelement>: a vector parameter of the gpu.func kernels.
MemRefType getDynamicVectorType(Type element);

/// Index and f32 arithmetic, and structured control flow, on one builder:
/// what the gpu.func kernels are written with.
class KernelBuilder {
public:
  explicit KernelBuilder(ImplicitLocOpBuilder &b) : b(b) {}

  Value index(int64_t v);
  Value f32(float v);
  Value i32(int32_t v);
  Value add(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  Value ult(Value x, Value y);
  Value ule(Value x, Value y);
  Value eq(Value x, Value y);
  Value isZero(Value x);
  Value both(Value x, Value y);
  Value either(Value x, Value y);
  Value select(Value cond, Value x, Value y);
  Value cmpF(int64_t predicate, Value x, Value y);
  Value absMax(Value acc, Value v);
  /// f32 from f32, bf16 or f16 (exact), and back (nearest even).
  Value widen(Value v);
  Value narrow(Value v, Type type);
  /// Two FP8 bytes (a vector<2xi8>, element 0 first) as two f32 values
  /// (exact, through cvt.rn.f16x2.<fp8>x2).
  std::pair<Value, Value> dequantizePair(Value bytes, Type float8Type);
  /// The byte address of a memref's first element.
  Value address(Value memref);
  /// True when every buffer starts on a 16-byte boundary.
  Value allAligned(ArrayRef<Value> memrefs);
  /// A grid-stride loop's start and step over work items that take
  /// `threadsPerItem` threads each: (block * items per block + thread /
  /// threadsPerItem, grid * items per block), kBlockSize threads a block.
  std::pair<Value, Value> gridStrideOver(int64_t threadsPerItem);

  /// The max of `value` over groups of `lanes` consecutive lanes (a power
  /// of two up to 32): log2(lanes) xor shuffles, maxnum each.
  Value groupMax(Value value, int32_t lanes);

  /// scf.if with no results, the else branch when `elseFn` is given.
  void ifThen(Value cond, function_ref<void()> thenFn,
              function_ref<void()> elseFn = {});
  /// scf.if yielding one value of `type`.
  Value select(Value cond, Type type, function_ref<Value()> thenFn,
               function_ref<Value()> elseFn);
  /// scf.for from `start` below `end` by `step` (indices) carrying one value.
  Value forLoop(Value start, Value end, Value step, Value carried,
                function_ref<Value(Value, Value)> body);

  /// A kernel gpu.func `name` in `module` with these parameters and
  /// `blockSize` threads per block (known_block_size), and `workgroup`
  /// buffers; the builder set at the start of its body.
  gpu::GPUFuncOp createKernel(gpu::GPUModuleOp module, StringRef name,
                              TypeRange params, int32_t blockSize,
                              TypeRange workgroup = {});

  ImplicitLocOpBuilder &b;
};

/// The kernel `name` of `module` if it exists; else creates it
/// (KernelBuilder::createKernel: `params`, `blockSize` threads, `workgroup`
/// buffers) and has `build` fill it with a BuilderT made from
/// `builderArgs`. Returns its name.
template <typename BuilderT, typename... Args>
StringRef
getOrCreateKernel(gpu::GPUModuleOp module, StringRef name, TypeRange params,
                  int32_t blockSize, TypeRange workgroup,
                  function_ref<void(BuilderT &, gpu::GPUFuncOp)> build,
                  Args &&...builderArgs) {
  if (auto existing = module.lookupSymbol<gpu::GPUFuncOp>(name))
    return existing.getName();
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  BuilderT k(b, std::forward<Args>(builderArgs)...);
  gpu::GPUFuncOp func =
      k.createKernel(module, name, params, blockSize, workgroup);
  build(k, func);
  gpu::ReturnOp::create(b);
  return func.getName();
}

/// The per-tensor cast kernels (KernelABI.h), gpu.funcs on 1-D memrefs
/// (FP8 as i8), created once in `module`; each returns its name.
StringRef getOrCreateQuantize(gpu::GPUModuleOp module, Type in, Type out,
                              bool withAmax);
StringRef getOrCreateAmax(gpu::GPUModuleOp module, Type in);
StringRef getOrCreateDequantize(gpu::GPUModuleOp module, Type in, Type out);
/// cast_transpose on memref<?x?xT> matrices.
StringRef getOrCreateCastTranspose(gpu::GPUModuleOp module, Type in, Type out,
                                   bool withAmax);

/// The per-block kernels (KernelABI.h), gpu.funcs on [batch, rows, cols]
/// memrefs (FP8 and E8M0 as i8), created once in `module`; `recipe` as in
/// their names. Each returns its name.
StringRef getOrCreateBlockCast(gpu::GPUModuleOp module, Type in, Type out,
                               int64_t br, int64_t bc,
                               const BlockRecipe &recipe);
StringRef getOrCreateBlockAmax(gpu::GPUModuleOp module, Type in, int64_t br,
                               int64_t bc);
StringRef getOrCreateBlockQuantize(gpu::GPUModuleOp module, Type in, Type out,
                                   int64_t br, int64_t bc);
StringRef getOrCreateBlockDequantize(gpu::GPUModuleOp module, Type in,
                                     Type out, int64_t br, int64_t bc,
                                     bool mx);
StringRef getOrCreateBlockScales(gpu::GPUModuleOp module, Type out,
                                 const BlockRecipe &recipe);

/// The per-tensor scaling kernels (KernelABI.h), gpu.funcs on memrefs,
/// created once in `module`; each returns its name.
StringRef getOrCreateComputeScale(gpu::GPUModuleOp module);
StringRef getOrCreateRecordAmax(gpu::GPUModuleOp module);
StringRef getOrCreateRollHistory(gpu::GPUModuleOp module);

/// The transposing block cast (KernelABI.h,
/// `block_cast_transpose_<in>_<fp8>_<bc>x1<recipe>`) in `module`, a
/// gpu.func on memrefs, created once; returns its name.
StringRef getOrCreateBlockCastTranspose(gpu::GPUModuleOp module, Type in,
                                        Type out, int64_t bc,
                                        const BlockRecipe &recipe);

} // namespace mlir::fp8

#endif // LIB_CONVERSION_FP8TONVVM_KERNELS_H
