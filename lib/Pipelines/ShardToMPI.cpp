//===- ShardToMPI.cpp - Data-parallel collectives on MPI ------------------===//
//
// fp8-lower-shard-to-mpi and fp8-fix-openmpi-symbols: what fp8-lower-to-cpu
// adds to upstream's shard -> mpi -> LLVM route so that a data-parallel
// program runs under `mpirun` on OpenMPI (Passes.td says why each is needed).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Analysis/RankVariance.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/ShardToMPI/ShardToMPI.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8LOWERSHARDTOMPI
#define GEN_PASS_DEF_FP8FIXOPENMPISYMBOLS
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

static std::optional<mpi::MPI_ReductionOpEnum>
getMPIReduction(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return mpi::MPI_ReductionOpEnum::MPI_SUM;
  case shard::ReductionKind::Max:
    return mpi::MPI_ReductionOpEnum::MPI_MAX;
  case shard::ReductionKind::Min:
    return mpi::MPI_ReductionOpEnum::MPI_MIN;
  case shard::ReductionKind::Product:
    return mpi::MPI_ReductionOpEnum::MPI_PROD;
  case shard::ReductionKind::BitwiseAnd:
    return mpi::MPI_ReductionOpEnum::MPI_BAND;
  case shard::ReductionKind::BitwiseOr:
    return mpi::MPI_ReductionOpEnum::MPI_BOR;
  case shard::ReductionKind::BitwiseXor:
    return mpi::MPI_ReductionOpEnum::MPI_BXOR;
  default:
    return std::nullopt;
  }
}

/// `%r = shard.all_reduce %x` over the whole grid, on tensors: a copy of %x
/// reduced in place over MPI_COMM_WORLD.
static LogicalResult lowerWholeGridAllReduce(shard::AllReduceOp op,
                                             shard::GridOp grid) {
  auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!type || op.getResult().getType() != type || !type.hasStaticShape())
    return op.emitError("lowering to MPI needs a statically shaped tensor "
                        "reduced in its own type, got ")
           << op.getInput().getType() << " -> " << op.getResult().getType();
  Type element = type.getElementType();
  if (!element.isF32() && !element.isF64() && !element.isInteger())
    return op.emitError("MPI reduces f32, f64 and integers, not ") << element;
  std::optional<mpi::MPI_ReductionOpEnum> kind =
      getMPIReduction(op.getReduction());
  if (!kind)
    return op.emitError("reduction '")
           << shard::stringifyReductionKind(op.getReduction())
           << "' has no MPI counterpart";
  if (op.getGridAxes().size() != size_t(grid.getRank()))
    return op.emitError("only reductions over every axis of @")
           << grid.getSymName()
           << " lower to MPI here (upstream's per-axis communicators are "
              "miscompiled for OpenMPI in MLIR 22)";

  OpBuilder b(op);
  Location loc = op.getLoc();
  // The buffer is one-dimensional: MLIR 22's MPI lowering sends only the
  // first dimension's worth of elements of a multi-dimensional memref, and
  // leaves a rank-0 one unconverted without an error.
  Value tensor = op.getInput();
  auto bufferType = RankedTensorType::get({type.getNumElements()}, element);
  SmallVector<ReassociationIndices> toBuffer;
  if (type.getRank() > 0)
    toBuffer.push_back(llvm::to_vector(llvm::seq<int64_t>(type.getRank())));
  if (type.getRank() == 0)
    tensor = tensor::ExpandShapeOp::create(b, loc, bufferType, tensor, toBuffer);
  else if (type.getRank() > 1)
    tensor = tensor::CollapseShapeOp::create(b, loc, tensor, toBuffer);
  auto memrefType = MemRefType::get(bufferType.getShape(), element);
  Value input = bufferization::ToBufferOp::create(b, loc, memrefType, tensor);
  Value buffer = memref::AllocOp::create(b, loc, memrefType);
  linalg::CopyOp::create(b, loc, input, buffer);
  Value world = mpi::CommWorldOp::create(b, loc, b.getType<mpi::CommType>());
  mpi::AllReduceOp::create(b, loc, /*retval=*/Type(), buffer, buffer, *kind,
                           world);
  Value result = bufferization::ToTensorOp::create(
      b, loc, bufferType, buffer, /*restrict=*/true, /*writable=*/true);
  if (type.getRank() == 0)
    result = tensor::CollapseShapeOp::create(b, loc, type, result, toBuffer);
  else if (type.getRank() > 1)
    result = tensor::ExpandShapeOp::create(b, loc, type, result, toBuffer);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

namespace {
struct FP8LowerShardToMPIPass
    : fp8::impl::FP8LowerShardToMPIBase<FP8LowerShardToMPIPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<shard::GridOp> grids;
    for (auto grid : module.getOps<shard::GridOp>())
      grids.push_back(grid);
    if (grids.empty())
      return;
    if (mpi != "OpenMPI" && mpi != "MPICH") {
      module.emitError("unknown MPI implementation '")
          << mpi << "' (expected OpenMPI or MPICH)";
      return signalPassFailure();
    }

    SymbolTableCollection symbols;
    WalkResult walk = module.walk([&](shard::AllReduceOp op) {
      auto grid =
          symbols.lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
      if (!grid || failed(lowerWholeGridAllReduce(op, grid)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    // What is left (process indices, other collectives): upstream.
    OpPassManager upstream(ModuleOp::getOperationName());
    upstream.addPass(createConvertShardToMPIPass());
    if (failed(runPipeline(upstream, module)))
      return signalPassFailure();

    // The data-parallel marks have served (fp8-quantize); they name the
    // grids about to go.
    module.walk([](FunctionOpInterface func) {
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        func.removeArgAttr(i, fp8::kShardedAttrName);
    });
    for (shard::GridOp grid : grids) {
      if (std::optional<SymbolTable::UseRange> uses =
              SymbolTable::getSymbolUses(grid, module);
          uses && !uses->empty()) {
        InFlightDiagnostic diag =
            uses->begin()->getUser()->emitError("cannot lower to MPI: @")
            << grid.getSymName() << " is still used here";
        diag.attachNote(grid.getLoc()) << "grid defined here";
        return signalPassFailure();
      }
      grid.erase();
    }

    // The ABI the program is compiled for, unless the module names one.
    if (succeeded(dlti::query(module, ArrayRef<StringRef>{"MPI:Implementation"})))
      return;
    SmallVector<DataLayoutEntryInterface> entries;
    if (auto map = module->getAttrOfType<MapAttr>(DLTIDialect::kMapAttrName))
      llvm::append_range(entries, map.getEntries());
    entries.push_back(DataLayoutEntryAttr::get(
        StringAttr::get(&getContext(), "MPI:Implementation"),
        StringAttr::get(&getContext(), mpi)));
    module->setAttr(DLTIDialect::kMapAttrName,
                    MapAttr::get(&getContext(), entries));
  }
};

/// What mpi.allreduce does to memory, which MLIR 22 leaves undeclared (and
/// ownership-based buffer deallocation refuses ops with unknown effects):
/// reads its send buffer, writes its receive buffer.
struct AllReduceMemoryEffects
    : MemoryEffectOpInterface::ExternalModel<AllReduceMemoryEffects,
                                             mpi::AllReduceOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    auto reduce = cast<mpi::AllReduceOp>(op);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &reduce.getSendbufMutable());
    effects.emplace_back(MemoryEffects::Write::get(),
                         &reduce.getRecvbufMutable());
  }
};

struct FP8FixOpenMPISymbolsPass
    : fp8::impl::FP8FixOpenMPISymbolsBase<FP8FixOpenMPISymbolsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto global :
         llvm::make_early_inc_range(module.getOps<LLVM::GlobalOp>())) {
      StringRef name = global.getSymName();
      if (!name.consume_front("ompi_mpi_"))
        continue;
      bool isOp = llvm::StringSwitch<bool>(name)
                      .Cases({"max", "min", "sum", "prod", "land", "band",
                              "lor", "bor", "lxor", "bxor", "maxloc",
                              "minloc", "replace", "no_op"},
                             true)
                      .Default(false);
      if (!isOp)
        continue;
      std::string fixed = ("ompi_mpi_op_" + name).str();
      auto existing = symbols.lookup<LLVM::GlobalOp>(fixed);
      if (failed(SymbolTable::replaceAllSymbolUses(
              global, StringAttr::get(&getContext(), fixed), module)))
        return signalPassFailure();
      if (existing)
        global.erase();
      else
        symbols.setSymbolName(global, fixed);
    }
  }
};
} // namespace

void mlir::fp8::registerMPIMemoryEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, mpi::MPIDialect *) {
    mpi::AllReduceOp::attachInterface<AllReduceMemoryEffects>(*context);
  });
}
