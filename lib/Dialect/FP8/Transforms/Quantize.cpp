//===- Quantize.cpp - Rewrite GEMMs to scaled FP8 GEMMs -------------------===//
//
// fp8-quantize: per FP8 GEMM (GemmAnalysis), quantize each operand per the
// recipe (delayed scaling with explicit state, or current scaling) and
// replace the GEMM with fp8.scaled_matmul. Everything else is left as it was.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Report.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8QUANTIZE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// A quantized tensor: its FP8 value and the scale_inv to dequantize it.
struct Quantized {
  Value value;
  Value scaleInv;
};

/// Emits the quantization of GEMM operands for one module, sharing the casts
/// of tensors that feed several GEMMs.
class OperandQuantizer {
public:
  OperandQuantizer(ModuleOp module, RecipeAttr recipe)
      : module(module), symbols(module), recipe(recipe),
        stateBuilder(module.getBodyRegion()) {}

  Quantized quantize(const GemmInfo &gemm, const GemmOperand &operand,
                     StringRef side);

private:
  Quantized quantizeWithCurrentScale(OpBuilder &builder, Location loc,
                                     Value value, FloatType fp8Type);
  Quantized quantizeWithDelayedScale(OpBuilder &builder, Location loc,
                                     Value value, FloatType fp8Type,
                                     StringRef stateName);
  ml_program::GlobalOp createState(Location loc, StringRef name,
                                   RankedTensorType type, Attribute init);
  std::string getStateName(const GemmInfo &gemm, Value value, StringRef side);

  ModuleOp module;
  SymbolTable symbols;
  RecipeAttr recipe;
  /// Scaling state goes at the top of the module, in creation order.
  OpBuilder stateBuilder;
  DenseMap<std::pair<Value, Type>, Quantized> cache;
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

Quantized OperandQuantizer::quantizeWithCurrentScale(OpBuilder &builder,
                                                     Location loc, Value value,
                                                     FloatType fp8Type) {
  Value amax = AmaxOp::create(builder, loc, value);
  auto scale = ComputeScaleOp::create(builder, loc, amax, /*previous=*/Value(),
                                      fp8Type);
  scale.setMargin(recipe.getMargin());
  scale.setPowerOfTwo(recipe.getPowerOfTwo());
  auto quantized = QuantizeOp::create(builder, loc,
                                      getQuantizedType(value, fp8Type),
                                      /*amax=*/Type(), value, scale);
  return {quantized.getResult(), createScaleInv(builder, loc, scale)};
}

ml_program::GlobalOp OperandQuantizer::createState(Location loc, StringRef name,
                                                   RankedTensorType type,
                                                   Attribute init) {
  auto global = ml_program::GlobalOp::create(
      stateBuilder, loc, name, type, /*is_mutable=*/true, init,
      /*sym_visibility=*/StringAttr());
  symbols.insert(global, stateBuilder.getInsertionPoint());
  stateBuilder.setInsertionPointAfter(global);
  return global;
}

Quantized OperandQuantizer::quantizeWithDelayedScale(OpBuilder &builder,
                                                     Location loc, Value value,
                                                     FloatType fp8Type,
                                                     StringRef stateName) {
  Type f32 = builder.getF32Type();
  auto historyType = RankedTensorType::get({recipe.getHistory()}, f32);
  auto scaleType = RankedTensorType::get({}, f32);
  ml_program::GlobalOp historyState = createState(
      loc, (stateName + ".amax_history").str(), historyType,
      DenseElementsAttr::get(historyType, 0.0f));
  ml_program::GlobalOp scaleState =
      createState(loc, (stateName + ".scale").str(), scaleType,
                  DenseElementsAttr::get(scaleType, 1.0f));
  auto historyRef = FlatSymbolRefAttr::get(historyState.getSymNameAttr());
  auto scaleRef = FlatSymbolRefAttr::get(scaleState.getSymNameAttr());

  Value history =
      ml_program::GlobalLoadOp::create(builder, loc, historyType, historyRef);
  Value scaleTensor =
      ml_program::GlobalLoadOp::create(builder, loc, scaleType, scaleRef);
  Value scale = tensor::ExtractOp::create(builder, loc, scaleTensor);

  // The cast measures the amax as it goes: one pass over the data.
  auto quantized = QuantizeOp::create(builder, loc,
                                      getQuantizedType(value, fp8Type), f32,
                                      value, scale);

  // Transformer Engine's update: the step's amax goes into row 0, the next
  // scale comes from the whole history, then the history rolls.
  Value recorded = RecordAmaxOp::create(builder, loc, history,
                                        quantized.getAmax());
  auto nextScale =
      ComputeScaleOp::create(builder, loc, recorded, scale, fp8Type);
  nextScale.setAlgo(recipe.getAlgo());
  nextScale.setMargin(recipe.getMargin());
  nextScale.setPowerOfTwo(recipe.getPowerOfTwo());
  Value rolled = RollHistoryOp::create(builder, loc, recorded);
  Value nextScaleTensor = tensor::FromElementsOp::create(
      builder, loc, scaleType, ValueRange{nextScale.getResult()});
  ml_program::GlobalStoreOp::create(builder, loc, historyRef, rolled);
  ml_program::GlobalStoreOp::create(builder, loc, scaleRef, nextScaleTensor);
  return {quantized.getResult(), createScaleInv(builder, loc, scale)};
}

std::string OperandQuantizer::getStateName(const GemmInfo &gemm, Value value,
                                           StringRef side) {
  auto func = gemm.op->getParentOfType<FunctionOpInterface>();
  std::string name = ("fp8." + func.getName()).str();
  if (auto arg = dyn_cast<BlockArgument>(value);
      arg && arg.getOwner()->isEntryBlock() &&
      arg.getOwner()->getParentOp() == func.getOperation())
    return name + ".arg" + std::to_string(arg.getArgNumber());
  return name + ".gemm" + std::to_string(gemm.index) + "." + side.str();
}

Quantized OperandQuantizer::quantize(const GemmInfo &gemm,
                                     const GemmOperand &operand,
                                     StringRef side) {
  FloatType fp8Type =
      getOperandFloat8Type(module.getContext(), recipe, operand.role);
  auto key = std::make_pair(operand.value, Type(fp8Type));
  if (auto it = cache.find(key); it != cache.end())
    return it->second;

  // Right after the tensor is defined, so the cast dominates every GEMM that
  // shares it.
  OpBuilder builder(module.getContext());
  builder.setInsertionPointAfterValue(operand.value);
  Location loc = operand.value.getLoc();
  Quantized result =
      recipe.getScaling() == Scaling::current || isConstant(operand.value)
          ? quantizeWithCurrentScale(builder, loc, operand.value, fp8Type)
          : quantizeWithDelayedScale(builder, loc, operand.value, fp8Type,
                                     getStateName(gemm, operand.value, side));
  cache[key] = result;
  return result;
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

static FailureOr<RecipeAttr>
buildRecipe(ModuleOp module, StringRef scaling, StringRef format,
            unsigned history, StringRef algo, int margin, bool powerOfTwo) {
  std::optional<Scaling> scalingKind = symbolizeScaling(scaling);
  if (!scalingKind)
    return module.emitError("unknown scaling '")
           << scaling << "' (expected delayed or current)";
  std::optional<Format> formatKind = symbolizeFormat(format);
  if (!formatKind)
    return module.emitError("unknown format '")
           << format << "' (expected hybrid or e4m3)";
  std::optional<AmaxAlgo> algoKind = symbolizeAmaxAlgo(algo);
  if (!algoKind)
    return module.emitError("unknown algo '")
           << algo << "' (expected max or most_recent)";
  return RecipeAttr::getChecked(
      [&] { return module.emitError(); }, module.getContext(), *formatKind,
      *scalingKind, history, *algoKind, margin, powerOfTwo);
}

namespace {
struct FP8QuantizePass : fp8::impl::FP8QuantizeBase<FP8QuantizePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<RecipeAttr> recipe = buildRecipe(
        module, scaling, format, history, algo, margin, powerOfTwo);
    if (failed(recipe) || !*recipe)
      return signalPassFailure();

    GemmPolicy policy{fp8Attention, keepFirstLast, minFlops,
                      llvm::to_vector(exclude)};
    FailureOr<SmallVector<GemmInfo>> gemms = analyzeGemms(module, policy);
    if (failed(gemms))
      return signalPassFailure();
    if (remarks)
      emitGemmRemarks(*gemms, *recipe);
    if (!report.empty() &&
        failed(writeGemmReport(module, report, *gemms, *recipe)))
      return signalPassFailure();

    OperandQuantizer quantizer(module, *recipe);
    bool changed = false;
    for (const GemmInfo &gemm : *gemms) {
      if (!gemm.isFP8())
        continue;
      Quantized lhs = quantizer.quantize(gemm, gemm.lhs, "lhs");
      Quantized rhs = quantizer.quantize(gemm, gemm.rhs, "rhs");
      OpBuilder builder(gemm.op);
      auto matmul = ScaledMatmulOp::create(
          builder, gemm.op->getLoc(), gemm.op->getResult(0).getType(),
          /*result_amax=*/Type(), lhs.value, rhs.value, lhs.scaleInv,
          rhs.scaleInv, /*bias=*/Value(), gemm.lhs.transposed,
          gemm.rhs.transposed, /*accumulator_type=*/TypeAttr());
      gemm.op->replaceAllUsesWith(matmul->getResults().take_front());
      gemm.op->erase();
      changed = true;
    }
    if (changed)
      module->setAttr("fp8.recipe", *recipe);
  }
};
} // namespace
