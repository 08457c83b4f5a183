//===- FP8ToNVVM.cpp - fp8 ops to Hopper kernels and a host launcher ------===//
//
// convert-fp8-to-nvvm: every function that computes with fp8 ops becomes a
// host function on memrefs that launches one kernel per op, in program
// order, from `gpu.module @fp8_kernels`. The kernels are `llvm.func`s with
// raw global pointers (KernelABI.h is the contract), so a host without MLIR
// can launch them too; their numerics are those of lib/Numerics, which the
// GPU bench checks byte for byte.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "BlockKernels.h"
#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"
#include "fp8/Conversion/FP8ToNVVM/ScaledMatmulToWGMMA.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Conversion/ScaleArith.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cfloat>

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8TONVVM
#define GEN_PASS_DEF_CONVERTFP8TOGPULAUNCHES
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
namespace abi = mlir::fp8::nvvm_abi;
namespace num = mlir::fp8::numerics;
namespace gabi = mlir::fp8::gemm_abi;

static constexpr unsigned kGlobalSpace =
    static_cast<unsigned>(NVVM::NVVMMemorySpace::Global);
static constexpr unsigned kSharedSpace =
    static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared);

StringRef mlir::fp8::getKernelTypeTag(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (isa<Float8E4M3FNType>(type))
    return "e4m3";
  if (isa<Float8E5M2Type>(type))
    return "e5m2";
  if (isa<Float8E8M0FNUType>(type))
    return "e8m0";
  return "";
}

float mlir::fp8::getFloat8MaxFinite(Type float8Type) {
  assert((isa<Float8E4M3FNType, Float8E5M2Type>(float8Type)) &&
         "an FP8 cast type");
  return num::getFormatInfo(isa<Float8E4M3FNType>(float8Type)
                                ? num::Format::E4M3FN
                                : num::Format::E5M2)
      .maxFinite;
}

std::string mlir::fp8::BlockRecipe::getSuffix() const {
  if (mx)
    return "_mx";
  std::string suffix = powerOfTwo ? "_pow2" : "";
  if (epsilon != 0.0f)
    suffix += "_eps" + llvm::utohexstr(llvm::bit_cast<uint32_t>(epsilon),
                                       /*LowerCase=*/true, /*Width=*/8);
  return suffix;
}

std::pair<Value, Value> mlir::fp8::createBlockScale(OpBuilder &builder,
                                                    Location loc, Value amax,
                                                    Type float8Type,
                                                    const BlockRecipe &recipe) {
  float maxFinite = getFloat8MaxFinite(float8Type);
  if (recipe.mx) {
    Value code = createMXScaleCode(builder, loc, amax, maxFinite);
    return {createMXScaleFromCode(builder, loc, code),
            arith::TruncIOp::create(builder, loc, builder.getI8Type(), code)};
  }
  Value scale = createCurrentScale(builder, loc, amax,
                                   createF32Constant(builder, loc, maxFinite),
                                   recipe.epsilon, recipe.powerOfTwo);
  return {scale, arith::DivFOp::create(
                     builder, loc, createF32Constant(builder, loc, 1.0f),
                     scale)};
}

Value mlir::fp8::createFloat8Pair(OpBuilder &builder, Location loc, Value hi,
                                  Value lo, Type float8Type) {
  return NVVM::ConvertF32x2ToF8x2Op::create(
      builder, loc, builder.getI16Type(), hi, lo, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, float8Type);
}

static Type getElementType(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

//===----------------------------------------------------------------------===//
// Kernel bodies
//===----------------------------------------------------------------------===//

namespace {
/// Builds the body of one kernel: LLVM and NVVM ops on raw global pointers,
/// with arith/math/scf for arithmetic and loops (lowered with the rest of
/// the gpu.module by fp8-lower-to-nvvm).
class KernelEmitter {
public:
  KernelEmitter(ImplicitLocOpBuilder &b) : b(b) {}

  Type i8() { return b.getI8Type(); }
  Type i16() { return b.getI16Type(); }
  Type i32() { return b.getI32Type(); }
  Type i64() { return b.getI64Type(); }
  Type f32() { return b.getF32Type(); }
  Type globalPtr() {
    return LLVM::LLVMPointerType::get(b.getContext(), kGlobalSpace);
  }

  Value i32(int64_t v) {
    return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
  }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
  }
  Value f32(float v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  Value f32Bits(uint32_t bits) {
    return f32(llvm::bit_cast<float>(bits));
  }

  Value tid() { return zext64(NVVM::ThreadIdXOp::create(b, i32())); }
  Value ctaid() { return zext64(NVVM::BlockIdXOp::create(b, i32())); }
  Value ntid() { return zext64(NVVM::BlockDimXOp::create(b, i32())); }
  Value nctaid() { return zext64(NVVM::GridDimXOp::create(b, i32())); }
  Value zext64(Value v) { return arith::ExtUIOp::create(b, i64(), v); }

  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value divU(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value remU(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
  }
  Value ule(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ule, x, y);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fmax(Value x, Value y) { return arith::MaxNumFOp::create(b, x, y); }
  Value fabs(Value x) { return math::AbsFOp::create(b, x); }

  /// Pointer to element `index` (elements of `elementType`) of `base`.
  Value gep(Value base, Type elementType, Value index) {
    return LLVM::GEPOp::create(b, base.getType(), elementType, base,
                               ValueRange{index});
  }
  Value load(Type type, Value ptr, unsigned alignment) {
    return LLVM::LoadOp::create(b, type, ptr, alignment);
  }
  void store(Value value, Value ptr, unsigned alignment) {
    LLVM::StoreOp::create(b, value, ptr, alignment);
  }
  Value extract(Value vector, int64_t i) {
    return LLVM::ExtractElementOp::create(b, vector, i32(i));
  }
  Value insert(Value vector, Value value, int64_t i) {
    return LLVM::InsertElementOp::create(b, vector, value, i32(i));
  }
  Value undef(Type type) { return LLVM::UndefOp::create(b, type); }

  /// A scalar in device memory (scales, amaxes).
  Value loadScalar(Value ptr) { return load(f32(), ptr, 4); }

  /// Element `index` of `base` widened to f32 (exact).
  Value loadWide(Value base, Type elementType, Value index) {
    return widen(load(elementType, gep(base, elementType, index),
                      elementType.getIntOrFloatBitWidth() / 8));
  }
  Value widen(Value v) {
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(b, f32(), v);
  }

  /// `count` consecutive elements of `elementType` starting at element
  /// `index` (16-byte aligned), widened to f32, read with 16-byte loads.
  SmallVector<Value> loadChunk(Value base, Type elementType, Value index,
                               int64_t count) {
    int64_t width = elementType.getIntOrFloatBitWidth() / 8;
    int64_t perVector = 16 / width;
    auto vectorType = VectorType::get({perVector}, elementType);
    SmallVector<Value> values;
    for (int64_t v = 0; v < count / perVector; ++v) {
      Value ptr = gep(base, elementType, add(index, i64(v * perVector)));
      Value vec = load(vectorType, ptr, 16);
      for (int64_t e = 0; e < perVector; ++e)
        values.push_back(widen(extract(vec, e)));
    }
    return values;
  }

  /// cvt.rn.satfinite.<fp8>x2.f32: `lo` in the low byte, `hi` in the high.
  Value cvtPair(Value hi, Value lo, Type float8Type) {
    return createFloat8Pair(b, b.getLoc(), hi, lo, float8Type);
  }

  /// 16 f32 values -> 16 FP8 bytes as four little-endian i32 words.
  Value quantizeChunk(ArrayRef<Value> scaled, Type float8Type) {
    Value words = undef(VectorType::get({4}, i32()));
    for (int64_t w = 0; w < 4; ++w) {
      Value lo = zext32(cvtPair(scaled[4 * w + 1], scaled[4 * w], float8Type));
      Value hi =
          zext32(cvtPair(scaled[4 * w + 3], scaled[4 * w + 2], float8Type));
      Value word = orI(lo, arith::ShLIOp::create(b, hi, i32(16)));
      words = insert(words, word, w);
    }
    return words;
  }
  Value zext32(Value v) { return arith::ExtUIOp::create(b, i32(), v); }

  /// One f32 value -> its FP8 byte.
  Value quantizeOne(Value scaled, Type float8Type) {
    return arith::TruncIOp::create(b, i8(),
                                   cvtPair(f32(0.0f), scaled, float8Type));
  }

  /// Two FP8 bytes (an i16, element 0 in the low byte) -> two f32 (exact,
  /// through cvt.rn.f16x2.<fp8>x2).
  std::pair<Value, Value> dequantizePair(Value pair, Type float8Type) {
    Value bytes =
        LLVM::BitcastOp::create(b, VectorType::get({2}, i8()), pair);
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        b, VectorType::get({2}, b.getF16Type()), bytes, /*relu=*/false,
        float8Type);
    return {widen(extract(halves, 0)), widen(extract(halves, 1))};
  }

  /// Rounds an f32 to `type` (nearest even).
  Value narrow(Value v, Type type) {
    if (type.isF32())
      return v;
    return arith::TruncFOp::create(b, type, v);
  }

  /// Warp max (five butterfly shuffles) and one `atom.global.max.u32` per
  /// warp on the f32 bits, which order like unsigned integers for the
  /// non-negative values an amax has. NaN never reaches the bits.
  void atomicAmax(Value threadMax, Value amaxPtr) {
    Value warpMax = warpReduceMax(threadMax);
    Value isNaN = arith::CmpFOp::create(b, arith::CmpFPredicate::UNO, warpMax,
                                        warpMax);
    warpMax = select(isNaN, f32(0.0f), warpMax);
    Value bits = arith::BitcastOp::create(b, i32(), warpMax);
    Value lane = remU(tid(), i64(abi::kWarpSize));
    ifThen(eq(lane, i64(0)), [&]() {
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::umax, amaxPtr, bits,
                                LLVM::AtomicOrdering::monotonic);
    });
  }

  Value warpReduceMax(Value value) {
    for (int offset = 16; offset >= 1; offset /= 2) {
      Value other = NVVM::ShflOp::create(b, f32(), i32(-1), value, i32(offset),
                                         i32(31), NVVM::ShflKind::bfly,
                                         UnitAttr());
      value = fmax(value, other);
    }
    return value;
  }

  /// for (i = start; i < end; i += step) with one f32 carried value.
  Value forLoop(Value start, Value end, Value step, Value carried,
                function_ref<Value(Value, Value)> body) {
    auto loop = scf::ForOp::create(
        b, start, end, step, ValueRange{carried},
        [&](OpBuilder &nested, Location loc, Value iv, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value next = body(iv, args[0]);
          scf::YieldOp::create(b, next);
        });
    return loop.getResult(0);
  }

  /// if (cond) { then } with nothing yielded.
  void ifThen(Value cond, function_ref<void()> then) {
    scf::IfOp::create(b, cond, [&](OpBuilder &nested, Location) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(nested.getInsertionBlock(),
                          nested.getInsertionPoint());
      then();
      scf::YieldOp::create(b);
    });
  }

  /// if (cond) { then } else { other }, nothing yielded.
  void ifThenElse(Value cond, function_ref<void()> then,
                  function_ref<void()> other) {
    scf::IfOp::create(
        b, cond,
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          then();
          scf::YieldOp::create(b);
        },
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          other();
          scf::YieldOp::create(b);
        });
  }

  /// if (cond) { then } else { other }, yielding one value.
  Value ifElse(Value cond, function_ref<Value()> then,
               function_ref<Value()> other) {
    auto ifOp = scf::IfOp::create(
        b, cond,
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, then());
        },
        [&](OpBuilder &nested, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, other());
        });
    return ifOp.getResult(0);
  }

  /// True when every pointer is 16-byte aligned.
  Value allAligned(ArrayRef<Value> ptrs) {
    Value bits = i64(0);
    for (Value ptr : ptrs)
      bits = orI(bits, LLVM::PtrToIntOp::create(b, i64(), ptr));
    return eq(andI(bits, i64(15)), i64(0));
  }

  ImplicitLocOpBuilder &b;
};

/// How a block kernel turns a block amax into its scales: the E8M0 MXFP8
/// rule, or f32 block scaling with its options (compute_block_scales).
/// One group of threads on one block of a block kernel, and this thread's
/// kBlockVector-element runs of it: one per step.
struct BlockCursor {
  Value valid;   // i1: the group has a block this iteration
  Value index;   // i64: the block's index in the scale layout
  Value rank;    // i64: the thread's rank in its group
  Value fast;    // i1: a whole block, aligned: vector accesses
  Value rows, cols;
  SmallVector<Value> start, row, col; // per step: first element, position

  /// Element j of step s's run is in the tensor.
  Value inside(KernelEmitter &k, int64_t s, int64_t j) {
    return k.andI(valid, k.andI(k.ult(row[s], rows),
                                k.ult(k.add(col[s], k.i64(j)), cols)));
  }
};

/// Creates (once) and returns the kernels of one gpu.module.
class KernelLibrary {
public:
  KernelLibrary(gpu::GPUModuleOp module) : module(module) {}

  gpu::GPUModuleOp getModule() { return module; }

  /// quantize_<in>_<fp8>[_amax] / amax_<in>: see KernelABI.h.
  StringRef getQuantize(Type in, Type out, bool withAmax);
  StringRef getAmax(Type in);
  StringRef getDequantize(Type in, Type out);
  StringRef getCastTranspose(Type in, Type out, bool withAmax);
  StringRef getComputeScale();
  StringRef getRecordAmax();
  StringRef getRollHistory();

  /// The per-block kernels (KernelABI.h); `recipe` as in their names.
  StringRef getBlockCast(Type in, Type out, int64_t br, int64_t bc,
                         const BlockRecipe &recipe);
  StringRef getBlockAmax(Type in, int64_t br, int64_t bc);
  StringRef getBlockQuantize(Type in, Type out, int64_t br, int64_t bc);
  StringRef getBlockDequantize(Type in, Type out, int64_t br, int64_t bc,
                               bool mx);
  StringRef getBlockScales(Type out, const BlockRecipe &recipe);

private:
  /// Looks `name` up or creates an empty kernel with these parameters and
  /// calls `build` to fill it.
  StringRef getOrCreate(StringRef name, ArrayRef<Type> params,
                        int64_t blockSize,
                        function_ref<void(KernelEmitter &, ValueRange)> build);

  void buildElementwise(KernelEmitter &k, ValueRange args, Type in, Type out,
                        bool quantize, bool withAmax);
  void buildDequantize(KernelEmitter &k, ValueRange args, Type in, Type out);
  void buildCastTranspose(KernelEmitter &k, ValueRange args, Type in,
                          Type out, bool withAmax);
  Value getSharedTile(ImplicitLocOpBuilder &b);

  /// A kernel (src, dst, scales, batch, rows, cols) that maps each block
  /// of src into dst with its entry of scales (block_quantize/dequantize).
  StringRef getBlockMap(
      StringRef name, int64_t br, int64_t bc,
      function_ref<void(KernelEmitter &, BlockCursor &, ValueRange)> perBlock);
  void walkBlocks(KernelEmitter &k, int64_t br, int64_t bc, Value batch,
                  Value rows, Value cols, ArrayRef<Value> vectorPtrs,
                  function_ref<void(BlockCursor &)> body);
  Value groupMax(KernelEmitter &k, Value value, int64_t group);

  gpu::GPUModuleOp module;
  llvm::StringMap<LLVM::LLVMFuncOp> kernels;
};
} // namespace

StringRef KernelLibrary::getOrCreate(
    StringRef name, ArrayRef<Type> params, int64_t blockSize,
    function_ref<void(KernelEmitter &, ValueRange)> build) {
  auto it = kernels.find(name);
  if (it != kernels.end())
    return it->second.getSymName();
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto func = LLVM::LLVMFuncOp::create(
      b, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));
  Block *entry = func.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  KernelEmitter k(b);
  build(k, entry->getArguments());
  LLVM::ReturnOp::create(b, ValueRange{});
  kernels[name] = func;
  return func.getSymName();
}

void KernelLibrary::buildElementwise(KernelEmitter &k, ValueRange args,
                                     Type in, Type out, bool quantize,
                                     bool withAmax) {
  // quantize: (x, q, scale, [amax,] n); amax: (x, amax, n).
  Value x = args[0];
  Value q = quantize ? args[1] : Value();
  Value scale = quantize ? k.loadScalar(args[2]) : Value();
  Value amaxPtr = withAmax ? args[quantize ? 3 : 1] : Value();
  Value n = args.back();

  Value gtid = k.add(k.mul(k.ctaid(), k.ntid()), k.tid());
  Value stride = k.mul(k.nctaid(), k.ntid());
  Value chunk = k.i64(abi::kChunk);
  // Misaligned views take the scalar path for every element.
  SmallVector<Value> ptrs{x};
  if (q)
    ptrs.push_back(q);
  Value chunks = k.select(k.allAligned(ptrs), k.divU(n, chunk), k.i64(0));

  Value acc = k.forLoop(gtid, chunks, stride, k.f32(0.0f), [&](Value c,
                                                                 Value acc) {
    Value start = k.mul(c, chunk);
    SmallVector<Value> values = k.loadChunk(x, in, start, abi::kChunk);
    if (withAmax)
      for (Value v : values)
        acc = k.fmax(acc, k.fabs(v));
    if (quantize) {
      SmallVector<Value> scaled;
      for (Value v : values)
        scaled.push_back(k.fmul(v, scale));
      k.store(k.quantizeChunk(scaled, out), k.gep(q, k.i8(), start), 16);
    }
    return acc;
  });
  acc = k.forLoop(k.add(k.mul(chunks, chunk), gtid), n, stride, acc,
                  [&](Value i, Value acc) {
                    Value v = k.loadWide(x, in, i);
                    if (withAmax)
                      acc = k.fmax(acc, k.fabs(v));
                    if (quantize)
                      k.store(k.quantizeOne(k.fmul(v, scale), out),
                              k.gep(q, k.i8(), i), 1);
                    return acc;
                  });
  if (withAmax)
    k.atomicAmax(acc, amaxPtr);
}

StringRef KernelLibrary::getQuantize(Type in, Type out, bool withAmax) {
  std::string name = ("quantize_" + Twine(withAmax ? "amax_" : "") +
                      getKernelTypeTag(in) + "_" + getKernelTypeTag(out))
                         .str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  SmallVector<Type> params{ptr, ptr, ptr};
  if (withAmax)
    params.push_back(ptr);
  params.push_back(IntegerType::get(ctx, 64));
  return getOrCreate(name, params, abi::kBlockSize,
                     [&](KernelEmitter &k, ValueRange args) {
                       buildElementwise(k, args, in, out, /*quantize=*/true,
                                        withAmax);
                     });
}

StringRef KernelLibrary::getAmax(Type in) {
  std::string name = ("amax_" + getKernelTypeTag(in)).str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  return getOrCreate(name, {ptr, ptr, IntegerType::get(ctx, 64)},
                     abi::kBlockSize, [&](KernelEmitter &k, ValueRange args) {
                       buildElementwise(k, args, in, Type(),
                                        /*quantize=*/false, /*withAmax=*/true);
                     });
}

void KernelLibrary::buildDequantize(KernelEmitter &k, ValueRange args,
                                    Type in, Type out) {
  // (q, y, scale_inv, n)
  Value q = args[0], y = args[1], n = args[3];
  Value scaleInv = k.loadScalar(args[2]);
  Value gtid = k.add(k.mul(k.ctaid(), k.ntid()), k.tid());
  Value stride = k.mul(k.nctaid(), k.ntid());
  Value chunk = k.i64(abi::kChunk);
  Value chunks = k.select(k.allAligned({q, y}), k.divU(n, chunk), k.i64(0));
  int64_t perVector = 16 / (out.getIntOrFloatBitWidth() / 8);
  auto outVector = VectorType::get({perVector}, out);

  k.forLoop(gtid, chunks, stride, k.f32(0.0f), [&](Value c, Value unused) {
    Value start = k.mul(c, chunk);
    Value words =
        k.load(VectorType::get({4}, k.i32()), k.gep(q, k.i8(), start), 16);
    SmallVector<Value> values;
    for (int64_t w = 0; w < 4; ++w) {
      Value word = k.extract(words, w);
      for (int64_t half = 0; half < 2; ++half) {
        Value pair = arith::TruncIOp::create(
            k.b, k.i16(),
            arith::ShRUIOp::create(k.b, word, k.i32(16 * half)));
        auto [lo, hi] = k.dequantizePair(pair, in);
        values.push_back(k.narrow(k.fmul(lo, scaleInv), out));
        values.push_back(k.narrow(k.fmul(hi, scaleInv), out));
      }
    }
    for (int64_t v = 0; v < abi::kChunk / perVector; ++v) {
      Value vec = k.undef(outVector);
      for (int64_t e = 0; e < perVector; ++e)
        vec = k.insert(vec, values[v * perVector + e], e);
      k.store(vec, k.gep(y, out, k.add(start, k.i64(v * perVector))), 16);
    }
    return unused;
  });
  k.forLoop(k.add(k.mul(chunks, chunk), gtid), n, stride, k.f32(0.0f),
            [&](Value i, Value unused) {
              Value byte = k.load(k.i8(), k.gep(q, k.i8(), i), 1);
              Value pair = arith::ExtUIOp::create(k.b, k.i16(), byte);
              Value value = k.dequantizePair(pair, in).first;
              k.store(k.narrow(k.fmul(value, scaleInv), out),
                      k.gep(y, out, i), out.getIntOrFloatBitWidth() / 8);
              return unused;
            });
}

StringRef KernelLibrary::getDequantize(Type in, Type out) {
  std::string name =
      ("dequantize_" + getKernelTypeTag(in) + "_" + getKernelTypeTag(out)).str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  return getOrCreate(name, {ptr, ptr, ptr, IntegerType::get(ctx, 64)},
                     abi::kBlockSize, [&](KernelEmitter &k, ValueRange args) {
                       buildDequantize(k, args, in, out);
                     });
}

/// The shared-memory tile of cast_transpose: kTile rows (input columns) of
/// kTilePitch bytes.
Value KernelLibrary::getSharedTile(ImplicitLocOpBuilder &b) {
  StringRef name = "fp8_transpose_tile";
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(),
                                       abi::kTile * abi::kTilePitch);
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(b, type, /*isConstant=*/false,
                           LLVM::Linkage::Internal, name, Attribute(),
                           /*alignment=*/16, kSharedSpace);
  }
  return LLVM::AddressOfOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), kSharedSpace), name);
}

void KernelLibrary::buildCastTranspose(KernelEmitter &k, ValueRange args,
                                       Type in, Type out, bool withAmax) {
  // (x, q, qt, scale, [amax,] rows, cols). Persistent blocks walk the tiles
  // so that the amax costs one atomic per warp, not per tile.
  Value x = args[0], q = args[1], qt = args[2];
  Value scale = k.loadScalar(args[3]);
  Value amaxPtr = withAmax ? args[4] : Value();
  Value rows = args[args.size() - 2], cols = args.back();
  Value tile = getSharedTile(k.b);

  Value tileSize = k.i64(abi::kTile);
  Value tileLast = k.i64(abi::kTile - 1);
  Value colTiles = k.divU(k.add(cols, tileLast), tileSize);
  Value rowTiles = k.divU(k.add(rows, tileLast), tileSize);
  Value numTiles = k.mul(colTiles, rowTiles);
  Value segments = k.i64(abi::kTile / abi::kChunk);
  Value tid = k.tid();
  Value r = k.divU(tid, segments);                 // row within the tile
  Value seg = k.mul(k.remU(tid, segments), k.i64(abi::kChunk));
  Value pitch = k.i64(abi::kTilePitch);
  Value sixteen = k.i64(15);
  Value dimsAligned =
      k.eq(k.andI(k.orI(rows, cols), sixteen), k.i64(0));
  Value aligned = k.andI(dimsAligned, k.allAligned({x, q, qt}));

  Value acc = k.forLoop(k.ctaid(), numTiles, k.nctaid(), k.f32(0.0f),
                        [&](Value t, Value acc) {
    Value r0 = k.mul(k.divU(t, colTiles), tileSize);
    Value c0 = k.mul(k.remU(t, colTiles), tileSize);
    Value full = k.andI(k.ule(k.add(r0, tileSize), rows),
                        k.ule(k.add(c0, tileSize), cols));
    Value fast = k.andI(full, aligned);
    Value row = k.add(r0, r);
    Value col = k.add(c0, seg);
    Value rowStart = k.add(k.mul(row, cols), col);

    // Phase 1: read a 16-element row segment, write it quantized to q and
    // byte by byte into the transposed shared tile.
    acc = k.ifElse(
        fast,
        [&]() {
          Value a = acc;
          SmallVector<Value> values = k.loadChunk(x, in, rowStart, 16);
          SmallVector<Value> scaled;
          for (Value v : values) {
            if (withAmax)
              a = k.fmax(a, k.fabs(v));
            scaled.push_back(k.fmul(v, scale));
          }
          Value words = k.quantizeChunk(scaled, out);
          k.store(words, k.gep(q, k.i8(), rowStart), 16);
          for (int64_t j = 0; j < abi::kChunk; ++j) {
            Value word = k.extract(words, j / 4);
            Value byte = arith::TruncIOp::create(
                k.b, k.i8(),
                arith::ShRUIOp::create(k.b, word, k.i32(8 * (j % 4))));
            Value slot = k.add(k.mul(k.add(seg, k.i64(j)), pitch), r);
            k.store(byte, k.gep(tile, k.i8(), slot), 1);
          }
          return a;
        },
        [&]() {
          return k.forLoop(k.i64(0), k.i64(abi::kChunk), k.i64(1), acc,
                           [&](Value j, Value a) {
            Value inside =
                k.andI(k.ult(row, rows), k.ult(k.add(col, j), cols));
            return k.ifElse(
                inside,
                [&]() {
                  Value index = k.add(rowStart, j);
                  Value v = k.loadWide(x, in, index);
                  Value byte = k.quantizeOne(k.fmul(v, scale), out);
                  k.store(byte, k.gep(q, k.i8(), index), 1);
                  Value slot = k.add(k.mul(k.add(seg, j), pitch), r);
                  k.store(byte, k.gep(tile, k.i8(), slot), 1);
                  return withAmax ? k.fmax(a, k.fabs(v)) : a;
                },
                [&]() { return a; });
          });
        });
    NVVM::Barrier0Op::create(k.b);

    // Phase 2: tile row r is input column c0 + r; write its 16-byte segment
    // of input rows r0 + seg.. to qt.
    Value tcol = k.add(c0, r);
    Value trow = k.add(r0, seg);
    Value tStart = k.add(k.mul(tcol, rows), trow);
    Value tSlot = k.add(k.mul(r, pitch), seg);
    k.ifElse(
        fast,
        [&]() {
          Value words = k.load(VectorType::get({4}, k.i32()),
                               k.gep(tile, k.i8(), tSlot), 16);
          k.store(words, k.gep(qt, k.i8(), tStart), 16);
          return acc;
        },
        [&]() {
          return k.forLoop(k.i64(0), k.i64(abi::kChunk), k.i64(1), acc,
                           [&](Value j, Value a) {
            Value inside =
                k.andI(k.ult(tcol, cols), k.ult(k.add(trow, j), rows));
            k.ifThen(inside, [&]() {
              Value byte =
                  k.load(k.i8(), k.gep(tile, k.i8(), k.add(tSlot, j)), 1);
              k.store(byte, k.gep(qt, k.i8(), k.add(tStart, j)), 1);
            });
            return a;
          });
        });
    // The next tile overwrites the shared tile.
    NVVM::Barrier0Op::create(k.b);
    return acc;
  });
  if (withAmax)
    k.atomicAmax(acc, amaxPtr);
}

StringRef KernelLibrary::getCastTranspose(Type in, Type out, bool withAmax) {
  std::string name = ("cast_transpose_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + (withAmax ? "_amax" : ""))
                         .str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  Type i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> params{ptr, ptr, ptr, ptr};
  if (withAmax)
    params.push_back(ptr);
  params.append({i64, i64});
  return getOrCreate(name, params, abi::kBlockSize,
                     [&](KernelEmitter &k, ValueRange args) {
                       buildCastTranspose(k, args, in, out, withAmax);
                     });
}

StringRef KernelLibrary::getComputeScale() {
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  Type i64 = IntegerType::get(ctx, 64);
  Type i32 = IntegerType::get(ctx, 32);
  Type f32 = Float32Type::get(ctx);
  // (amax, len, previous, scale, scaled_max, epsilon, flags): one warp.
  return getOrCreate(
      "compute_scale", {ptr, i64, ptr, ptr, f32, f32, i32}, abi::kWarpSize,
      [&](KernelEmitter &k, ValueRange args) {
        Value history = args[0], len = args[1], previousPtr = args[2];
        Value scalePtr = args[3], scaledMax = args[4], epsilon = args[5];
        Value flags = args[6];
        auto flag = [&](int32_t bit) {
          return arith::CmpIOp::create(k.b, arith::CmpIPredicate::ne,
                                       k.andI(flags, k.i32(bit)), k.i32(0));
        };
        auto cmpF = [&](arith::CmpFPredicate p, Value x, Value y) {
          return arith::CmpFOp::create(k.b, p, x, y);
        };
        // The NaN-ignoring max over the history from a NaN start: an
        // all-NaN history stays NaN, as reduceAmaxHistory does.
        Value nan = k.f32Bits(0x7FC00000u);
        Value lanes = k.forLoop(k.tid(), len, k.i64(abi::kWarpSize), nan,
                                [&](Value i, Value a) {
                                  return k.fmax(a, k.load(k.f32(),
                                                          k.gep(history,
                                                                k.f32(), i),
                                                          4));
                                });
        Value reduced = k.warpReduceMax(lanes);
        Value amax =
            k.select(flag(abi::kScaleMostRecent), k.loadScalar(history),
                     reduced);
        Value inf = k.f32(std::numeric_limits<float>::infinity());
        Value one = k.f32(1.0f);

        // Delayed: a new scale only from a finite, positive amax.
        Value usable = k.andI(cmpF(arith::CmpFPredicate::OGT, amax, k.f32(0)),
                              cmpF(arith::CmpFPredicate::OLT, amax, inf));
        Value delayed = k.ifElse(
            flag(abi::kScaleDelayed),
            [&]() {
              return k.select(usable,
                              arith::DivFOp::create(k.b, scaledMax, amax),
                              k.loadScalar(previousPtr));
            },
            [&]() { return one; });
        // Current: amax raised to epsilon; 0, Inf or NaN give 1.
        Value raised = k.select(
            cmpF(arith::CmpFPredicate::OLT, amax, epsilon), epsilon, amax);
        Value bad = k.orI(
            cmpF(arith::CmpFPredicate::UEQ, raised, k.f32(0.0f)),
            cmpF(arith::CmpFPredicate::OEQ, k.fabs(raised), inf));
        Value current = k.select(
            bad, one, arith::DivFOp::create(k.b, scaledMax, raised));
        Value scale = k.select(flag(abi::kScaleDelayed), delayed, current);
        scale = k.select(cmpF(arith::CmpFPredicate::OEQ, k.fabs(scale), inf),
                         k.f32(FLT_MAX), scale);
        Value bits = arith::BitcastOp::create(k.b, k.i32(), scale);
        Value truncated = arith::BitcastOp::create(
            k.b, k.f32(),
            k.andI(bits, k.i32(static_cast<int32_t>(0xFF800000u))));
        scale = k.select(flag(abi::kScalePowerOfTwo), truncated, scale);
        k.ifThen(k.eq(k.tid(), k.i64(0)),
                 [&]() { k.store(scale, scalePtr, 4); });
      });
}

StringRef KernelLibrary::getRecordAmax() {
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  // (history, amax, result, len): row 0 = max(0, |row 0|, |amax|), NaN
  // ignored; the other rows copied.
  return getOrCreate(
      "record_amax", {ptr, ptr, ptr, IntegerType::get(ctx, 64)},
      abi::kBlockSize, [&](KernelEmitter &k, ValueRange args) {
        Value history = args[0], amaxPtr = args[1], result = args[2];
        Value len = args[3];
        k.forLoop(k.tid(), len, k.ntid(), k.f32(0.0f), [&](Value i, Value u) {
          Value v = k.load(k.f32(), k.gep(history, k.f32(), i), 4);
          Value slot = k.fmax(k.fmax(k.f32(0.0f), k.fabs(v)),
                              k.fabs(k.loadScalar(amaxPtr)));
          v = k.select(k.eq(i, k.i64(0)), slot, v);
          k.store(v, k.gep(result, k.f32(), i), 4);
          return u;
        });
      });
}

StringRef KernelLibrary::getRollHistory() {
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  // (history, result, len): new[i] = old[i+1], new[len-1] = old[0],
  // new[0] = 0.
  return getOrCreate(
      "roll_history", {ptr, ptr, IntegerType::get(ctx, 64)}, abi::kBlockSize,
      [&](KernelEmitter &k, ValueRange args) {
        Value history = args[0], result = args[1], len = args[2];
        k.forLoop(k.tid(), len, k.ntid(), k.f32(0.0f), [&](Value i, Value u) {
          Value last = k.eq(k.add(i, k.i64(1)), len);
          Value source = k.select(last, k.i64(0), k.add(i, k.i64(1)));
          Value v = k.load(k.f32(), k.gep(history, k.f32(), source), 4);
          v = k.select(k.eq(i, k.i64(0)), k.f32(0.0f), v);
          k.store(v, k.gep(result, k.f32(), i), 4);
          return u;
        });
      });
}

//===----------------------------------------------------------------------===//
// Per-block kernels
//===----------------------------------------------------------------------===//

void KernelLibrary::walkBlocks(KernelEmitter &k, int64_t br, int64_t bc,
                               Value batch, Value rows, Value cols,
                               ArrayRef<Value> vectorPtrs,
                               function_ref<void(BlockCursor &)> body) {
  const int64_t group = abi::blockGroupSize(br, bc);
  const int64_t perThreadBlock = abi::kBlockSize / group;
  const int64_t steps = abi::blockSteps(br, bc);
  // Rows of the block one step of the whole group covers.
  const int64_t rowsPerStep = group * abi::kBlockVector / bc;
  Value blockRows = k.divU(k.add(rows, k.i64(br - 1)), k.i64(br));
  Value blockCols = k.divU(k.add(cols, k.i64(bc - 1)), k.i64(bc));
  Value numBlocks = k.mul(batch, k.mul(blockRows, blockCols));
  Value slot = k.divU(k.tid(), k.i64(group));
  Value rank = k.remU(k.tid(), k.i64(group));
  Value first = k.mul(k.ctaid(), k.i64(perThreadBlock));
  Value stride = k.mul(k.nctaid(), k.i64(perThreadBlock));
  // Whole rows of 4-element runs stay aligned when cols is a multiple of 4.
  Value aligned =
      k.andI(k.allAligned(vectorPtrs),
             k.eq(k.remU(cols, k.i64(abi::kBlockVector)), k.i64(0)));
  Value runOffset = k.mul(rank, k.i64(abi::kBlockVector));
  Value rowInBlock = k.divU(runOffset, k.i64(bc));
  Value colInBlock = k.remU(runOffset, k.i64(bc));

  // The loop runs alike for every thread of a thread block (its bounds
  // depend on the thread block alone), so the shuffles and barriers of the
  // reductions see every thread; a group without a block idles through.
  k.forLoop(first, numBlocks, stride, k.f32(0.0f), [&](Value t, Value u) {
    BlockCursor c;
    Value block = k.add(t, slot);
    c.valid = k.ult(block, numBlocks);
    c.index = k.select(c.valid, block, k.i64(0));
    c.rank = rank;
    c.rows = rows;
    c.cols = cols;
    Value bj = k.remU(c.index, blockCols);
    Value rest = k.divU(c.index, blockCols);
    Value bi = k.remU(rest, blockRows);
    Value b = k.divU(rest, blockRows);
    Value row0 = k.mul(bi, k.i64(br));
    Value col0 = k.mul(bj, k.i64(bc));
    Value whole = k.andI(k.ule(k.add(row0, k.i64(br)), rows),
                         k.ule(k.add(col0, k.i64(bc)), cols));
    c.fast = k.andI(k.andI(c.valid, whole), aligned);
    Value base = k.mul(b, k.mul(rows, cols));
    for (int64_t step = 0; step < steps; ++step) {
      Value row =
          k.add(row0, k.add(rowInBlock, k.i64(step * rowsPerStep)));
      Value col = k.add(col0, colInBlock);
      c.row.push_back(row);
      c.col.push_back(col);
      c.start.push_back(k.add(base, k.add(k.mul(row, cols), col)));
    }
    body(c);
    return u;
  });
}

/// The NaN-ignoring max over a group of `group` threads, in every thread:
/// butterfly shuffles within a warp, then across the warps of the thread
/// block through shared memory.
Value KernelLibrary::groupMax(KernelEmitter &k, Value value, int64_t group) {
  int64_t lanes = std::min<int64_t>(group, abi::kWarpSize);
  for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
    Value other = NVVM::ShflOp::create(k.b, k.f32(), k.i32(-1), value,
                                       k.i32(offset), k.i32(31),
                                       NVVM::ShflKind::bfly, UnitAttr());
    value = k.fmax(value, other);
  }
  if (group <= abi::kWarpSize)
    return value;
  // One slot per warp of the thread block.
  StringRef name = "fp8_block_reduce";
  const int64_t warps = abi::kBlockSize / abi::kWarpSize;
  if (!module.lookupSymbol(name)) {
    OpBuilder::InsertionGuard guard(k.b);
    k.b.setInsertionPointToStart(module.getBody());
    LLVM::GlobalOp::create(k.b, LLVM::LLVMArrayType::get(k.f32(), warps),
                           /*isConstant=*/false, LLVM::Linkage::Internal, name,
                           Attribute(), /*alignment=*/16, kSharedSpace);
  }
  Value slots = LLVM::AddressOfOp::create(
      k.b, LLVM::LLVMPointerType::get(k.b.getContext(), kSharedSpace), name);
  Value warp = k.divU(k.tid(), k.i64(abi::kWarpSize));
  Value lane = k.remU(k.tid(), k.i64(abi::kWarpSize));
  k.ifThen(k.eq(lane, k.i64(0)),
           [&]() { k.store(value, k.gep(slots, k.f32(), warp), 4); });
  NVVM::Barrier0Op::create(k.b);
  Value result = k.f32(0.0f);
  for (int64_t w = 0; w < warps; ++w)
    result = k.fmax(result, k.load(k.f32(), k.gep(slots, k.f32(), k.i64(w)),
                                   4));
  // The slots are written again for the next block.
  NVVM::Barrier0Op::create(k.b);
  return result;
}

namespace {
/// Reads and writes of one thread's 4-element runs in a block kernel:
/// vector accesses for whole, aligned blocks, element by element (the
/// elements outside the tensor skipped, read as 0) otherwise.
struct BlockRuns {
  KernelEmitter &k;
  BlockCursor &c;

  /// Run `s` of a wide tensor, widened to f32.
  SmallVector<Value, 4> load(Value base, Type type, int64_t s) {
    unsigned bytes = type.getIntOrFloatBitWidth() / 8;
    auto wide = VectorType::get({abi::kBlockVector}, k.f32());
    Value values = k.ifElse(
        c.fast,
        [&]() {
          auto vectorType = VectorType::get({abi::kBlockVector}, type);
          Value vec = k.load(vectorType, k.gep(base, type, c.start[s]),
                             bytes * abi::kBlockVector);
          Value result = k.undef(wide);
          for (int64_t j = 0; j < abi::kBlockVector; ++j)
            result = k.insert(result, k.widen(k.extract(vec, j)), j);
          return result;
        },
        [&]() {
          Value result = k.undef(wide);
          for (int64_t j = 0; j < abi::kBlockVector; ++j) {
            Value v = k.ifElse(
                c.inside(k, s, j),
                [&]() {
                  return k.loadWide(base, type, k.add(c.start[s], k.i64(j)));
                },
                [&]() { return k.f32(0.0f); });
            result = k.insert(result, v, j);
          }
          return result;
        });
    SmallVector<Value, 4> result;
    for (int64_t j = 0; j < abi::kBlockVector; ++j)
      result.push_back(k.extract(values, j));
    return result;
  }

  /// Run `s` of an FP8 tensor, decoded exactly to f32.
  SmallVector<Value, 4> loadFloat8(Value base, Type float8Type, int64_t s) {
    Value word = k.ifElse(
        c.fast,
        [&]() {
          return k.load(k.i32(), k.gep(base, k.i8(), c.start[s]), 4);
        },
        [&]() {
          Value word = k.i32(0);
          for (int64_t j = 0; j < abi::kBlockVector; ++j) {
            Value byte = k.ifElse(
                c.inside(k, s, j),
                [&]() {
                  return k.zext32(k.load(
                      k.i8(), k.gep(base, k.i8(), k.add(c.start[s], k.i64(j))),
                      1));
                },
                [&]() { return k.i32(0); });
            word = k.orI(word, arith::ShLIOp::create(k.b, byte, k.i32(8 * j)));
          }
          return word;
        });
    SmallVector<Value, 4> result;
    for (int64_t half = 0; half < 2; ++half) {
      Value pair = arith::TruncIOp::create(
          k.b, k.i16(), arith::ShRUIOp::create(k.b, word, k.i32(16 * half)));
      auto [lo, hi] = k.dequantizePair(pair, float8Type);
      result.append({lo, hi});
    }
    return result;
  }

  /// Quantizes run `s` (already scaled) into `q`.
  void storeFloat8(Value q, ArrayRef<Value> scaled, Type float8Type,
                   int64_t s) {
    k.ifThenElse(
        c.fast,
        [&]() {
          Value lo = k.zext32(k.cvtPair(scaled[1], scaled[0], float8Type));
          Value hi = k.zext32(k.cvtPair(scaled[3], scaled[2], float8Type));
          Value word = k.orI(lo, arith::ShLIOp::create(k.b, hi, k.i32(16)));
          k.store(word, k.gep(q, k.i8(), c.start[s]), 4);
        },
        [&]() {
          for (int64_t j = 0; j < abi::kBlockVector; ++j)
            k.ifThen(c.inside(k, s, j), [&]() {
              k.store(k.quantizeOne(scaled[j], float8Type),
                      k.gep(q, k.i8(), k.add(c.start[s], k.i64(j))), 1);
            });
        });
  }

  /// Rounds run `s` to `type` and stores it into `y`.
  void storeWide(Value y, ArrayRef<Value> values, Type type, int64_t s) {
    unsigned bytes = type.getIntOrFloatBitWidth() / 8;
    k.ifThenElse(
        c.fast,
        [&]() {
          Value vec = k.undef(VectorType::get({abi::kBlockVector}, type));
          for (int64_t j = 0; j < abi::kBlockVector; ++j)
            vec = k.insert(vec, k.narrow(values[j], type), j);
          k.store(vec, k.gep(y, type, c.start[s]), bytes * abi::kBlockVector);
        },
        [&]() {
          for (int64_t j = 0; j < abi::kBlockVector; ++j)
            k.ifThen(c.inside(k, s, j), [&]() {
              k.store(k.narrow(values[j], type),
                      k.gep(y, type, k.add(c.start[s], k.i64(j))), bytes);
            });
        });
  }

  /// Stores `value` at the block's slot of a per-block tensor, once.
  void storeBlockValue(Value base, Value value) {
    k.ifThen(k.andI(c.valid, k.eq(c.rank, k.i64(0))), [&]() {
      unsigned bytes = value.getType().getIntOrFloatBitWidth() / 8;
      k.store(value, k.gep(base, value.getType(), c.index), bytes);
    });
  }
};
} // namespace

/// The block extents in a kernel name.
static std::string getBlockTag(int64_t br, int64_t bc) {
  return ("_" + Twine(br) + "x" + Twine(bc)).str();
}

StringRef KernelLibrary::getBlockCast(Type in, Type out, int64_t br,
                                      int64_t bc, const BlockRecipe &recipe) {
  std::string name = ("block_cast_" + getKernelTypeTag(in) + "_" + getKernelTypeTag(out) +
                      getBlockTag(br, bc) + recipe.getSuffix())
                         .str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  Type i64 = IntegerType::get(ctx, 64);
  // (x, q, amax, scale, scale_inv, batch, rows, cols)
  return getOrCreate(
      name, {ptr, ptr, ptr, ptr, ptr, i64, i64, i64}, abi::kBlockSize,
      [&](KernelEmitter &k, ValueRange args) {
        Value x = args[0], q = args[1];
        int64_t steps = abi::blockSteps(br, bc);
        walkBlocks(k, br, bc, args[5], args[6], args[7], {x, q},
                   [&](BlockCursor &c) {
          BlockRuns runs{k, c};
          SmallVector<SmallVector<Value, 4>> values;
          Value threadMax = k.f32(0.0f);
          for (int64_t s = 0; s < steps; ++s) {
            values.push_back(runs.load(x, in, s));
            for (Value v : values.back())
              threadMax = k.fmax(threadMax, k.fabs(v));
          }
          Value amax = groupMax(k, threadMax, abi::blockGroupSize(br, bc));
          auto [scale, scaleInv] = createBlockScale(k.b, k.b.getLoc(), amax, out, recipe);
          for (int64_t s = 0; s < steps; ++s) {
            SmallVector<Value, 4> scaled;
            for (Value v : values[s])
              scaled.push_back(k.fmul(v, scale));
            runs.storeFloat8(q, scaled, out, s);
          }
          runs.storeBlockValue(args[2], amax);
          runs.storeBlockValue(args[3], scale);
          runs.storeBlockValue(args[4], scaleInv);
        });
      });
}

StringRef KernelLibrary::getBlockAmax(Type in, int64_t br, int64_t bc) {
  std::string name =
      ("block_amax_" + getKernelTypeTag(in) + getBlockTag(br, bc)).str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  Type i64 = IntegerType::get(ctx, 64);
  // (x, amax, batch, rows, cols)
  return getOrCreate(
      name, {ptr, ptr, i64, i64, i64}, abi::kBlockSize,
      [&](KernelEmitter &k, ValueRange args) {
        int64_t steps = abi::blockSteps(br, bc);
        walkBlocks(k, br, bc, args[2], args[3], args[4], {args[0]},
                   [&](BlockCursor &c) {
          BlockRuns runs{k, c};
          Value threadMax = k.f32(0.0f);
          for (int64_t s = 0; s < steps; ++s)
            for (Value v : runs.load(args[0], in, s))
              threadMax = k.fmax(threadMax, k.fabs(v));
          runs.storeBlockValue(
              args[1], groupMax(k, threadMax, abi::blockGroupSize(br, bc)));
        });
      });
}

StringRef KernelLibrary::getBlockMap(
    StringRef name, int64_t br, int64_t bc,
    function_ref<void(KernelEmitter &, BlockCursor &, ValueRange)> perBlock) {
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  Type i64 = IntegerType::get(ctx, 64);
  // (src, dst, scales, batch, rows, cols)
  return getOrCreate(name, {ptr, ptr, ptr, i64, i64, i64}, abi::kBlockSize,
                     [&](KernelEmitter &k, ValueRange args) {
                       walkBlocks(k, br, bc, args[3], args[4], args[5],
                                  {args[0], args[1]}, [&](BlockCursor &c) {
                                    perBlock(k, c, args.take_front(3));
                                  });
                     });
}

StringRef KernelLibrary::getBlockQuantize(Type in, Type out, int64_t br,
                                          int64_t bc) {
  std::string name = ("block_quantize_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + getBlockTag(br, bc))
                         .str();
  // (x, q, scale, batch, rows, cols)
  return getBlockMap(name, br, bc,
                     [&](KernelEmitter &k, BlockCursor &c, ValueRange args) {
    BlockRuns runs{k, c};
    Value scale = k.loadScalar(k.gep(args[2], k.f32(), c.index));
    for (int64_t s = 0; s < abi::blockSteps(br, bc); ++s) {
      SmallVector<Value, 4> scaled;
      for (Value v : runs.load(args[0], in, s))
        scaled.push_back(k.fmul(v, scale));
      runs.storeFloat8(args[1], scaled, out, s);
    }
  });
}

StringRef KernelLibrary::getBlockDequantize(Type in, Type out, int64_t br,
                                            int64_t bc, bool mx) {
  std::string name = ("block_dequantize_" + getKernelTypeTag(in) + "_" +
                      getKernelTypeTag(out) + getBlockTag(br, bc) +
                      (mx ? "_mx" : ""))
                         .str();
  // (q, y, scale_inv, batch, rows, cols)
  return getBlockMap(name, br, bc,
                     [&](KernelEmitter &k, BlockCursor &c, ValueRange args) {
    BlockRuns runs{k, c};
    Value scaleInv =
        mx ? createE8M0ToF32(
                 k.b, k.b.getLoc(),
                 k.zext32(k.load(k.i8(), k.gep(args[2], k.i8(), c.index), 1)))
           : k.loadScalar(k.gep(args[2], k.f32(), c.index));
    for (int64_t s = 0; s < abi::blockSteps(br, bc); ++s) {
      SmallVector<Value, 4> values;
      for (Value v : runs.loadFloat8(args[0], in, s))
        values.push_back(k.fmul(v, scaleInv));
      runs.storeWide(args[1], values, out, s);
    }
  });
}

StringRef KernelLibrary::getBlockScales(Type out, const BlockRecipe &recipe) {
  std::string name =
      ("block_scales_" + getKernelTypeTag(out) + recipe.getSuffix()).str();
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  // (amax, scale, scale_inv, n): element-wise, grid-stride.
  return getOrCreate(
      name, {ptr, ptr, ptr, IntegerType::get(ctx, 64)}, abi::kBlockSize,
      [&](KernelEmitter &k, ValueRange args) {
        Value gtid = k.add(k.mul(k.ctaid(), k.ntid()), k.tid());
        Value stride = k.mul(k.nctaid(), k.ntid());
        k.forLoop(gtid, args[3], stride, k.f32(0.0f), [&](Value i, Value u) {
          Value amax = k.loadScalar(k.gep(args[0], k.f32(), i));
          auto [scale, scaleInv] = createBlockScale(k.b, k.b.getLoc(), amax, out, recipe);
          k.store(scale, k.gep(args[1], k.f32(), i), 4);
          k.store(scaleInv, k.gep(args[2], scaleInv.getType(), i),
                  scaleInv.getType().getIntOrFloatBitWidth() / 8);
          return u;
        });
      });
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// The memref that carries `type` on the device: tensors keep their shape,
/// f32 scalars become memref<f32>.
static MemRefType getDeviceType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (getKernelTypeTag(tensor.getElementType()).empty())
      return {};
    return MemRefType::get(tensor.getShape(), tensor.getElementType());
  }
  if (type.isF32())
    return MemRefType::get({}, type);
  return {};
}

namespace {
/// A tensor with per-block scales as the block kernels see it (KernelABI.h):
/// [batch, rows, cols] in blocks of br x bc.
struct BlockGeometry {
  int64_t batch = 1, rows = 1, cols = 1, br = 1, bc = 1;

  int64_t getNumBlocks() const {
    return batch * llvm::divideCeil(rows, br) * llvm::divideCeil(cols, bc);
  }
};
} // namespace

/// The geometry of `type` in `block`s, or a located error when no block
/// kernel takes it.
static FailureOr<BlockGeometry> getBlockGeometry(Operation *op, Type type,
                                                 ArrayRef<int64_t> block) {
  auto tensor = cast<RankedTensorType>(type);
  if (!tensor.hasStaticShape())
    return op->emitOpError("with per-block scales needs static shapes, got ")
           << type;
  int64_t rank = tensor.getRank();
  BlockGeometry geometry;
  geometry.cols = tensor.getDimSize(rank - 1);
  geometry.bc = block[rank - 1];
  if (rank >= 2) {
    geometry.rows = tensor.getDimSize(rank - 2);
    geometry.br = block[rank - 2];
  }
  for (int64_t d = 0; d + 2 < rank; ++d) {
    if (block[d] != 1)
      return op->emitOpError("has blocks of ")
             << block[d] << " elements along dimension " << d
             << "; the GPU block kernels take blocks over the last two "
                "dimensions only";
    geometry.batch *= tensor.getDimSize(d);
  }
  if (abi::blockGroupSize(geometry.br, geometry.bc) == 0)
    return op->emitOpError("has blocks of ")
           << geometry.br << "x" << geometry.bc
           << " elements, which no GPU kernel takes (1xN with N a power of "
              "two from 4 to 128, or MxN with N a power of two from 4 to "
              "1024 and M*N a multiple of 1024 up to 16384, such as 1x32, "
              "1x128 and 128x128)";
  return geometry;
}

static BlockRecipe getBlockRecipe(ComputeBlockScalesOp op) {
  BlockRecipe recipe;
  recipe.mx = op.isMX();
  recipe.powerOfTwo = op.getPowerOfTwo();
  recipe.epsilon = op.getEpsilon().convertToFloat();
  return recipe;
}

namespace {
/// Rewrites one function into its host launcher.
///
/// For convert-fp8-to-nvvm, `func` is a whole function of fp8 ops: it
/// becomes a host function with out-parameters over device memory
/// (gpu.alloc). For convert-fp8-to-gpu-launches (`launcher`), `func` is a
/// group of fp8 ops outlined from a larger program: it allocates and
/// returns its results with memref.alloc (managed memory in
/// fp8-lower-to-gpu; the caller's buffer deallocation frees them), the
/// host zeroes amax accumulators with a store, and fp8.scaled_matmul
/// launches the wgmma kernel its `fp8.wgmma_kernel` names.
class HostLowering {
public:
  HostLowering(func::FuncOp func, KernelLibrary &kernels,
               bool launcher = false)
      : func(func), kernels(kernels), launcher(launcher) {}

  LogicalResult run();

private:
  LogicalResult checkSupported();
  LogicalResult lower(Operation *op);
  /// A device buffer for `result`: the out-parameter when the function
  /// returns it (first use), a gpu.alloc otherwise.
  Value allocate(Value result, ValueRange dynamicSizes);
  Value dims(Value memref, int64_t dim);
  Value numElements(Value memref);
  Value pointer(Value memref);
  Value computePointer(Value memref);
  Value toI64(Value index);
  Value constIndex(int64_t v);
  /// A launch on a grid of gridX (x gridY) blocks of blockX threads.
  void launch(StringRef kernel, Value gridX, int64_t blockX,
              ArrayRef<Value> args, Value gridY = {});
  void launch(SymbolRefAttr kernel, Value gridX, int64_t blockX,
              int64_t sharedBytes, ArrayRef<Value> args, Value gridY = {});
  Value elementwiseGrid(Value n);
  void zeroAmax(Value amax);
  LogicalResult lowerScaledMatmul(ScaledMatmulOp op);
  LogicalResult lowerContraction(linalg::LinalgOp op);
  /// The wgmma GEMM (GemmKernelABI.h) `op` names, on these operands; the
  /// scales, bias and amax are optional.
  LogicalResult lowerWgmmaGemm(Operation *op, Value lhs, Value rhs,
                               Value lhsScale, Value rhsScale, Value bias,
                               Value result, Value resultAmax);
  /// A view of `memref` whose last dimension is zero-padded to `k`.
  Value padLastDim(Value memref, int64_t k);
  Value padLastDimIfNeeded(Value memref, Value k, Value paddedK,
                           Value aligned);
  /// Zeros `padded`, then copies `source` into its leading `extents`.
  void copyIntoZeroedRows(Value source, Value padded,
                          ArrayRef<OpFoldResult> extents);
  LogicalResult lowerBlockAmax(BlockAmaxOp op);
  LogicalResult lowerBlockCastTranspose(BlockAmaxOp op, Value source);
  void mapFusedBlockCast(ComputeBlockScalesOp scales, QuantizeOp quantize,
                         Value scale, Value scaleInv, Value q);
  LogicalResult lowerBlockScales(ComputeBlockScalesOp op);
  LogicalResult lowerBlockQuantize(QuantizeOp op);
  LogicalResult lowerBlockDequantize(DequantizeOp op);
  void launchBlockKernel(StringRef kernel, const BlockGeometry &geometry,
                         SmallVector<Value> args);

  func::FuncOp func;
  KernelLibrary &kernels;
  bool launcher;
  std::optional<ImplicitLocOpBuilder> b;
  IRMapping buffers;
  llvm::DenseMap<Value, Value> outParams;
  llvm::DenseMap<Value, Value> pointers;
  /// x^T -> x for the transposes a block_cast_transpose reads through.
  llvm::DenseMap<Value, Value> transposedInputs;
  /// Ops a fused kernel already computed.
  llvm::SmallPtrSet<Operation *, 8> done;
  SmallVector<Value> temporaries;
};
} // namespace

LogicalResult HostLowering::checkSupported() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError()
           << "has control flow; fp8-lower-to-nvvm lowers straight-line "
              "functions only";
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (!getDeviceType(type))
      return func.emitOpError() << "argument #" << i << " has type " << type
                                << ", which the GPU lowering does not support "
                                   "(tensors of f32, bf16, f16, f8E4M3FN, "
                                   "f8E5M2, f8E8M0FNU and f32 scalars)";
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (!getDeviceType(type))
      return func.emitOpError() << "result #" << i << " has type " << type
                                << ", which the GPU lowering does not support "
                                   "(tensors of f32, bf16, f16, f8E4M3FN, "
                                   "f8E5M2, f8E8M0FNU and f32 scalars)";
  for (Operation &op : func.getBody().front()) {
    if (launcher && (op.hasAttr(kWgmmaKernelAttr) ||
                     isa<ub::PoisonOp, linalg::TransposeOp>(op)))
      continue;
    if (isa<ScaledMatmulOp>(op))
      return op.emitOpError()
             << "is not lowered by fp8-lower-to-nvvm: the Hopper wgmma GEMM is "
                "fp8-lower-gemm-to-nvvm's, and one program for a whole graph "
                "is issue 11; use fp8-lower-to-cpu for reference runs";
    if (isa_and_present<FP8Dialect>(op.getDialect()) || isa<func::ReturnOp>(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (constant.getType().isF32())
        continue;
    return op.emitOpError()
           << "cannot run in a function lowered by fp8-lower-to-nvvm: only "
              "fp8 ops and f32 constants become GPU kernels";
  }
  return success();
}

Value HostLowering::constIndex(int64_t v) {
  return arith::ConstantIndexOp::create(*b, v);
}

Value HostLowering::toI64(Value index) {
  return arith::IndexCastOp::create(*b, b->getI64Type(), index);
}

Value HostLowering::dims(Value memref, int64_t dim) {
  auto type = cast<MemRefType>(memref.getType());
  if (!type.isDynamicDim(dim))
    return constIndex(type.getDimSize(dim));
  return memref::DimOp::create(*b, memref, dim);
}

Value HostLowering::numElements(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  Value n = constIndex(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    n = arith::MulIOp::create(*b, n, dims(memref, d));
  return n;
}

/// The device address of a memref's first element.
Value HostLowering::pointer(Value memref) {
  Value &cached = pointers[memref];
  if (!cached)
    cached = computePointer(memref);
  return cached;
}

Value HostLowering::computePointer(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(*b, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(*b, memref);
  Value bytes = constIndex(type.getElementTypeBitWidth() / 8);
  Value offset = arith::MulIOp::create(*b, meta.getOffset(), bytes);
  Value address = toI64(arith::AddIOp::create(*b, base, offset));
  return LLVM::IntToPtrOp::create(
      *b, LLVM::LLVMPointerType::get(b->getContext(), kGlobalSpace), address);
}

Value HostLowering::allocate(Value result, ValueRange dynamicSizes) {
  MemRefType type = getDeviceType(result.getType());
  if (launcher)
    return memref::AllocOp::create(*b, type, dynamicSizes);
  auto it = outParams.find(result);
  if (it != outParams.end() && it->second) {
    Value out = it->second;
    it->second = Value();
    return out;
  }
  Value buffer = gpu::AllocOp::create(*b, type, Type(), ValueRange{},
                                      dynamicSizes, ValueRange{})
                     .getMemref();
  temporaries.push_back(buffer);
  return buffer;
}

void HostLowering::launch(StringRef kernel, Value gridX, int64_t blockX,
                          ArrayRef<Value> args, Value gridY) {
  auto symbol = SymbolRefAttr::get(
      b->getContext(), abi::kKernelModuleName,
      {FlatSymbolRefAttr::get(b->getContext(), kernel)});
  launch(symbol, gridX, blockX, /*sharedBytes=*/0, args, gridY);
}

void HostLowering::launch(SymbolRefAttr kernel, Value gridX, int64_t blockX,
                          int64_t sharedBytes, ArrayRef<Value> args,
                          Value gridY) {
  Value one = constIndex(1);
  Value shared;
  if (sharedBytes)
    shared = arith::ConstantOp::create(*b, b->getI32IntegerAttr(sharedBytes));
  gpu::LaunchFuncOp::create(*b, kernel,
                            gpu::KernelDim3{gridX, gridY ? gridY : one, one},
                            gpu::KernelDim3{constIndex(blockX), one, one},
                            shared, args, Value());
}

void HostLowering::zeroAmax(Value amax) {
  Value zero = arith::ConstantOp::create(*b, b->getF32FloatAttr(0));
  if (launcher) {
    // Managed memory, and every earlier launch has completed: a host store.
    memref::StoreOp::create(*b, zero, amax, ValueRange{});
    return;
  }
  gpu::MemsetOp::create(*b, Type(), ValueRange{}, amax, zero);
}

Value HostLowering::elementwiseGrid(Value n) {
  Value perBlock = constIndex(abi::kBlockSize * abi::kChunk);
  Value grid = arith::CeilDivUIOp::create(*b, n, perBlock);
  grid = arith::MaxUIOp::create(*b, grid, constIndex(1));
  return arith::MinUIOp::create(*b, grid, constIndex(abi::kMaxGridSize));
}

void HostLowering::launchBlockKernel(StringRef kernel,
                                     const BlockGeometry &geometry,
                                     SmallVector<Value> args) {
  Type i64 = b->getI64Type();
  for (int64_t v : {geometry.batch, geometry.rows, geometry.cols})
    args.push_back(arith::ConstantOp::create(*b, b->getIntegerAttr(i64, v)));
  int64_t grid = abi::blockKernelGridSize(
      geometry.getNumBlocks(), abi::blockGroupSize(geometry.br, geometry.bc));
  launch(kernel, constIndex(grid), abi::kBlockSize, args);
}

/// The compute_block_scales and quantize that follow `op` on the same
/// tensor and blocks (what fp8-quantize emits): one pass of block_cast.
static std::optional<std::pair<ComputeBlockScalesOp, QuantizeOp>>
getFusedBlockCast(BlockAmaxOp op) {
  for (Operation *user : op.getAmax().getUsers()) {
    auto scales = dyn_cast<ComputeBlockScalesOp>(user);
    if (!scales || !scales.getScale().hasOneUse())
      continue;
    auto quantize = dyn_cast<QuantizeOp>(*scales.getScale().user_begin());
    // The kernel computes the scales for the format it casts to.
    if (!quantize || quantize.getInput() != op.getInput() ||
        quantize.getBlockShape() != op.getBlockShape() ||
        quantize.getScale() != scales.getScale() ||
        quantize.getResult().getType().getElementType() !=
            scales.getFp8Type())
      continue;
    return std::make_pair(scales, quantize);
  }
  return std::nullopt;
}

/// A fused block cast (getFusedBlockCast) of x^T, a 2-D linalg.transpose
/// that only the cast reads, in 1 x bc blocks that block_cast_transpose
/// takes: one pass over x writes the cast transposed. What
/// convert-fp8-scaled-matmul-to-wgmma makes of a block-scaled operand whose
/// blocks run along the tokens. Null otherwise.
static linalg::TransposeOp getTransposingBlockCast(BlockAmaxOp op) {
  auto transpose = op.getInput().getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
    return {};
  auto fused = getFusedBlockCast(op);
  if (!fused)
    return {};
  QuantizeOp quantize = fused->second;
  auto type = cast<RankedTensorType>(op.getInput().getType());
  ArrayRef<int64_t> block = op.getBlockShape();
  // The grid is (ceil(cols / 32), ceil(rows / bc)) over x = [rows, cols]
  // (x^T is [cols, rows]): no empty grid, y within the launch limit.
  if (!type.hasStaticShape() || type.getNumElements() == 0 || block[0] != 1 ||
      !abi::isTransposeCastBlock(block[1]) ||
      llvm::divideCeil(type.getDimSize(1), block[1]) >
          abi::kMaxTransposeCastGridY ||
      getKernelTypeTag(type.getElementType()).empty() ||
      type.getElementType().getIntOrFloatBitWidth() == 8)
    return {};
  bool onlyTheCast = llvm::all_of(op.getInput().getUsers(), [&](Operation *u) {
    return u == op.getOperation() || u == quantize.getOperation();
  });
  return onlyTheCast ? transpose : linalg::TransposeOp();
}

/// block_amax -> compute_block_scales -> quantize of the same tensor and
/// blocks is one pass of block_cast over the tensor; anything else, one
/// kernel per op.
LogicalResult HostLowering::lowerBlockAmax(BlockAmaxOp op) {
  FailureOr<BlockGeometry> geometry = getBlockGeometry(
      op, op.getInput().getType(), op.getBlockShape());
  if (failed(geometry))
    return failure();
  if (Value source = transposedInputs.lookup(op.getInput()))
    return lowerBlockCastTranspose(op, source);
  Value x = buffers.lookup(op.getInput());
  Type in = getElementType(x);
  Value amax = allocate(op.getAmax(), {});
  buffers.map(op.getAmax(), amax);
  if (auto fused = getFusedBlockCast(op)) {
    auto [scales, quantize] = *fused;
    Value scale = allocate(scales.getScale(), {});
    Value scaleInv = allocate(scales.getScaleInv(), {});
    Value q = allocate(quantize.getResult(), {});
    Type out = getElementType(q);
    launchBlockKernel(kernels.getBlockCast(in, out, geometry->br, geometry->bc,
                                           getBlockRecipe(scales)),
                      *geometry,
                      {pointer(x), pointer(q), pointer(amax), pointer(scale),
                       pointer(scaleInv)});
    mapFusedBlockCast(scales, quantize, scale, scaleInv, q);
    return success();
  }
  launchBlockKernel(kernels.getBlockAmax(in, geometry->br, geometry->bc),
                    *geometry, {pointer(x), pointer(amax)});
  return success();
}

/// The fused block cast of x^T (getTransposingBlockCast) as one
/// block_cast_transpose over x: a gpu.func on memrefs, launched on a 2-D
/// grid of bc x 32 tiles.
LogicalResult HostLowering::lowerBlockCastTranspose(BlockAmaxOp op,
                                                    Value source) {
  auto [scales, quantize] = *getFusedBlockCast(op);
  Value amax = allocate(op.getAmax(), {});
  Value scale = allocate(scales.getScale(), {});
  Value scaleInv = allocate(scales.getScaleInv(), {});
  Value q = allocate(quantize.getResult(), {});
  auto sourceType = cast<MemRefType>(source.getType());
  int64_t bc = op.getBlockShape()[1];
  StringRef kernel = getOrCreateBlockCastTranspose(
      kernels.getModule(), sourceType.getElementType(), getElementType(q), bc,
      getBlockRecipe(scales));
  // Dynamic shapes; FP8 and E8M0 as the bytes the kernel takes (the cast
  // goes away when fp8-expand-float8 makes them i8 on the host too).
  SmallVector<Value> args;
  for (Value buffer : {source, q, amax, scale, scaleInv}) {
    Type element = getElementType(buffer);
    Value arg =
        memref::CastOp::create(*b, getDynamicMatrixType(element), buffer);
    if (element.getIntOrFloatBitWidth() == 8)
      arg = UnrealizedConversionCastOp::create(
                *b, getDynamicMatrixType(b->getI8Type()), arg)
                .getResult(0);
    args.push_back(arg);
  }
  int64_t rows = sourceType.getDimSize(0), cols = sourceType.getDimSize(1);
  launch(kernel, constIndex(llvm::divideCeil(cols, abi::kTransposeCastColumns)),
         abi::kBlockSize, args, constIndex(llvm::divideCeil(rows, bc)));
  buffers.map(op.getAmax(), amax);
  mapFusedBlockCast(scales, quantize, scale, scaleInv, q);
  return success();
}

/// The buffers one fused kernel wrote for the rest of a block cast, whose
/// ops need no lowering of their own.
void HostLowering::mapFusedBlockCast(ComputeBlockScalesOp scales,
                                     QuantizeOp quantize, Value scale,
                                     Value scaleInv, Value q) {
  buffers.map(scales.getScale(), scale);
  buffers.map(scales.getScaleInv(), scaleInv);
  buffers.map(quantize.getResult(), q);
  done.insert(scales);
  done.insert(quantize);
}

LogicalResult HostLowering::lowerBlockScales(ComputeBlockScalesOp op) {
  if (!op.getAmax().getType().hasStaticShape())
    return op.emitOpError("with per-block scales needs static shapes, got ")
           << op.getAmax().getType();
  Value amax = buffers.lookup(op.getAmax());
  Value scale = allocate(op.getScale(), {});
  Value scaleInv = allocate(op.getScaleInv(), {});
  Value n = numElements(amax);
  Type i64 = b->getI64Type();
  launch(kernels.getBlockScales(op.getFp8Type(), getBlockRecipe(op)),
         elementwiseGrid(n), abi::kBlockSize,
         {pointer(amax), pointer(scale), pointer(scaleInv),
          arith::IndexCastOp::create(*b, i64, n)});
  buffers.map(op.getScale(), scale);
  buffers.map(op.getScaleInv(), scaleInv);
  return success();
}

LogicalResult HostLowering::lowerBlockQuantize(QuantizeOp op) {
  FailureOr<BlockGeometry> geometry = getBlockGeometry(
      op, op.getInput().getType(), *op.getBlockShape());
  if (failed(geometry))
    return failure();
  Value x = buffers.lookup(op.getInput());
  Value scale = buffers.lookup(op.getScale());
  Value q = allocate(op.getResult(), {});
  launchBlockKernel(kernels.getBlockQuantize(getElementType(x),
                                             getElementType(q), geometry->br,
                                             geometry->bc),
                    *geometry, {pointer(x), pointer(q), pointer(scale)});
  buffers.map(op.getResult(), q);
  return success();
}

LogicalResult HostLowering::lowerBlockDequantize(DequantizeOp op) {
  FailureOr<BlockGeometry> geometry = getBlockGeometry(
      op, op.getInput().getType(), *op.getBlockShape());
  if (failed(geometry))
    return failure();
  Value q = buffers.lookup(op.getInput());
  Value scaleInv = buffers.lookup(op.getScaleInv());
  Value y = allocate(op.getResult(), {});
  bool mx = isa<Float8E8M0FNUType>(getElementType(scaleInv));
  launchBlockKernel(kernels.getBlockDequantize(getElementType(q),
                                               getElementType(y), geometry->br,
                                               geometry->bc, mx),
                    *geometry, {pointer(q), pointer(y), pointer(scaleInv)});
  buffers.map(op.getResult(), y);
  return success();
}

Value HostLowering::padLastDim(Value memref, int64_t k) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = k;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(dims(memref, d));
  auto padded = memref::AllocOp::create(
      *b, MemRefType::get(shape, type.getElementType()), sizes);
  SmallVector<OpFoldResult> extents;
  for (int64_t d = 0; d < rank; ++d)
    extents.push_back(type.isDynamicDim(d) ? OpFoldResult(dims(memref, d))
                                           : b->getIndexAttr(type.getDimSize(d)));
  copyIntoZeroedRows(memref, padded, extents);
  return padded;
}

void HostLowering::copyIntoZeroedRows(Value source, Value padded,
                                      ArrayRef<OpFoldResult> extents) {
  auto type = cast<MemRefType>(padded.getType());
  Value zero =
      arith::ConstantOp::create(*b, b->getZeroAttr(type.getElementType()));
  linalg::FillOp::create(*b, ValueRange{zero}, ValueRange{padded});
  SmallVector<OpFoldResult> offsets(type.getRank(), b->getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b->getIndexAttr(1));
  Value rows = memref::SubViewOp::create(*b, padded, offsets, extents, strides);
  linalg::CopyOp::create(*b, source, rows);
}

/// `memref` (rows of a dynamic K) itself when `aligned`, else a copy in
/// rows of `paddedK` zero-padded elements. No control flow (the launcher
/// stays one block): when aligned, the copy has no rows, so its kernels
/// have empty grids and are not launched, and its allocation is empty.
Value HostLowering::padLastDimIfNeeded(Value memref, Value k, Value paddedK,
                                       Value aligned) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  Value zero = constIndex(0);
  SmallVector<Value> extents;
  for (int64_t d = 0; d + 1 < rank; ++d)
    extents.push_back(dims(memref, d));
  // No rows when aligned: the first dimension of the copy is 0.
  extents.front() = arith::SelectOp::create(*b, aligned, zero, extents.front());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (type.isDynamicDim(d) || d == 0)
      sizes.push_back(extents[d]);
  sizes.push_back(paddedK);
  SmallVector<int64_t> shape(type.getShape());
  shape.front() = ShapedType::kDynamic;
  auto paddedType = MemRefType::get(shape, type.getElementType());
  Value padded = memref::AllocOp::create(*b, paddedType, sizes);
  SmallVector<OpFoldResult> offsets(rank, b->getIndexAttr(0));
  SmallVector<OpFoldResult> copyExtents(extents.begin(), extents.end()),
      strides(rank, b->getIndexAttr(1));
  copyExtents.push_back(k);
  Value source =
      memref::SubViewOp::create(*b, memref, offsets, copyExtents, strides);
  copyIntoZeroedRows(source, padded, copyExtents);
  Value operand = memref;
  if (operand.getType() != paddedType)
    operand = memref::CastOp::create(*b, paddedType, operand);
  return arith::SelectOp::create(*b, aligned, operand, padded);
}

/// The wgmma GEMM (GemmKernelABI.h): operands K-major (the wgmma pass made
/// them so), tensor maps encoded by the runtime, a persistent grid of
/// min(SMs, tiles) blocks.
LogicalResult HostLowering::lowerScaledMatmul(ScaledMatmulOp op) {
  if (op.getTransposeLhs() || !op.getTransposeRhs())
    return op.emitOpError("has no wgmma launch: run "
                          "convert-fp8-scaled-matmul-to-wgmma first");
  return lowerWgmmaGemm(op, op.getLhs(), op.getRhs(), op.getLhsScaleInv(),
                        op.getRhsScaleInv(), op.getBias(), op.getResult(),
                        op.getResultAmax());
}

/// A high-precision contraction that convert-fp8-scaled-matmul-to-wgmma
/// planned (bf16 / f16 operands [batch..., M, K] and [batch'..., N, K], a
/// zero init): the 16-bit wgmma kernel, which reads no scales.
LogicalResult HostLowering::lowerContraction(linalg::LinalgOp op) {
  return lowerWgmmaGemm(op, op.getDpsInputs()[0], op.getDpsInputs()[1],
                        Value(), Value(), Value(), op->getResult(0), Value());
}

LogicalResult HostLowering::lowerWgmmaGemm(Operation *op, Value lhsValue,
                                           Value rhsValue, Value lhsScale,
                                           Value rhsScale, Value biasValue,
                                           Value result, Value resultAmax) {
  auto kernel = op->getAttrOfType<SymbolRefAttr>(kWgmmaKernelAttr);
  auto tile = op->getAttrOfType<DenseI64ArrayAttr>(kWgmmaTileAttr);
  if (!launcher || !kernel || !tile || tile.size() != 4)
    return op->emitOpError("has no wgmma launch: run "
                           "convert-fp8-scaled-matmul-to-wgmma first");
  MLIRContext *ctx = b->getContext();
  int64_t blockM = tile[0], blockN = tile[1], threads = tile[2],
          sharedBytes = tile[3];
  Value lhs = buffers.lookup(lhsValue);
  Value rhs = buffers.lookup(rhsValue);
  auto resultType = cast<RankedTensorType>(result.getType());
  int64_t rank = resultType.getRank();
  int64_t rhsRank = cast<ShapedType>(rhsValue.getType()).getRank();
  // TMA boxes are one 128-byte swizzle span of K: 128 FP8 or 64 16-bit
  // elements.
  int64_t elementBytes = cast<MemRefType>(lhs.getType()).getElementTypeBitWidth() / 8;
  int64_t boxK = gabi::kRowBytes / elementBytes;
  Value m = dims(lhs, rank - 2), k = dims(lhs, rank - 1);
  Value n = dims(rhs, rhsRank - 2);
  Value batch = constIndex(1);
  SmallVector<Value> sizes;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    Value extent = dims(lhs, d);
    batch = arith::MulIOp::create(*b, batch, extent);
    if (resultType.isDynamicDim(d))
      sizes.push_back(extent);
  }
  if (resultType.isDynamicDim(rank - 2))
    sizes.push_back(m);
  if (resultType.isDynamicDim(rank - 1))
    sizes.push_back(n);
  Value out = allocate(result, sizes);
  buffers.map(result, out);

  // TMA needs rows of 16-byte multiples: such operands get zero-padded
  // copies; the tensor maps keep the true K, so the pad is never read.
  Value pitch = k;
  if (auto padK = op->getAttrOfType<IntegerAttr>(kWgmmaPadKAttr)) {
    lhs = padLastDim(lhs, padK.getInt());
    rhs = padLastDim(rhs, padK.getInt());
    pitch = constIndex(padK.getInt());
  } else if (cast<MemRefType>(lhs.getType()).isDynamicDim(rank - 1) &&
             cast<MemRefType>(lhs.getType()).getLayout().isIdentity() &&
             cast<MemRefType>(rhs.getType()).getLayout().isIdentity()) {
    // K known at run time only: padded there when it needs to be.
    Value align = constIndex(16 / elementBytes);
    Value paddedK = arith::MulIOp::create(
        *b, arith::CeilDivUIOp::create(*b, k, align), align);
    Value aligned =
        arith::CmpIOp::create(*b, arith::CmpIPredicate::eq, paddedK, k);
    lhs = padLastDimIfNeeded(lhs, k, paddedK, aligned);
    rhs = padLastDimIfNeeded(rhs, k, paddedK, aligned);
    pitch = paddedK;
  }
  Value amax;
  if (resultAmax) {
    amax = allocate(resultAmax, {});
    zeroAmax(amax);
    buffers.map(resultAmax, amax);
  }

  // Pointers are cached for the ops after this one: made here, where
  // those can use them.
  for (Value buffer : {lhs, rhs, out, amax})
    if (buffer)
      pointer(buffer);
  for (Value value : {lhsScale, rhsScale, biasValue})
    if (value)
      pointer(buffers.lookup(value));

  // An empty result (M, N or the batch 0 at run time) has no tiles, so a
  // grid of 0 blocks, which the runtime does not launch (MgpuRuntime.cpp);
  // the tensor maps, never read then, describe at least one element (TMA
  // cannot describe an empty operand). No control flow: the launcher
  // stays one block, which fp8-async-gpu-host inlines into the caller's
  // stream.
  auto atLeast = [&](Value extent, int64_t minimum) -> Value {
    return b->createOrFold<arith::MaxUIOp>(extent, constIndex(minimum));
  };

  auto genericPtr = LLVM::LLVMPointerType::get(ctx);
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, kGlobalSpace);
  auto mapType = LLVM::LLVMArrayType::get(b->getI64Type(), 16);
  Type i32 = b->getI32Type();
  auto i32Const = [&](int64_t v) {
    return arith::ConstantOp::create(*b, b->getI32IntegerAttr(v));
  };
  auto toI32 = [&](Value index) {
    return arith::IndexCastOp::create(*b, i32, index);
  };
  auto runtimeCall = [&](StringRef name, TypeRange results,
                         ValueRange args) {
    auto module = func->getParentOfType<ModuleOp>();
    if (!module.lookupSymbol(name)) {
      OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
      auto decl = func::FuncOp::create(
          top, module.getLoc(), name,
          FunctionType::get(ctx, args.getTypes(), results));
      decl.setPrivate();
    }
    return func::CallOp::create(*b, name, results, args);
  };
  // Operands: 128-byte swizzled, as the kernel's shared-memory descriptors
  // assume.
  auto encode = [&](Value memref, Value cols, Value rows, Value layers,
                    Value rowPitch, int64_t boxCols, int64_t boxRows) -> Value {
    Value one = arith::ConstantOp::create(*b, b->getI64IntegerAttr(1));
    Value map = LLVM::AllocaOp::create(*b, genericPtr, mapType, one,
                                       /*alignment=*/64);
    Value base = LLVM::AddrSpaceCastOp::create(*b, genericPtr,
                                               pointer(memref));
    Value bytes = arith::MulIOp::create(*b, rowPitch,
                                        constIndex(elementBytes));
    runtimeCall(kEncodeTensorMapFunction, {},
                {map, base, toI64(cols), toI64(rows), toI64(layers),
                 toI64(bytes), i32Const(boxCols), i32Const(boxRows),
                 i32Const(elementBytes), i32Const(/*swizzle128=*/1)});
    return LLVM::LoadOp::create(*b, mapType, map);
  };

  bool rhsBatched = rhsRank == rank;
  Value mapK = atLeast(k, 1), mapPitch = atLeast(pitch, 16 / elementBytes);
  Value mapA = encode(lhs, mapK, atLeast(m, 1), atLeast(batch, 1), mapPitch,
                      boxK, blockM);
  Value mapB = encode(rhs, mapK, atLeast(n, 1),
                      rhsBatched ? atLeast(batch, 1) : constIndex(1),
                      mapPitch, boxK, blockN);
  Value null = LLVM::ZeroOp::create(*b, globalPtr);
  auto pointerOrNull = [&](Value value) {
    return value ? pointer(buffers.lookup(value)) : null;
  };
  Value amaxPtr = amax ? pointer(amax) : null;
  // Only _tmastore kernels read the result's map; whole-graph GEMMs store
  // from the registers.
  Value mapOut = LLVM::ZeroOp::create(*b, mapType);

  SmallVector<Value> args(gabi::kNumParams);
  args[gabi::kTensorMapA] = mapA;
  args[gabi::kTensorMapB] = mapB;
  args[gabi::kOut] = pointer(out);
  args[gabi::kLhsScaleInv] = pointerOrNull(lhsScale);
  args[gabi::kRhsScaleInv] = pointerOrNull(rhsScale);
  args[gabi::kBias] = pointerOrNull(biasValue);
  args[gabi::kAmax] = amaxPtr;
  args[gabi::kM] = toI32(m);
  args[gabi::kN] = toI32(n);
  args[gabi::kK] = toI32(k);
  args[gabi::kBatch] = toI32(batch);
  args[gabi::kRhsBatched] = i32Const(rhsBatched ? 1 : 0);
  args[gabi::kTensorMapOut] = mapOut;

  // One block per SM, each looping over output tiles; none without tiles.
  Value tiles = arith::MulIOp::create(
      *b, batch,
      arith::MulIOp::create(
          *b, arith::CeilDivUIOp::create(*b, m, constIndex(blockM)),
          arith::CeilDivUIOp::create(*b, n, constIndex(blockN))));
  Value sms = arith::IndexCastOp::create(
      *b, b->getIndexType(),
      runtimeCall("fp8GpuMultiprocessorCount", {i32}, {}).getResult(0));
  Value grid = arith::MinUIOp::create(*b, sms, tiles);
  launch(kernel, grid, threads, sharedBytes, args);
  return success();
}

/// The indices of the dynamic dimensions of `type`.
static SmallVector<int64_t> dynamicDims(ShapedType type) {
  SmallVector<int64_t> result;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      result.push_back(d);
  return result;
}

LogicalResult HostLowering::lower(Operation *op) {
  auto sizesLike = [&](Value memref, Type resultType, bool transposed) {
    SmallVector<Value> sizes;
    auto shaped = cast<ShapedType>(resultType);
    for (int64_t d : dynamicDims(shaped))
      sizes.push_back(dims(memref, transposed ? 1 - d : d));
    return sizes;
  };
  Type i64 = b->getI64Type();
  auto i64Const = [&](int64_t v) {
    return arith::ConstantOp::create(*b, b->getIntegerAttr(i64, v));
  };
  auto f32Const = [&](float v) {
    return arith::ConstantOp::create(*b, b->getF32FloatAttr(v));
  };

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp constant) {
        Value buffer = allocate(constant.getResult(), {});
        gpu::MemsetOp::create(*b, Type(), ValueRange{}, buffer,
                              arith::ConstantOp::create(*b, constant.getValue()));
        buffers.map(constant.getResult(), buffer);
        return success();
      })
      .Case([&](AmaxOp amax) {
        Value x = buffers.lookup(amax.getInput());
        Value out = allocate(amax.getResult(), {});
        zeroAmax(out);
        Value n = numElements(x);
        launch(kernels.getAmax(getElementType(x)), elementwiseGrid(n),
               abi::kBlockSize, {pointer(x), pointer(out), toI64(n)});
        buffers.map(amax.getResult(), out);
        return success();
      })
      .Case([&](BlockAmaxOp amax) { return lowerBlockAmax(amax); })
      // The input of a transposing block cast: its kernel reads x itself.
      .Case([&](linalg::TransposeOp transpose) -> LogicalResult {
        BlockAmaxOp cast;
        for (Operation *user : transpose->getResult(0).getUsers())
          if (auto amax = dyn_cast<BlockAmaxOp>(user))
            cast = amax;
        if (!launcher || !cast || getTransposingBlockCast(cast) != transpose)
          return transpose.emitOpError() << "has no GPU lowering";
        transposedInputs[transpose->getResult(0)] =
            buffers.lookup(transpose.getInput());
        return success();
      })
      .Case([&](ScaledMatmulOp gemm) { return lowerScaledMatmul(gemm); })
      // A contraction's init (the kernel writes every element).
      .Case([&](ub::PoisonOp) { return success(); })
      .Case([&](linalg::LinalgOp contraction) {
        return lowerContraction(contraction);
      })
      .Case([&](ComputeBlockScalesOp scales) {
        return lowerBlockScales(scales);
      })
      .Case([&](QuantizeOp quantize) {
        if (quantize.getBlockShape())
          return lowerBlockQuantize(quantize);
        Value x = buffers.lookup(quantize.getInput());
        Value scale = buffers.lookup(quantize.getScale());
        Value q = allocate(quantize.getResult(),
                           sizesLike(x, quantize.getResult().getType(), false));
        Type out = getElementType(quantize.getResult());
        Value n = numElements(x);
        SmallVector<Value> args{pointer(x), pointer(q), pointer(scale)};
        bool withAmax = static_cast<bool>(quantize.getAmax());
        if (withAmax) {
          Value amax = allocate(quantize.getAmax(), {});
          zeroAmax(amax);
          args.push_back(pointer(amax));
          buffers.map(quantize.getAmax(), amax);
        }
        args.push_back(toI64(n));
        launch(kernels.getQuantize(getElementType(x), out, withAmax),
               elementwiseGrid(n), abi::kBlockSize, args);
        buffers.map(quantize.getResult(), q);
        return success();
      })
      .Case([&](DequantizeOp dequantize) {
        if (dequantize.getBlockShape())
          return lowerBlockDequantize(dequantize);
        Value q = buffers.lookup(dequantize.getInput());
        Value scaleInv = buffers.lookup(dequantize.getScaleInv());
        Value y =
            allocate(dequantize.getResult(),
                     sizesLike(q, dequantize.getResult().getType(), false));
        Value n = numElements(q);
        launch(kernels.getDequantize(getElementType(q),
                                     getElementType(dequantize.getResult())),
               elementwiseGrid(n), abi::kBlockSize,
               {pointer(q), pointer(y), pointer(scaleInv), toI64(n)});
        buffers.map(dequantize.getResult(), y);
        return success();
      })
      .Case([&](CastTransposeOp castTranspose) {
        Value x = buffers.lookup(castTranspose.getInput());
        Value scale = buffers.lookup(castTranspose.getScale());
        Value q = allocate(
            castTranspose.getResult(),
            sizesLike(x, castTranspose.getResult().getType(), false));
        Value qt = allocate(
            castTranspose.getTransposed(),
            sizesLike(x, castTranspose.getTransposed().getType(), true));
        SmallVector<Value> args{pointer(x), pointer(q), pointer(qt),
                                pointer(scale)};
        bool withAmax = static_cast<bool>(castTranspose.getAmax());
        if (withAmax) {
          Value amax = allocate(castTranspose.getAmax(), {});
          zeroAmax(amax);
          args.push_back(pointer(amax));
          buffers.map(castTranspose.getAmax(), amax);
        }
        Value rows = dims(x, 0), cols = dims(x, 1);
        args.append({toI64(rows), toI64(cols)});
        Value tileSize = constIndex(abi::kTile);
        Value tiles = arith::MulIOp::create(
            *b, arith::CeilDivUIOp::create(*b, rows, tileSize),
            arith::CeilDivUIOp::create(*b, cols, tileSize));
        Value grid = arith::MinUIOp::create(
            *b, arith::MaxUIOp::create(*b, tiles, constIndex(1)),
            constIndex(abi::kMaxGridSize));
        launch(kernels.getCastTranspose(getElementType(x),
                                        getElementType(q), withAmax),
               grid, abi::kBlockSize, args);
        buffers.map(castTranspose.getResult(), q);
        buffers.map(castTranspose.getTransposed(), qt);
        return success();
      })
      .Case([&](ComputeScaleOp computeScale) {
        Value amax = buffers.lookup(computeScale.getAmax());
        Value scale = allocate(computeScale.getScale(), {});
        bool history = isa<RankedTensorType>(computeScale.getAmax().getType());
        Value len = history ? toI64(dims(amax, 0)) : i64Const(1);
        Value previous =
            computeScale.isDelayed()
                ? pointer(buffers.lookup(computeScale.getPrevious()))
                : LLVM::ZeroOp::create(*b, LLVM::LLVMPointerType::get(
                                               b->getContext(), kGlobalSpace))
                      .getResult();
        auto format = isa<Float8E4M3FNType>(computeScale.getFp8Type())
                          ? num::Format::E4M3FN
                          : num::Format::E5M2;
        float scaledMax = num::scaledMax(num::getFormatInfo(format).maxFinite,
                                         static_cast<int32_t>(
                                             computeScale.getMargin()));
        int32_t flags = 0;
        if (computeScale.isDelayed())
          flags |= abi::kScaleDelayed;
        if (computeScale.getPowerOfTwo())
          flags |= abi::kScalePowerOfTwo;
        if (!history || computeScale.getAlgo() == AmaxAlgo::most_recent)
          flags |= abi::kScaleMostRecent;
        launch(kernels.getComputeScale(), constIndex(1), abi::kWarpSize,
               {pointer(amax), len, previous, pointer(scale),
                f32Const(scaledMax),
                f32Const(computeScale.getEpsilon().convertToFloat()),
                arith::ConstantOp::create(*b, b->getI32IntegerAttr(flags))});
        buffers.map(computeScale.getScale(), scale);
        return success();
      })
      .Case([&](RecordAmaxOp record) {
        Value history = buffers.lookup(record.getHistory());
        Value amax = buffers.lookup(record.getAmax());
        Value result = allocate(record.getResult(), {});
        launch(kernels.getRecordAmax(), constIndex(1), abi::kBlockSize,
               {pointer(history), pointer(amax), pointer(result),
                toI64(dims(history, 0))});
        buffers.map(record.getResult(), result);
        return success();
      })
      .Case([&](RollHistoryOp roll) {
        Value history = buffers.lookup(roll.getHistory());
        Value result = allocate(roll.getResult(), {});
        launch(kernels.getRollHistory(), constIndex(1), abi::kBlockSize,
               {pointer(history), pointer(result), toI64(dims(history, 0))});
        buffers.map(roll.getResult(), result);
        return success();
      })
      .Default([&](Operation *op) {
        return op->emitOpError() << "has no GPU lowering";
      });
}

LogicalResult HostLowering::run() {
  if (failed(checkSupported()))
    return failure();
  MLIRContext *ctx = func.getContext();
  b.emplace(func.getLoc(), ctx);

  // Arguments, then one out-parameter per result (not for launchers: they
  // return their results).
  SmallVector<Type> argTypes;
  for (Type type : func.getArgumentTypes())
    argTypes.push_back(getDeviceType(type));
  if (!launcher)
    for (Type type : func.getResultTypes())
      argTypes.push_back(getDeviceType(type));
  Block *oldBody = &func.getBody().front();
  auto returnOp = cast<func::ReturnOp>(oldBody->getTerminator());

  auto *newBody = new Block();
  SmallVector<Location> locs(argTypes.size(), func.getLoc());
  newBody->addArguments(argTypes, locs);
  for (auto [oldArg, newArg] :
       llvm::zip(oldBody->getArguments(), newBody->getArguments()))
    buffers.map(oldArg, newArg);
  unsigned numInputs = func.getNumArguments();
  if (!launcher)
    for (auto [i, value] : llvm::enumerate(returnOp.getOperands()))
      if (!outParams.count(value))
        outParams[value] = newBody->getArgument(numInputs + i);

  b->setInsertionPointToStart(newBody);
  for (Operation &op : oldBody->without_terminator()) {
    if (done.contains(&op))
      continue;
    b->setLoc(op.getLoc());
    if (failed(lower(&op))) {
      delete newBody;
      return failure();
    }
  }
  b->setLoc(returnOp.getLoc());
  if (launcher) {
    SmallVector<Value> results;
    for (Value value : returnOp.getOperands())
      results.push_back(buffers.lookup(value));
    func::ReturnOp::create(*b, results);
    oldBody->dropAllDefinedValueUses();
    oldBody->erase();
    func.getBody().push_back(newBody);
    func.setFunctionType(
        FunctionType::get(ctx, newBody->getArgumentTypes(),
                          ValueRange(results).getTypes()));
    return success();
  }
  // Results the kernels did not write in place (arguments returned as they
  // are, a value returned twice) are copied.
  for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
    Value out = newBody->getArgument(numInputs + i);
    Value buffer = buffers.lookup(value);
    if (buffer != out)
      gpu::MemcpyOp::create(*b, Type(), ValueRange{}, out, buffer);
  }
  for (Value temporary : temporaries)
    gpu::DeallocOp::create(*b, Type(), ValueRange{}, temporary);
  func::ReturnOp::create(*b);

  oldBody->dropAllDefinedValueUses();
  oldBody->erase();
  func.getBody().push_back(newBody);
  func.setFunctionType(FunctionType::get(ctx, argTypes, {}));
  func.removeArgAttrsAttr();
  func.removeResAttrsAttr();
  return success();
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct ConvertFP8ToNVVMPass
    : public fp8::impl::ConvertFP8ToNVVMBase<ConvertFP8ToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::optional<std::string> error =
            checkNVVMTarget(chip, features, /*needsWgmma=*/false)) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool usesFP8 = false;
      func.walk([&](Operation *op) {
        if (isa_and_present<FP8Dialect>(op->getDialect()))
          usesFP8 = true;
      });
      if (usesFP8)
        funcs.push_back(func);
    }
    if (funcs.empty())
      return;

    MLIRContext *ctx = &getContext();
    if (module.lookupSymbol(abi::kKernelModuleName)) {
      module.emitError() << "already contains a symbol named '"
                         << abi::kKernelModuleName << "'";
      return signalPassFailure();
    }
    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(module.getBody());
    auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                            "nvptx64-nvidia-cuda", chip,
                                            features);
    auto gpuModule = gpu::GPUModuleOp::create(
        builder, module.getLoc(), abi::kKernelModuleName,
        builder.getArrayAttr({target}));
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());

    KernelLibrary kernels(gpuModule);
    for (func::FuncOp func : funcs)
      if (failed(HostLowering(func, kernels).run()))
        return signalPassFailure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// convert-fp8-to-gpu-launches
//===----------------------------------------------------------------------===//

namespace {
struct ConvertFP8ToGPULaunchesPass
    : public fp8::impl::ConvertFP8ToGPULaunchesBase<
          ConvertFP8ToGPULaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::optional<std::string> error =
            checkNVVMTarget(chip, features, /*needsWgmma=*/false)) {
      module.emitError() << *error;
      return signalPassFailure();
    }
    SmallVector<SmallVector<Operation *>> groups = collectGroups(module);
    if (groups.empty())
      return;

    FailureOr<gpu::GPUModuleOp> kernelModule = getOrCreateKernelModule(
        module, abi::kKernelModuleName, chip, features);
    if (failed(kernelModule))
      return signalPassFailure();
    gpu::GPUModuleOp gpuModule = *kernelModule;
    KernelLibrary kernels(gpuModule);
    SymbolTable symbols(module);
    for (ArrayRef<Operation *> group : groups) {
      func::FuncOp launcher = outline(group, kernels, symbols);
      if (launcher)
        replaceWithCall(group, launcher);
    }
    eraseUnlaunchedKernels(module);
  }

  /// A launcher that could not be built (its op stays as linalg) may
  /// leave the kernels it made, or the wgmma kernel planned for it: they
  /// would be compiled and loaded for nothing.
  static void eraseUnlaunchedKernels(ModuleOp module) {
    llvm::DenseSet<SymbolRefAttr> launched;
    module.walk(
        [&](gpu::LaunchFuncOp launch) { launched.insert(launch.getKernel()); });
    StringRef kernelAttr = gpu::GPUDialect::getKernelFuncAttrName();
    for (auto gpuModule :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      // The project's kernel modules only, never one the input brought.
      if (gpuModule.getName() != abi::kKernelModuleName &&
          gpuModule.getName() != gemm_abi::kGemmModuleName)
        continue;
      // LLVM-dialect kernels and gpu.func ones alike.
      auto isKernel = [&](Operation &op) {
        return isa<LLVM::LLVMFuncOp, gpu::GPUFuncOp>(op) &&
               op.hasAttr(kernelAttr);
      };
      for (Operation &kernel :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations()))
        if (isKernel(kernel) &&
            !launched.contains(SymbolRefAttr::get(
                gpuModule.getNameAttr(),
                {FlatSymbolRefAttr::get(SymbolTable::getSymbolName(&kernel))})))
          kernel.erase();
      if (llvm::none_of(gpuModule.getBody()->getOperations(), isKernel))
        gpuModule.erase();
    }
  }

  /// The fp8 ops to launch, in groups that become one launcher each: a
  /// fused block cast (block_amax, compute_block_scales, quantize), any
  /// other op alone. GEMMs that no wgmma kernel takes stay (they lower
  /// with the rest of the graph).
  static SmallVector<SmallVector<Operation *>> collectGroups(ModuleOp module) {
    SmallVector<SmallVector<Operation *>> groups;
    llvm::SmallPtrSet<Operation *, 16> grouped;
    DominanceInfo dominance(module);
    module.walk([&](Operation *op) {
      // The fp8 ops, and the high-precision contractions that
      // convert-fp8-scaled-matmul-to-wgmma planned for the 16-bit kernel.
      bool contraction =
          isa<linalg::LinalgOp>(op) && op->hasAttr(kWgmmaKernelAttr);
      if ((!isa_and_present<FP8Dialect>(op->getDialect()) && !contraction) ||
          grouped.contains(op) || op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (isa<ScaledMatmulOp>(op) && !op->hasAttr(kWgmmaKernelAttr))
        return;
      SmallVector<Operation *> group{op};
      if (auto amax = dyn_cast<BlockAmaxOp>(op))
        if (auto fused = getFusedBlockCast(amax)) {
          Operation *scales = fused->first, *quantize = fused->second;
          // Launched where block_amax is: everything else they read must
          // be available there.
          bool available = llvm::all_of(
              std::initializer_list<Operation *>{scales, quantize},
              [&](Operation *member) {
                return member->getBlock() == op->getBlock() &&
                       llvm::all_of(member->getOperands(), [&](Value v) {
                         Operation *def = v.getDefiningOp();
                         return def == op || def == scales ||
                                dominance.properlyDominates(v, op);
                       });
              });
          if (available) {
            group.append({scales, quantize});
            // x^T read through by one transposing kernel.
            if (linalg::TransposeOp transpose = getTransposingBlockCast(amax))
              if (transpose->getBlock() == op->getBlock())
                group.insert(group.begin(), transpose);
          }
        }
      grouped.insert(group.begin(), group.end());
      groups.push_back(std::move(group));
    });
    return groups;
  }

  /// What the group reads from outside, in order of first use: not a
  /// contraction's init, which the kernel overwrites (a zero fill).
  static llvm::SetVector<Value> getInputs(ArrayRef<Operation *> group) {
    llvm::SmallPtrSet<Operation *, 4> members(group.begin(), group.end());
    llvm::SetVector<Value> inputs;
    for (Operation *op : group)
      for (OpOperand &operand : op->getOpOperands())
        if (!members.contains(operand.get().getDefiningOp()) &&
            !isContractionInit(operand))
          inputs.insert(operand.get());
    return inputs;
  }

  static bool isContractionInit(OpOperand &operand) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(operand.getOwner());
    return linalgOp && linalgOp.isDpsInit(&operand);
  }

  /// The group's results used outside it (what stays inside, such as the
  /// scales of a fused block cast, is never materialized).
  static SmallVector<Value> getOutputs(ArrayRef<Operation *> group) {
    llvm::SmallPtrSet<Operation *, 4> members(group.begin(), group.end());
    SmallVector<Value> outputs;
    for (Operation *op : group)
      for (Value result : op->getResults())
        if (llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !members.contains(user);
            }))
          outputs.push_back(result);
    return outputs;
  }

  static StringRef getLauncherName(Operation *first) {
    if (isa<linalg::TransposeOp>(first))
      return "block_cast_transpose";
    if (isa<linalg::LinalgOp>(first))
      return "gemm";
    return first->getName().stripDialect();
  }

  /// A private launcher for `group` (HostLowering), or null when no kernel
  /// takes it (unsupported types or blocks): then the ops stay.
  func::FuncOp outline(ArrayRef<Operation *> group, KernelLibrary &kernels,
                       SymbolTable &symbols) {
    llvm::SetVector<Value> inputs = getInputs(group);
    SmallVector<Value> results = getOutputs(group);
    Operation *first = group.front();
    OpBuilder builder(first->getContext());
    auto func = func::FuncOp::create(
        builder, first->getLoc(),
        (Twine("__fp8_gpu_") + getLauncherName(first)).str(),
        builder.getFunctionType(ValueRange(inputs.getArrayRef()).getTypes(),
                                ValueRange(results).getTypes()));
    func.setPrivate();
    func->setAttr(kGpuLauncherAttr, builder.getUnitAttr());
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToStart(body);
    IRMapping mapping;
    mapping.map(inputs.getArrayRef(), body->getArguments());
    for (Operation *op : group) {
      for (OpOperand &operand : op->getOpOperands())
        if (isContractionInit(operand))
          mapping.map(operand.get(),
                      ub::PoisonOp::create(builder, op->getLoc(),
                                           operand.get().getType()));
      builder.clone(*op, mapping);
    }
    func::ReturnOp::create(
        builder, first->getLoc(),
        llvm::map_to_vector(results,
                            [&](Value v) { return mapping.lookup(v); }));
    symbols.insert(func, symbols.getOp()->getRegion(0).front().begin());

    // What no kernel takes is not an error here: it runs as linalg.
    LogicalResult lowered = failure();
    {
      ScopedDiagnosticHandler quiet(func.getContext(),
                                    [](Diagnostic &) { return success(); });
      lowered = HostLowering(func, kernels, /*launcher=*/true).run();
    }
    if (succeeded(lowered))
      return func;
    symbols.erase(func);
    return {};
  }

  /// The group's ops become a call of `launcher` on buffers of their
  /// operands, and tensors of the buffers it returns.
  void replaceWithCall(ArrayRef<Operation *> group, func::FuncOp launcher) {
    Operation *first = group.front();
    OpBuilder b(first);
    Location loc = first->getLoc();
    SmallVector<Value> args;
    for (auto [operand, type] :
         llvm::zip(getInputs(group), launcher.getArgumentTypes())) {
      auto memref = cast<MemRefType>(type);
      if (isa<TensorType>(operand.getType()))
        args.push_back(bufferization::ToBufferOp::create(
            b, loc, memref, operand, /*read_only=*/true));
      else
        args.push_back(getScalarBuffer(operand, memref));
    }
    auto call = func::CallOp::create(b, loc, launcher, args);
    for (auto [result, buffer] :
         llvm::zip(getOutputs(group), call.getResults())) {
      Value replacement;
      if (auto tensor = dyn_cast<RankedTensorType>(result.getType())) {
        replacement = bufferization::ToTensorOp::create(
            b, loc, tensor, buffer, /*restrict=*/true, /*writable=*/true);
      } else {
        replacement = memref::LoadOp::create(b, loc, buffer);
        scalarBuffers[replacement] = buffer;
        keepOnDevice(result, buffer);
      }
      result.replaceAllUsesWith(replacement);
    }
    for (Operation *op : llvm::reverse(group))
      op->erase();
  }

  /// A scalar result that only becomes a one-element tensor (the next
  /// delayed-scaling state, stored to its global) becomes the tensor of
  /// the buffer the kernel wrote it to: the host never reads it.
  static void keepOnDevice(Value scalar, Value buffer) {
    for (Operation *user : llvm::make_early_inc_range(scalar.getUsers())) {
      auto fromElements = dyn_cast<tensor::FromElementsOp>(user);
      if (!fromElements || fromElements.getType().getRank() != 0)
        continue;
      OpBuilder b(fromElements);
      fromElements.replaceAllUsesWith(
          bufferization::ToTensorOp::create(b, fromElements.getLoc(),
                                            fromElements.getType(), buffer,
                                            /*restrict=*/true,
                                            /*writable=*/false)
              .getResult());
      fromElements.erase();
    }
  }

  /// An f32 scalar in a one-element buffer: the one a launcher returned it
  /// in, else one made where the scalar is defined (once per scalar).
  Value getScalarBuffer(Value scalar, MemRefType type) {
    Value &buffer = scalarBuffers[scalar];
    if (buffer)
      return buffer;
    OpBuilder b(scalar.getContext());
    // The element of a one-element tensor (a scale loaded from its
    // global): that tensor's buffer, where the kernels can read it.
    if (Value tensor = getElementOf(scalar)) {
      b.setInsertionPoint(scalar.getDefiningOp());
      buffer = bufferization::ToBufferOp::create(b, scalar.getLoc(), type,
                                                 tensor, /*read_only=*/true);
      return buffer;
    }
    // Arithmetic on such elements (the reciprocal of a scale for a GEMM):
    // a one-element linalg.generic, which becomes a one-thread kernel, so
    // the host reads nothing the kernels wrote.
    if (Value tensor = computeOnDevice(scalar)) {
      b.setInsertionPointAfterValue(tensor);
      buffer = bufferization::ToBufferOp::create(b, scalar.getLoc(), type,
                                                 tensor, /*read_only=*/true);
      return buffer;
    }
    if (Operation *def = scalar.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(scalar).getOwner());
    buffer = memref::AllocOp::create(b, scalar.getLoc(), type);
    memref::StoreOp::create(b, scalar.getLoc(), scalar, buffer);
    return buffer;
  }

  /// The 0-d tensor `scalar` is the element of, when the kernels that take
  /// `scalar` can read that tensor's buffer instead; else null.
  /// Bufferization gives ml_program.global_load the global's own buffer
  /// and does not order it against global_store: a global's element can
  /// only be read there by kernels launched before the global is stored.
  static Value getElementOf(Value scalar) {
    auto extract = scalar.getDefiningOp<tensor::ExtractOp>();
    if (!extract || extract.getTensor().getType().getRank() != 0)
      return {};
    Value tensor = extract.getTensor();
    auto load = tensor.getDefiningOp<ml_program::GlobalLoadOp>();
    if (!load)
      return tensor;
    // The first store to the global after the extract; a store in another
    // block of the function is not worth the analysis.
    Block *block = extract->getBlock();
    Operation *firstStore = nullptr;
    WalkResult stores = extract->getParentOfType<FunctionOpInterface>()->walk(
        [&](ml_program::GlobalStoreOp store) {
          if (store.getGlobal() != load.getGlobal())
            return WalkResult::advance();
          if (store->getBlock() != block)
            return WalkResult::interrupt();
          if (extract->isBeforeInBlock(store) &&
              (!firstStore || store->isBeforeInBlock(firstStore)))
            firstStore = store;
          return WalkResult::advance();
        });
    if (stores.wasInterrupted())
      return {};
    for (Operation *user : scalar.getUsers()) {
      // The arithmetic computeOnDevice moves to the extract reads it there.
      if (isa_and_present<arith::ArithDialect>(user->getDialect()))
        continue;
      if (user->getBlock() != block ||
          (firstStore && !user->isBeforeInBlock(firstStore)))
        return {};
    }
    return tensor;
  }

  /// When `scalar` is one pure arith op on elements of 0-d tensors and
  /// constants (at least one element): the 0-d tensor of its value,
  /// computed by a one-element linalg.generic on the expanded tensors;
  /// else null.
  static Value computeOnDevice(Value scalar) {
    Operation *def = scalar.getDefiningOp();
    if (!def || !isa_and_present<arith::ArithDialect>(def->getDialect()) ||
        !isPure(def) || def->getNumResults() != 1 ||
        def->getNumRegions() != 0)
      return {};
    // Computed where its last element is read (a later store to a
    // global must not be seen), so all of them in the op's block.
    SmallVector<Value> elements;
    llvm::SmallDenseMap<Value, unsigned> elementIndex;
    Operation *lastRead = nullptr;
    for (Value operand : def->getOperands()) {
      if (Value tensor = getElementOf(operand)) {
        elementIndex.try_emplace(operand, elements.size());
        Operation *extract = operand.getDefiningOp();
        if (extract->getBlock() != def->getBlock())
          return {};
        if (!lastRead || lastRead->isBeforeInBlock(extract))
          lastRead = extract;
        elements.push_back(tensor);
      } else if (!matchPattern(operand, m_Constant())) {
        return {};
      }
    }
    if (elements.empty())
      return {};
    OpBuilder b(def);
    b.setInsertionPointAfter(lastRead);
    Location loc = def->getLoc();
    Type element = scalar.getType();
    auto one = RankedTensorType::get({1}, element);
    SmallVector<Value> inputs;
    for (Value tensor : elements)
      inputs.push_back(tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({1}, getElementTypeOrSelf(tensor)),
          tensor, ArrayRef<ReassociationIndices>{}));
    Value init = tensor::EmptyOp::create(b, loc, one.getShape(), element);
    MLIRContext *context = b.getContext();
    SmallVector<AffineMap> maps(inputs.size() + 1,
                                AffineMap::getMultiDimIdentityMap(1, context));
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{one}, inputs, ValueRange{init}, maps,
        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &body, Location bodyLoc, ValueRange args) {
          IRMapping mapping;
          for (Value operand : def->getOperands()) {
            if (mapping.contains(operand))
              continue;
            auto it = elementIndex.find(operand);
            mapping.map(operand,
                        it != elementIndex.end()
                            ? args[it->second]
                            : body.clone(*operand.getDefiningOp())
                                  ->getResult(0));
          }
          Value result = body.clone(*def, mapping)->getResult(0);
          linalg::YieldOp::create(body, bodyLoc, result);
        });
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({}, element), generic.getResult(0),
        ArrayRef<ReassociationIndices>{});
  }

  llvm::DenseMap<Value, Value> scalarBuffers;
};
} // namespace

namespace {
/// gpu.launch_func reads and writes memory through its kernel and neither
/// allocates nor frees: said so that buffer deallocation, which refuses
/// ops with unknown effects, accepts the launchers of
/// convert-fp8-to-gpu-launches (upstream declares no effects for it).
struct LaunchFuncMemoryEffects
    : MemoryEffectOpInterface::ExternalModel<LaunchFuncMemoryEffects,
                                             gpu::LaunchFuncOp> {
  void getEffects(Operation *,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};
} // namespace

void mlir::fp8::registerFP8ToNVVMDialectExtensions(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncMemoryEffects>(*context);
  });
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}
