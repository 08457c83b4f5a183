//===- ScalingKernels.cpp - The per-tensor scaling-state kernels ----------===//
//
// compute_scale, record_amax and roll_history (KernelABI.h): the delayed and
// current scaling state of the per-tensor recipes, on the device so that a
// step never synchronizes with the host for a scale. gpu.funcs on memrefs
// (1-D f32 histories, 0-D f32 scalars), lowered by upstream's
// convert-gpu-to-nvvm. Each is one block: a history is at most a few
// thousand floats.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <cfloat>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;
namespace abi = mlir::fp8::nvvm_abi;

/// A scaling-state kernel: see getOrCreateKernel.
static StringRef
getOrCreate(gpu::GPUModuleOp module, StringRef name, TypeRange params,
            int32_t blockSize,
            function_ref<void(KernelBuilder &, gpu::GPUFuncOp)> build) {
  return getOrCreateKernel<KernelBuilder>(module, name, params, blockSize,
                                          /*workgroup=*/{}, build);
}

StringRef mlir::fp8::getOrCreateComputeScale(gpu::GPUModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Type f32 = Float32Type::get(ctx);
  auto scalar = MemRefType::get({}, f32);
  // (history, previous, scale, scaled_max, epsilon, flags): one warp.
  return getOrCreate(
      module, "compute_scale",
      {getDynamicVectorType(f32), scalar, scalar, f32, f32,
       IntegerType::get(ctx, 32)},
      abi::kWarpSize, [&](KernelBuilder &k, gpu::GPUFuncOp func) {
        ImplicitLocOpBuilder &b = k.b;
        Value history = func.getArgument(0), previous = func.getArgument(1);
        Value scaleOut = func.getArgument(2), scaledMax = func.getArgument(3);
        Value epsilon = func.getArgument(4), flags = func.getArgument(5);
        auto flag = [&](int32_t bit) {
          return arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                       arith::AndIOp::create(b, flags,
                                                             k.i32(bit)),
                                       k.i32(0));
        };
        using P = arith::CmpFPredicate;
        auto cmp = [&](P p, Value x, Value y) {
          return k.cmpF(static_cast<int64_t>(p), x, y);
        };
        Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
        Value len = memref::DimOp::create(b, history, 0);
        // The NaN-ignoring max over the history from a NaN start: an
        // all-NaN history stays NaN, as reduceAmaxHistory does.
        Value nan = k.f32(std::numeric_limits<float>::quiet_NaN());
        Value lanes = k.forLoop(
            tid, len, k.index(abi::kWarpSize), nan, [&](Value i, Value acc) {
              Value v = memref::LoadOp::create(b, history, ValueRange{i});
              return arith::MaxNumFOp::create(b, acc, v).getResult();
            });
        Value reduced = k.groupMax(lanes, abi::kWarpSize);
        Value newest = memref::LoadOp::create(b, history, ValueRange{k.index(0)});
        Value amax = k.select(flag(abi::kScaleMostRecent), newest, reduced);
        Value inf = k.f32(std::numeric_limits<float>::infinity());
        Value one = k.f32(1.0f);

        // Delayed: a new scale only from a finite, positive amax.
        Value usable = k.both(cmp(P::OGT, amax, k.f32(0.0f)),
                              cmp(P::OLT, amax, inf));
        Value delayed = k.select(
            flag(abi::kScaleDelayed), b.getF32Type(),
            [&]() -> Value {
              Value kept = memref::LoadOp::create(b, previous, ValueRange{});
              return k.select(usable,
                              arith::DivFOp::create(b, scaledMax, amax), kept);
            },
            [&]() { return one; });
        // Current: amax raised to epsilon; 0, Inf or NaN give 1.
        Value raised = k.select(cmp(P::OLT, amax, epsilon), epsilon, amax);
        Value bad = k.either(cmp(P::UEQ, raised, k.f32(0.0f)),
                             cmp(P::OEQ, math::AbsFOp::create(b, raised), inf));
        Value current =
            k.select(bad, one, arith::DivFOp::create(b, scaledMax, raised));
        Value scale = k.select(flag(abi::kScaleDelayed), delayed, current);
        scale = k.select(cmp(P::OEQ, math::AbsFOp::create(b, scale), inf),
                         k.f32(FLT_MAX), scale);
        // Power of two: the exponent bits alone (the scale is positive).
        Value bits = arith::BitcastOp::create(b, b.getI32Type(), scale);
        Value truncated = arith::BitcastOp::create(
            b, b.getF32Type(),
            arith::AndIOp::create(b, bits,
                                  k.i32(static_cast<int32_t>(0xFF800000u))));
        scale = k.select(flag(abi::kScalePowerOfTwo), truncated, scale);
        k.ifThen(k.isZero(tid), [&] {
          memref::StoreOp::create(b, scale, scaleOut, ValueRange{});
        });
      });
}

/// A kernel that writes each element of a history from one block of
/// threads striding over it: result[i] = `element`(i, len).
static StringRef getOrCreateHistoryMap(
    gpu::GPUModuleOp module, StringRef name, TypeRange params,
    function_ref<Value(KernelBuilder &, gpu::GPUFuncOp, Value, Value)>
        element) {
  return getOrCreate(
      module, name, params, abi::kBlockSize,
      [&](KernelBuilder &k, gpu::GPUFuncOp func) {
        ImplicitLocOpBuilder &b = k.b;
        Value history = func.getArgument(0);
        Value result = func.getArguments().back();
        Value len = memref::DimOp::create(b, history, 0);
        Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
        k.forLoop(tid, len, k.index(abi::kBlockSize), k.f32(0.0f),
                  [&](Value i, Value unused) {
                    memref::StoreOp::create(b, element(k, func, i, len),
                                            result, ValueRange{i});
                    return unused;
                  });
      });
}

StringRef mlir::fp8::getOrCreateRecordAmax(gpu::GPUModuleOp module) {
  Type f32 = Float32Type::get(module.getContext());
  // (history, amax, result): row 0 = max(0, |row 0|, |amax|), NaN ignored;
  // the other rows copied.
  return getOrCreateHistoryMap(
      module, "record_amax",
      {getDynamicVectorType(f32), MemRefType::get({}, f32),
       getDynamicVectorType(f32)},
      [](KernelBuilder &k, gpu::GPUFuncOp func, Value i, Value) -> Value {
        ImplicitLocOpBuilder &b = k.b;
        Value v = memref::LoadOp::create(b, func.getArgument(0), ValueRange{i});
        Value amax = memref::LoadOp::create(b, func.getArgument(1), ValueRange{});
        Value slot = k.absMax(k.absMax(k.f32(0.0f), v), amax);
        return k.select(k.isZero(i), slot, v);
      });
}

StringRef mlir::fp8::getOrCreateRollHistory(gpu::GPUModuleOp module) {
  Type f32 = Float32Type::get(module.getContext());
  // (history, result): new[i] = old[i + 1], new[len - 1] = old[0], then
  // new[0] = 0.
  return getOrCreateHistoryMap(
      module, "roll_history",
      {getDynamicVectorType(f32), getDynamicVectorType(f32)},
      [](KernelBuilder &k, gpu::GPUFuncOp func, Value i, Value len) -> Value {
        ImplicitLocOpBuilder &b = k.b;
        Value next = k.add(i, k.index(1));
        Value source = k.select(k.eq(next, len), k.index(0), next);
        Value v =
            memref::LoadOp::create(b, func.getArgument(0), ValueRange{source});
        return k.select(k.isZero(i), k.f32(0.0f), v);
      });
}
