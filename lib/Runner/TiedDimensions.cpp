//===- TiedDimensions.cpp - Dynamic sizes a function ties together --------===//

#include "fp8/Runner/TiedDimensions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {
enum NodeKind : unsigned { Dimension, Index, Loop };
} // namespace

unsigned TiedDimensions::find(unsigned node) const {
  while (parent[node] != node)
    node = parent[node] = parent[parent[node]];
  return node;
}

void TiedDimensions::unite(unsigned a, unsigned b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return;
  parent[b] = a;
  // Two different static sizes in one class is the IR's own contradiction
  // (a verifier catches most); the first one stands.
  if (!staticSizes[a])
    staticSizes[a] = staticSizes[b];
}

unsigned TiedDimensions::addNode(std::optional<int64_t> staticSize) {
  parent.push_back(parent.size());
  staticSizes.push_back(staticSize);
  return parent.size() - 1;
}

unsigned TiedDimensions::getDimension(Value value, int64_t dim) {
  auto [it, inserted] =
      nodes.try_emplace({Dimension, value.getAsOpaquePointer(), dim}, 0);
  if (inserted) {
    int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(dim);
    it->second = addNode(ShapedType::isDynamic(size)
                             ? std::nullopt
                             : std::optional<int64_t>(size));
  }
  return it->second;
}

unsigned TiedDimensions::getIndex(Value value) {
  auto [it, inserted] =
      nodes.try_emplace({Index, value.getAsOpaquePointer(), 0}, 0);
  if (inserted) {
    APInt constant;
    std::optional<int64_t> size;
    if (matchPattern(value, m_ConstantInt(&constant)))
      size = constant.getSExtValue();
    it->second = addNode(size);
  }
  return it->second;
}

unsigned TiedDimensions::getLoop(Operation *op, unsigned loop) {
  auto [it, inserted] = nodes.try_emplace({Loop, op, loop}, 0);
  if (inserted)
    it->second = addNode(std::nullopt);
  return it->second;
}

static RankedTensorType getRankedTensor(Value value) {
  return dyn_cast<RankedTensorType>(value.getType());
}

void TiedDimensions::uniteShapes(Value a, Value b) {
  RankedTensorType typeA = getRankedTensor(a), typeB = getRankedTensor(b);
  if (!typeA || !typeB || typeA.getRank() != typeB.getRank())
    return;
  for (int64_t d = 0, e = typeA.getRank(); d < e; ++d)
    unite(getDimension(a, d), getDimension(b, d));
}

void TiedDimensions::visit(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      linalgOp && linalgOp.hasPureTensorSemantics()) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!getRankedTensor(operand.get()))
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (auto loop = dyn_cast<AffineDimExpr>(expr))
          unite(getDimension(operand.get(), d),
                getLoop(op, loop.getPosition()));
    }
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    for (OpResult result : op->getResults())
      if (getRankedTensor(result))
        uniteShapes(result, dps.getTiedOpOperand(result)->get());
  if (op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
      op->hasTrait<OpTrait::SameOperandsAndResultType>() ||
      op->hasTrait<OpTrait::Elementwise>()) {
    Value first;
    for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults()))
      if (getRankedTensor(value)) {
        if (first)
          uniteShapes(first, value);
        else
          first = value;
      }
  }
  if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
    uniteShapes(castOp.getSource(), castOp.getResult());
  } else if (auto dimOp = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> index = dimOp.getConstantIndex();
    RankedTensorType source = getRankedTensor(dimOp.getSource());
    if (index && source && *index >= 0 && *index < source.getRank())
      unite(getDimension(dimOp.getSource(), *index),
            getIndex(dimOp.getResult()));
  } else if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    RankedTensorType type = empty.getType();
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      if (type.isDynamicDim(d))
        unite(getDimension(empty.getResult(), d),
              getIndex(empty.getDynamicSize(d)));
  } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    for (auto [source, group] :
         llvm::enumerate(expand.getReassociationIndices()))
      if (group.size() == 1)
        unite(getDimension(expand.getSrc(), source),
              getDimension(expand.getResult(), group.front()));
    auto sizes = expand.getOutputShape().begin();
    for (auto [d, size] : llvm::enumerate(expand.getStaticOutputShape()))
      if (ShapedType::isDynamic(size) &&
          sizes != expand.getOutputShape().end())
        unite(getDimension(expand.getResult(), d), getIndex(*sizes++));
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    for (auto [result, group] :
         llvm::enumerate(collapse.getReassociationIndices()))
      if (group.size() == 1)
        unite(getDimension(collapse.getSrc(), group.front()),
              getDimension(collapse.getResult(), result));
  }
}

TiedDimensions::TiedDimensions(func::FuncOp func)
    : name(func.getSymName()), resultTypes(func.getResultTypes()) {
  for (BlockArgument arg : func.getArguments()) {
    SmallVector<unsigned> &dims = argumentNodes.emplace_back();
    if (RankedTensorType type = getRankedTensor(arg))
      for (int64_t d = 0, e = type.getRank(); d < e; ++d)
        dims.push_back(getDimension(arg, d));
  }
  func.walk([&](Operation *op) { visit(op); });
  // Results: only when one return gives them (several may return
  // different sizes).
  SmallVector<func::ReturnOp> returns;
  func.walk([&](func::ReturnOp op) {
    if (op->getParentOp() == func)
      returns.push_back(op);
  });
  resultNodes.resize(func.getNumResults());
  if (returns.size() != 1)
    return;
  for (auto [i, value] : llvm::enumerate(returns.front().getOperands()))
    if (RankedTensorType type = getRankedTensor(value))
      for (int64_t d = 0, e = type.getRank(); d < e; ++d)
        resultNodes[i].push_back(getDimension(value, d));
}

FailureOr<SmallVector<SmallVector<int64_t>>>
TiedDimensions::getArgumentShapes(ArrayRef<std::optional<GivenShape>> given,
                                  int64_t dynamicSize,
                                  std::string &error) const {
  auto describe = [&](unsigned arg) {
    std::string text = "argument #" + std::to_string(arg);
    if (arg < given.size() && given[arg] && !given[arg]->source.empty())
      text += " (" + given[arg]->source + ")";
    return text;
  };
  // Per class: the size a given argument gave it, and which.
  DenseMap<unsigned, std::tuple<int64_t, unsigned, unsigned>> known;
  for (auto [arg, shape] : llvm::enumerate(given)) {
    if (!shape)
      continue;
    for (auto [d, size] : llvm::enumerate(shape->shape)) {
      if (arg >= argumentNodes.size() || d >= argumentNodes[arg].size())
        break;
      unsigned root = find(argumentNodes[arg][d]);
      if (std::optional<int64_t> fixed = staticSizes[root];
          fixed && *fixed != size) {
        error = llvm::formatv("{0} has {1} in dimension {2}, but @{3} "
                              "requires it to be {4}",
                              describe(arg), size, d, name,
                              *fixed);
        return failure();
      }
      auto [it, inserted] =
          known.try_emplace(root, size, unsigned(arg), unsigned(d));
      auto [otherSize, otherArg, otherDim] = it->second;
      if (!inserted && otherSize != size) {
        error = llvm::formatv(
            "{0} has {1} in dimension {2}, but @{3} requires it to equal "
            "dimension {4} of {5}, which is {6}",
            describe(arg), size, d, name, otherDim,
            describe(otherArg), otherSize);
        return failure();
      }
    }
  }
  SmallVector<SmallVector<int64_t>> shapes;
  for (auto [arg, dims] : llvm::enumerate(argumentNodes)) {
    if (arg < given.size() && given[arg]) {
      shapes.push_back(given[arg]->shape);
      continue;
    }
    SmallVector<int64_t> &shape = shapes.emplace_back();
    for (unsigned node : dims) {
      unsigned root = find(node);
      if (auto it = known.find(root); it != known.end())
        shape.push_back(std::get<0>(it->second));
      else
        shape.push_back(staticSizes[root].value_or(dynamicSize));
    }
  }
  return shapes;
}

SmallVector<SmallVector<int64_t>>
TiedDimensions::getResultShapes(ArrayRef<SmallVector<int64_t>> argumentShapes,
                                int64_t dynamicSize) const {
  DenseMap<unsigned, int64_t> sizes;
  for (auto [dims, shape] : llvm::zip(argumentNodes, argumentShapes))
    for (auto [node, size] : llvm::zip(dims, shape))
      sizes.try_emplace(find(node), size);
  SmallVector<SmallVector<int64_t>> shapes;
  for (auto [i, type] : llvm::enumerate(resultTypes)) {
    SmallVector<int64_t> &shape = shapes.emplace_back();
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      continue;
    for (int64_t d = 0, e = tensor.getRank(); d < e; ++d) {
      if (!tensor.isDynamicDim(d)) {
        shape.push_back(tensor.getDimSize(d));
        continue;
      }
      std::optional<int64_t> size;
      if (d < static_cast<int64_t>(resultNodes[i].size())) {
        unsigned root = find(resultNodes[i][d]);
        if (auto it = sizes.find(root); it != sizes.end())
          size = it->second;
        else
          size = staticSizes[root];
      }
      shape.push_back(size.value_or(dynamicSize));
    }
  }
  return shapes;
}
