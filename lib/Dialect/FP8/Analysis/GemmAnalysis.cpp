//===- GemmAnalysis.cpp - Find GEMMs and decide their precision -----------===//

#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Regex.h"

#include <limits>

using namespace mlir;
using namespace mlir::fp8;

StringRef mlir::fp8::stringifyOperandRole(OperandRole role) {
  switch (role) {
  case OperandRole::Weight:
    return "weight";
  case OperandRole::Activation:
    return "activation";
  case OperandRole::Gradient:
    return "gradient";
  }
  llvm_unreachable("unknown operand role");
}

StringRef mlir::fp8::stringifyGemmReason(GemmReason reason) {
  switch (reason) {
  case GemmReason::WeightGemm:
    return "weight_gemm";
  case GemmReason::ForcedFP8:
    return "forced_fp8";
  case GemmReason::ActivationGemmOptIn:
    return "activation_gemm_enabled";
  case GemmReason::ForcedHighPrecision:
    return "forced_high_precision";
  case GemmReason::Excluded:
    return "excluded";
  case GemmReason::ActivationGemm:
    return "activation_x_activation";
  case GemmReason::FirstOrLastGemm:
    return "first_or_last_gemm";
  case GemmReason::BelowSizeThreshold:
    return "below_size_threshold";
  case GemmReason::UnalignedKOrN:
    return "k_or_n_not_multiple_of_16";
  case GemmReason::WeightGradientKept:
    return "weight_gradient_high_precision";
  case GemmReason::DynamicBlockShape:
    return "dynamic_shape_with_block_scales";
  case GemmReason::UnsupportedElementType:
    return "unsupported_element_type";
  case GemmReason::UnsupportedLayout:
    return "unsupported_layout";
  case GemmReason::BufferSemantics:
    return "buffer_semantics";
  case GemmReason::ZeroSized:
    return "zero_sized";
  case GemmReason::Convolution:
    return "convolution";
  case GemmReason::OutsideFunction:
    return "outside_function";
  }
  llvm_unreachable("unknown GEMM reason");
}

bool mlir::fp8::isFP8Reason(GemmReason reason) {
  return reason == GemmReason::WeightGemm || reason == GemmReason::ForcedFP8 ||
         reason == GemmReason::ActivationGemmOptIn;
}

SmallVector<int64_t> GemmInfo::getSizes() const {
  SmallVector<int64_t> sizes(batch);
  sizes.append({m, n, k});
  return sizes;
}

/// a * b for non-negative sizes, saturating at INT64_MAX.
static int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return llvm::MulOverflow(a, b, product)
             ? std::numeric_limits<int64_t>::max()
             : product;
}

static int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  return llvm::AddOverflow(a, b, sum) ? std::numeric_limits<int64_t>::max()
                                      : sum;
}

std::optional<int64_t> GemmInfo::getFlops() const {
  int64_t flops = 2;
  for (int64_t size : getSizes()) {
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    flops = saturatingMul(flops, size);
  }
  return flops;
}

FloatType mlir::fp8::getOperandFloat8Type(MLIRContext *context,
                                          RecipeAttr recipe, OperandRole role) {
  return recipe.getElementType(context, role == OperandRole::Gradient);
}

//===----------------------------------------------------------------------===//
// Looking through views
//===----------------------------------------------------------------------===//

static bool isWideFloat(Type type) {
  return type.isF32() || type.isBF16() || type.isF16();
}

/// A linalg.generic that copies its single input into its output, possibly
/// broadcasting, permuting and/or converting the float type: a view as far as
/// roles are concerned. The permutation may sit on either side: exporters
/// write a transpose with a permuted output map (torch-mlir, buddy-mlir) as
/// often as with a permuted input map.
static bool isCopyLikeGeneric(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || !op.hasPureTensorSemantics())
    return false;
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value yielded = yield.getOperand(0);
  if (Operation *def = yielded.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def) || &body.front() != def)
      return false;
    yielded = def->getOperand(0);
  }
  return yielded == body.getArgument(0) &&
         op.getMatchingIndexingMap(op.getDpsInputOperand(0))
             .isProjectedPermutation(/*allowZeroInResults=*/true) &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isPermutation();
}

/// For a copy-like generic, the map from an index of its result to the
/// index of its input the element is copied from.
static AffineMap getCopySourceMap(linalg::GenericOp op) {
  AffineMap input = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap init = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  assert(init.isPermutation() && "not a copy-like generic");
  return input.compose(inversePermutation(init));
}

/// The value `value` is a view or plain copy of, one step up, if any.
static Value getViewSource(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::CopyOp>(def))
    return cast<linalg::LinalgOp>(def).getDpsInputOperand(0)->get();
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
          tensor::ExtractSliceOp, tensor::ReshapeOp, arith::ExtFOp,
          arith::TruncFOp>(def))
    return def->getOperand(0);
  if (auto generic = dyn_cast<linalg::GenericOp>(def);
      generic && isCopyLikeGeneric(generic))
    return generic.getDpsInputOperand(0)->get();
  return {};
}

namespace {
struct Origin {
  enum Kind { Argument, Constant, Global, Computed } kind = Computed;
  BlockArgument argument;
  std::string description;
};
} // namespace

static Origin traceOrigin(Value value) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Operation *parent = arg.getOwner()->getParentOp();
      if (isa<FunctionOpInterface>(parent) && arg.getOwner()->isEntryBlock())
        return {Origin::Argument, arg, "arg" + std::to_string(arg.getArgNumber())};
      return {Origin::Computed, {}, "computed"};
    }
    Operation *def = value.getDefiningOp();
    if (def->hasTrait<OpTrait::ConstantLike>())
      return {Origin::Constant, {}, "constant"};
    if (auto load = dyn_cast<ml_program::GlobalLoadOp>(def))
      return {Origin::Global, {},
              ("global @" + load.getGlobal().getLeafReference().getValue())
                  .str()};
    if (auto load = dyn_cast<ml_program::GlobalLoadConstOp>(def))
      return {Origin::Global, {},
              ("global @" + load.getGlobal().getLeafReference().getValue())
                  .str()};
    Value source = getViewSource(value);
    if (!source)
      return {Origin::Computed, {}, "computed"};
    value = source;
  }
}

/// `perm` swaps the last two dimensions and keeps the others.
static bool isMinorTranspose(ArrayRef<int64_t> perm) {
  int64_t rank = perm.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i < rank - 2; ++i)
    if (perm[i] != i)
      return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

/// Moves `operand.value` to a cheaper tensor that scaled_matmul can read with
/// a layout flag: the input of a minor transpose (flipping the flag) and, for
/// a batched rhs, the 2-D matrix behind a batch broadcast.
static void peelLayout(GemmOperand &operand, bool allowBatchBroadcast) {
  while (true) {
    Operation *def = operand.value.getDefiningOp();
    if (auto transpose = dyn_cast_if_present<linalg::TransposeOp>(def);
        transpose && isMinorTranspose(transpose.getPermutation())) {
      operand.value = transpose.getInput();
      operand.transposed = !operand.transposed;
      continue;
    }
    if (auto broadcast = dyn_cast_if_present<linalg::BroadcastOp>(def)) {
      if (!allowBatchBroadcast)
        return;
      int64_t rank = broadcast.getInit().getType().getRank();
      ArrayRef<int64_t> dims = broadcast.getDimensions();
      if (broadcast.getInput().getType().getRank() == 2 &&
          llvm::equal(dims, llvm::seq<int64_t>(0, rank - 2))) {
        operand.value = broadcast.getInput();
        continue;
      }
      return;
    }
    // A pure copy (no type conversion): result[i...] = input[map(i...)].
    auto generic = dyn_cast_if_present<linalg::GenericOp>(def);
    if (!generic || !isCopyLikeGeneric(generic) ||
        generic.getRegion().front().getOperations().size() != 1)
      return;
    Value input = generic.getDpsInputOperand(0)->get();
    AffineMap map = getCopySourceMap(generic);
    unsigned rank = map.getNumDims();
    if (map.isPermutation()) {
      if (!isMinorTranspose(llvm::map_to_vector(
              llvm::seq<unsigned>(0, rank),
              [&](unsigned i) { return int64_t(map.getDimPosition(i)); })))
        return;
      operand.value = input;
      operand.transposed = !operand.transposed;
      continue;
    }
    // A matrix broadcast over the batch dimensions, possibly transposed.
    if (!allowBatchBroadcast || map.getNumResults() != 2 || rank < 3 ||
        !isa<AffineDimExpr>(map.getResult(0)) ||
        !isa<AffineDimExpr>(map.getResult(1)))
      return;
    unsigned first = map.getDimPosition(0), second = map.getDimPosition(1);
    if (first == rank - 2 && second == rank - 1) {
      operand.value = input;
    } else if (first == rank - 1 && second == rank - 2) {
      operand.value = input;
      operand.transposed = !operand.transposed;
    } else {
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

bool mlir::fp8::isZeroFill(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return matchPattern(init, m_AnyZeroFloat());
}

/// The loop dimension of each result of `map`, if all are plain dimensions.
static std::optional<SmallVector<unsigned>> getDimPositions(AffineMap map) {
  SmallVector<unsigned> result;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    result.push_back(dim.getPosition());
  }
  return result;
}

/// Product of loop ranges, dynamic if any is.
static int64_t getGroupSize(ArrayRef<unsigned> group,
                            ArrayRef<int64_t> ranges) {
  int64_t size = 1;
  for (unsigned dim : group) {
    if (ShapedType::isDynamic(ranges[dim]))
      return ShapedType::kDynamic;
    size = saturatingMul(size, ranges[dim]);
  }
  return size;
}

/// batch_reduce_matmul: C[m, n] = sum_b sum_k A[b, m, k] B[b, k, n], a GEMM
/// over the combined reduction b*k (fp8-quantize reshapes its operands).
static LogicalResult matchBatchReduce(linalg::LinalgOp op,
                                      const linalg::ContractionDimensions &dims,
                                      GemmInfo &info) {
  if (!dims.batch.empty() || dims.k.size() != 2 || dims.m.size() != 1 ||
      dims.n.size() != 1)
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  MLIRContext *context = op.getContext();
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(maps[0].getNumDims(), 0, results, context);
  };
  unsigned m = dims.m[0], n = dims.n[0];
  for (unsigned b : dims.k) {
    unsigned k = dims.k[0] == b ? dims.k[1] : dims.k[0];
    AffineExpr db = getAffineDimExpr(b, context),
               dm = getAffineDimExpr(m, context),
               dn = getAffineDimExpr(n, context),
               dk = getAffineDimExpr(k, context);
    if (maps[0] != map({db, dm, dk}) || maps[1] != map({db, dk, dn}) ||
        maps[2] != map({dm, dn}))
      continue;
    info.batchReduce = true;
    info.lhs.matrixRank = info.rhs.matrixRank = 3;
    info.m = ranges[m];
    info.n = ranges[n];
    info.k = getGroupSize({b, k}, ranges);
    return success();
  }
  return failure();
}

namespace {
/// An operand of the GEMM as [batch..., first group..., second group...]:
/// which group comes first, and the reassociation that folds each group into
/// one dimension (batch dimensions stay as they are).
struct OperandLayout {
  bool swapped = false;
  SmallVector<ReassociationIndices> collapse;
};
} // namespace

/// Matches `dimsOf` (the loop dimension of each operand dimension) against
/// [batch..., a..., b...] (swapped = false) or [batch..., b..., a...], each
/// group contiguous and in the given order; `batch` may be absent when
/// `allowShared`.
static std::optional<OperandLayout>
matchOperandLayout(ArrayRef<unsigned> dimsOf, ArrayRef<unsigned> batch,
                   ArrayRef<unsigned> a, ArrayRef<unsigned> b,
                   bool allowShared) {
  ArrayRef<unsigned> rest = dimsOf;
  if (rest.take_front(batch.size()) == batch &&
      rest.size() == batch.size() + a.size() + b.size())
    rest = rest.drop_front(batch.size());
  else if (!(allowShared && !batch.empty() && rest.size() == a.size() + b.size()))
    return std::nullopt;
  OperandLayout layout;
  if (rest.take_front(a.size()) == a && rest.drop_front(a.size()) == b)
    layout.swapped = false;
  else if (rest.take_front(b.size()) == b && rest.drop_front(b.size()) == a)
    layout.swapped = true;
  else
    return std::nullopt;
  int64_t next = 0;
  for (int64_t i = 0, e = dimsOf.size() - rest.size(); i < e; ++i)
    layout.collapse.push_back({next++});
  for (size_t groupSize : {layout.swapped ? b.size() : a.size(),
                           layout.swapped ? a.size() : b.size()}) {
    ReassociationIndices group;
    for (size_t i = 0; i < groupSize; ++i)
      group.push_back(next++);
    layout.collapse.push_back(group);
  }
  return layout;
}

/// A reassociation that folds nothing is no reshape at all.
static bool isIdentity(ArrayRef<ReassociationIndices> collapse) {
  return llvm::all_of(collapse, [](const ReassociationIndices &group) {
    return group.size() == 1;
  });
}

LogicalResult mlir::fp8::matchGemmLayout(linalg::LinalgOp op, GemmInfo &info) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return failure();
  info.lhs.value = op.getDpsInputOperand(0)->get();
  info.rhs.value = op.getDpsInputOperand(1)->get();
  if (succeeded(matchBatchReduce(op, *dims, info)))
    return success();

  // The result must be [batch..., M..., N...]; its order of the batch, M and
  // N dimensions is the one every operand must follow. K's order is the
  // lhs's.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto lhs = getDimPositions(maps[0]), rhs = getDimPositions(maps[1]),
       out = getDimPositions(maps[2]);
  if (!lhs || !rhs || !out)
    return failure();
  size_t numBatch = dims->batch.size(), numM = dims->m.size(),
         numN = dims->n.size();
  if (out->size() != numBatch + numM + numN)
    return failure();
  ArrayRef<unsigned> outDims(*out);
  ArrayRef<unsigned> batchOrder = outDims.take_front(numBatch);
  ArrayRef<unsigned> mOrder = outDims.slice(numBatch, numM);
  ArrayRef<unsigned> nOrder = outDims.take_back(numN);
  auto isGroup = [](ArrayRef<unsigned> order, ArrayRef<unsigned> dimsOfKind) {
    return llvm::all_of(order, [&](unsigned d) {
      return llvm::is_contained(dimsOfKind, d);
    });
  };
  if (!isGroup(batchOrder, dims->batch) || !isGroup(mOrder, dims->m) ||
      !isGroup(nOrder, dims->n))
    return failure();
  SmallVector<unsigned> kOrder;
  for (unsigned d : *lhs)
    if (llvm::is_contained(dims->k, d))
      kOrder.push_back(d);

  std::optional<OperandLayout> lhsLayout = matchOperandLayout(
      *lhs, batchOrder, mOrder, kOrder, /*allowShared=*/false);
  std::optional<OperandLayout> rhsLayout = matchOperandLayout(
      *rhs, batchOrder, kOrder, nOrder, /*allowShared=*/true);
  if (!lhsLayout || !rhsLayout)
    return failure();
  info.lhs.transposed = lhsLayout->swapped;
  info.rhs.transposed = rhsLayout->swapped;
  info.lhs.matrixRank = numM + kOrder.size();
  info.rhs.matrixRank = kOrder.size() + numN;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  info.m = getGroupSize(mOrder, ranges);
  info.n = getGroupSize(nOrder, ranges);
  info.k = getGroupSize(kOrder, ranges);
  for (unsigned b : batchOrder)
    info.batch.push_back(ranges[b]);

  // Several M, N or K dimensions: one GEMM over their products, reached by
  // collapsing groups of contiguous dimensions (no data moves).
  if (numM > 1 || numN > 1 || kOrder.size() > 1) {
    auto sizesOf = [&](ArrayRef<unsigned> group) {
      return llvm::map_to_vector(group, [&](unsigned d) { return ranges[d]; });
    };
    info.mDims = sizesOf(mOrder);
    info.nDims = sizesOf(nOrder);
    info.kDims = sizesOf(kOrder);
    if (!isIdentity(lhsLayout->collapse))
      info.lhsCollapse.assign(lhsLayout->collapse);
    if (!isIdentity(rhsLayout->collapse))
      info.rhsCollapse.assign(rhsLayout->collapse);
    OperandLayout result = *matchOperandLayout(*out, batchOrder, mOrder,
                                               nOrder, /*allowShared=*/false);
    if (!isIdentity(result.collapse))
      info.resultCollapse.assign(result.collapse);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Roles
//===----------------------------------------------------------------------===//

namespace {
/// Values derived from gradients: arguments marked `fp8.role = "grad"`, and
/// everything computed in a function marked `fp8.backward`.
class GradientTaint {
public:
  explicit GradientTaint(ModuleOp module) {
    SmallVector<Value> worklist;
    module.walk([&](FunctionOpInterface func) {
      if (func.isExternal())
        return;
      for (BlockArgument arg : func.getArguments())
        if (auto role = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                          "fp8.role");
            role && role.getValue() == "grad")
          worklist.push_back(arg);
      if (func->hasAttr("fp8.backward"))
        func->walk([&](Operation *op) {
          if (!op->hasTrait<OpTrait::ConstantLike>())
            llvm::append_range(worklist, op->getResults());
        });
    });
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (!tainted.insert(value).second)
        continue;
      for (Operation *user : value.getUsers())
        llvm::append_range(worklist, user->getResults());
    }
  }
  bool contains(Value value) const { return tainted.contains(value); }

private:
  DenseSet<Value> tainted;
};
} // namespace

static void assignRole(GemmOperand &operand, Value gemmOperand,
                       const GradientTaint &taint) {
  Origin origin = traceOrigin(operand.value);
  operand.origin = origin.description;
  if (taint.contains(gemmOperand) || taint.contains(operand.value)) {
    operand.role = OperandRole::Gradient;
    return;
  }
  switch (origin.kind) {
  case Origin::Constant:
  case Origin::Global:
    operand.role = OperandRole::Weight;
    return;
  case Origin::Computed:
    operand.role = OperandRole::Activation;
    return;
  case Origin::Argument: {
    auto func = cast<FunctionOpInterface>(
        origin.argument.getOwner()->getParentOp());
    if (auto role = func.getArgAttrOfType<StringAttr>(
            origin.argument.getArgNumber(), "fp8.role")) {
      // The dialect verified the value (verifyFP8Attributes).
      operand.role = llvm::StringSwitch<OperandRole>(role.getValue())
                         .Case("activation", OperandRole::Activation)
                         .Case("grad", OperandRole::Gradient)
                         .Default(OperandRole::Weight);
      return;
    }
    // A weight is a matrix: an argument that still has (non-unit) batch
    // dimensions after looking through broadcasts is a batch of activations
    // (attention's Q, K, V passed in).
    ArrayRef<int64_t> shape =
        cast<ShapedType>(operand.value.getType()).getShape();
    bool batched = llvm::any_of(shape.drop_back(operand.matrixRank),
                                [](int64_t size) { return size != 1; });
    operand.role = batched ? OperandRole::Activation : OperandRole::Weight;
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Decisions
//===----------------------------------------------------------------------===//

static std::string printLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// The structural reasons a GEMM can't be converted, whatever the policy.
static std::optional<GemmReason> checkStructure(linalg::LinalgOp op,
                                                GemmInfo &info) {
  for (OpOperand &operand : op->getOpOperands())
    if (!isWideFloat(getElementTypeOrSelf(operand.get().getType())))
      return GemmReason::UnsupportedElementType;
  if (!op.hasPureTensorSemantics())
    return GemmReason::BufferSemantics;
  if (failed(matchGemmLayout(op, info)))
    return GemmReason::UnsupportedLayout;
  info.accumulates = !isZeroFill(op.getDpsInitOperand(0)->get());
  if (llvm::is_contained(info.getSizes(), 0))
    return GemmReason::ZeroSized;
  return std::nullopt;
}

static GemmReason decide(linalg::LinalgOp op, GemmInfo &info,
                         const GemmPolicy &policy,
                         ArrayRef<llvm::Regex> exclude) {
  // The GEMM's own recipe decides what its recipe implies.
  bool requireStaticShapes = policy.requireStaticShapes;
  bool wgradHigh = policy.wgradHigh;
  if (info.ownRecipe) {
    requireStaticShapes = info.ownRecipe.getGranularity() != Granularity::tensor;
    wgradHigh = info.ownRecipe.getWgradHigh();
  }
  // Blocks are split statically: no recipe finer than the tensor applies to
  // dynamic sizes, not even on request.
  if (requireStaticShapes &&
      llvm::any_of(info.getSizes(), ShapedType::isDynamic))
    return GemmReason::DynamicBlockShape;
  if (auto precision = op->getAttrOfType<StringAttr>("fp8.precision")) {
    if (precision.getValue() == "high")
      return GemmReason::ForcedHighPrecision;
    if (precision.getValue() == "fp8")
      return GemmReason::ForcedFP8;
  }
  auto func = op->getParentOfType<FunctionOpInterface>();
  std::string location = printLocation(op->getLoc());
  for (const llvm::Regex &pattern : exclude)
    if ((func && pattern.match(func.getName())) || pattern.match(location))
      return GemmReason::Excluded;

  bool hasWeight = info.lhs.role == OperandRole::Weight ||
                   info.rhs.role == OperandRole::Weight;
  bool hasGradient = info.lhs.role == OperandRole::Gradient ||
                     info.rhs.role == OperandRole::Gradient;
  // Attention's batched activation GEMMs (scores, context) stay high
  // precision, forward and backward; a weight gradient (X^T dY) is one
  // matrix product (at most unit batch dimensions, as TOSA spells it).
  bool batched = llvm::any_of(info.batch, [](int64_t size) { return size != 1; });
  bool activationGemm = !hasWeight && (!hasGradient || batched);
  if (activationGemm && !policy.fp8Attention)
    return GemmReason::ActivationGemm;
  if (wgradHigh && !hasWeight && hasGradient)
    return GemmReason::WeightGradientKept;

  auto unaligned = [](int64_t size) {
    return !ShapedType::isDynamic(size) && size % 16 != 0;
  };
  if (unaligned(info.k) || unaligned(info.n))
    return GemmReason::UnalignedKOrN;
  if (std::optional<int64_t> flops = info.getFlops();
      flops && *flops < policy.minFlops)
    return GemmReason::BelowSizeThreshold;
  return activationGemm ? GemmReason::ActivationGemmOptIn
                        : GemmReason::WeightGemm;
}

/// A contraction with both an M and an N dimension. Dot products and
/// matrix-vector products (a softmax backward's row sums, say) are
/// contractions too, but not GEMMs.
static bool isMatrixProduct(linalg::LinalgOp op) {
  if (!linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return succeeded(dims) && !dims->m.empty() && !dims->n.empty();
}

FailureOr<SmallVector<GemmInfo, 0>>
mlir::fp8::analyzeGemms(ModuleOp module, const GemmPolicy &policy) {
  SmallVector<llvm::Regex> exclude;
  for (const std::string &pattern : policy.exclude) {
    llvm::Regex regex(pattern);
    std::string error;
    if (!regex.isValid(error))
      return module.emitError("invalid exclude pattern '")
             << pattern << "': " << error;
    exclude.push_back(std::move(regex));
  }

  // A misspelt fp8.role or fp8.precision must not become a silent default.
  if (failed(verifyFP8Attributes(module)))
    return failure();

  GradientTaint taint(module);
  SmallVector<GemmInfo, 0> gemms;
  DenseMap<Operation *, unsigned> gemmsPerFunction;
  module.walk([&](linalg::LinalgOp op) {
    bool isConvolution = linalg::isaConvolutionOpInterface(op);
    if (!isConvolution && !isMatrixProduct(op))
      return;
    GemmInfo info;
    info.op = op;
    info.ownRecipe = op->getAttrOfType<RecipeAttr>("fp8.recipe");
    Operation *func = op->getParentOfType<FunctionOpInterface>();
    info.index = gemmsPerFunction[func]++;
    if (isConvolution) {
      info.reason = GemmReason::Convolution;
    } else if (std::optional<GemmReason> reason = checkStructure(op, info)) {
      info.reason = *reason;
    } else if (!func) {
      // Its scaling state and report entry are per function.
      info.reason = GemmReason::OutsideFunction;
    } else {
      // fp8-quantize reshapes batch-reduce and grouped operands itself.
      if (!info.batchReduce && !info.isCollapsed()) {
        peelLayout(info.lhs, /*allowBatchBroadcast=*/false);
        peelLayout(info.rhs, /*allowBatchBroadcast=*/!info.batch.empty());
      }
      assignRole(info.lhs, op.getDpsInputOperand(0)->get(), taint);
      assignRole(info.rhs, op.getDpsInputOperand(1)->get(), taint);
      // x W with both traced to arguments: by the linalg.matmul(x, W)
      // convention the lhs carries the tokens.
      if (info.lhs.role == OperandRole::Weight &&
          info.rhs.role == OperandRole::Weight &&
          StringRef(info.lhs.origin).starts_with("arg"))
        info.lhs.role = OperandRole::Activation;
      info.reason = decide(op, info, policy, exclude);
    }
    gemms.push_back(std::move(info));
  });

  if (policy.keepFirstLast) {
    auto isCandidate = [](const GemmInfo &g) {
      return g.isFP8() && g.reason != GemmReason::ForcedFP8;
    };
    auto first = llvm::find_if(gemms, isCandidate);
    auto last = llvm::find_if(llvm::reverse(gemms), isCandidate);
    if (first != gemms.end()) {
      first->reason = GemmReason::FirstOrLastGemm;
      last->reason = GemmReason::FirstOrLastGemm;
    }
  }
  return gemms;
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

static llvm::json::Value sizeToJson(int64_t size) {
  if (ShapedType::isDynamic(size))
    return nullptr;
  return size;
}

static int64_t getByteWidth(Value value) {
  return getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth() / 8;
}

static std::optional<int64_t> getNumElements(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  // ShapedType::getNumElements would overflow on the largest shapes.
  int64_t count = 1;
  for (int64_t size : type.getShape())
    count = saturatingMul(count, size);
  return count;
}

std::optional<std::pair<int64_t, int64_t>>
mlir::fp8::getOperandBlock(RecipeAttr recipe, OperandRole role,
                           OperandRole otherRole, int64_t kSize,
                           int64_t otherSize) {
  // DeepSeek-V3's and TE's block edge, and OCP MX's.
  constexpr int64_t kBlockExtent = 128, kMXBlockExtent = 32;
  switch (recipe.getGranularity()) {
  case Granularity::tensor:
    return std::nullopt;
  case Granularity::row:
    if (recipe.getWgradHigh() && role == OperandRole::Weight &&
        otherRole == OperandRole::Gradient)
      return std::pair{kSize, otherSize};
    return std::pair{kSize, int64_t(1)};
  case Granularity::block:
    return std::pair{kBlockExtent,
                     role == OperandRole::Weight ? kBlockExtent : int64_t(1)};
  case Granularity::mx:
    return std::pair{kMXBlockExtent, int64_t(1)};
  }
  llvm_unreachable("unknown granularity");
}

llvm::json::Object mlir::fp8::buildRecipeReport(RecipeAttr recipe) {
  llvm::json::Object object{
      {"granularity", stringifyGranularity(recipe.getGranularity()).str()},
      {"scaling", stringifyScaling(recipe.getScaling()).str()},
      {"format", stringifyFormat(recipe.getFormat()).str()},
      {"scales", recipe.getGranularity() == Granularity::mx ? "e8m0"
                 : recipe.getPowerOfTwo()                 ? "power_of_two"
                                                          : "f32"},
  };
  if (recipe.getGranularity() == Granularity::mx)
    object["sm_90"] = "emulated: Hopper has no MX tensor cores; the GEMM "
                      "applies the E8M0 scales per 32-deep K block";
  if (recipe.getWgradHigh())
    object["wgrad_high"] = true;
  return object;
}

llvm::json::Value mlir::fp8::buildGemmReport(ArrayRef<GemmInfo> gemms,
                                             RecipeAttr recipe) {
  llvm::json::Array records;
  int64_t totalFlops = 0, fp8Flops = 0, bytesSaved = 0;
  int64_t numFP8 = 0, unknownFlops = 0;
  for (const GemmInfo &gemm : gemms) {
    MLIRContext *context = gemm.op->getContext();
    RecipeAttr gemmRecipe = gemm.getRecipe(recipe);
    auto func = gemm.op->getParentOfType<FunctionOpInterface>();
    llvm::json::Object record{
        {"function", func ? func.getName().str() : ""},
        {"index", gemm.index},
        {"location", printLocation(gemm.op->getLoc())},
        {"op", gemm.op->getName().getStringRef().str()},
        {"decision", gemm.isFP8() ? "fp8" : "high_precision"},
        {"reason", stringifyGemmReason(gemm.reason).str()},
    };
    if (gemm.ownRecipe)
      record["recipe"] = buildRecipeReport(gemm.ownRecipe);
    if (gemm.reason != GemmReason::Convolution && gemm.lhs.value) {
      llvm::json::Array batch;
      for (int64_t size : gemm.batch)
        batch.push_back(sizeToJson(size));
      record["batch"] = std::move(batch);
      record["m"] = sizeToJson(gemm.m);
      record["n"] = sizeToJson(gemm.n);
      record["k"] = sizeToJson(gemm.k);
      // The dimensions a grouped GEMM's m, n and k are products of.
      if (gemm.isCollapsed())
        for (auto [key, sizes] :
             {std::pair{"m_dims", &gemm.mDims}, {"n_dims", &gemm.nDims},
              {"k_dims", &gemm.kDims}}) {
          llvm::json::Array array;
          for (int64_t size : *sizes)
            array.push_back(sizeToJson(size));
          record[key] = std::move(array);
        }
      auto operandJson = [&](const GemmOperand &operand) {
        llvm::json::Object object{
            {"role", stringifyOperandRole(operand.role).str()},
            {"origin", operand.origin},
            {"transposed", operand.transposed}};
        if (gemm.isFP8()) {
          std::string format;
          llvm::raw_string_ostream os(format);
          os << getOperandFloat8Type(context, gemmRecipe, operand.role);
          object["format"] = format;
        }
        return object;
      };
      record["lhs"] = operandJson(gemm.lhs);
      record["rhs"] = operandJson(gemm.rhs);
      // Blocks in the logical layouts [M, K] and [K, N].
      auto lhsBlock = getOperandBlock(gemmRecipe, gemm.lhs.role,
                                      gemm.rhs.role, gemm.k, gemm.m);
      auto rhsBlock = getOperandBlock(gemmRecipe, gemm.rhs.role,
                                      gemm.lhs.role, gemm.k, gemm.n);
      if (gemm.isFP8() && lhsBlock && rhsBlock) {
        auto [lhsK, lhsM] = *lhsBlock;
        auto [rhsK, rhsN] = *rhsBlock;
        record.getObject("lhs")->insert(
            {"block", llvm::json::Array{lhsM, lhsK}});
        record.getObject("rhs")->insert(
            {"block", llvm::json::Array{rhsK, rhsN}});
        // A partial last block is padded with zeros (DeepSeek's format).
        auto partial = [](int64_t size, int64_t extent) {
          return !ShapedType::isDynamic(size) && size % extent != 0;
        };
        record["padded_blocks"] = partial(gemm.m, lhsM) ||
                                  partial(gemm.k, lhsK) ||
                                  partial(gemm.n, rhsN);
      }
      record["accumulates"] = gemm.accumulates;
      if (std::optional<int64_t> flops = gemm.getFlops()) {
        record["flops"] = *flops;
        totalFlops = saturatingAdd(totalFlops, *flops);
        if (gemm.isFP8())
          fp8Flops = saturatingAdd(fp8Flops, *flops);
      } else {
        ++unknownFlops;
      }
    }
    if (gemm.isFP8()) {
      ++numFP8;
      for (Value operand : {gemm.lhs.value, gemm.rhs.value})
        if (std::optional<int64_t> count = getNumElements(operand))
          bytesSaved = saturatingAdd(
              bytesSaved, saturatingMul(*count, getByteWidth(operand) - 1));
    }
    records.push_back(std::move(record));
  }
  llvm::json::Object totals{
      {"gemms", static_cast<int64_t>(gemms.size())},
      {"fp8", numFP8},
      {"high_precision", static_cast<int64_t>(gemms.size()) - numFP8},
      {"flops", totalFlops},
      {"fp8_flops", fp8Flops},
      {"fp8_flop_share",
       totalFlops ? static_cast<double>(fp8Flops) / totalFlops : 0.0},
      {"gemms_with_dynamic_sizes", unknownFlops},
      {"operand_bytes_saved", bytesSaved},
  };
  return llvm::json::Object{{"recipe", buildRecipeReport(recipe)},
                            {"gemms", std::move(records)},
                            {"totals", std::move(totals)}};
}
