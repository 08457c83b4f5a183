//===- WgmmaBuilder.cpp - What the Hopper wgmma kernels are written with -===//

#include "WgmmaBuilder.h"

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;

gemm_abi::Elem mlir::fp8::getKernelElem(Type type) {
  using gemm_abi::Elem;
  if (isa<Float8E4M3FNType>(type))
    return Elem::E4M3;
  if (isa<Float8E5M2Type>(type))
    return Elem::E5M2;
  if (type.isF32())
    return Elem::F32;
  if (type.isBF16())
    return Elem::BF16;
  if (type.isF16())
    return Elem::F16;
  return Elem::None;
}

Type mlir::fp8::getKernelElemType(MLIRContext *ctx, gemm_abi::Elem e) {
  Builder b(ctx);
  switch (e) {
  case gemm_abi::Elem::F32:
    return b.getF32Type();
  case gemm_abi::Elem::BF16:
    return b.getBF16Type();
  case gemm_abi::Elem::F16:
    return b.getF16Type();
  case gemm_abi::Elem::E4M3:
    return b.getType<Float8E4M3FNType>();
  case gemm_abi::Elem::E5M2:
    return b.getType<Float8E5M2Type>();
  case gemm_abi::Elem::None:
    break;
  }
  return Type();
}

NVVM::WGMMATypes mlir::fp8::getWgmmaType(gemm_abi::Elem e) {
  switch (e) {
  case gemm_abi::Elem::E5M2:
    return NVVM::WGMMATypes::e5m2;
  case gemm_abi::Elem::BF16:
    return NVVM::WGMMATypes::bf16;
  case gemm_abi::Elem::F16:
    return NVVM::WGMMATypes::f16;
  case gemm_abi::Elem::F32:
    // f32 operands: the tensor cores read the top 19 bits (tf32).
    return NVVM::WGMMATypes::tf32;
  default:
    return NVVM::WGMMATypes::e4m3;
  }
}

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

void WgmmaBuilder::readThreadIndices() {
  tid = NVVM::ThreadIdXOp::create(b, b.getI32Type());
  warpgroup = divU(tid, i32(gemm_abi::kWarpgroup));
  lane = remU(tid, i32(32));
  warpInGroup = remU(divU(tid, i32(32)), i32(4));
}

void WgmmaBuilder::splitWarpgroups(llvm::function_ref<void()> initBarriers,
                                   llvm::function_ref<void()> producer,
                                   llvm::function_ref<void()> consumer) {
  ifThen(cmp(arith::CmpIPredicate::eq, tid, i32(0)), [&] {
    initBarriers();
    NVVM::FenceMbarrierInitOp::create(b);
    NVVM::FenceProxyOp::create(
        b, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  });
  NVVM::Barrier0Op::create(b);
  tid = remU(tid, i32(gemm_abi::kWarpgroup));
  ifThenElse(cmp(arith::CmpIPredicate::eq, warpgroup, i32(0)), producer,
             consumer);
  LLVM::ReturnOp::create(b, ValueRange{});
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

void WgmmaBuilder::expectBytes(Value barrier, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(b, Type(), barrier, i32(bytes),
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false, Value());
}

Value WgmmaBuilder::negInf() {
  return f32(-std::numeric_limits<float>::infinity());
}

Value WgmmaBuilder::exp(Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, b.getF32Type(), b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
             ValueRange{fmul(x, f32(float(M_LOG2E)))})
      .getResult(0);
}

Value WgmmaBuilder::log(Value x) {
  Value lg2 = LLVM::CallIntrinsicOp::create(
                  b, b.getF32Type(),
                  b.getStringAttr("llvm.nvvm.lg2.approx.ftz.f"), ValueRange{x})
                  .getResult(0);
  return fmul(lg2, f32(float(M_LN2)));
}

Value WgmmaBuilder::loadF32(Value base, Value index) {
  Type f32Type = b.getF32Type();
  return LLVM::LoadOp::create(b, f32Type, gep(base, f32Type, index), 4);
}

Value WgmmaBuilder::structOf(int64_t n, Value fill) {
  auto type = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n, b.getF32Type()));
  Value s = LLVM::UndefOp::create(b, type);
  for (int64_t i = 0; i < n; ++i)
    s = LLVM::InsertValueOp::create(b, s, fill, i);
  return s;
}

Value WgmmaBuilder::wgmmaRegisterA(Value acc, ArrayRef<Value> a, Value descB,
                                   int64_t n, StringRef aType,
                                   StringRef bType) {
  assert(a.size() == 4 && "four A registers");
  auto accType = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t regs = accType.getBody().size();
  bool fp8 = aType.starts_with("e");
  // Operands: the accumulators written ($0 ..), the same read (tied), the 4
  // A registers ($2r ..), the B descriptor ($2r + 4) and scale-d ($2r + 5);
  // then d, a, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-b].
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * regs + 5
     << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << n << "k"
     << (fp8 ? 32 : 16) << ".f32." << aType << "." << bType << " {";
  for (int64_t i = 0; i < regs; ++i)
    os << (i ? ", " : "") << "$" << i;
  os << "}, {$" << 2 * regs << ", $" << 2 * regs + 1 << ", $" << 2 * regs + 2
     << ", $" << 2 * regs + 3 << "}, $" << 2 * regs + 4 << ", p, 1, 1"
     << (fp8 ? "" : ", 0") << ";\n}\n";
  std::string constraints;
  for (int64_t i = 0; i < regs; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < regs; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l,n";
  SmallVector<Value> operands;
  for (int64_t i = 0; i < regs; ++i)
    operands.push_back(LLVM::ExtractValueOp::create(b, acc, i));
  operands.append(a.begin(), a.end());
  operands.push_back(descB);
  operands.push_back(i32(1));
  return LLVM::InlineAsmOp::create(
             b, accType, operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::TailCallKind::None,
             LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}
