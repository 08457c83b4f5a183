//===- AsyncGPUHost.cpp - fp8-async-gpu-host ------------------------------===//
//
// A host function's GPU work on one stream per call (Passes.td has the
// rules). The chain is what upstream's gpu-async-region builds; what
// differs is when the host must wait: only before what may touch memory
// the queued work uses, which this file decides from the ops' memory
// effects and the buffers each queued op was given.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8ASYNCGPUHOST
#define GEN_PASS_DEF_FP8INLINEGPULAUNCHERS
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// Ops whose result designates the memory their first operand does:
/// views, metadata and pointer casts.
bool isAlias(Operation *op) {
  return isa<ViewLikeOpInterface, memref::ExtractStridedMetadataOp,
             memref::ExtractAlignedPointerAsIndexOp, memref::CastOp,
             arith::IndexCastOp, arith::IndexCastUIOp, LLVM::IntToPtrOp,
             LLVM::PtrToIntOp, LLVM::AddrSpaceCastOp, LLVM::GEPOp,
             UnrealizedConversionCastOp>(op) &&
         op->getNumOperands() > 0;
}

/// The buffer or pointer `value` designates, back through aliases: what a
/// host access and a queued op share when they touch the same memory.
Value rootOf(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isAlias(def))
      break;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      value = view.getViewSource();
    else
      value = def->getOperand(0);
  }
  return value;
}

/// Host memory GPU work does not address unless given it: the stack and
/// LLVM globals (the pointer slots of the device-resident state, not the
/// state).
bool isHostMemory(Value root) {
  return isa_and_present<LLVM::AllocaOp, memref::AllocaOp, LLVM::AddressOfOp>(
      root.getDefiningOp());
}

/// The runtime library's host-side queries (a tensor map encoded into host
/// memory, the SM count, a pointer's kind): they read no buffer's contents
/// and wait for nothing.
bool isRuntimeQuery(func::CallOp call, SymbolTable &symbols) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  return callee && callee.isExternal() &&
         llvm::is_contained({StringRef(fp8::kEncodeTensorMapFunction),
                             StringRef("fp8GpuMultiprocessorCount"),
                             StringRef("fp8GpuMemoryKind")},
                            callee.getName());
}

/// A store of a 16- or 32-bit value into a one-element buffer the program
/// allocated (an amax zeroed before its kernel, a scale a kernel reads):
/// a device memset on the chain (Chain::queueStore).
bool isDeviceScalar(memref::StoreOp store) {
  MemRefType type = store.getMemRefType();
  Type element = type.getElementType();
  return isa_and_present<memref::AllocOp, gpu::AllocOp>(
             store.getMemRef().getDefiningOp()) &&
         type.hasStaticShape() && type.getNumElements() == 1 &&
         type.getLayout().isIdentity() && !type.getMemorySpace() &&
         element.isIntOrFloat() &&
         llvm::is_contained({16u, 32u}, element.getIntOrFloatBitWidth());
}

/// Whether only queued work touches `alloc`'s memory: every use, through
/// views, metadata and address arithmetic (any op without memory effects),
/// in its block, is an operand of a launch, copy or memset, the address of
/// a tensor map, a one-element store that becomes a memset, or its one
/// free. Such a buffer becomes stream-ordered device memory (`gpu.alloc
/// async` / `gpu.dealloc async` on the chain), freed right after its last
/// user: the stream reuses its memory for the allocations after it, so a
/// call's peak is what is live at once, not all it allocates, and the host
/// never maps it (no managed memory, no page migration). Returns the free
/// and the last other user, or nothing.
std::optional<std::pair<memref::DeallocOp, Operation *>>
getDeviceOnlyUses(memref::AllocOp alloc, SymbolTable &symbols) {
  MemRefType type = alloc.getType();
  // Stream-ordered allocations are aligned as cuMemAlloc's (256 bytes).
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      alloc.getAlignment().value_or(1) > 256 ||
      !alloc.getSymbolOperands().empty())
    return std::nullopt;
  Block *block = alloc->getBlock();
  memref::DeallocOp free;
  Operation *last = nullptr;
  unsigned gpuUses = 0;
  SmallVector<Value> worklist{alloc.getResult()};
  DenseSet<Value> seen{alloc.getResult()};
  auto follow = [&](ValueRange values) {
    for (Value v : values)
      if (seen.insert(v).second)
        worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block)
        return std::nullopt;
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user);
          dealloc && value == alloc.getResult() && !free) {
        free = dealloc;
        continue;
      }
      if (!last || last->isBeforeInBlock(user))
        last = user;
      // GPU work that the chain will queue (a launch on a stream of its
      // own would not be ordered with the free).
      if (auto launch = dyn_cast<gpu::LaunchFuncOp>(user);
          launch && launch.getAsyncObject())
        return std::nullopt;
      if (isa<gpu::LaunchFuncOp, gpu::MemcpyOp, gpu::MemsetOp>(user)) {
        ++gpuUses;
        continue;
      }
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && value == alloc.getResult() &&
          &use == &store.getMemrefMutable() && isDeviceScalar(store))
        continue;
      if (auto call = dyn_cast<func::CallOp>(user)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee || !callee.isExternal() ||
            callee.getName() != fp8::kEncodeTensorMapFunction ||
            use.getOperandNumber() == 0 || call.getNumOperands() == 0)
          return std::nullopt;
        // The map it encodes holds the address: what is loaded from the
        // map's memory is the buffer's too (the launch that reads through
        // the map is its user).
        Value map = rootOf(call.getOperand(0));
        if (!isa_and_present<LLVM::AllocaOp>(map.getDefiningOp()))
          return std::nullopt;
        // Anything else done with the map's memory could hand the
        // address on unseen.
        SmallVector<Value> views{map};
        while (!views.empty())
          for (OpOperand &mapUse : views.pop_back_val().getUses()) {
            Operation *mapUser = mapUse.getOwner();
            auto encode = dyn_cast<func::CallOp>(mapUser);
            if (isAlias(mapUser))
              llvm::append_range(views, mapUser->getResults());
            else if (isa<LLVM::LoadOp>(mapUser))
              follow(mapUser->getResults());
            else if (!encode || encode.getCallee() != callee.getName() ||
                     mapUse.getOperandNumber() != 0)
              return std::nullopt;
          }
        continue;
      }
      if (isMemoryEffectFree(user) && user->getNumRegions() == 0 &&
          !user->hasTrait<OpTrait::IsTerminator>()) {
        follow(user->getResults());
        continue;
      }
      return std::nullopt;
    }
  }
  if (!free || !gpuUses || free->isBeforeInBlock(last))
    return std::nullopt;
  return std::make_pair(free, last);
}

/// Threads one token chain through the GPU ops of a block.
class Chain {
public:
  explicit Chain(SymbolTable &symbols) : symbols(symbols) {}

  void run(Block &block) {
    // Buffers only the GPU touches, freed right after their last user.
    for (auto alloc : block.getOps<memref::AllocOp>())
      if (auto uses = getDeviceOnlyUses(alloc, symbols)) {
        deviceOnly.insert(alloc);
        uses->first->moveAfter(uses->second);
      }
    for (Operation &op : llvm::make_early_inc_range(block))
      visit(&op);
  }

private:
  /// Whether `buffer`, allocated in the block of `op`, is one no queued op
  /// can have: no op queued since the last wait was given it, and every
  /// use of it (through aliases) before `op` is an access of the memory
  /// (the value an effect is on) or a GPU op. Any other use (the pointer
  /// stored as data, put in a struct or a tensor map, passed to a call)
  /// could hand it to queued work unseen. Uses after `op` cannot have
  /// reached work queued before it.
  bool isFresh(Value buffer, Operation *op) {
    Operation *alloc = buffer.getDefiningOp();
    if (!isa_and_present<memref::AllocOp>(alloc) ||
        alloc->getBlock() != op->getBlock() || queued.contains(buffer))
      return false;
    SmallVector<Value> worklist{buffer};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        // Uses in other blocks run after `op` (the buffer is allocated in
        // its block); one nested in an earlier op's region is not traced.
        Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
        if (!ancestor || !ancestor->isBeforeInBlock(op))
          continue;
        if (ancestor != user)
          return false;
        if (isAlias(user) && use.getOperandNumber() == 0) {
          llvm::append_range(worklist, user->getResults());
          continue;
        }
        if (isa<gpu::AsyncOpInterface>(user))
          continue;
        auto effects = dyn_cast<MemoryEffectOpInterface>(user);
        if (effects && effects.getEffectOnValue<MemoryEffects::Read>(value))
          continue;
        if (effects && effects.getEffectOnValue<MemoryEffects::Write>(value))
          continue;
        if (effects && effects.getEffectOnValue<MemoryEffects::Free>(value))
          continue;
        return false;
      }
    }
    return true;
  }

  void visit(Operation *op) {
    if (auto wait = dyn_cast<gpu::WaitOp>(op))
      return visitWait(wait);
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
        launch && !launch.getAsyncToken() && !launch.getAsyncObject())
      return queueLaunch(launch);
    if (auto async = dyn_cast<gpu::AsyncOpInterface>(op);
        async && async.getAsyncToken())
      return queue(async);
    if (auto store = dyn_cast<memref::StoreOp>(op);
        store && isDeviceScalar(store))
      return queueStore(store);
    if (auto alloc = dyn_cast<memref::AllocOp>(op);
        alloc && deviceOnly.contains(alloc))
      return queueAlloc(alloc);
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && streamOrdered.contains(dealloc.getMemref()))
      return queueDealloc(dealloc);
    if (!token)
      return;
    if (auto call = dyn_cast<func::CallOp>(op);
        call && isRuntimeQuery(call, symbols))
      return;
    if (!needsWait(op))
      return;
    // Freeing what queued work may use waits for the next wait (at the
    // latest the block's end) instead of stalling the chain here: a
    // launcher's frees come right after its launch once inlined, and later
    // is always a correct place for a free.
    if (isa<memref::DeallocOp>(op) &&
        !op->hasTrait<OpTrait::IsTerminator>())
      return deferred.push_back(op);
    waitBefore(op);
  }

  /// `gpu.wait async` starts (or, inside a chain, joins) the chain; a
  /// blocking wait on the chain alone is dropped: the host waits where it
  /// needs to.
  void visitWait(gpu::WaitOp wait) {
    if (Value result = wait.getAsyncToken()) {
      if (token && wait.getAsyncDependencies().empty()) {
        result.replaceAllUsesWith(token);
        wait.erase();
        return;
      }
      if (token)
        wait.addAsyncDependency(token);
      extend(result);
      return;
    }
    if (token && llvm::all_of(wait.getAsyncDependencies(),
                              [&](Value t) { return chained.contains(t); })) {
      wait.erase();
      return;
    }
    if (token)
      wait.addAsyncDependency(token);
    for (Operation *dealloc : llvm::reverse(deferred))
      dealloc->moveAfter(wait);
    deferred.clear();
    reset();
  }

  void queueLaunch(gpu::LaunchFuncOp launch) {
    OpBuilder b(launch);
    Value after = current(b, launch.getLoc());
    std::optional<gpu::KernelDim3> cluster;
    if (launch.hasClusterSize())
      cluster = launch.getClusterSizeOperandValues();
    auto async = gpu::LaunchFuncOp::create(
        b, launch.getLoc(), launch.getKernel(),
        launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
        launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
        b.getType<gpu::AsyncTokenType>(), ValueRange{after}, cluster);
    async->setDiscardableAttrs(launch->getDiscardableAttrDictionary());
    launch.erase();
    given(async);
    extend(async.getAsyncToken());
  }

  /// Such a store as a `gpu.memset` on the chain: the device writes the
  /// value where the kernels read it. A host store would move the buffer's
  /// page to the host, and the next kernel that touches it would fault it
  /// back (tens of microseconds each on a PCIe-attached GPU).
  void queueStore(memref::StoreOp store) {
    OpBuilder b(store);
    Value after = current(b, store.getLoc());
    auto memset = gpu::MemsetOp::create(
        b, store.getLoc(), b.getType<gpu::AsyncTokenType>(), ValueRange{after},
        store.getMemRef(), store.getValue());
    store.erase();
    given(memset);
    extend(memset.getAsyncToken());
  }

  /// A buffer only queued work touches (isDeviceOnly), allocated in
  /// stream order on the chain.
  void queueAlloc(memref::AllocOp alloc) {
    OpBuilder b(alloc);
    Value after = current(b, alloc.getLoc());
    auto device = gpu::AllocOp::create(
        b, alloc.getLoc(), alloc.getType(), b.getType<gpu::AsyncTokenType>(),
        ValueRange{after}, alloc.getDynamicSizes(), ValueRange{},
        /*hostShared=*/false);
    alloc.replaceAllUsesWith(device.getMemref());
    alloc.erase();
    streamOrdered.insert(device.getMemref());
    extend(device.getAsyncToken());
  }

  /// Its free, where the stream gets to it: the memory is reused by the
  /// allocations queued after it.
  void queueDealloc(memref::DeallocOp dealloc) {
    OpBuilder b(dealloc);
    Value after = current(b, dealloc.getLoc());
    auto free = gpu::DeallocOp::create(b, dealloc.getLoc(),
                                       b.getType<gpu::AsyncTokenType>(),
                                       ValueRange{after}, dealloc.getMemref());
    dealloc.erase();
    extend(free.getAsyncToken());
  }

  void queue(gpu::AsyncOpInterface op) {
    if (token && !llvm::is_contained(op.getAsyncDependencies(), token))
      op.addAsyncDependency(token);
    given(op);
    extend(op.getAsyncToken());
  }

  /// The chain's token, started here when there is none.
  Value current(OpBuilder &b, Location loc) {
    if (!token)
      extend(gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                 ValueRange())
                 .getAsyncToken());
    return token;
  }

  void given(Operation *op) {
    for (Value operand : op->getOperands())
      if (!isa<gpu::AsyncTokenType>(operand.getType()))
        queued.insert(rootOf(operand));
  }

  void extend(Value next) {
    token = next;
    chained.insert(next);
  }

  void reset() {
    token = {};
    queued.clear();
  }

  /// The host waits before `op`; the frees deferred until then follow.
  void waitBefore(Operation *op) {
    OpBuilder b(op);
    gpu::WaitOp::create(b, op->getLoc(), Type(), ValueRange{token});
    for (Operation *dealloc : deferred)
      dealloc->moveBefore(op);
    deferred.clear();
    reset();
  }

  /// Whether `op` may touch memory that queued work uses (or does more
  /// than this pass can tell).
  bool needsWait(Operation *op) {
    if (op->hasTrait<OpTrait::IsTerminator>() || op->getNumRegions())
      return true;
    if (isMemoryEffectFree(op))
      return false;
    auto interface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!interface)
      return true;
    SmallVector<MemoryEffects::EffectInstance> effects;
    interface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (isa<MemoryEffects::Allocate>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value)
        return true;
      Value root = rootOf(value);
      if (isHostMemory(root) && !queued.contains(root))
        continue;
      if (!isFresh(root, op))
        return true;
    }
    return false;
  }

  SymbolTable &symbols;
  Value token;
  /// Every token of the chain, and the roots the queued work was given
  /// since the last wait.
  DenseSet<Value> chained, queued;
  /// Frees moved to the end of the block.
  SmallVector<Operation *> deferred;
  /// The block's buffers that only queued work touches, and the
  /// stream-ordered buffers made of them.
  DenseSet<Operation *> deviceOnly;
  DenseSet<Value> streamOrdered;
};

/// Inlines `call` when its callee is one block (the launchers after
/// convert-scf-to-cf); returns whether it did. Stack allocations of a
/// constant size (tensor maps) go to the caller's entry block: the callee
/// freed them on return, and a call in a loop must not grow the stack.
bool inlineLauncher(func::CallOp call, func::FuncOp callee) {
  if (!callee.getBody().hasOneBlock())
    return false;
  Block &body = callee.getBody().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), call.getOperands());
  OpBuilder b(call);
  Block &entry = call->getParentOfType<func::FuncOp>().getBody().front();
  OpBuilder top = OpBuilder::atBlockBegin(&entry);
  for (Operation &op : body.without_terminator()) {
    auto alloca = dyn_cast<LLVM::AllocaOp>(op);
    Operation *size = alloca ? alloca.getArraySize().getDefiningOp() : nullptr;
    if (size && size->hasTrait<OpTrait::ConstantLike>()) {
      IRMapping constant;
      constant.map(size->getResult(0), top.clone(*size)->getResult(0));
      mapping.map(alloca.getResult(),
                  top.clone(*alloca, constant)->getResult(0));
      continue;
    }
    b.clone(op, mapping);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [result, value] : llvm::zip(call.getResults(), ret.getOperands()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(value));
  call.erase();
  return true;
}

/// Inlines every call of a one-block launcher and erases the private
/// launchers no longer called; with `final`, the launcher attribute goes
/// from the ones that stay (they are plain functions from then on).
void inlineLaunchers(ModuleOp module, SymbolTable &symbols, bool final) {
  SmallVector<func::FuncOp> launchers;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(fp8::kGpuLauncherAttr))
      launchers.push_back(func);
  SmallVector<func::CallOp> calls;
  // A call outside any function (the module's body, which nothing runs)
  // has no entry block to take the launcher's stack allocations.
  module.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && callee->hasAttr(fp8::kGpuLauncherAttr) &&
        call->getParentOfType<func::FuncOp>())
      calls.push_back(call);
  });
  for (func::CallOp call : calls)
    inlineLauncher(call, symbols.lookup<func::FuncOp>(call.getCallee()));
  // The symbols still referenced, in one walk (asking for each launcher
  // walks the module once per launcher: 45 s on a 32-layer Llama). Unknown
  // uses keep every launcher.
  DenseSet<StringAttr> used;
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(&module.getBodyRegion());
  if (uses)
    for (const SymbolTable::SymbolUse &use : *uses)
      used.insert(use.getSymbolRef().getRootReference());
  for (func::FuncOp launcher : launchers) {
    if (uses && launcher.isPrivate() &&
        !used.contains(launcher.getSymNameAttr()))
      symbols.erase(launcher);
    else if (final)
      launcher->removeAttr(fp8::kGpuLauncherAttr);
  }
}

struct FP8InlineGPULaunchersPass
    : fp8::impl::FP8InlineGPULaunchersBase<FP8InlineGPULaunchersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    inlineLaunchers(module, symbols, /*final=*/false);
  }
};

struct FP8AsyncGPUHostPass
    : fp8::impl::FP8AsyncGPUHostBase<FP8AsyncGPUHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // What fp8-inline-gpu-launchers left (launchers with control flow
    // before convert-scf-to-cf).
    inlineLaunchers(module, symbols, /*final=*/true);

    for (auto func : module.getOps<func::FuncOp>())
      for (Block &block : func.getBody()) {
        Chain chain(symbols);
        chain.run(block);
      }
  }
};

} // namespace
