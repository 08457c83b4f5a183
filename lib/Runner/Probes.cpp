//===- Probes.cpp - What the FP8 version of a graph did -------------------===//
//
// Statistics of the quantizations of an FP8 module, for fp8-run and
// fp8-train: the scaling state the pipeline created, and counters of
// saturated and flushed elements after every fp8.quantize.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/Probes.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/Numerics/Float8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;

std::optional<std::string> runner::getScalingStateName(Value scale) {
  auto extract = scale.getDefiningOp<tensor::ExtractOp>();
  if (!extract)
    return std::nullopt;
  StringRef name;
  Value tensor = extract.getTensor();
  if (auto load = tensor.getDefiningOp<ml_program::GlobalLoadOp>()) {
    name = load.getGlobal().getLeafReference().getValue();
  } else if (auto arg = dyn_cast<BlockArgument>(tensor)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (auto attr = func ? func.getArgAttrOfType<StringAttr>(
                               arg.getArgNumber(), "fp8.state")
                         : StringAttr())
      name = attr.getValue();
  }
  if (!name.consume_back(".scale"))
    return std::nullopt;
  return name.str();
}

SmallVector<QuantizeProbe> runner::addQuantizeProbes(ModuleOp module) {
  SmallVector<QuantizeProbe> probes;
  SymbolTable symbols(module);
  OpBuilder globals(module.getBodyRegion());
  MLIRContext *context = module.getContext();
  Type i64 = IntegerType::get(context, 64);
  auto countsType = RankedTensorType::get({3}, i64);
  Type f64 = Float64Type::get(context);
  auto momentsType = RankedTensorType::get({4}, f64);
  module.walk([&](QuantizeOp quantize) {
    Location loc = quantize.getLoc();
    std::string name = "quantize#" + std::to_string(probes.size());
    if (std::optional<std::string> state =
            getScalingStateName(quantize.getScale()))
      name = *state;
    auto global = ml_program::GlobalOp::create(
        globals, loc, "fp8_run.probe" + std::to_string(probes.size()),
        countsType, /*is_mutable=*/true,
        DenseElementsAttr::get(countsType, int64_t(0)), StringAttr());
    symbols.insert(global);
    auto momentsGlobal = ml_program::GlobalOp::create(
        globals, loc, "fp8_run.moments" + std::to_string(probes.size()),
        momentsType, /*is_mutable=*/true,
        DenseElementsAttr::get(momentsType, 0.0), StringAttr());
    symbols.insert(momentsGlobal);
    probes.push_back({name, global.getSymName().str(),
                      momentsGlobal.getSymName().str()});

    OpBuilder b(context);
    b.setInsertionPointAfter(quantize);
    auto inputType = quantize.getInput().getType();
    int64_t rank = inputType.getRank();
    auto scalarType = RankedTensorType::get({}, i64);
    Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
    Value init = linalg::FillOp::create(
                     b, loc, zero,
                     tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64)
                         .getResult())
                     .getResult(0);
    AffineMap all = b.getMultiDimIdentityMap(rank);
    AffineMap none = AffineMap::get(rank, 0, context);
    SmallVector<utils::IteratorType> reduction(rank,
                                               utils::IteratorType::reduction);
    const numerics::FormatInfo &info = numerics::getFormatInfo(
        *getNumericsFormat(quantize.getResult().getType().getElementType()));
    // Halfway between max and the next (missing) value; the tie rounds to
    // max when max's code is even (E4M3), else it overflows (E5M2).
    float overflowBound =
        info.maxFinite +
        std::ldexp(1.0f, std::ilogb(info.maxFinite) -
                             static_cast<int>(info.mantissaBits) - 1);
    auto overflowPredicate = info.maxFiniteBits % 2 == 0
                                 ? arith::CmpFPredicate::OGT
                                 : arith::CmpFPredicate::OGE;
    // A per-block scale is read for each element through its block.
    SmallVector<Value> inputs = {quantize.getInput(), quantize.getResult()};
    SmallVector<AffineMap> maps = {all, all};
    std::optional<ArrayRef<int64_t>> block = quantize.getBlockShape();
    if (block) {
      SmallVector<AffineExpr> blockExprs;
      for (auto [d, extent] : llvm::enumerate(*block))
        blockExprs.push_back(getAffineDimExpr(d, context).floorDiv(extent));
      inputs.push_back(quantize.getScale());
      maps.push_back(AffineMap::get(rank, 0, blockExprs, context));
    }
    maps.append({none, none, none, none, none, none, none});
    auto f64Scalar = RankedTensorType::get({}, f64);
    Value f64Init =
        linalg::FillOp::create(
            b, loc,
            arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0)).getResult(),
            tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f64)
                .getResult())
            .getResult(0);
    Value scaleValue = quantize.getScale();
    auto counts = linalg::GenericOp::create(
        b, loc,
        TypeRange{scalarType, scalarType, scalarType, f64Scalar, f64Scalar,
                  f64Scalar, f64Scalar},
        inputs, ValueRange{init, init, init, f64Init, f64Init, f64Init, f64Init},
        maps, reduction,
        [&](OpBuilder &nb, Location l, ValueRange allArgs) {
          Value scale = block ? allArgs[2] : scaleValue;
          // The accumulators follow the inputs: three counts, four sums.
          SmallVector<Value> args = {allArgs[0], allArgs[1]};
          llvm::append_range(args, allArgs.take_back(7));
          Type f32 = nb.getF32Type();
          Value x = args[0];
          if (!x.getType().isF32())
            x = arith::ExtFOp::create(nb, l, f32, x);
          Value scaled = arith::MulFOp::create(nb, l, x, scale);
          Value magnitude = math::AbsFOp::create(nb, l, scaled);
          Value limit = arith::ConstantOp::create(
              nb, l, nb.getF32FloatAttr(overflowBound));
          Value saturated = arith::CmpFOp::create(nb, l, overflowPredicate,
                                                  magnitude, limit);
          Value q = arith::ExtFOp::create(nb, l, f32, args[1]);
          Value fzero = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
          Value nonzero = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::ONE, x, fzero);
          Value qzero = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                              q, fzero);
          Value flushed = arith::AndIOp::create(nb, l, nonzero, qzero);
          auto count = [&](Value flag, Value acc) -> Value {
            Value one = arith::ExtUIOp::create(nb, l, nb.getI64Type(), flag);
            return arith::AddIOp::create(nb, l, acc, one);
          };
          Value oneI1 = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
          // x, x^2, x^3, x^4 summed in f64 (exact products of an f32 x up
          // to x^2; the sums of a large tensor round, far below what
          // kurtosis needs).
          Value wide = arith::ExtFOp::create(nb, l, nb.getF64Type(), x);
          SmallVector<Value> results = {count(saturated, args[2]),
                                        count(flushed, args[3]),
                                        count(oneI1, args[4])};
          Value power = wide;
          for (int k = 0; k < 4; ++k) {
            if (k > 0)
              power = arith::MulFOp::create(nb, l, power, wide);
            results.push_back(arith::AddFOp::create(nb, l, args[5 + k], power));
          }
          linalg::YieldOp::create(nb, l, results);
        });
    auto store = [&](ml_program::GlobalOp target, RankedTensorType type,
                     ValueRange scalars) {
      SmallVector<Value> elements;
      for (Value result : scalars)
        elements.push_back(tensor::ExtractOp::create(b, loc, result));
      Value packed = tensor::FromElementsOp::create(b, loc, type, elements);
      ml_program::GlobalStoreOp::create(
          b, loc, FlatSymbolRefAttr::get(target.getSymNameAttr()), packed);
    };
    store(global, countsType, counts.getResults().take_front(3));
    store(momentsGlobal, momentsType, counts.getResults().drop_front(3));
  });
  return probes;
}

double runner::momentKurtosis(ArrayRef<double> powerSums, double count) {
  if (powerSums.size() != 4 || !(count > 0))
    return NAN;
  double mean = powerSums[0] / count, e2 = powerSums[1] / count,
         e3 = powerSums[2] / count, e4 = powerSums[3] / count;
  // Central moments from raw ones.
  double m2 = e2 - mean * mean;
  double m4 = e4 - 4 * mean * e3 + 6 * mean * mean * e2 -
              3 * mean * mean * mean * mean;
  if (!(m2 > 0))
    return NAN;
  return m4 / (m2 * m2);
}

llvm::StringMap<RankedTensorType> runner::findScalingState(ModuleOp module) {
  llvm::StringMap<RankedTensorType> state;
  module.walk([&](ml_program::GlobalOp global) {
    StringRef name = global.getSymName();
    auto type = dyn_cast<RankedTensorType>(global.getType());
    if (type && name.starts_with("fp8.") &&
        (name.ends_with(".scale") || name.ends_with(".amax_history")))
      state[name] = type;
  });
  return state;
}

std::optional<int64_t> runner::findIndexedExtent(Value root) {
  SmallVector<Value> worklist{root};
  DenseSet<Value> seen;
  while (!worklist.empty() && seen.size() < 256) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
        if (use.getOperandNumber() == 0) {
          worklist.push_back(extract.getResult());
          continue;
        }
        int64_t size = extract.getTensor().getType().getDimSize(
            use.getOperandNumber() - 1);
        if (!ShapedType::isDynamic(size))
          return size;
        continue;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
        if (linalgOp.isDpsInput(&use))
          worklist.push_back(linalgOp.getMatchingBlockArgument(&use));
        continue;
      }
      // Out of an element-wise conversion (TOSA's cast of i64 ids to i32
      // before its gather): the op's result.
      if (auto yield = dyn_cast<linalg::YieldOp>(user)) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(yield->getParentOp());
        // On buffers an op has no results: nothing to follow.
        if (linalgOp && use.getOperandNumber() < linalgOp->getNumResults())
          worklist.push_back(linalgOp->getResult(use.getOperandNumber()));
        continue;
      }
      if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
              arith::ExtUIOp, arith::TruncIOp, tensor::CollapseShapeOp,
              tensor::ExpandShapeOp, tensor::CastOp, tensor::ExtractSliceOp>(
              user))
        worklist.push_back(user->getResult(0));
    }
  }
  return std::nullopt;
}
