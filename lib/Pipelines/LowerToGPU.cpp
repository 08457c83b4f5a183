//===- LowerToGPU.cpp - fp8-lower-to-gpu ----------------------------------===//
//
// A whole module as one GPU program, through MLIR's own passes: the fp8
// ops become linalg as on the CPU (convert-fp8-to-linalg and
// fp8-expand-float8: the same integer and f32 arithmetic), everything is
// bufferized, linalg ops become parallel loops mapped onto blocks and
// threads (reductions run sequentially inside a thread), kernels are
// outlined and serialized, and the host is LLVM dialect calling MLIR's GPU
// runtime ABI. Host memory is CUDA managed memory throughout (generic
// allocation functions, provided by libfp8_gpu_runtime.so), so the host
// code that remains (scalar reads of a scale, full reductions, copies)
// runs on the same buffers the kernels use; arguments and globals get
// managed copies (fp8-stage-buffers-for-gpu).
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerToGPU.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/LowerToNVVM.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TILEPARALLELLOOPSFORGPU
#define GEN_PASS_DEF_FP8STAGEBUFFERSFORGPU
#define GEN_PASS_DEF_FP8EXPANDMATHFORGPU
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct FP8TileParallelLoopsForGPUPass
    : fp8::impl::FP8TileParallelLoopsForGPUBase<
          FP8TileParallelLoopsForGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops) {
      unsigned inner = loop.getNumLoops() - 1;
      int64_t size = threads;
      std::optional<int64_t> lower =
          getConstantIntValue(loop.getLowerBound()[inner]);
      std::optional<int64_t> upper =
          getConstantIntValue(loop.getUpperBound()[inner]);
      std::optional<int64_t> step = getConstantIntValue(loop.getStep()[inner]);
      if (lower && upper && step && *step > 0) {
        int64_t extent = (*upper - *lower + *step - 1) / *step;
        size = std::min<int64_t>(size, std::max<int64_t>(
                                           32, (extent + 31) / 32 * 32));
      }
      SmallVector<int64_t> sizes(loop.getNumLoops(), 1);
      sizes[inner] = size;
      scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
    }
  }
};

/// The buffer `value` views (through casts, subviews, reshapes).
Value getViewedBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether anything may write `buffer` or a view of it.
bool mayWrite(Value buffer) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == buffer) {
      for (Value result : user->getResults())
        if (mayWrite(result))
          return true;
      continue;
    }
    if (isa<func::ReturnOp, memref::DimOp, memref::DeallocOp>(user))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects)
      return true; // calls, unknown ops
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffectsOnValue(buffer, instances);
    if (llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Write>(e.getEffect());
        }))
      return true;
  }
  return false;
}

struct FP8StageBuffersForGPUPass
    : fp8::impl::FP8StageBuffersForGPUBase<FP8StageBuffersForGPUPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        stage(func);
  }

  void stage(func::FuncOp func) {
    Block &entry = func.getBody().front();
    llvm::SetVector<Value> buffers;
    func.walk([&](gpu::LaunchOp launch) {
      llvm::SetVector<Value> used;
      getUsedValuesDefinedAbove(launch.getBody(), used);
      for (Value value : used) {
        if (!isa<MemRefType>(value.getType()))
          continue;
        Value buffer = getViewedBuffer(value);
        auto arg = dyn_cast<BlockArgument>(buffer);
        if ((arg && arg.getOwner() == &entry) ||
            buffer.getDefiningOp<memref::GetGlobalOp>())
          buffers.insert(buffer);
      }
    });
    for (Value buffer : buffers) {
      auto type = cast<MemRefType>(buffer.getType());
      bool written = mayWrite(buffer);
      OpBuilder builder(func.getContext());
      if (Operation *def = buffer.getDefiningOp())
        builder.setInsertionPointAfter(def);
      else
        builder.setInsertionPointToStart(&entry);
      Location loc = buffer.getLoc();
      SmallVector<Value> sizes;
      SmallPtrSet<Operation *, 4> staging;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          continue;
        auto dim = memref::DimOp::create(builder, loc, buffer, d);
        staging.insert(dim);
        sizes.push_back(dim);
      }
      MemRefType copyType =
          MemRefType::get(type.getShape(), type.getElementType());
      auto copy = memref::AllocOp::create(builder, loc, copyType, sizes);
      auto copyIn = memref::CopyOp::create(builder, loc, buffer, copy);
      staging.insert(copyIn);
      Value replacement = copy;
      if (copyType != type)
        replacement = memref::CastOp::create(builder, loc, type, copy);
      buffer.replaceAllUsesExcept(replacement, staging);

      // Back (when written) and freed where the buffer's scope ends.
      auto release = [&](Operation *before) {
        OpBuilder at(before);
        if (written)
          memref::CopyOp::create(at, loc, copy, buffer);
        memref::DeallocOp::create(at, loc, copy);
      };
      Block *block = copy->getBlock();
      if (block == &entry)
        func.walk([&](func::ReturnOp ret) { release(ret); });
      else
        release(block->getTerminator());
    }
  }
};
/// A unary math op on f32 or f64 as one PTX instruction (inline assembly:
/// convert-gpu-to-nvvm would call libdevice, and marks the LLVM
/// intrinsics illegal).
template <typename MathOp>
struct UnaryMathToPtx : OpRewritePattern<MathOp> {
  UnaryMathToPtx(MLIRContext *context, StringRef instruction)
      : OpRewritePattern<MathOp>(context), instruction(instruction) {}

  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return failure();
    StringRef suffix = type.isF32() ? "f32" : "f64";
    // cvt.rmi.f32.f32 names the type twice; sqrt.rn.f32 and abs.f32 once.
    std::string text = instruction;
    for (size_t at; (at = text.find("%T")) != std::string::npos;)
      text.replace(at, 2, suffix.str());
    std::string constraints = type.isF32() ? "=f,f" : "=d,d";
    rewriter.replaceOpWithNewOp<LLVM::InlineAsmOp>(
        op, type, op->getOperands(), text + " $0, $1;", constraints,
        /*has_side_effects=*/false, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
        ArrayAttr());
    return success();
  }

  std::string instruction;
};

/// rsqrt(x) = 1 / sqrt(x), both correctly rounded.
struct RsqrtToDivSqrt : OpRewritePattern<math::RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RsqrtOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return failure();
    Value one = arith::ConstantOp::create(rewriter, op.getLoc(),
                                          rewriter.getFloatAttr(type, 1.0));
    Value root = math::SqrtOp::create(rewriter, op.getLoc(), op.getOperand());
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, root);
    return success();
  }
};

struct FP8ExpandMathForGPUPass
    : fp8::impl::FP8ExpandMathForGPUBase<FP8ExpandMathForGPUPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    auto all = [](StringRef) { return true; };
    math::populateExpansionPatterns(patterns);
    populateMathF32ExpansionPatterns(patterns, all);
    populateMathPolynomialApproximationPatterns(patterns, all);
    patterns.add<RsqrtToDivSqrt>(context, /*benefit=*/2);
    patterns.add<UnaryMathToPtx<math::SqrtOp>>(context, "sqrt.rn.%T");
    patterns.add<UnaryMathToPtx<math::AbsFOp>>(context, "abs.%T");
    patterns.add<UnaryMathToPtx<math::FloorOp>>(context, "cvt.rmi.%T.%T");
    patterns.add<UnaryMathToPtx<math::CeilOp>>(context, "cvt.rpi.%T.%T");
    patterns.add<UnaryMathToPtx<math::TruncOp>>(context, "cvt.rzi.%T.%T");
    patterns.add<UnaryMathToPtx<math::RoundEvenOp>>(context,
                                                   "cvt.rni.%T.%T");
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void mlir::fp8::buildLowerToGPUPipeline(OpPassManager &pm,
                                        const LowerToGPUOptions &options) {
  addTensorToBufferPasses(pm, /*packContractionsForCPU=*/false);
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  fp8::FP8TileParallelLoopsForGPUOptions tiling;
  tiling.threads = options.threads;
  pm.addNestedPass<func::FuncOp>(fp8::createFP8TileParallelLoopsForGPU(tiling));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(fp8::createFP8StageBuffersForGPU());
  pm.addPass(createGpuKernelOutliningPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(fp8::createFP8ExpandMathForGPU());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // The host: runtime calls, and every allocation managed memory.
  // memref first: gpu-to-llvm would lower the allocations with malloc.
  FinalizeMemRefToLLVMConversionPassOptions memory;
  memory.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memory));
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::fp8::registerLowerToGPUDialectExtensions(
    DialectRegistry &registry) {
  // What convert-gpu-to-nvvm (in the kernels) and convert-to-llvm (on the
  // host) lower through each dialect's ConvertToLLVMPatternInterface.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
}

void mlir::fp8::registerLowerToGPUPipeline() {
  registerCheckedNVVMPipeline<LowerToGPUOptions>(
      "fp8-lower-to-gpu",
      "Lower a whole module to one GPU program (upstream's GPU route) with "
      "a host on MLIR's GPU runtime ABI",
      buildLowerToGPUPipeline);
}
