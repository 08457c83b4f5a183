//===- WgmmaBuilder.cpp - What the Hopper wgmma kernels are written with -===//

#include "WgmmaBuilder.h"

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"

using namespace mlir;
using namespace mlir::fp8;

LLVM::LLVMFuncOp mlir::fp8::getOrCreateWgmmaKernel(
    gpu::GPUModuleOp module, StringRef name, StringRef sharedMemory,
    ArrayRef<Type> params, ArrayRef<unsigned> tensorMaps, int threads,
    function_ref<void(LLVM::LLVMFuncOp)> build) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  if (!module.lookupSymbol(sharedMemory))
    LLVM::GlobalOp::create(b, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External,
                           sharedMemory, Attribute(),
                           /*alignment=*/16, kSharedSpace);
  auto func = LLVM::LLVMFuncOp::create(
      b, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                b.getDenseI32ArrayAttr({threads, 1, 1}));
  func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                b.getI32IntegerAttr(1));
  // CUtensorMaps are __grid_constant__ kernel parameters: passed by value,
  // read by TMA from the parameter space.
  for (unsigned p : tensorMaps) {
    func.setArgAttr(p, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(b.getI8Type(), 128)));
    func.setArgAttr(p, LLVM::LLVMDialect::getAlignAttrName(),
                    b.getI64IntegerAttr(64));
    func.setArgAttr(p, NVVM::NVVMDialect::getGridConstantAttrName(),
                    b.getUnitAttr());
  }
  func.addEntryBlock(b);
  build(func);
  return func;
}

void WgmmaBuilder::ifThen(Value cond, llvm::function_ref<void()> then) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
}

void WgmmaBuilder::ifThenElse(Value cond, llvm::function_ref<void()> then,
                              llvm::function_ref<void()> otherwise) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&op.getThenRegion().front());
  then();
  b.setInsertionPointToStart(&op.getElseRegion().front());
  otherwise();
}

SmallVector<Value> WgmmaBuilder::forLoop(
    Value lb, Value ub, Value step, ValueRange init,
    llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, step, init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
  scf::YieldOp::create(b, next);
  return SmallVector<Value>(loop.getResults());
}

Value WgmmaBuilder::alignedSharedMemory(StringRef name) {
  Value raw = LLVM::AddressOfOp::create(b, sharedPtr(), name);
  Value rawBits = LLVM::PtrToIntOp::create(b, b.getI32Type(), raw);
  Value pad = andI(sub(i32(0), rawBits), i32(1023));
  return gepBytes(raw, pad);
}

Value WgmmaBuilder::descriptor(Value tile) {
  Value address = LLVM::PtrToIntOp::create(b, b.getI64Type(), tile);
  Value field =
      arith::ShRUIOp::create(b, andI(address, i64(0x3FFFF)), i64(4));
  return arith::OrIOp::create(
      b, field, i64((int64_t(1024 >> 4) << 32) | (int64_t(1) << 62)));
}

void WgmmaBuilder::wait(Value barrier, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, barrier, parity,
                                        i32(kTryWaitTicks));
}

void WgmmaBuilder::arrivePerWarp(Value barrier, Value lane) {
  ifThen(cmp(arith::CmpIPredicate::eq, lane, i32(0)), [&] {
    NVVM::MBarrierArriveOp::create(b, Type(), barrier, Value());
  });
}

void WgmmaBuilder::tmaLoad(Value dst, Value map, ValueRange coords,
                           Value barrier) {
  Value cluster = LLVM::AddrSpaceCastOp::create(
      b, LLVM::LLVMPointerType::get(ctx, kSharedClusterSpace), dst);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, cluster, map, coords, barrier, ValueRange{}, Value(), Value(),
      NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, NVVM::CTAGroupKindAttr(),
      Value());
}
