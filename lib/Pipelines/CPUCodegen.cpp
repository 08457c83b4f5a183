//===- CPUCodegen.cpp - fp8-tile-and-vectorize-for-cpu --------------------===//
//
// The CPU path's speed: linalg ops on buffers are tiled for threads, caches
// and registers and vectorized, with upstream transforms only (linalg
// tiling, linalg::vectorize, transfer hoisting, the vector lowerings). The
// pass description in Passes.td gives the schedule and why it keeps every
// FP8 bit.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8PACKCONTRACTIONSFORCPU
#define GEN_PASS_DEF_FP8TILEANDVECTORIZEFORCPU
#include "fp8/Pipelines/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

/// Lanes of the vectors of non-contraction ops (one AVX-512 register of f32).
static constexpr int64_t kVectorLanes = 16;
/// K steps per vector.contract of the register tile: with one, a
/// contraction spelled as linalg.generic vectorizes to an elementwise
/// multiply-add that never becomes a vector.contract (the unit reduction
/// folds away first). The outer-product lowering still walks K in order.
static constexpr int64_t kRegisterK = 8;
/// Contraction blocks M, N, K: a thread's block of the result, and the K
/// panel its operands are walked in (fp8-tile-and-vectorize-for-cpu's
/// default cache-tile; fp8-pack-contractions-for-cpu's decoded panels).
static constexpr int64_t kCacheTile[3] = {128, 256, 256};
/// Rows of M that share one decoded panel of B (fp8-pack-contractions-for-
/// cpu): the panel is decoded once per block of this many rows, which
/// fp8-tile-and-vectorize-for-cpu then walks in cache-tile blocks.
static constexpr int64_t kDecodedPanelRows = 512;
/// Multiply-adds from which a contraction copies a B it reads as it is
/// panel by panel, like a decoded one.
static constexpr int64_t kPanelCopyMinMacs = int64_t(1) << 27;
/// The blocks of scalar ops that walk an operand across its rows.
static constexpr int64_t kLocalityBlock = 32;
/// Iterations below which an op is not worth a parallel loop.
static constexpr int64_t kMinParallelIterations = 1 << 15;

namespace {
/// The loops of a contraction C[b.., m, n] += A * B with one K dimension,
/// the layout of which `linalg::inferContractionDims` found.
struct ContractionLoops {
  /// Batch dimensions and the M and N dimensions other than `m` and `n`:
  /// outer loops.
  SmallVector<unsigned> batch;
  unsigned m, n, k;

  /// Tile sizes per loop (0: not tiled), each no larger than a static loop
  /// range, so that a small GEMM's tiles stay static (and unmasked) rather
  /// than min(tile, rest).
  SmallVector<int64_t> tileSizes(ArrayRef<int64_t> ranges, int64_t batchSize,
                                 int64_t mSize, int64_t nSize,
                                 int64_t kSize) const {
    SmallVector<int64_t> sizes(ranges.size(), 0);
    for (unsigned b : batch)
      sizes[b] = batchSize;
    sizes[m] = mSize;
    sizes[n] = nSize;
    sizes[k] = kSize;
    for (auto [size, range] : llvm::zip(sizes, ranges))
      if (!ShapedType::isDynamic(range) && range > 0 && size > range)
        size = range;
    return sizes;
  }
};
} // namespace

/// The loops of `op` if it is a contraction with one K dimension and a
/// floating-point result, in any layout.
static std::optional<ContractionLoops>
inferContractionLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  if (!isa<FloatType>(getElementTypeOrSelf(op.getDpsInits()[0].getType())))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() ||
      dims->k.size() != 1)
    return std::nullopt;
  // Several M (or N) dimensions -- [b, s, k] x [k, n] with b absent from the
  // weight: the one C holds innermost is the schedule's M (N); the others
  // are outer loops, tiled by one like batch dimensions.
  AffineMap acc = op.getIndexingMapsArray()[2];
  auto innermostOf = [&](ArrayRef<unsigned> candidates) {
    unsigned best = candidates.back();
    std::optional<unsigned> bestPos;
    for (unsigned dim : candidates) {
      std::optional<unsigned> pos =
          acc.getResultPosition(getAffineDimExpr(dim, op.getContext()));
      if (pos && (!bestPos || *pos > *bestPos)) {
        best = dim;
        bestPos = pos;
      }
    }
    return best;
  };
  ContractionLoops loops{
      SmallVector<unsigned>(dims->batch.begin(), dims->batch.end()),
      innermostOf(dims->m), innermostOf(dims->n), dims->k.front()};
  for (unsigned dim : llvm::concat<const unsigned>(dims->m, dims->n))
    if (dim != loops.m && dim != loops.n)
      loops.batch.push_back(dim);
  return loops;
}

/// The input of a contraction that N indexes (B).
static unsigned getRhsIndex(linalg::LinalgOp op,
                            const ContractionLoops &loops) {
  return op.getIndexingMapsArray()[0].isFunctionOfDim(loops.n) ? 0 : 1;
}

/// Whether `map`'s last results are exactly the loop dimensions `dims`.
static bool endsWith(AffineMap map, ArrayRef<unsigned> dims) {
  ArrayRef<AffineExpr> results = map.getResults();
  if (results.size() < dims.size())
    return false;
  for (auto [expr, dim] : llvm::zip(results.take_back(dims.size()), dims))
    if (expr != getAffineDimExpr(dim, map.getContext()))
      return false;
  return true;
}

/// The loops of a contraction in the layout of the register schedule:
/// C[.., m, n] and a B whose rows run along N, so that an accumulator row
/// and a row of B are contiguous vectors (fp8-pack-contractions-for-cpu
/// brings B there). Other layouts stay scalar loops (MLIR 22's outer-product
/// lowering of a transposed accumulator also fails to verify).
static std::optional<ContractionLoops>
getContractionLoops(linalg::LinalgOp op) {
  std::optional<ContractionLoops> loops = inferContractionLoops(op);
  if (!loops)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!endsWith(maps[2], {loops->m, loops->n}) ||
      !endsWith(maps[getRhsIndex(op, *loops)], {loops->n}))
    return std::nullopt;
  return loops;
}

/// Whether every operand walks memory contiguously along the innermost loop
/// (or does not depend on it), so that vectorizing along it gives plain
/// vector loads and stores rather than gathers.
static bool isContiguousAlongInnermostLoop(linalg::LinalgOp op) {
  unsigned innermost = op.getNumLoops() - 1;
  for (AffineMap map : op.getIndexingMapsArray()) {
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(innermost))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (index + 1 != map.getNumResults() || !dim)
        return false;
    }
  }
  return true;
}

/// Whether `value`, in the body of `op`, varies with the iteration: it
/// depends on an input element or on linalg.index.
static bool variesWithIteration(linalg::LinalgOp op, Value value) {
  Block *body = op.getBlock();
  SmallVector<Value> worklist = {value};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(current)) {
      if (argument.getOwner() == body &&
          argument.getArgNumber() < op.getNumDpsInputs())
        return true;
      continue;
    }
    Operation *def = current.getDefiningOp();
    if (!def || def->getBlock() != body || !seen.insert(def).second)
      continue;
    if (isa<linalg::IndexOp>(def))
      return true;
    llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

/// MLIR 22's vectorizer folds a reduction of a loop-invariant value (a count
/// `acc + 1`) once per vector instead of once per lane: such reductions stay
/// scalar. Every value a reduction combines with its accumulator must vary.
static bool hasInvariantReductionOperand(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    Operation *combiner =
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs())
            .getDefiningOp();
    if (!combiner)
      return true;
    for (Value operand : combiner->getOperands())
      if (operand != acc && !variesWithIteration(op, operand))
        return true;
  }
  return false;
}

/// Ops whose vector form does not lower: MLIR 22 vectorizes math.fpowi
/// with a vector exponent, which convert-math-to-llvm turns into an invalid
/// llvm.intr.powi (its exponent must be a scalar).
static bool hasUnvectorizableBody(linalg::LinalgOp op) {
  return op.getBlock()
      ->walk([](Operation *inner) {
        return isa<math::FPowIOp, math::IPowIOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Tiles `op` (on buffers) by `sizes` with loops of `type`, replacing it;
/// the loops, outermost first, go to `loops` when given.
static FailureOr<linalg::LinalgOp>
tile(RewriterBase &rewriter, linalg::LinalgOp op, ArrayRef<int64_t> sizes,
     linalg::LinalgTilingLoopType type,
     SmallVectorImpl<Operation *> *loops = nullptr) {
  if (llvm::all_of(sizes, [](int64_t size) { return size == 0; }))
    return op;
  linalg::LinalgTilingOptions options;
  options.setTileSizes(sizes).setLoopType(type);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, op, options);
  if (failed(tiled))
    return failure();
  rewriter.eraseOp(op);
  if (loops)
    loops->append(tiled->loops.begin(), tiled->loops.end());
  return tiled->op;
}

/// Vectorizes `op` with `vectorSizes` (masked where the op is smaller), or
/// leaves it as it is when the vectorizer declines.
static void vectorize(RewriterBase &rewriter, linalg::LinalgOp op,
                      ArrayRef<int64_t> vectorSizes, bool asContraction) {
  // Fixed-size vectors, said explicitly: with an empty list the contraction
  // path of MLIR 22's vectorizer makes the first dimension scalable.
  SmallVector<bool> scalable(vectorSizes.size(), false);
  if (failed(linalg::vectorizeOpPrecondition(op, vectorSizes, scalable)))
    return;
  // A memref of i1 holds a byte per element, an LLVM vector of i1 a bit:
  // the vector loads and stores would read and write packed bits.
  if (llvm::any_of(op->getOperandTypes(), [](Type type) {
        auto shaped = dyn_cast<ShapedType>(type);
        return shaped && shaped.getElementType().isInteger(1);
      }))
    return;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
      rewriter, op, vectorSizes, scalable,
      /*vectorizeNDExtract=*/false, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/asContraction);
  if (failed(result))
    return;
  if (result->replacements.empty())
    rewriter.eraseOp(op);
  else
    rewriter.replaceOp(op, result->replacements);
}

static int64_t getStaticIterations(linalg::LinalgOp op) {
  int64_t product = 1;
  for (int64_t size : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return std::numeric_limits<int64_t>::max();
    if (size != 0 && product > std::numeric_limits<int64_t>::max() / size)
      return std::numeric_limits<int64_t>::max();
    product *= size;
  }
  return product;
}

namespace {
struct FP8PackContractionsForCPUPass
    : fp8::impl::FP8PackContractionsForCPUBase<FP8PackContractionsForCPUPass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // decodeInPanels tiles through TilingInterface.
    linalg::registerTilingInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && inferContractionLoops(op))
        contractions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : contractions)
      if (linalg::GenericOp pack = packRhs(rewriter, op))
        fuseProducers(rewriter, pack);

    // Packing replaced some of the contractions: collected again.
    contractions.clear();
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && getContractionLoops(op))
        contractions.push_back(op);
    });
    for (linalg::LinalgOp op : contractions) {
      // Contractions inside loops (fp8.attention's tiles) are a thread's
      // work already.
      if (op->getParentOfType<LoopLikeOpInterface>())
        continue;
      if (!decodeInPanels(rewriter, op) && isLarge(op) &&
          succeeded(copyRhs(rewriter, op)))
        (void)decodeInPanels(rewriter, op);
    }
    RewritePatternSet patterns(&getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }

  /// Whether `op` widens its operands element by element without moving
  /// them (the FP8 decode: i8 codes in, f32 out): computing it per tile
  /// reads the narrow operand instead of a wide copy.
  static bool isWideningElementwise(linalg::GenericOp op) {
    if (op.getNumDpsInits() != 1 || op.getNumDpsInputs() == 0 ||
        op.getNumReductionLoops() != 0 ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return false;
    unsigned resultBits =
        getElementTypeOrSelf(op->getResult(0).getType()).getIntOrFloatBitWidth();
    return llvm::all_of(op.getDpsInputs(), [&](Value input) {
      Type element = getElementTypeOrSelf(input.getType());
      return element.isIntOrFloat() &&
             element.getIntOrFloatBitWidth() < resultBits;
    });
  }

  /// A contraction whose B is widened element by element (the FP8 decode)
  /// computes B panel by panel, GotoBLAS-style: an scf.forall over M x N
  /// blocks (the threads), an scf.for over K panels in order, and in each
  /// panel the decode of the K x N panel of B into a block-sized f32 tile
  /// that stays in cache, then the contraction of that panel. B is never
  /// written whole in f32. Each output still accumulates its products in
  /// K order, one rounding per step: the values are those of the
  /// contraction of the whole decoded B.
  /// Whether `op` has static sizes with more than one cache block in M x N
  /// and K panels, where copying B panel by panel pays.
  static bool isLarge(linalg::LinalgOp op) {
    ContractionLoops loops = *getContractionLoops(op);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return false;
    return ranges[loops.m] * ranges[loops.n] * ranges[loops.k] >=
           kPanelCopyMinMacs;
  }

  /// Reads B of `op` through an element-by-element copy (to be computed per
  /// panel by decodeInPanels: a contiguous panel, GotoBLAS's packed B).
  static LogicalResult copyRhs(RewriterBase &rewriter, linalg::LinalgOp op) {
    ContractionLoops loops = *getContractionLoops(op);
    OpOperand &rhs = op->getOpOperand(getRhsIndex(op, loops));
    auto type = cast<RankedTensorType>(rhs.get().getType());
    if (type.getRank() != 2 || rhs.get().getDefiningOp<linalg::LinalgOp>())
      return failure();
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    AffineMap identity = rewriter.getMultiDimIdentityMap(2);
    auto copy = linalg::GenericOp::create(
        rewriter, loc, type, rhs.get(), empty,
        SmallVector<AffineMap>{identity, identity},
        SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
        [](OpBuilder &builder, Location l, ValueRange args) {
          linalg::YieldOp::create(builder, l, args[0]);
        });
    rewriter.modifyOpInPlace(op, [&] { rhs.assign(copy.getResult(0)); });
    return success();
  }

  static bool decodeInPanels(RewriterBase &rewriter, linalg::LinalgOp op) {
    ContractionLoops loops = *getContractionLoops(op);
    Value rhs = op.getDpsInputs()[getRhsIndex(op, loops)];
    auto decode = rhs.getDefiningOp<linalg::GenericOp>();
    if (!decode || op->getNumResults() != 1 ||
        !(isWideningElementwise(decode) ||
          (decode.getNumDpsInputs() == 1 &&
           linalg::isElementwise(decode) &&
           llvm::all_of(decode.getIndexingMapsArray(),
                        [](AffineMap map) { return map.isIdentity(); }) &&
           decode.getBlock()->getTerminator()->getOperand(0) ==
               decode.getBlock()->getArgument(0))))
      return false;
    readSizesFromInits(rewriter, decode);
    if (!rhs.hasOneUse())
      return false;
    // A decoded A is decoded per panel too: a fresh f32 copy of the whole
    // operand per call costs more (its page faults) than decoding each
    // block's rows once per N block.
    Value lhs = op.getDpsInputs()[1 - getRhsIndex(op, loops)];
    auto lhsDecode = lhs.getDefiningOp<linalg::GenericOp>();
    if (lhsDecode && isWideningElementwise(lhsDecode))
      readSizesFromInits(rewriter, lhsDecode);
    if (lhsDecode && (!isWideningElementwise(lhsDecode) || !lhs.hasOneUse()))
      lhsDecode = nullptr;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    MLIRContext *context = op.getContext();
    auto sizesFor = [&](int64_t batch, int64_t m, int64_t n, int64_t k) {
      return getAsIndexOpFoldResult(context,
                                    loops.tileSizes(ranges, batch, m, n, k));
    };

    // The blocks, with the decode and the accumulator's fill computed per
    // block (the K loop below moves the decode further in).
    using ControlFnResult = scf::SCFTileAndFuseOptions::ControlFnResult;
    scf::SCFTilingOptions blocks;
    blocks.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
        .setTileSizes(sizesFor(1, kDecodedPanelRows, kCacheTile[1], 0));
    scf::SCFTileAndFuseOptions blockOptions;
    blockOptions.setTilingOptions(blocks).setFusionControlFn(
        [&](tensor::ExtractSliceOp, OpResult producer,
            bool isDestination) -> std::optional<ControlFnResult> {
          Operation *owner = producer.getOwner();
          if ((!isDestination && (owner == decode.getOperation() ||
                                  owner == lhsDecode.getOperation())) ||
              (isDestination && isa<linalg::FillOp>(owner)))
            return ControlFnResult{};
          return std::nullopt;
        });
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTileAndFuseResult> blocked =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), blockOptions);
    if (failed(blocked))
      return false;
    Value result = blocked->replacements.lookup(op->getResult(0));
    rewriter.replaceOp(op, result);
    eraseIfDead(rewriter, blocked->fusedProducers);
    writeEpilogueInPlace(rewriter, result);

    // The K panels inside a block, each decoding its panel of B.
    auto blockOp = cast<linalg::LinalgOp>(blocked->tiledAndFusedOps.front());
    Value blockRhs = blockOp.getDpsInputs()[getRhsIndex(blockOp, loops)];
    Operation *blockDecode = blockRhs.getDefiningOp();
    Operation *blockLhsDecode =
        lhsDecode ? blockOp.getDpsInputs()[1 - getRhsIndex(blockOp, loops)]
                        .getDefiningOp()
                  : nullptr;
    scf::SCFTilingOptions panels;
    panels.setLoopType(scf::SCFTilingOptions::LoopType::ForOp)
        .setTileSizes(sizesFor(0, 0, 0, kCacheTile[2]));
    scf::SCFTileAndFuseOptions panelOptions;
    panelOptions.setTilingOptions(panels).setFusionControlFn(
        [&](tensor::ExtractSliceOp, OpResult producer,
            bool isDestination) -> std::optional<ControlFnResult> {
          Operation *owner = producer.getOwner();
          if (!isDestination &&
              (owner == blockDecode || (owner && owner == blockLhsDecode)))
            return ControlFnResult{};
          return std::nullopt;
        });
    rewriter.setInsertionPoint(blockOp);
    FailureOr<scf::SCFTileAndFuseResult> paneled =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(blockOp.getOperation()),
            panelOptions);
    if (failed(paneled))
      return true;
    rewriter.replaceOp(blockOp,
                       paneled->replacements.lookup(blockOp->getResult(0)));
    eraseIfDead(rewriter, paneled->fusedProducers);
    return true;
  }

  /// An element-wise op that alone reads `result` (fp8.scaled_matmul's
  /// scaling) writes into its buffer rather than a fresh one: a GEMM's
  /// result is not allocated twice, which costs page faults per call.
  static void writeEpilogueInPlace(RewriterBase &rewriter, Value result) {
    if (!result.hasOneUse())
      return;
    auto epilogue = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
    if (!epilogue || !linalg::isElementwise(epilogue) ||
        epilogue.getNumDpsInits() != 1 ||
        epilogue->getResult(0).getType() != result.getType() ||
        !epilogue.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
        !llvm::all_of(epilogue.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return;
    OpOperand *init = epilogue.getDpsInitOperand(0);
    if (!epilogue.getMatchingBlockArgument(init).use_empty())
      return;
    rewriter.modifyOpInPlace(epilogue, [&] { init->assign(result); });
  }

  /// The dynamic sizes of `op`'s results (tensor.dim, which tiling adds
  /// for its loop bounds) read from its inits, which have the same sizes:
  /// a decode used for nothing else is dead once tiled.
  static void readSizesFromInits(RewriterBase &rewriter,
                                 DestinationStyleOpInterface op) {
    for (OpResult result : op->getResults())
      for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
        if (auto dim = dyn_cast<tensor::DimOp>(user))
          rewriter.modifyOpInPlace(dim, [&] {
            dim.getSourceMutable().assign(op.getTiedOpOperand(result)->get());
          });
  }

  /// Erases the producers that tiling fused and left without users.
  static void eraseIfDead(RewriterBase &rewriter,
                          const llvm::SetVector<Operation *> &ops) {
    for (Operation *op : ops) {
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
        readSizesFromInits(rewriter, dps);
      if (op->use_empty())
        rewriter.eraseOp(op);
    }
  }

  /// Computes the element-wise producers of `pack`'s operand (an FP8
  /// decode, and the quantization before it) inside the copy, one after
  /// the other while one has no other user: the operand is written once.
  /// Only producers of a whole operand: one read through a broadcast (a
  /// scale computed from an amax) would be recomputed for every element.
  static void fuseProducers(RewriterBase &rewriter, linalg::GenericOp pack) {
    while (true) {
      OpOperand *fusable = nullptr;
      for (OpOperand *input : pack.getDpsInputOperands()) {
        Operation *producer = input->get().getDefiningOp();
        if (producer && producer->hasOneUse() &&
            pack.getMatchingIndexingMap(input).isPermutation() &&
            linalg::areElementwiseOpsFusable(input)) {
          fusable = input;
          break;
        }
      }
      if (!fusable)
        return;
      Operation *producer = fusable->get().getDefiningOp();
      rewriter.setInsertionPoint(pack);
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, fusable);
      if (failed(fused))
        return;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesExcept(original, replacement, fused->fusedOp);
      rewriter.eraseOp(pack);
      rewriter.eraseOp(producer);
      pack = cast<linalg::GenericOp>(fused->fusedOp);
    }
  }

  /// Copies B of `op` into [.., K, N] when K is its innermost dimension;
  /// returns the copy.
  linalg::GenericOp packRhs(RewriterBase &rewriter, linalg::LinalgOp op) {
    ContractionLoops loops = *inferContractionLoops(op);
    unsigned rhs = getRhsIndex(op, loops);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    AffineMap map = maps[rhs];
    MLIRContext *context = &getContext();
    std::optional<unsigned> nPos =
        map.getResultPosition(getAffineDimExpr(loops.n, context));
    std::optional<unsigned> kPos =
        map.getResultPosition(getAffineDimExpr(loops.k, context));
    if (!nPos || !kPos || *kPos + 1 != map.getNumResults())
      return nullptr;

    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value b = op.getDpsInputs()[rhs];
    auto type = cast<RankedTensorType>(b.getType());
    unsigned rank = type.getRank();
    // Dimension i of the copy is dimension permutation[i] of B.
    SmallVector<unsigned> permutation = llvm::to_vector(llvm::seq(0u, rank));
    std::swap(permutation[*nPos], permutation[*kPos]);
    SmallVector<OpFoldResult> sizes;
    SmallVector<AffineExpr> source;
    for (unsigned i = 0; i < rank; ++i) {
      sizes.push_back(tensor::getMixedSize(rewriter, loc, b, permutation[i]));
      source.push_back(getAffineDimExpr(permutation[i], context));
    }
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    auto pack = linalg::GenericOp::create(
        rewriter, loc, empty.getType(), b, empty,
        SmallVector<AffineMap>{AffineMap::get(rank, 0, source, context),
                               rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &builder, Location l, ValueRange args) {
          linalg::YieldOp::create(builder, l, args[0]);
        });

    auto generic = dyn_cast<linalg::GenericOp>(*op);
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized)) {
        rewriter.eraseOp(pack);
        return nullptr;
      }
      generic = *generalized;
    }
    SmallVector<AffineExpr> results(map.getResults());
    std::swap(results[*nPos], results[*kPos]);
    maps[rhs] = AffineMap::get(map.getNumDims(), 0, results, context);
    rewriter.modifyOpInPlace(generic, [&] {
      generic->setOperand(rhs, pack.getResult(0));
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return pack;
  }
};

/// A vector.contract of narrower float operands into a float accumulator
/// (bf16 operands into f32: fp8-widen-accumulation's GEMMs, vectorized as
/// named ops) as the contraction of the extended operands: MLIR 22's
/// contraction lowerings leave a mixed-type one with batch dimensions.
/// Extending is exact; each product and sum is the f32 one the body
/// defines.
struct ExtendContractOperands : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<FloatType>(getElementTypeOrSelf(op.getAccType()));
    if (!accType)
      return failure();
    auto extend = [&](Value operand) -> Value {
      auto type = cast<VectorType>(operand.getType());
      auto element = dyn_cast<FloatType>(type.getElementType());
      if (!element || element == accType ||
          element.getWidth() >= accType.getWidth())
        return nullptr;
      return arith::ExtFOp::create(rewriter, op.getLoc(),
                                   type.clone(accType), operand);
    };
    Value lhs = extend(op.getLhs()), rhs = extend(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (lhs)
        op.getLhsMutable().assign(lhs);
      if (rhs)
        op.getRhsMutable().assign(rhs);
    });
    return success();
  }
};

/// The pass's rewrites change ops inside loop nests, whose regions the
/// canonicalizations after it simplify: simplifying a whole model's function
/// after every sweep (dead blocks, block merging) here took a third of the
/// pass's time.
GreedyRewriteConfig localRewrites() {
  return GreedyRewriteConfig().setRegionSimplificationLevel(
      GreedySimplifyRegionLevel::Disabled);
}

struct FP8TileAndVectorizeForCPUPass
    : fp8::impl::FP8TileAndVectorizeForCPUBase<FP8TileAndVectorizeForCPUPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<int64_t, 3> cache =
        cacheTile.empty()
            ? SmallVector<int64_t, 3>{128, 256, 256}
            : SmallVector<int64_t, 3>(cacheTile.begin(), cacheTile.end());
    SmallVector<int64_t, 2> registers =
        registerTile.empty()
            ? SmallVector<int64_t, 2>{8, 32}
            : SmallVector<int64_t, 2>(registerTile.begin(), registerTile.end());
    if (cache.size() != 3 || registers.size() != 2 ||
        llvm::any_of(cache, [](int64_t s) { return s <= 0; }) ||
        llvm::any_of(registers, [](int64_t s) { return s <= 0; })) {
      func.emitError("fp8-tile-and-vectorize-for-cpu: cache-tile takes three "
                     "positive sizes (M,N,K) and register-tile two (M,N)");
      return signalPassFailure();
    }

    IRRewriter rewriter(&getContext());
    // Loops built as scf.forall on tensors (fp8.attention's tiles) run as
    // threads like the tiled ops: scf.parallel, for convert-scf-to-openmp.
    if (threads) {
      SmallVector<scf::ForallOp> foralls;
      func.walk([&](scf::ForallOp forall) {
        if (forall.getNumResults() == 0)
          foralls.push_back(forall);
      });
      for (scf::ForallOp forall : foralls) {
        rewriter.setInsertionPoint(forall);
        if (failed(scf::forallToParallelLoop(rewriter, forall))) {
          forall.emitOpError("could not become an scf.parallel");
          return signalPassFailure();
        }
      }
    }

    hoistLoopAllocations(func);

    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 0)
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      if (std::optional<ContractionLoops> loops = getContractionLoops(op))
        tileContraction(rewriter, op, *loops, cache, registers);
      else if (isContiguousAlongInnermostLoop(op) &&
               !hasInvariantReductionOperand(op) && !hasUnvectorizableBody(op))
        tileElementwise(rewriter, op);
      else
        tileForLocality(rewriter, op);
    }

    // A contraction written as linalg.generic vectorizes to a reduction of
    // products of broadcast reads; it becomes the vector.contract a named
    // one gives. Operands the body extends (bf16 into an f32 accumulator)
    // are extended before they are broadcast, so that the products are of
    // broadcasts again.
    {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorReductionToContractPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateSinkVectorOpsPatterns(patterns);
      patterns.add<ExtendContractOperands>(&getContext());
      (void)applyPatternsGreedily(func, std::move(patterns), localRewrites());
    }
    // Masked transfers become transfers with a mask operand first: the
    // rewrites below would turn the op inside a vector.mask into several.
    {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
      (void)applyPatternsGreedily(func, std::move(patterns), localRewrites());
    }
    // The accumulators stay in registers across the K loop. The hoisting
    // declines transfers on views (it cannot rule out aliasing), so the
    // subviews of the tiles are folded into the transfers' indices, and
    // the indices moved out of the loops and shared, first.
    {
      RewritePatternSet patterns(&getContext());
      memref::populateFoldMemRefAliasOpPatterns(patterns);
      (void)applyPatternsGreedily(func, std::move(patterns), localRewrites());
    }
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    // A read and a write of one accumulator must name the same index values.
    {
      DominanceInfo dominance(func);
      eliminateCommonSubExpressions(rewriter, dominance, func);
    }
    hoistTransfersPerNest(func);
    lowerVectors(func);
  }

  /// A buffer of static size allocated and freed in each iteration of an
  /// scf.for (a panel of B, fp8-pack-contractions-for-cpu's) is allocated
  /// once around the loop: a fresh allocation is uninitialized either way,
  /// and one of a panel's size is an mmap with its page faults, per
  /// iteration. Only buffers that linalg ops alone read and write (nothing
  /// keeps a reference past the iteration).
  static void hoistLoopAllocations(func::FuncOp func) {
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      auto loop = dyn_cast<scf::ForOp>(alloc->getParentOp());
      if (!loop || !alloc.getType().hasStaticShape() ||
          !alloc.getDynamicSizes().empty() || !alloc.getSymbolOperands().empty())
        continue;
      memref::DeallocOp dealloc;
      bool onlyLinalg = true;
      for (Operation *user : alloc->getUsers()) {
        if (auto free = dyn_cast<memref::DeallocOp>(user)) {
          if (dealloc || free->getBlock() != alloc->getBlock())
            onlyLinalg = false;
          dealloc = free;
        } else if (!isa<linalg::LinalgOp>(user)) {
          onlyLinalg = false;
        }
      }
      if (!dealloc || !onlyLinalg)
        continue;
      alloc->moveBefore(loop);
      dealloc->moveAfter(loop);
    }
  }

  /// Whether `op` gets threads of its own: not inside a loop whose
  /// iterations are threads already (fp8.attention's tiles), which would
  /// nest OpenMP regions.
  bool threadsFor(Operation *op) const {
    return threads && !op->getParentOfType<scf::ForallOp>() &&
           !op->getParentOfType<scf::ParallelOp>();
  }

  void tileContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                       const ContractionLoops &loops, ArrayRef<int64_t> cache,
                       ArrayRef<int64_t> registers) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto sizesFor = [&](int64_t batch, int64_t m, int64_t n, int64_t k) {
      return loops.tileSizes(ranges, batch, m, n, k);
    };
    using linalg::LinalgTilingLoopType;
    FailureOr<linalg::LinalgOp> block =
        tile(rewriter, op, sizesFor(1, cache[0], cache[1], 0),
             threadsFor(op) ? LinalgTilingLoopType::ParallelLoops
                     : LinalgTilingLoopType::Loops);
    if (failed(block))
      return;
    FailureOr<linalg::LinalgOp> panel =
        tile(rewriter, *block, sizesFor(0, 0, 0, cache[2]),
             LinalgTilingLoopType::Loops);
    if (failed(panel))
      return;
    // Loops in the op's order: with the usual (batch, m, n, k) the one over
    // K is innermost, around the accumulator tile.
    SmallVector<int64_t> registerSizes =
        sizesFor(1, registers[0], registers[1], kRegisterK);
    SmallVector<Operation *> loopOps;
    FailureOr<linalg::LinalgOp> micro = tile(
        rewriter, *panel, registerSizes, LinalgTilingLoopType::Loops, &loopOps);
    if (failed(micro))
      return;
    if (loopOps.empty()) {
      vectorize(rewriter, *micro, registerSizes, /*asContraction=*/true);
      return;
    }
    // Register tiles are min(tile, rest) where a size is dynamic or does
    // not divide: peeled, the main loops get full tiles of static size and
    // each remainder loop one partial tile. A tile whose sizes are all
    // static (every main tile; remainders of static sizes) vectorizes
    // without masks; one of dynamic size stays scalar: MLIR 22 lowers a
    // masked vector.contract element by element (a dynamically shaped
    // one-layer Llama grew 14x in LLVM IR that way).
    StringAttr marker = rewriter.getStringAttr("fp8.register_tile");
    (*micro)->setAttr(marker, rewriter.getUnitAttr());
    Block *nest = loopOps.front()->getBlock();
    SmallVector<scf::ForOp> forLoops;
    for (Operation *loop : loopOps)
      if (auto forOp = dyn_cast<scf::ForOp>(loop))
        forLoops.push_back(forOp);
    linalg::peelLoops(rewriter, forLoops);
    // Peeling leaves constant sizes in the tiles' subviews: folded into
    // their types (and the casts into the tile op), the tiles' shapes
    // become static.
    SmallVector<Operation *> views;
    for (Operation &op : *nest)
      op.walk([&](Operation *inner) {
        if (isa<scf::ForOp, memref::SubViewOp, affine::AffineMinOp,
                affine::AffineApplyOp>(inner) ||
            inner->hasAttr(marker))
          views.push_back(inner);
      });
    {
      RewritePatternSet patterns(&getContext());
      // A remainder loop of static bounds runs once: inlined, its tile's
      // size folds too.
      scf::ForOp::getCanonicalizationPatterns(patterns, &getContext());
      affine::AffineMinOp::getCanonicalizationPatterns(patterns, &getContext());
      affine::AffineApplyOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
      memref::SubViewOp::getCanonicalizationPatterns(patterns, &getContext());
      memref::CastOp::getCanonicalizationPatterns(patterns, &getContext());
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      (void)applyOpPatternsGreedily(views, std::move(patterns), config);
    }
    SmallVector<linalg::LinalgOp> tiles;
    for (Operation &op : *nest)
      op.walk([&](linalg::LinalgOp tileOp) {
        if (tileOp->hasAttr(marker))
          tiles.push_back(tileOp);
      });
    for (linalg::LinalgOp tileOp : tiles) {
      tileOp->removeAttr(marker);
      SmallVector<int64_t> sizes = tileOp.getStaticLoopRanges();
      if (llvm::none_of(sizes, ShapedType::isDynamic))
        vectorize(rewriter, tileOp, sizes, /*asContraction=*/true);
    }
  }

  void tileElementwise(RewriterBase &rewriter, linalg::LinalgOp op) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    using linalg::LinalgTilingLoopType;
    linalg::LinalgOp current = op;
    if (threadsFor(op) && getStaticIterations(op) >= kMinParallelIterations &&
        iterators.front() == utils::IteratorType::parallel) {
      // The leading parallel loops (all but the innermost) in parallel,
      // one row per iteration; a lone loop in blocks of vectors.
      SmallVector<int64_t> sizes(numLoops, 0);
      if (numLoops == 1) {
        sizes[0] = 256 * kVectorLanes;
      } else {
        for (unsigned i = 0;
             i + 1 < numLoops && iterators[i] == utils::IteratorType::parallel;
             ++i)
          sizes[i] = 1;
      }
      FailureOr<linalg::LinalgOp> rows =
          tile(rewriter, current, sizes, LinalgTilingLoopType::ParallelLoops);
      if (failed(rows))
        return;
      current = *rows;
    }
    SmallVector<int64_t> sizes(numLoops, 1);
    sizes.back() = kVectorLanes;
    FailureOr<linalg::LinalgOp> vectors =
        tile(rewriter, current, sizes, LinalgTilingLoopType::Loops);
    if (failed(vectors))
      return;
    vectorize(rewriter, *vectors, sizes, /*asContraction=*/false);
  }

  /// Ops that stay scalar because an operand is walked across its rows (a
  /// transposing copy, such as fp8-pack-contractions-for-cpu's): square
  /// blocks of the last two loops, so that the rows a block reads and
  /// writes stay in cache, in parallel when large.
  void tileForLocality(RewriterBase &rewriter, linalg::LinalgOp op) {
    unsigned numLoops = op.getNumLoops();
    if (numLoops < 2 || op.getNumReductionLoops() != 0)
      return;
    SmallVector<int64_t> sizes(numLoops, 1);
    sizes[numLoops - 2] = sizes[numLoops - 1] = kLocalityBlock;
    bool parallel =
        threadsFor(op) && getStaticIterations(op) >= kMinParallelIterations;
    (void)tile(rewriter, op, sizes,
               parallel ? linalg::LinalgTilingLoopType::ParallelLoops
                        : linalg::LinalgTilingLoopType::Loops);
  }

  /// Upstream's hoisting of loop-invariant transfer pairs, one outermost
  /// loop nest at a time: it walks its root to a fixpoint, checking each
  /// transfer against the others, which on one function of a thousand
  /// nests (a whole 32-layer Llama) took 37 s of the CPU lowering's 60.
  /// Nothing is hoisted across nests. The root is a scf.execute_region
  /// around the nest for the duration, not the nest's loop: hoisting out of
  /// that loop replaces it.
  static void hoistTransfersPerNest(func::FuncOp func) {
    SmallVector<Operation *> nests;
    func.walk<WalkOrder::PreOrder>([&](LoopLikeOpInterface loop) {
      nests.push_back(loop);
      return WalkResult::skip();
    });
    OpBuilder builder(func.getContext());
    for (Operation *nest : nests) {
      builder.setInsertionPoint(nest);
      auto wrapper = scf::ExecuteRegionOp::create(builder, nest->getLoc(),
                                                  nest->getResultTypes());
      Block *body = builder.createBlock(&wrapper.getRegion());
      nest->moveBefore(body, body->end());
      builder.setInsertionPointToEnd(body);
      auto yield =
          scf::YieldOp::create(builder, nest->getLoc(), nest->getResults());
      for (auto [inner, outer] :
           llvm::zip(nest->getResults(), wrapper.getResults()))
        inner.replaceAllUsesExcept(outer, yield);

      linalg::hoistRedundantVectorTransfers(wrapper);

      // Back in place: the yielded values for the wrapper's results, the
      // body's ops before it.
      yield = cast<scf::YieldOp>(body->getTerminator());
      wrapper->replaceAllUsesWith(yield.getOperands());
      yield.erase();
      wrapper->getBlock()->getOperations().splice(
          Block::iterator(wrapper), body->getOperations());
      wrapper.erase();
    }
  }

  /// The vector ops down to what convert-vector-to-llvm takes: contractions
  /// as outer products (one FMA per K step, in K order), reductions as
  /// ordered vector.reduction, transfers as 1-D loads and stores.
  void lowerVectors(func::FuncOp func) {
    MLIRContext *context = &getContext();
    auto apply = [&](auto populate) {
      RewritePatternSet patterns(context);
      populate(patterns);
      // Rewriting to a fixpoint is not required for correctness: whatever
      // is left, convert-vector-to-llvm lowers.
      (void)applyPatternsGreedily(func, std::move(patterns), localRewrites());
    };
    apply([](RewritePatternSet &patterns) {
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
    });
    apply([](RewritePatternSet &patterns) {
      populateVectorToSCFConversionPatterns(
          patterns,
          VectorTransferToSCFOptions().enableFullUnroll().setTargetRank(1));
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
    });
    apply([](RewritePatternSet &patterns) {
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::EltWise);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
    });
  }
};
} // namespace
