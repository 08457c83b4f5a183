//===- WgmmaBuilder.h - What the Hopper wgmma kernels are written with ---===//
//
// Private to lib/Conversion/FP8ToNVVM: the pieces the warp-specialized
// sm_90a kernels share (the GEMM of ScaledMatmulToWGMMA.cpp, the flash
// attention of AttentionToWGMMA.cpp). They are LLVM-dialect functions
// written with NVVM ops: i32 arithmetic, structured control flow, shared
// memory aligned to the 128-byte swizzle period, mbarrier rings and wgmma
// shared-memory descriptors.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_FP8TONVVM_WGMMABUILDER_H
#define LIB_CONVERSION_FP8TONVVM_WGMMABUILDER_H

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::fp8 {

inline constexpr unsigned kGlobalSpace =
    static_cast<unsigned>(NVVM::NVVMMemorySpace::Global);
inline constexpr unsigned kSharedSpace =
    static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared);
inline constexpr unsigned kSharedClusterSpace =
    static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster);
/// Suspend-time hint of mbarrier.try_wait (ns), as CUTLASS uses.
inline constexpr int64_t kTryWaitTicks = 10000000;

/// The kernels' element tag of `type` (None for a type no kernel takes),
/// its MLIR type back (a null type for None), and its wgmma operand type
/// (f32 operands run as tf32).
gemm_abi::Elem getKernelElem(Type type);
Type getKernelElemType(MLIRContext *ctx, gemm_abi::Elem e);
NVVM::WGMMATypes getWgmmaType(gemm_abi::Elem e);

/// The kernel function `name` of `module` (an LLVM function with the
/// kernel, maxntid and minctasm attributes), created with `params` when
/// absent, together with the module's dynamic shared memory symbol
/// `sharedMemory`; `tensorMaps` are the indices of CUtensorMap parameters
/// (passed by value, 64-byte aligned, __grid_constant__). `build` fills a
/// new function's entry block. Returns the function.
LLVM::LLVMFuncOp
getOrCreateWgmmaKernel(gpu::GPUModuleOp module, StringRef name,
                       StringRef sharedMemory, ArrayRef<Type> params,
                       ArrayRef<unsigned> tensorMaps, int threads,
                       function_ref<void(LLVM::LLVMFuncOp)> build);

/// Integer arithmetic, pointers, control flow and wgmma descriptors on one
/// builder.
class WgmmaBuilder {
public:
  explicit WgmmaBuilder(ImplicitLocOpBuilder &b)
      : b(b), ctx(b.getContext()) {}

protected:
  // Constants and integer arithmetic (i32 unless said otherwise).
  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
  }
  Value f32(float v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value divU(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value remU(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value xorI(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, cond, x, y);
  }
  Value zext64(Value v) { return arith::ExtUIOp::create(b, b.getI64Type(), v); }
  Value ceilDiv(Value x, int64_t d) { return divU(add(x, i32(d - 1)), i32(d)); }

  Type sharedPtr() { return LLVM::LLVMPointerType::get(ctx, kSharedSpace); }
  Type globalPtr() { return LLVM::LLVMPointerType::get(ctx, kGlobalSpace); }
  Value gepBytes(Value base, Value offset) {
    return LLVM::GEPOp::create(b, base.getType(), b.getI8Type(), base,
                               ValueRange{offset});
  }
  Value gep(Value base, Type element, Value index) {
    return LLVM::GEPOp::create(b, base.getType(), element, base,
                               ValueRange{index});
  }

  void ifThen(Value cond, llvm::function_ref<void()> then);
  void ifThenElse(Value cond, llvm::function_ref<void()> then,
                  llvm::function_ref<void()> otherwise);
  /// scf.for over i32 with loop-carried values; `body` returns the next ones.
  SmallVector<Value>
  forLoop(Value lb, Value ub, Value step, ValueRange init,
          llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body);

  /// The base of the dynamic shared memory `name`, aligned to 1024 bytes by
  /// hand: the swizzle pattern and the descriptors assume it. The array is
  /// declared with the 16-byte alignment the driver guarantees, not 1024
  /// (LLVM would then fold this pad to 0 and trust a placement no one
  /// promised); the pad comes out of gemm_abi::kAlignSlack.
  Value alignedSharedMemory(StringRef name);

  /// wgmma shared-memory matrix descriptor of a K-major tile written by TMA
  /// with 128-byte swizzle: start address >> 4, leading byte offset unused,
  /// stride byte offset 1024 (8 rows of 128 bytes), swizzle mode 1 (128B).
  Value descriptor(Value tile);

  /// Reads the thread's indices: `tid` in the block, its `warpgroup`, its
  /// `lane` and its warp in the warpgroup.
  void readThreadIndices();
  /// The warp-specialized body every kernel here has: thread 0 initializes
  /// the mbarriers (`initBarriers`) and makes them visible to the TMA unit
  /// (async proxy) before any copy signals them, the block synchronizes
  /// once, then warpgroup 0 runs `producer` and the others `consumer`, with
  /// `tid` their index within their warpgroup (the warpgroups never
  /// synchronize as a block again: the producer's idle threads may exit);
  /// then the function returns.
  void splitWarpgroups(llvm::function_ref<void()> initBarriers,
                       llvm::function_ref<void()> producer,
                       llvm::function_ref<void()> consumer);

  /// Waits until the mbarrier at `barrier` completes the phase of parity
  /// `parity`.
  void wait(Value barrier, Value parity);
  /// One arrive on `barrier` per warp (from lane 0 of each; `lane` is the
  /// thread's lane).
  void arrivePerWarp(Value barrier, Value lane);
  /// The elected thread's TMA load of a box at `coords` of `map` into
  /// `dst`, signalling `barrier`.
  void tmaLoad(Value dst, Value map, ValueRange coords, Value barrier);
  /// (stage, phase) of the slot after `stage` in a ring of `stages`.
  std::pair<Value, Value> advanceRing(Value stage, Value phase,
                                      int64_t stages) {
    Value next = add(stage, i32(1));
    Value wrap = cmp(arith::CmpIPredicate::eq, next, i32(stages));
    return {select(wrap, i32(0), next),
            select(wrap, xorI(phase, i32(1)), phase)};
  }
  /// mbarrier.arrive.expect_tx of `bytes` on `barrier`.
  void expectBytes(Value barrier, int64_t bytes);

  // f32 arithmetic.
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  /// max that propagates NaN.
  Value fmax(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
  Value negInf();
  /// exp(x) as 2^(x log2(e)) on ex2.approx.ftz (FlashAttention's), and
  /// log(x) on lg2.approx.ftz.
  Value exp(Value x);
  Value log(Value x);
  Value loadF32(Value base, Value index);
  /// A struct of `n` f32 values, each `fill` (an accumulator).
  Value structOf(int64_t n, Value fill);

  /// One wgmma m64n<n>k<32 / bytes> with A in registers (`a`: 4 i32) and B
  /// from shared memory (`descB`), accumulating into `acc` (scale-d 1):
  /// MLIR 22's nvvm.wgmma.mma_async takes A only as a descriptor, so this
  /// is the llvm.inline_asm that upstream's PTX builder would make, the A
  /// registers in place of the descriptor. `aType` / `bType` are PTX type
  /// names (bf16, f16, e4m3, e5m2); 16-bit types get imm-trans-b 0 (B
  /// K-major), FP8 has none.
  Value wgmmaRegisterA(Value acc, ArrayRef<Value> a, Value descB, int64_t n,
                       StringRef aType, StringRef bType);

  ImplicitLocOpBuilder &b;
  MLIRContext *ctx;
  Value tid, warpgroup, lane, warpInGroup;
};

} // namespace mlir::fp8

#endif // LIB_CONVERSION_FP8TONVVM_WGMMABUILDER_H
