//===- KernelBuilder.cpp - What the gpu.func kernels are written with -----===//
//
// Index and f32 arithmetic, warp reductions and structured control flow for
// the kernels written as gpu.funcs on memrefs (Kernels.h); upstream's
// convert-gpu-to-nvvm lowers what they build.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::fp8;
namespace abi = mlir::fp8::nvvm_abi;

MemRefType mlir::fp8::getDynamicMatrixType(Type element) {
  return MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                         element);
}

MemRefType mlir::fp8::getDynamicVectorType(Type element) {
  return MemRefType::get({ShapedType::kDynamic}, element);
}

Value KernelBuilder::index(int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}
Value KernelBuilder::f32(float v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}
Value KernelBuilder::i32(int32_t v) {
  return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
}
Value KernelBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, x, y);
}
Value KernelBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, x, y);
}
Value KernelBuilder::div(Value x, int64_t y) {
  return arith::DivUIOp::create(b, x, index(y));
}
Value KernelBuilder::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, x, index(y));
}
Value KernelBuilder::ult(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
}
Value KernelBuilder::ule(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ule, x, y);
}
Value KernelBuilder::eq(Value x, Value y) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
}
Value KernelBuilder::isZero(Value x) { return eq(x, index(0)); }
Value KernelBuilder::both(Value x, Value y) {
  return arith::AndIOp::create(b, x, y);
}
Value KernelBuilder::either(Value x, Value y) {
  return arith::OrIOp::create(b, x, y);
}
Value KernelBuilder::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, cond, x, y);
}
Value KernelBuilder::cmpF(int64_t predicate, Value x, Value y) {
  return arith::CmpFOp::create(
      b, static_cast<arith::CmpFPredicate>(predicate), x, y);
}
Value KernelBuilder::absMax(Value acc, Value v) {
  return arith::MaxNumFOp::create(b, acc, math::AbsFOp::create(b, v));
}

Value KernelBuilder::widen(Value v) {
  return v.getType().isF32() ? v
                             : arith::ExtFOp::create(b, b.getF32Type(), v);
}
Value KernelBuilder::narrow(Value v, Type type) {
  return type.isF32() ? v : arith::TruncFOp::create(b, type, v);
}

std::pair<Value, Value> KernelBuilder::dequantizePair(Value bytes,
                                                      Type float8Type) {
  Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
      b, VectorType::get({2}, b.getF16Type()), bytes, /*relu=*/false,
      float8Type);
  return {widen(vector::ExtractOp::create(b, halves, 0)),
          widen(vector::ExtractOp::create(b, halves, 1))};
}

Value KernelBuilder::address(Value memref) {
  auto meta = memref::ExtractStridedMetadataOp::create(b, memref);
  int64_t bytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  return add(memref::ExtractAlignedPointerAsIndexOp::create(b, memref),
             mul(meta.getOffset(), index(bytes)));
}

Value KernelBuilder::allAligned(ArrayRef<Value> memrefs) {
  Value bits = index(0);
  for (Value memref : memrefs)
    bits = either(bits, address(memref));
  return isZero(rem(bits, 16));
}

std::pair<Value, Value> KernelBuilder::gridStrideOver(int64_t threadsPerItem) {
  Value block = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value grid = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value perBlock = index(abi::kBlockSize / threadsPerItem);
  Value first = mul(block, perBlock);
  if (threadsPerItem == 1)
    first = add(first, gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  return {first, mul(grid, perBlock)};
}

Value KernelBuilder::groupMax(Value value, int32_t lanes) {
  assert(lanes >= 1 && lanes <= abi::kWarpSize && llvm::isPowerOf2_32(lanes));
  for (int32_t offset = 1; offset < lanes; offset *= 2) {
    Value other = gpu::ShuffleOp::create(b, value, offset, abi::kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = arith::MaxNumFOp::create(b, value, other);
  }
  return value;
}

void KernelBuilder::ifThen(Value cond, function_ref<void()> thenFn,
                           function_ref<void()> elseFn) {
  auto op = scf::IfOp::create(b, TypeRange{}, cond,
                              /*withElseRegion=*/static_cast<bool>(elseFn));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  thenFn();
  if (elseFn) {
    b.setInsertionPoint(op.elseBlock()->getTerminator());
    elseFn();
  }
}

Value KernelBuilder::select(Value cond, Type type,
                            function_ref<Value()> thenFn,
                            function_ref<Value()> elseFn) {
  auto op = scf::IfOp::create(b, TypeRange{type}, cond,
                              /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  scf::YieldOp::create(b, thenFn());
  b.setInsertionPointToStart(op.elseBlock());
  scf::YieldOp::create(b, elseFn());
  return op.getResult(0);
}

Value KernelBuilder::forLoop(Value start, Value end, Value step,
                             Value carried,
                             function_ref<Value(Value, Value)> body) {
  auto loop = scf::ForOp::create(b, start, end, step, ValueRange{carried});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  scf::YieldOp::create(
      b, body(loop.getInductionVar(), loop.getRegionIterArgs().front()));
  return loop.getResult(0);
}

gpu::GPUFuncOp KernelBuilder::createKernel(gpu::GPUModuleOp module,
                                           StringRef name, TypeRange params,
                                           int32_t blockSize,
                                           TypeRange workgroup) {
  b.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(b, name, b.getFunctionType(params, {}),
                                     workgroup);
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({blockSize, 1, 1}));
  b.setInsertionPointToStart(&func.getBody().front());
  return func;
}
