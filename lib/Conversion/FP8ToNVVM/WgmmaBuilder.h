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

  /// Waits until the mbarrier at `barrier` completes the phase of parity
  /// `parity`.
  void wait(Value barrier, Value parity);
  /// One arrive on `barrier` per warp (from lane 0 of each; `lane` is the
  /// thread's lane).
  void arrivePerWarp(Value barrier, Value lane);
  /// The elected thread's TMA load of a box at `coords` of `map` into
  /// `dst`, signalling `barrier`.
  void tmaLoad(Value dst, Value map, ValueRange coords, Value barrier);

  ImplicitLocOpBuilder &b;
  MLIRContext *ctx;
};

} // namespace mlir::fp8

#endif // LIB_CONVERSION_FP8TONVVM_WGMMABUILDER_H
