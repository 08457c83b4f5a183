//===- LowerToCPU.cpp - fp8-lower-to-cpu ----------------------------------===//
//
// The CPU path runs the same numerics as the folders (lib/Numerics): the fp8
// ops become linalg on tensors, FP8 casts become integer operations on i8,
// and the rest is MLIR's standard bufferize-and-lower-to-LLVM route.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/OpenMPToLLVM/ConvertOpenMPToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/MLProgram/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8RESHAPEDYNAMICEXPANDS
#define GEN_PASS_DEF_FP8DEFINEEXTERNGLOBALS
#define GEN_PASS_DEF_FP8COPYSTOREDBUFFERS
#define GEN_PASS_DEF_FP8LOWERNESTEDMODULESTOCPU
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

/// fp8-lower-to-cpu for one module, leaving nested modules to
/// FP8LowerNestedModulesToCPU.
static void buildModuleLoweringPipeline(OpPassManager &pm, bool vectorize,
                                        bool threads,
                                        fp8::Accumulation accumulation);

namespace {
/// tensor.expand_shape with several dynamic sizes in one group ->
/// tensor.reshape to the same shape (see FP8ReshapeDynamicExpands).
struct DynamicExpandToReshape : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = op.getResultType();
    bool severalDynamic = llvm::any_of(
        op.getReassociationIndices(), [&](const ReassociationIndices &group) {
          return llvm::count_if(group, [&](int64_t dim) {
                   return type.isDynamicDim(dim);
                 }) > 1;
        });
    if (!severalDynamic)
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> sizes = getValueOrCreateConstantIndexOp(
        rewriter, loc, op.getMixedOutputShape());
    Value shape = tensor::FromElementsOp::create(
        rewriter, loc,
        RankedTensorType::get({type.getRank()}, rewriter.getIndexType()),
        sizes);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, type, op.getSrc(),
                                                   shape);
    return success();
  }
};

struct FP8ReshapeDynamicExpandsPass
    : fp8::impl::FP8ReshapeDynamicExpandsBase<FP8ReshapeDynamicExpandsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DynamicExpandToReshape>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
struct FP8DefineExternGlobalsPass
    : fp8::impl::FP8DefineExternGlobalsBase<FP8DefineExternGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto unit = UnitAttr::get(&getContext());
    llvm::StringSet<> defined;
    for (auto global : module.getOps<ml_program::GlobalOp>()) {
      auto type = dyn_cast<RankedTensorType>(global.getType());
      if (!isa_and_present<ml_program::ExternAttr>(global.getValueAttr()) ||
          !type || !type.hasStaticShape())
        continue;
      global.setValueAttr(unit);
      global.setIsMutable(true);
      SymbolTable::setSymbolVisibility(global,
                                       SymbolTable::Visibility::Public);
      defined.insert(global.getSymName());
    }
    // A constant load of a now mutable global is a plain load (the value
    // is the caller's, written before the first call).
    module.walk([&](ml_program::GlobalLoadConstOp load) {
      if (!defined.contains(load.getGlobal().getLeafReference().getValue()))
        return;
      OpBuilder builder(load);
      load.replaceAllUsesWith(
          ml_program::GlobalLoadOp::create(builder, load.getLoc(),
                                           load.getType(), load.getGlobal())
              .getResult());
      load.erase();
    });
  }
};

struct FP8CopyStoredBuffersPass
    : fp8::impl::FP8CopyStoredBuffersBase<FP8CopyStoredBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([](ml_program::GlobalStoreOp store) {
      Value value = store.getValue();
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || value.getDefiningOp<bufferization::AllocTensorOp>())
        return;
      OpBuilder builder(store);
      Value copy = bufferization::AllocTensorOp::create(
          builder, store.getLoc(), type, /*dynamicSizes=*/ValueRange(),
          /*copy=*/value);
      store.getValueMutable().assign(copy);
    });
  }
};

struct FP8LowerNestedModulesToCPUPass
    : fp8::impl::FP8LowerNestedModulesToCPUBase<
          FP8LowerNestedModulesToCPUPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildModuleLoweringPipeline(pm, vectorize, threads, accumulation);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    // Post-order: inner modules are lowered before the modules holding them.
    SmallVector<ModuleOp> nested;
    getOperation()->walk([&](ModuleOp module) {
      if (module != getOperation())
        nested.push_back(module);
    });
    for (ModuleOp module : nested) {
      OpPassManager pm(ModuleOp::getOperationName());
      buildModuleLoweringPipeline(pm, vectorize, threads, accumulation);
      if (failed(runPipeline(pm, module)))
        return signalPassFailure();
    }
  }
};
} // namespace

void mlir::fp8::buildLowerToCPUPipeline(OpPassManager &pm,
                                        const LowerToCPUOptions &options) {
  // A TOSA graph that did not come through fp8-pipeline (its high-precision
  // twin) is imported here; nothing happens to one without TOSA. A TOSA op
  // the import leaves is an error here: nothing after it converts TOSA.
  FP8ImportTosaOptions tosa;
  tosa.complete = true;
  pm.addPass(createFP8ImportTosa(tosa));
  fp8::FP8LowerNestedModulesToCPUOptions nested;
  nested.vectorize = options.vectorize;
  nested.threads = options.threads;
  nested.accumulation = options.accumulation;
  pm.addPass(createFP8LowerNestedModulesToCPU(nested));
  buildModuleLoweringPipeline(pm, options.vectorize, options.threads,
                              options.accumulation);
}

void mlir::fp8::buildLowerToCPUPipeline(OpPassManager &pm) {
  buildLowerToCPUPipeline(pm, LowerToCPUOptions());
}

void mlir::fp8::addTensorToBufferPasses(OpPassManager &pm,
                                        bool packContractionsForCPU,
                                        bool forGPU) {
  pm.addPass(fp8::createFP8ReshapeDynamicExpands());
  pm.addPass(fp8::createFP8DefineExternGlobals());
  // Data-parallel programs: collectives on MPI buffers, bufferized below.
  pm.addPass(fp8::createFP8LowerShardToMPI());
  pm.addPass(fp8::createConvertFP8ToLinalg());
  // linalg.softmax, which no loop lowering takes, as structured ops.
  pm.addPass(fp8::createFP8DecomposeAggregatedOps());
  // Element-wise arith on tensors (from the input program) has no
  // bufferization of its own.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(fp8::createFP8ExpandFloat8());
  pm.addPass(createCanonicalizerPass());
  if (forGPU) {
    pm.addPass(createLinalgElementwiseOpFusionPass());
    pm.addNestedPass<func::FuncOp>(fp8::createFP8SplitReductionsForGPU());
    pm.addPass(createCanonicalizerPass());
    // The fusion reshapes fused operands with new expand_shapes, which can
    // have several dynamic sizes in a group again (llvm#186830).
    pm.addPass(fp8::createFP8ReshapeDynamicExpands());
  }
  if (packContractionsForCPU)
    pm.addNestedPass<func::FuncOp>(fp8::createFP8PackContractionsForCPU());

  pm.addPass(fp8::createFP8CopyStoredBuffers());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Loops that carry a tensor through a GEMM (or anything that allocates)
  // yield a new buffer each iteration; ownership-based deallocation frees
  // the old one.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // The fp8 kernels' launchers, inlined: their buffers are the caller's
  // allocations, freed without run-time alias checks.
  if (forGPU)
    pm.addPass(fp8::createFP8InlineGPULaunchers());
  // Upstream's buffer-deallocation-pipeline, with each fresh allocation
  // freed by a dealloc of its own before the simplification, which is
  // quadratic in the memrefs of one dealloc (a whole model's thousands).
  memref::ExpandReallocPassOptions expandRealloc;
  expandRealloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(expandRealloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(fp8::createFP8SplitDeallocs());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Frees where the last use is, not at the end of the function.
  pm.addPass(fp8::createFP8FreeAfterLastUse());
}

static void buildModuleLoweringPipeline(OpPassManager &pm, bool vectorize,
                                        bool threads,
                                        fp8::Accumulation accumulation) {
  // bf16 / f16 GEMMs accumulate in f32, as on the GPU (DESIGN.md 15).
  if (accumulation == fp8::Accumulation::F32)
    pm.addPass(fp8::createFP8WidenAccumulation());
  fp8::addTensorToBufferPasses(pm, /*packContractionsForCPU=*/vectorize);
  if (vectorize) {
    fp8::FP8TileAndVectorizeForCPUOptions tiling;
    tiling.threads = threads;
    pm.addNestedPass<func::FuncOp>(
        fp8::createFP8TileAndVectorizeForCPU(tiling));
    pm.addPass(createCanonicalizerPass());
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  fp8::addMathToCallsPasses(pm);
  // Before lower-affine: the dynamic sizes and strides of reshaped memrefs
  // come out of expand-strided-metadata as affine.apply.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // One function per loop nest, one of each: translating each OpenMP
  // region scans the function it is in, and the layers share their nests.
  pm.addPass(fp8::createFP8OutlineLoopNests());
  if (threads) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // Inlines the memref.alloca_scope that wraps each parallel loop body
    // when it allocates nothing (always, for the tiles above): a scope
    // holds one block, which convert-scf-to-cf would break.
    pm.addPass(createCanonicalizerPass());
  }
  pm.addPass(fp8::createFP8SplitBlocksAtSCF());
  pm.addPass(createSCFToControlFlowPass());
  // First of the LLVM conversions: the OpenMP regions' index-typed loop
  // variables become i64 before the ops inside them are converted.
  if (threads)
    pm.addPass(createConvertOpenMPToLLVMPass());
  // MPI calls on memref descriptors, through the mpi dialect's
  // convert-to-llvm interface (it has no pass of its own), while their
  // sizes are still constants.
  ConvertToLLVMPassOptions mpiToLLVM;
  mpiToLLVM.filterDialects = {"mpi"};
  pm.addPass(createConvertToLLVMPass(mpiToLLVM));
  // memref next: convert-to-llvm's memref patterns leave a memref.reshape
  // to a dynamic shape. Then vector, with its vector-to-vector lowerings
  // (masks, n-D broadcasts; vector.print from exported graphs' timers),
  // and one conversion of the rest through each dialect's
  // ConvertToLLVMPatternInterface (arith, math, index, ub, cf, func): one
  // walk of the module where a pass per dialect took one each.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(fp8::createFP8FixOpenMPISymbols());
  pm.addPass(fp8::createFP8CheckLLVMLowering());
}

void mlir::fp8::registerLowerToCPUPipeline() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "fp8-lower-to-cpu",
      "Lower fp8 ops on tensors to the LLVM dialect for a CPU. With "
      "threads (the default) the output calls LLVM's OpenMP runtime: a JIT "
      "other than fp8-run's must load it (mlir-runner "
      "-shared-libs=.../libomp.so, or 'Symbols not found: "
      "__kmpc_fork_call'); threads=false needs none",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        buildLowerToCPUPipeline(pm, options);
      });
}

void mlir::fp8::registerLowerToCPUDialectExtensions(DialectRegistry &registry) {
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  arith::registerBufferViewFlowOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  memref::registerBufferViewFlowOpInterfaceExternalModels(registry);
  ml_program::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // What convert-to-llvm lowers.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  mpi::registerConvertMPIToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  registerMPIMemoryEffects(registry);
}
