//===- Quantize.cpp - Rewrite GEMMs to scaled FP8 GEMMs -------------------===//
//
// fp8-quantize: per FP8 GEMM (GemmAnalysis), quantize each operand per the
// recipe (delayed scaling with explicit state, or current scaling) and
// replace the GEMM with fp8.scaled_matmul. Everything else is left as it was.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/Analysis/RankVariance.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Recipes.h"
#include "QuantizeAttention.h"
#include "fp8/Dialect/FP8/Transforms/Report.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8QUANTIZE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// A quantized tensor: its FP8 value and the scale_inv to dequantize it
/// (one f32, or one per block of `block`).
struct Quantized {
  Value value;
  Value scaleInv;
  DenseI64ArrayAttr block = nullptr;
};

/// Where delayed scaling keeps its state: loads give the state at the start
/// of the step, stores take the state for the next one.
class StateStorage {
public:
  virtual ~StateStorage() = default;
  /// Errors are reported on `user`, the GEMM that needed the state.
  virtual FailureOr<Value> load(OpBuilder &builder, Location loc,
                                StringRef name, RankedTensorType type,
                                Attribute init, Operation *user) = 0;
  /// Errors are reported on `user`, the GEMM that needed the state.
  virtual LogicalResult store(OpBuilder &builder, Location loc, StringRef name,
                              Value value, Operation *user) = 0;
  /// Completes what loads and stores started.
  virtual void finalize() {}
};

/// Public mutable ml_program globals at the top of the module that holds the
/// GEMM (a nested module keeps its own state).
class GlobalStateStorage : public StateStorage {
public:
  FailureOr<Value> load(OpBuilder &b, Location loc, StringRef name,
                        RankedTensorType type, Attribute init,
                        Operation *user) override {
    Scope &scope = getScope(user);
    // The names are a contract (fp8-run and users read the state by name):
    // never rename, refuse a clash.
    if (Operation *existing = scope.symbols.lookup(name)) {
      InFlightDiagnostic diag =
          user->emitError("cannot create the FP8 scaling state @")
          << name << ": the module already has a symbol of that name";
      diag.attachNote(existing->getLoc()) << "existing symbol here";
      return failure();
    }
    auto global = ml_program::GlobalOp::create(
        scope.builder, loc, name, type, /*is_mutable=*/true, init,
        /*sym_visibility=*/StringAttr());
    scope.symbols.insert(global, scope.builder.getInsertionPoint());
    assert(global.getSymName() == name && "state global renamed");
    scope.builder.setInsertionPointAfter(global);
    return Value(ml_program::GlobalLoadOp::create(
        b, loc, type, FlatSymbolRefAttr::get(global.getSymNameAttr())));
  }

  LogicalResult store(OpBuilder &b, Location loc, StringRef name, Value value,
                      Operation *user) override {
    ml_program::GlobalStoreOp::create(
        b, loc, FlatSymbolRefAttr::get(b.getContext(), name), value);
    return success();
  }

private:
  struct Scope {
    explicit Scope(ModuleOp module)
        : symbols(module), builder(module.getBodyRegion()) {}
    SymbolTable symbols;
    /// Globals are created in order, after the previous ones.
    OpBuilder builder;
  };

  Scope &getScope(Operation *user) {
    auto module = user->getParentOfType<ModuleOp>();
    std::unique_ptr<Scope> &scope = scopes[module];
    if (!scope)
      scope = std::make_unique<Scope>(module);
    return *scope;
  }

  DenseMap<Operation *, std::unique_ptr<Scope>> scopes;
};

/// Extra function arguments (the state in) and results (the state out), both
/// named by an `fp8.state` attribute.
class ArgumentStateStorage : public StateStorage {
public:
  FailureOr<Value> load(OpBuilder &b, Location loc, StringRef name,
                        RankedTensorType type, Attribute init,
                        Operation *) override {
    Operation *parent = b.getInsertionBlock()->getParentOp();
    auto func = dyn_cast<func::FuncOp>(parent);
    if (!func)
      func = parent->getParentOfType<func::FuncOp>();
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, stateAttr(b, name), loc);
    return func.getArgument(index);
  }

  LogicalResult store(OpBuilder &b, Location loc, StringRef name, Value value,
                      Operation *user) override {
    Block *block = b.getInsertionBlock();
    auto func = dyn_cast<func::FuncOp>(block->getParentOp());
    if (!func || !func.getBody().hasOneBlock())
      return user->emitError("state=arguments needs the quantized tensor in "
                            "the body of a single-block func.func (it is "
                            "returned with the function's results); use "
                            "state=globals");
    pending[func].push_back({name.str(), value});
    return success();
  }

  void finalize() override {
    for (auto &[func, outputs] : pending) {
      auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
      OpBuilder b(ret);
      for (auto &[name, value] : outputs) {
        unsigned index = func.getNumResults();
        (void)func.insertResult(index, value.getType(), stateAttr(b, name));
        ret.getOperandsMutable().append(value);
      }
    }
  }

private:
  static DictionaryAttr stateAttr(OpBuilder &b, StringRef name) {
    return b.getDictionaryAttr(
        b.getNamedAttr("fp8.state", b.getStringAttr(name)));
  }

  llvm::MapVector<func::FuncOp, SmallVector<std::pair<std::string, Value>>>
      pending;
};

/// TE's delayed-scaling update of one tensor's state from the step's amax.
struct DelayedUpdate {
  Value history, amax, scale;
  FloatType fp8Type;
  RecipeAttr recipe;
  std::string historyName, scaleName;
  /// The GEMM that needed the state, for errors.
  Operation *user;
};

/// Emits the quantization of GEMM operands for one module, sharing the casts
/// of tensors that feed several GEMMs. Each GEMM is quantized under its own
/// recipe if it has one, else under the module's.
class OperandQuantizer {
public:
  OperandQuantizer(ModuleOp module, RecipeAttr moduleRecipe,
                   StateStorage &state, OpBuilder::Listener *listener)
      : module(module), moduleRecipe(moduleRecipe), state(state),
        listener(listener) {}

  /// Quantizes `operand` (`original`: the operand as the analysis traced
  /// it, before earlier rewrites).
  FailureOr<Quantized> quantize(const GemmInfo &gemm,
                                const GemmOperand &operand, Value original,
                                StringRef side);

  /// Analyzes, before anything is rewritten, which values differ between
  /// data-parallel ranks in the functions of the FP8 GEMMs.
  LogicalResult analyzeRankVariance(ArrayRef<GemmInfo> gemms);

  /// Data parallelism: each function's deferred delayed-scaling updates,
  /// after one all-reduce(MAX) of all their amaxes at the end of the body.
  LogicalResult finishDeferredUpdates();

  /// The value of fp8.attention `op` in E4M3 with one delayed scale (the
  /// recipe's history, algorithm and margin, whatever its scaling: a scale
  /// from earlier steps lets no token change another's output), state
  /// `fp8.<function>.attention<i>.value`; its scale_inv.
  FailureOr<std::pair<Value, Value>>
  quantizeAttentionValue(OpBuilder &builder, AttentionOp op);

private:
  /// The function's data-parallel analysis, computed once.
  FailureOr<const RankVariance *> getRankVariance(Operation *op);
  /// `amax` (an f32 or a tensor of f32) reduced with MAX over the function's
  /// grid.
  Value reduceOverGrid(OpBuilder &builder, Location loc, Value amax,
                       const RankVariance &variance);
  LogicalResult emitDelayedUpdate(OpBuilder &builder, Location loc,
                                  const DelayedUpdate &update);

  Quantized quantizeWithCurrentScale(OpBuilder &builder, Location loc,
                                     Value value, FloatType fp8Type,
                                     RecipeAttr recipe,
                                     const RankVariance *reduceOver);
  Quantized quantizeWithBlockScales(OpBuilder &builder, Location loc,
                                    Value value, FloatType fp8Type,
                                    DenseI64ArrayAttr block, RecipeAttr recipe,
                                    const RankVariance *reduceOver);
  FailureOr<bool> blocksSpanRanks(const GemmInfo &gemm, Value original,
                                  StringRef side, RankedTensorType type,
                                  ArrayRef<int64_t> block, RecipeAttr recipe,
                                  const RankVariance &variance);
  DenseI64ArrayAttr getBlock(const GemmInfo &gemm, const GemmOperand &operand,
                             bool isLhs, RecipeAttr recipe);
  FailureOr<Quantized>
  quantizeWithDelayedScale(OpBuilder &builder, Location loc, Value value,
                           FloatType fp8Type, RecipeAttr recipe,
                           StringRef stateName, Operation *user,
                           const RankVariance *reduceOver);
  std::string getStateName(const GemmInfo &gemm, Value value, StringRef side);

  ModuleOp module;
  RecipeAttr moduleRecipe;
  StateStorage &state;
  OpBuilder::Listener *listener;
  /// By tensor, FP8 type, block shape and the rest of the recipe: a tensor
  /// used with K along different dimensions, or by GEMMs with recipes of
  /// their own, is quantized once per layout and recipe, each time from
  /// high precision.
  DenseMap<std::tuple<Value, Type, Attribute, Attribute>, Quantized> cache;
  /// Delayed-scaling state names in use: a tensor quantized under two
  /// recipes has two states.
  llvm::StringSet<> stateNames;
  DenseMap<Operation *, std::unique_ptr<RankVariance>> variances;
  /// Per function, in order: the updates whose amax waits for the
  /// function's one collective.
  llvm::MapVector<Operation *, SmallVector<DelayedUpdate>> deferred;
};
} // namespace

static Value createScaleInv(OpBuilder &builder, Location loc, Value scale) {
  Value one = arith::ConstantOp::create(builder, loc, builder.getF32FloatAttr(1.0f));
  return arith::DivFOp::create(builder, loc, one, scale);
}

static bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

static RankedTensorType getQuantizedType(Value value, FloatType fp8Type) {
  return cast<RankedTensorType>(value.getType()).clone(fp8Type);
}

FailureOr<const RankVariance *>
OperandQuantizer::getRankVariance(Operation *op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::unique_ptr<RankVariance> &variance = variances[func];
  if (!variance) {
    FailureOr<RankVariance> analyzed = RankVariance::analyze(func);
    if (failed(analyzed))
      return failure();
    variance = std::make_unique<RankVariance>(std::move(*analyzed));
  }
  return variance.get();
}

Value OperandQuantizer::reduceOverGrid(OpBuilder &builder, Location loc,
                                       Value amax,
                                       const RankVariance &variance) {
  bool scalar = !isa<RankedTensorType>(amax.getType());
  if (scalar)
    amax = tensor::FromElementsOp::create(
        builder, loc, RankedTensorType::get({}, amax.getType()), amax);
  Value reduced = shard::AllReduceOp::create(
      builder, loc, amax, variance.getGrid().getValue(),
      variance.getGridAxes(), shard::ReductionKind::Max);
  if (scalar)
    reduced = tensor::ExtractOp::create(builder, loc, reduced);
  return reduced;
}

Quantized OperandQuantizer::quantizeWithCurrentScale(
    OpBuilder &builder, Location loc, Value value, FloatType fp8Type,
    RecipeAttr recipe, const RankVariance *reduceOver) {
  Value amax = AmaxOp::create(builder, loc, value);
  // Every rank scales its slice with the amax of the whole tensor.
  if (reduceOver)
    amax = reduceOverGrid(builder, loc, amax, *reduceOver);
  auto scale = ComputeScaleOp::create(builder, loc, amax, /*previous=*/Value(),
                                      fp8Type);
  scale.setMargin(recipe.getMargin());
  scale.setPowerOfTwo(recipe.getPowerOfTwo());
  auto quantized = QuantizeOp::create(builder, loc,
                                      getQuantizedType(value, fp8Type),
                                      /*amax=*/Type(), value, scale);
  return {quantized.getResult(), createScaleInv(builder, loc, scale)};
}

Quantized OperandQuantizer::quantizeWithBlockScales(
    OpBuilder &builder, Location loc, Value value, FloatType fp8Type,
    DenseI64ArrayAttr block, RecipeAttr recipe,
    const RankVariance *reduceOver) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> scaleShape = getBlockScaleShape(type.getShape(), block);
  auto scaleType = RankedTensorType::get(scaleShape, builder.getF32Type());
  Value amax = BlockAmaxOp::create(builder, loc, scaleType, value, block);
  // Blocks that reach across the ranks (a row along a split K) take the
  // amax of the whole block.
  if (reduceOver)
    amax = reduceOverGrid(builder, loc, amax, *reduceOver);
  bool isMX = recipe.getGranularity() == Granularity::mx;
  Type scaleInvType =
      isMX ? RankedTensorType::get(scaleShape,
                                   builder.getType<Float8E8M0FNUType>())
           : Type(scaleType);
  auto scales = ComputeBlockScalesOp::create(builder, loc, scaleType,
                                             scaleInvType, amax, fp8Type);
  if (!isMX) {
    scales.setPowerOfTwo(recipe.getPowerOfTwo());
    // torchao's rowwise recipe clamps the amax to 1e-12 (EPS); TE's block
    // recipe uses no epsilon (amax_epsilon = 0).
    if (recipe.getGranularity() == Granularity::row)
      scales.setEpsilonAttr(builder.getF32FloatAttr(1e-12f));
  }
  auto quantized = QuantizeOp::create(builder, loc, type.clone(fp8Type),
                                      /*amax=*/Type(), value,
                                      scales.getScale(), block);
  return {quantized.getResult(), scales.getScaleInv(), block};
}

/// Data parallelism with per-block scales: whether the blocks of an operand
/// split over the ranks reach across them. Along a split dimension, blocks
/// that tile each rank's chunk exactly are the single process's blocks (the
/// 1x128 tiles of a weight gradient's token-K when each rank holds a
/// multiple of 128 tokens) and need nothing; a row along a split K spans
/// every rank and is reduced over the grid; anything else would need a
/// reduction over some of the ranks, which is refused.
FailureOr<bool> OperandQuantizer::blocksSpanRanks(
    const GemmInfo &gemm, Value original, StringRef side,
    RankedTensorType type, ArrayRef<int64_t> block, RecipeAttr recipe,
    const RankVariance &variance) {
  ShardLayout layout = variance.getLayout(original);
  ArrayRef<ReassociationIndices> collapse =
      side == "lhs" ? gemm.lhsCollapse : gemm.rhsCollapse;
  if (gemm.batchReduce)
    layout = ShardLayout::unknown();
  else if (!collapse.empty())
    layout = collapseLayout(layout, collapse);
  if (!layout.known || layout.dims == 0)
    return gemm.op->emitError("per-block scales of this GEMM's ")
           << side << " operand: cannot tell which of its dimensions are "
           << "split over @" << variance.getGrid().getValue()
           << " (it is computed in a way the analysis does not follow); use "
              "granularity=tensor";
  bool span = false;
  for (int64_t d = 0, e = type.getRank(); d < e; ++d) {
    if (!layout.isSplit(d))
      continue;
    int64_t size = type.getDimSize(d);
    if (recipe.getGranularity() == Granularity::row && block[d] == size &&
        size > 1) {
      span = true;
      continue;
    }
    if (size % block[d] == 0)
      continue;
    return gemm.op->emitError("per-block scales of this GEMM's ")
           << side << " operand: blocks of " << block[d] << " along dimension "
           << d << ", which each rank holds " << size
           << " of, would reach across some ranks but not all; make each "
              "rank's share a multiple of "
           << block[d];
  }
  return span;
}

/// One operand's blocks (getOperandBlock's rule) in its own layout; every
/// batch dimension one element.
DenseI64ArrayAttr OperandQuantizer::getBlock(const GemmInfo &gemm,
                                             const GemmOperand &operand,
                                             bool isLhs, RecipeAttr recipe) {
  auto type = cast<RankedTensorType>(operand.value.getType());
  int64_t rank = type.getRank();
  int64_t kDim = isLhs == operand.transposed ? rank - 2 : rank - 1;
  int64_t otherDim = kDim == rank - 1 ? rank - 2 : rank - 1;
  const GemmOperand &other = isLhs ? gemm.rhs : gemm.lhs;
  std::optional<std::pair<int64_t, int64_t>> extents =
      getOperandBlock(recipe, operand.role, other.role, type.getDimSize(kDim),
                      type.getDimSize(otherDim));
  if (!extents)
    return nullptr;
  SmallVector<int64_t> block(rank, 1);
  std::tie(block[kDim], block[otherDim]) = *extents;
  return DenseI64ArrayAttr::get(module.getContext(), block);
}

FailureOr<Quantized> OperandQuantizer::quantizeWithDelayedScale(
    OpBuilder &builder, Location loc, Value value, FloatType fp8Type,
    RecipeAttr recipe, StringRef stateName, Operation *user,
    const RankVariance *reduceOver) {
  Type f32 = builder.getF32Type();
  auto historyType = RankedTensorType::get({recipe.getHistory()}, f32);
  auto scaleType = RankedTensorType::get({}, f32);
  std::string historyName = (stateName + ".amax_history").str();
  std::string scaleName = (stateName + ".scale").str();
  FailureOr<Value> history =
      state.load(builder, loc, historyName, historyType,
                 DenseElementsAttr::get(historyType, 0.0f), user);
  if (failed(history))
    return failure();
  FailureOr<Value> scaleTensor =
      state.load(builder, loc, scaleName, scaleType,
                 DenseElementsAttr::get(scaleType, 1.0f), user);
  if (failed(scaleTensor))
    return failure();
  Value scale = tensor::ExtractOp::create(builder, loc, *scaleTensor);

  // The cast measures the amax as it goes: one pass over the data.
  auto quantized = QuantizeOp::create(builder, loc,
                                      getQuantizedType(value, fp8Type), f32,
                                      value, scale);

  DelayedUpdate update{*history,    quantized.getAmax(), scale,
                       fp8Type,     recipe,              historyName,
                       scaleName,   user};
  // Data parallelism: every rank records the amax of the whole tensor. In
  // the function's body, the update waits for the function's one
  // collective (TE reduces all of a step's amaxes together); in a loop,
  // the loop's own.
  auto func = user->getParentOfType<FunctionOpInterface>();
  if (reduceOver &&
      builder.getInsertionBlock() == &func.getFunctionBody().front()) {
    deferred[func].push_back(update);
  } else {
    if (reduceOver)
      update.amax = reduceOverGrid(builder, loc, update.amax, *reduceOver);
    if (failed(emitDelayedUpdate(builder, loc, update)))
      return failure();
  }
  return Quantized{quantized.getResult(), createScaleInv(builder, loc, scale)};
}

LogicalResult OperandQuantizer::emitDelayedUpdate(OpBuilder &builder,
                                                  Location loc,
                                                  const DelayedUpdate &update) {
  // Transformer Engine's update: the step's amax goes into row 0, the next
  // scale comes from the whole history, then the history rolls.
  Value recorded =
      RecordAmaxOp::create(builder, loc, update.history, update.amax);
  auto nextScale = ComputeScaleOp::create(builder, loc, recorded, update.scale,
                                          update.fp8Type);
  nextScale.setAlgo(update.recipe.getAlgo());
  nextScale.setMargin(update.recipe.getMargin());
  nextScale.setPowerOfTwo(update.recipe.getPowerOfTwo());
  Value rolled = RollHistoryOp::create(builder, loc, recorded);
  Value nextScaleTensor = tensor::FromElementsOp::create(
      builder, loc, RankedTensorType::get({}, builder.getF32Type()),
      ValueRange{nextScale.getResult()});
  return success(
      succeeded(state.store(builder, loc, update.historyName, rolled,
                            update.user)) &&
      succeeded(state.store(builder, loc, update.scaleName, nextScaleTensor,
                            update.user)));
}

LogicalResult OperandQuantizer::finishDeferredUpdates() {
  for (auto &[func, updates] : deferred) {
    Operation *terminator =
        cast<FunctionOpInterface>(func).getFunctionBody().front().getTerminator();
    OpBuilder builder(terminator, listener);
    Location loc = terminator->getLoc();
    SmallVector<Value> amaxes = llvm::map_to_vector(
        updates, [](const DelayedUpdate &update) { return update.amax; });
    Value all = tensor::FromElementsOp::create(
        builder, loc,
        RankedTensorType::get({int64_t(amaxes.size())}, builder.getF32Type()),
        amaxes);
    FailureOr<const RankVariance *> variance = getRankVariance(terminator);
    if (failed(variance))
      return failure();
    Value reduced = reduceOverGrid(builder, loc, all, **variance);
    for (auto [i, update] : llvm::enumerate(updates)) {
      Value index = arith::ConstantIndexOp::create(builder, loc, i);
      DelayedUpdate global = update;
      global.amax = tensor::ExtractOp::create(builder, loc, reduced, index);
      if (failed(emitDelayedUpdate(builder, loc, global)))
        return failure();
    }
  }
  deferred.clear();
  return success();
}

FailureOr<std::pair<Value, Value>>
OperandQuantizer::quantizeAttentionValue(OpBuilder &builder, AttentionOp op) {
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::string stateName;
  for (unsigned i = 0;; ++i) {
    stateName = llvm::formatv("fp8.{0}.attention{1}.value",
                              func.getName(), i)
                    .str();
    if (stateNames.insert(stateName).second)
      break;
  }
  FailureOr<const RankVariance *> variance = getRankVariance(op);
  if (failed(variance))
    return failure();
  const RankVariance *reduceOver =
      (*variance)->isVarying(op.getValue()) ? *variance : nullptr;
  RecipeAttr recipe = withFormat(moduleRecipe, Format::e4m3);
  FailureOr<Quantized> quantized = quantizeWithDelayedScale(
      builder, op.getLoc(), op.getValue(),
      builder.getType<Float8E4M3FNType>(), recipe, stateName, op, reduceOver);
  if (failed(quantized))
    return failure();
  return std::make_pair(quantized->value, quantized->scaleInv);
}

/// `fp8.<function>.arg<i>` for a function argument, unless another recipe's
/// state took it; `fp8.<function>.gemm<i>.<side>` otherwise (one per GEMM
/// operand, so always free).
std::string OperandQuantizer::getStateName(const GemmInfo &gemm, Value value,
                                           StringRef side) {
  auto func = gemm.op->getParentOfType<FunctionOpInterface>();
  std::string name = ("fp8." + func.getName()).str();
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && arg.getOwner()->isEntryBlock() &&
      arg.getOwner()->getParentOp() == func.getOperation()) {
    std::string argName = name + ".arg" + std::to_string(arg.getArgNumber());
    if (stateNames.insert(argName).second)
      return argName;
  }
  std::string gemmName =
      name + ".gemm" + std::to_string(gemm.index) + "." + side.str();
  stateNames.insert(gemmName);
  return gemmName;
}

LogicalResult
OperandQuantizer::analyzeRankVariance(ArrayRef<GemmInfo> gemms) {
  for (const GemmInfo &gemm : gemms)
    if (gemm.isFP8() && failed(getRankVariance(gemm.op)))
      return failure();
  return success();
}

FailureOr<Quantized> OperandQuantizer::quantize(const GemmInfo &gemm,
                                                const GemmOperand &operand,
                                                Value original,
                                                StringRef side) {
  RecipeAttr recipe = gemm.getRecipe(moduleRecipe);
  FloatType fp8Type =
      getOperandFloat8Type(module.getContext(), recipe, operand.role);
  // The analysis keeps GEMMs with dynamic sizes in high precision; an
  // operand traced to a dynamically shaped tensor is the same case.
  if (recipe.getGranularity() != Granularity::tensor &&
      !cast<ShapedType>(operand.value.getType()).hasStaticShape())
    return gemm.op->emitError("per-block scaling needs statically shaped "
                              "operands, got ")
           << operand.value.getType();
  DenseI64ArrayAttr block = getBlock(gemm, operand, side == "lhs", recipe);
  // The format is in the FP8 type: an E4M3 operand is the same cast under
  // hybrid and e4m3 recipes.
  auto key = std::make_tuple(operand.value, Type(fp8Type), Attribute(block),
                             Attribute(withFormat(recipe, Format::e4m3)));
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  // Already FP8 in this format and layout (a pre-quantized weight,
  // dequantized for a high-precision GEMM): use the bytes and their scales
  // as they are, instead of rounding a second time.
  if (auto dequantize = operand.value.getDefiningOp<DequantizeOp>();
      dequantize &&
      dequantize.getInput().getType().getElementType() == fp8Type &&
      dequantize.getBlockShapeAttr() == block)
    return Quantized{dequantize.getInput(), dequantize.getScaleInv(), block};

  // Right after the tensor is defined, so the cast dominates every GEMM that
  // shares it.
  OpBuilder builder(module.getContext(), listener);
  builder.setInsertionPointAfterValue(operand.value);
  Location loc = operand.value.getLoc();

  // A tensor that differs between data-parallel ranks is scaled from the
  // amax of the whole tensor: its amax is reduced over the grid.
  FailureOr<const RankVariance *> variance = getRankVariance(gemm.op);
  if (failed(variance))
    return failure();
  const RankVariance *reduceOver =
      (*variance)->isVarying(original) ? *variance : nullptr;
  const RankVariance *reduceBlocksOver = nullptr;
  if (reduceOver) {
    if (block) {
      FailureOr<bool> span = blocksSpanRanks(
          gemm, original, side, cast<RankedTensorType>(operand.value.getType()),
          block.asArrayRef(), recipe, *reduceOver);
      if (failed(span))
        return failure();
      if (*span)
        reduceBlocksOver = reduceOver;
    }
    auto func = gemm.op->getParentOfType<FunctionOpInterface>();
    Operation *region =
        block && !reduceBlocksOver
            ? nullptr
            : findNonUniformRegion(builder.getInsertionBlock(), func);
    if (region) {
      InFlightDiagnostic diag =
          gemm.op->emitError("the amax of this GEMM's ")
          << side << " operand must be reduced over @"
          << reduceOver->getGrid().getValue()
          << ", but it is computed under a '" << region->getName()
          << "' that ranks may run a different number of times (the "
             "collective would hang); hoist the tensor out of it";
      diag.attachNote(region->getLoc()) << "this op";
      return failure();
    }
  }
  FailureOr<Quantized> result =
      block ? quantizeWithBlockScales(builder, loc, operand.value, fp8Type,
                                      block, recipe, reduceBlocksOver)
      : recipe.getScaling() == Scaling::current || isConstant(operand.value)
          ? quantizeWithCurrentScale(builder, loc, operand.value, fp8Type,
                                     recipe, reduceOver)
          : quantizeWithDelayedScale(builder, loc, operand.value, fp8Type,
                                     recipe,
                                     getStateName(gemm, operand.value, side),
                                     gemm.op, reduceOver);
  if (succeeded(result))
    cache[key] = *result;
  return result;
}

/// batch_reduce_matmul's operands as one GEMM over K' = B * K:
/// A [B, M, K] -> [M, B, K] -> [M, B*K] and B [B, K, N] -> [B*K, N].
static std::pair<Value, Value> reshapeBatchReduce(OpBuilder &builder,
                                                  Location loc, Value lhs,
                                                  Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, lhs);
  std::swap(sizes[0], sizes[1]);
  Value init = tensor::EmptyOp::create(builder, loc, sizes,
                                       lhsType.getElementType());
  Value transposed =
      linalg::TransposeOp::create(builder, loc, lhs, init,
                                  ArrayRef<int64_t>{1, 0, 2})
          .getResult()[0];
  Value lhs2d = tensor::CollapseShapeOp::create(
      builder, loc, transposed, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  Value rhs2d = tensor::CollapseShapeOp::create(
      builder, loc, rhs, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  return {lhs2d, rhs2d};
}

/// The GEMM as fp8.scaled_matmul. C += A B becomes the scaled product in f32
/// plus the accumulator, rounded once to its type.
static Value createScaledMatmul(OpBuilder &builder, const GemmInfo &gemm,
                                Quantized lhs, Quantized rhs) {
  Location loc = gemm.op->getLoc();
  auto resultType = cast<RankedTensorType>(gemm.op->getResult(0).getType());
  auto productType =
      gemm.accumulates ? resultType.clone(builder.getF32Type()) : resultType;
  Value init = cast<linalg::LinalgOp>(gemm.op).getDpsInitOperand(0)->get();
  // A grouped GEMM computes [batch..., M, N], expanded back to the result's
  // dimensions (sizes from the init, which has the result's shape).
  RankedTensorType gemmType =
      gemm.resultCollapse.empty()
          ? productType
          : tensor::CollapseShapeOp::inferCollapsedType(productType,
                                                        gemm.resultCollapse);
  Value product = ScaledMatmulOp::create(
      builder, loc, gemmType, /*result_amax=*/Type(), lhs.value, rhs.value,
      lhs.scaleInv, rhs.scaleInv, /*bias=*/Value(), gemm.lhs.transposed,
      gemm.rhs.transposed, /*accumulator_type=*/TypeAttr(), lhs.block,
      rhs.block)
                      .getResult();
  if (!gemm.resultCollapse.empty())
    product = tensor::ExpandShapeOp::create(
        builder, loc, productType, product, gemm.resultCollapse,
        tensor::getMixedSizes(builder, loc, init));
  if (!gemm.accumulates)
    return product;

  auto map = builder.getMultiDimIdentityMap(resultType.getRank());
  SmallVector<utils::IteratorType> parallel(resultType.getRank(),
                                            utils::IteratorType::parallel);
  auto sum = linalg::GenericOp::create(
      builder, loc, resultType, ValueRange{product, init}, ValueRange{init},
      ArrayRef<AffineMap>{map, map, map}, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Type elementType = resultType.getElementType();
        Value acc = args[1];
        if (!elementType.isF32())
          acc = arith::ExtFOp::create(b, l, b.getF32Type(), acc);
        Value total = arith::AddFOp::create(b, l, args[0], acc);
        if (!elementType.isF32())
          total = arith::TruncFOp::create(b, l, elementType, total);
        linalg::YieldOp::create(b, l, total);
      });
  return sum.getResult(0);
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Erases what only the replaced GEMMs used (their zero fills, the broadcast
/// and transposed weight copies), and so on up the chain. Nothing else of
/// the input program is touched.
static void eraseDeadProducers(llvm::SmallSetVector<Operation *, 16> &worklist) {
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.insert(def);
    op->erase();
  }
}

/// Threading state through a function's signature would break its callers.
static LogicalResult checkNoCallers(ModuleOp module,
                                    ArrayRef<GemmInfo> gemms) {
  SymbolTableCollection symbolTables;
  SymbolUserMap users(symbolTables, module);
  for (const GemmInfo &gemm : gemms) {
    if (!gemm.isFP8())
      continue;
    auto func = gemm.op->getParentOfType<func::FuncOp>();
    if (!func)
      return gemm.op->emitError(
          "state=arguments needs GEMMs inside a func.func");
    for (Operation *user : users.getUsers(func))
      return user->emitError("state=arguments would change the signature of @")
             << func.getName() << ", which this op uses; use state=globals";
  }
  return success();
}

namespace {
struct FP8QuantizePass : fp8::impl::FP8QuantizeBase<FP8QuantizePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<RecipeAttr> recipe = buildRecipe(
        [&] { return module.emitError(); }, &getContext(), scaling, format,
        history, algo, margin, powerOfTwo, granularity, exactScales,
        wgradHigh);
    if (failed(recipe) || !*recipe)
      return signalPassFailure();

    GemmPolicy policy{fp8Attention, keepFirstLast, minFlops,
                      recipe->getWgradHigh(),
                      recipe->getGranularity() != Granularity::tensor,
                      llvm::to_vector(exclude)};
    FailureOr<SmallVector<GemmInfo, 0>> gemms = analyzeGemms(module, policy);
    if (failed(gemms))
      return signalPassFailure();
    if (remarks)
      emitGemmRemarks(*gemms, *recipe);
    if (!report.empty() &&
        failed(writeGemmReport(module, report, *gemms, *recipe)))
      return signalPassFailure();

    std::optional<AttentionScales> attentionScaleKind =
        parseAttentionScales(attentionScales);
    if (!attentionScaleKind) {
      module.emitError("unknown attention-scales '")
          << attentionScales << "' (expected token or head)";
      return signalPassFailure();
    }

    std::unique_ptr<StateStorage> storage;
    if (state == "globals") {
      storage = std::make_unique<GlobalStateStorage>();
    } else if (state == "arguments") {
      if (failed(checkNoCallers(module, *gemms)))
        return signalPassFailure();
      storage = std::make_unique<ArgumentStateStorage>();
    } else {
      module.emitError("unknown state '")
          << state << "' (expected globals or arguments)";
      return signalPassFailure();
    }

    // Everything the rewrite creates is folded once at the end: constant
    // weights become FP8 constants, constant scales fold away.
    struct : OpBuilder::Listener {
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        created.push_back(op);
      }
      SmallVector<Operation *> created;
    } recorder;
    OperandQuantizer quantizer(module, *recipe, *storage, &recorder);
    if (failed(quantizer.analyzeRankVariance(*gemms)))
      return signalPassFailure();
    // Replaced GEMMs stay in place, unused, until every GEMM is rewritten:
    // the analysis may have traced a later GEMM's operand to an earlier
    // GEMM's result (x A B, LoRA), which then stands for its replacement.
    DenseMap<Value, Value> replacements;
    auto current = [&](Value value) {
      Value replacement = replacements.lookup(value);
      return replacement ? replacement : value;
    };
    // Grouped GEMMs read their operands through collapse_shapes, one per
    // tensor and reassociation, placed right after the tensor: every GEMM
    // that shares the tensor shares the reshape, and so its cast.
    DenseMap<std::pair<Value, Attribute>, Value> collapsed;
    auto collapse = [&](Value value,
                        ArrayRef<ReassociationIndices> reassociation) {
      if (reassociation.empty())
        return value;
      OpBuilder builder(&getContext(), &recorder);
      Value &result = collapsed[{value, getReassociationIndicesAttribute(
                                            builder, reassociation)}];
      if (!result) {
        builder.setInsertionPointAfterValue(value);
        result = tensor::CollapseShapeOp::create(builder, value.getLoc(),
                                                 value, reassociation);
      }
      return result;
    };
    llvm::SmallSetVector<Operation *, 16> maybeDead;
    bool changed = false;
    for (const GemmInfo &gemm : *gemms) {
      if (!gemm.isFP8())
        continue;
      GemmOperand lhsOperand = gemm.lhs, rhsOperand = gemm.rhs;
      lhsOperand.value = collapse(current(lhsOperand.value), gemm.lhsCollapse);
      rhsOperand.value = collapse(current(rhsOperand.value), gemm.rhsCollapse);
      OpBuilder builder(gemm.op, &recorder);
      if (gemm.batchReduce)
        std::tie(lhsOperand.value, rhsOperand.value) = reshapeBatchReduce(
            builder, gemm.op->getLoc(), lhsOperand.value, rhsOperand.value);
      FailureOr<Quantized> lhs =
          quantizer.quantize(gemm, lhsOperand, gemm.lhs.value, "lhs");
      FailureOr<Quantized> rhs =
          quantizer.quantize(gemm, rhsOperand, gemm.rhs.value, "rhs");
      if (failed(lhs) || failed(rhs))
        return signalPassFailure();
      builder.setInsertionPoint(gemm.op);
      Value replacement = createScaledMatmul(builder, gemm, *lhs, *rhs);
      gemm.op->getResult(0).replaceAllUsesWith(replacement);
      replacements[gemm.op->getResult(0)] = replacement;
      maybeDead.insert(gemm.op);
      changed = true;
    }
    // fp8-attention: inside the fused attentions too.
    if (fp8Attention) {
      FailureOr<unsigned> attentions = quantizeAttention(
          module, &recorder, *attentionScaleKind, remarks, [&](OpBuilder &builder, AttentionOp op) {
            return quantizer.quantizeAttentionValue(builder, op);
          });
      if (failed(attentions))
        return signalPassFailure();
      changed |= *attentions > 0;
    }
    if (failed(quantizer.finishDeferredUpdates()))
      return signalPassFailure();
    storage->finalize();
    eraseDeadProducers(maybeDead);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(recorder.created,
                                  FrozenRewritePatternSet(), config);
    if (changed)
      module->setAttr("fp8.recipe", *recipe);
  }
};
} // namespace
