//===- Contract.cpp - What a training step's arguments are ----------------===//

#include "fp8/Train/Contract.h"

#include "fp8/Dialect/FP8/Analysis/RankVariance.h"
#include "fp8/Runner/Probes.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::train;

FailureOr<Contract> train::readContract(ModuleOp module, StringRef functionName,
                                        std::string &error) {
  // Every candidate, nested modules included: two steps are ambiguous, and
  // training the last one found silently is not what the user asked for.
  SmallVector<func::FuncOp> candidates;
  module.walk([&](func::FuncOp candidate) {
    if (functionName.empty()
            ? candidate->hasAttr("fp8.train_step")
            : candidate.getName() == functionName && !candidate.isExternal())
      candidates.push_back(candidate);
  });
  if (candidates.size() > 1) {
    SmallVector<std::string> names;
    for (func::FuncOp candidate : candidates)
      names.push_back(("@" + candidate.getName()).str());
    error = functionName.empty()
                ? "several functions are marked fp8.train_step: " +
                      llvm::join(names, ", ") + " (--function=NAME chooses one)"
                : llvm::formatv("{0} functions are named @{1} (in nested "
                                "modules); rename one",
                                candidates.size(), functionName)
                      .str();
    return failure();
  }
  func::FuncOp func = candidates.empty() ? func::FuncOp() : candidates.front();
  if (!func || func.isExternal()) {
    error = functionName.empty()
                ? "no function is marked fp8.train_step (fp8-gen "
                  "--mode=train --vocab=N writes it; docs/fp8-train.md)"
                : ("no function @" + functionName + " with a body").str();
    return failure();
  }
  Contract c;
  c.func = func;
  c.name = func.getName().str();
  auto role = [](DictionaryAttr attrs) -> StringRef {
    auto value = attrs ? attrs.getAs<StringAttr>("fp8.train") : StringAttr();
    return value ? value.getValue() : StringRef();
  };
  std::optional<unsigned> tokens, targets, lossScale, step, loss;
  auto once = [&](std::optional<unsigned> &slot, unsigned index,
                  StringRef what) {
    if (slot)
      error = ("two arguments or results are '" + what + "'").str();
    slot = index;
  };
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
    StringRef what = role(func.getArgAttrDict(i));
    if (what == "tokens")
      once(tokens, i, what);
    else if (what == "targets")
      once(targets, i, what);
    else if (what == "loss_scale")
      once(lossScale, i, what);
    else if (what == "step")
      once(step, i, what);
    else if (what == "parameter") {
      c.parameters.push_back(i);
      c.init.push_back(func.getArgAttr(i, "fp8.init"));
    } else if (what == "moment1")
      c.moment1.push_back(i);
    else if (what == "moment2")
      c.moment2.push_back(i);
    else {
      error = llvm::formatv("argument #{0} has no fp8.train role", i).str();
      return failure();
    }
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    StringRef what = role(func.getResultAttrDict(i));
    if (what == "loss")
      once(loss, i, what);
    else if (what == "parameter")
      c.newParameters.push_back(i);
    else if (what == "moment1")
      c.newMoment1.push_back(i);
    else if (what == "moment2")
      c.newMoment2.push_back(i);
    else if (what == "grad_norm")
      once(c.gradNorm, i, what);
    else {
      error = llvm::formatv("result #{0} has no fp8.train role", i).str();
      return failure();
    }
  }
  if (!error.empty())
    return failure();
  SmallVector<std::string> missing;
  if (!tokens)
    missing.push_back("an argument 'tokens'");
  if (!targets)
    missing.push_back("an argument 'targets'");
  if (!lossScale)
    missing.push_back("an argument 'loss_scale'");
  if (!step)
    missing.push_back("an argument 'step'");
  if (!loss)
    missing.push_back("a result 'loss'");
  if (c.parameters.empty())
    missing.push_back("'parameter' arguments");
  if (!missing.empty()) {
    error = "@" + c.name + " lacks " + llvm::join(missing, ", ") +
            " (fp8.train attributes; docs/fp8-train.md)";
    return failure();
  }
  c.tokens = *tokens;
  c.targets = *targets;
  c.lossScale = *lossScale;
  c.step = *step;
  c.loss = *loss;
  size_t n = c.parameters.size();
  if (c.moment1.size() != n || c.moment2.size() != n ||
      c.newParameters.size() != n || c.newMoment1.size() != n ||
      c.newMoment2.size() != n) {
    error = llvm::formatv("@{0} has {1} 'parameter' arguments but {2} "
                          "'moment1', {3} 'moment2' arguments and {4} "
                          "'parameter', {5} 'moment1', {6} 'moment2' results",
                          c.name, n, c.moment1.size(), c.moment2.size(),
                          c.newParameters.size(), c.newMoment1.size(),
                          c.newMoment2.size())
                .str();
    return failure();
  }
  FunctionType type = func.getFunctionType();
  c.type = type;
  auto tokensType = dyn_cast<RankedTensorType>(type.getInput(c.tokens));
  if (!tokensType || tokensType.getRank() != 2 ||
      !tokensType.hasStaticShape() ||
      !tokensType.getElementType().isSignlessInteger() ||
      type.getInput(c.targets) != tokensType) {
    error = "'tokens' and 'targets' must be static [batch, seq] integer "
            "tensors of one type";
    return failure();
  }
  // Token ids are read as signed integers (an embedding lookup's
  // index_cast): bytes 128-255 need more than 8 bits.
  if (tokensType.getElementType().getIntOrFloatBitWidth() < 9) {
    error = llvm::formatv("'tokens' and 'targets' are {0}: byte tokens "
                          "(0 to 255, as signed integers) need at least 9 "
                          "bits (i16, i32 or i64; fp8-gen writes i64)",
                          tokensType)
                .str();
    return failure();
  }
  if (!runner::getStorageBytes(tokensType, 0)) {
    error = llvm::formatv("'tokens' and 'targets' are {0}: more than 2^64 "
                          "bytes",
                          tokensType)
                .str();
    return failure();
  }
  c.batch = tokensType.getDimSize(0);
  c.seq = tokensType.getDimSize(1);
  // Data parallelism: the inputs are this rank's slice over every device of
  // a grid.
  auto sharded = [&](unsigned arg) {
    return func.getArgAttrOfType<FlatSymbolRefAttr>(arg, kShardedAttrName);
  };
  if (sharded(c.tokens) != sharded(c.targets)) {
    error = "'tokens' and 'targets' must be sharded alike (fp8.sharded)";
    return failure();
  }
  if (FlatSymbolRefAttr gridName = sharded(c.tokens)) {
    auto grid =
        SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(func, gridName);
    if (!grid || !grid.getShape().size() ||
        llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
      error = "'tokens' are sharded over @" + gridName.getValue().str() +
              ", which is not a shard.grid of static shape";
      return failure();
    }
    bool overflow = false;
    for (int64_t extent : grid.getShape())
      overflow |= llvm::MulOverflow(c.ranks, extent, c.ranks);
    if (overflow || c.ranks < 1 || c.ranks > INT32_MAX) {
      error = llvm::formatv("'tokens' are sharded over @{0}, a shard.grid of "
                            "{1} devices: a data-parallel step needs at least "
                            "one (fp8-gen --data-parallel=N writes a grid of "
                            "N)",
                            gridName.getValue(),
                            overflow ? std::string("more than 2^63")
                                     : std::to_string(c.ranks))
                  .str();
      return failure();
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    Type param = type.getInput(c.parameters[i]);
    auto tensor = dyn_cast<RankedTensorType>(param);
    if (!tensor || !tensor.hasStaticShape() ||
        !tensor.getElementType().isF32() ||
        type.getInput(c.moment1[i]) != param ||
        type.getInput(c.moment2[i]) != param ||
        type.getResult(c.newParameters[i]) != param ||
        type.getResult(c.newMoment1[i]) != param ||
        type.getResult(c.newMoment2[i]) != param) {
      error = llvm::formatv("parameter #{0} (argument #{1}): parameters, "
                            "moments and their results must be static f32 "
                            "tensors of one type",
                            i, c.parameters[i])
                  .str();
      return failure();
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    auto tensor = cast<RankedTensorType>(type.getInput(c.parameters[i]));
    std::optional<uint64_t> bytes = runner::getStorageBytes(tensor, 0);
    if (!bytes || *bytes == 0) {
      error =
          llvm::formatv("parameter #{0} (argument #{1}) is {2}: {3}", i,
                        c.parameters[i], tensor,
                        bytes ? "it has no elements" : "more than 2^64 bytes")
              .str();
      return failure();
    }
  }
  // fp8-train reads the loss and the gradient norm as one f32 and passes
  // loss_scale and step as f32: the types fp8-gen writes.
  Builder builder(func.getContext());
  Type f32 = builder.getF32Type();
  Type scalarTensor = RankedTensorType::get({}, f32);
  auto expect = [&](Type actual, Type expected, StringRef what, bool result,
                    unsigned index) {
    if (actual == expected)
      return true;
    error = llvm::formatv("'{0}' ({1} #{2}) is {3}; the contract makes it {4} "
                          "(docs/fp8-train.md)",
                          what, result ? "result" : "argument", index, actual,
                          expected)
                .str();
    return false;
  };
  if (!expect(type.getResult(c.loss), scalarTensor, "loss", true, c.loss) ||
      (c.gradNorm && !expect(type.getResult(*c.gradNorm), scalarTensor,
                             "grad_norm", true, *c.gradNorm)) ||
      !expect(type.getInput(c.lossScale), scalarTensor, "loss_scale", false,
              c.lossScale) ||
      !expect(type.getInput(c.step), f32, "step", false, c.step))
    return failure();
  // Byte tokens index the embedding: the vocabulary must hold 256.
  std::optional<int64_t> vocab =
      runner::findIndexedExtent(func.getArgument(c.tokens));
  if (vocab && *vocab < 256) {
    error = llvm::formatv("the tokens index a vocabulary of {0}; byte "
                          "tokens need 256 (fp8-gen --vocab=256)",
                          *vocab)
                .str();
    return failure();
  }
  return c;
}
