//===- fp8-train.cpp - Train a step function in FP32, BF16 and FP8 --------===//
//
// Trains a language model's training step (fp8-gen --mode=train, or any
// function with the contract of docs/fp8-train.md) on a byte-level corpus,
// on the CPU, once per recipe: FP32 (the step widened to f32), BF16 (the
// step as written: bf16 compute from f32 master weights) and FP8 recipes
// (the step through fp8-pipeline). Every run starts from the same weights
// and sees the same batches; each compiled step is called N times, with the
// parameters, the AdamW moments and (in the module's globals) the FP8
// scaling state carried from step to step. Writes the loss curves as CSV and
// a PNG, watches for loss spikes and non-finite values, checkpoints and
// resumes.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Analysis/RankVariance.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Runner/Golden.h"
#include "fp8/Runner/JSON.h"
#include "fp8/Runner/Mpi.h"
#include "fp8/Runner/Probes.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cmath>
#include <random>
#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
namespace cl = llvm::cl;

static cl::OptionCategory trainCategory("fp8-train options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<step.mlir>"),
                                      cl::cat(trainCategory));
static cl::opt<std::string>
    functionName("function", cl::cat(trainCategory),
                 cl::desc("The training step (default: the function marked "
                          "fp8.train_step)"));
static cl::opt<unsigned> steps("steps", cl::init(100), cl::cat(trainCategory),
                               cl::desc("Optimizer steps per run"));
static cl::opt<std::string> recipes(
    "recipes", cl::init("fp32,bf16,delayed,current"), cl::cat(trainCategory),
    cl::desc("Comma-separated runs: fp32, bf16, delayed, current, or "
             "LABEL=OPTIONS with fp8-pipeline options (e.g. "
             "'e4m3=scaling=delayed format=e4m3')"));
static cl::opt<std::string> corpus(
    "corpus", cl::init(FP8_DEFAULT_CORPUS), cl::cat(trainCategory),
    cl::desc("Text read as byte tokens; the last 10% is the validation set"));
static cl::opt<uint64_t> seed("seed", cl::init(1), cl::cat(trainCategory),
                              cl::desc("Seed of the initial weights and of "
                                       "the batches"));
static cl::opt<unsigned> valEvery(
    "val-every", cl::init(0), cl::cat(trainCategory),
    cl::desc("Validation loss every N steps and at the last (default: "
             "steps / 10)"));
static cl::opt<unsigned> valBatches("val-batches", cl::init(4),
                                    cl::cat(trainCategory),
                                    cl::desc("Batches per validation loss"));
static cl::opt<std::string> csvFile(
    "csv", cl::cat(trainCategory),
    cl::desc("CSV of every run and step (and FILE.tensors.csv: per quantized "
             "tensor amax, scale, saturated and flushed fractions)"));
static cl::opt<std::string> plotFile(
    "plot", cl::cat(trainCategory),
    cl::desc("PNG of the loss curves (gnuplot), the final-loss gap to BF16 "
             "in the legend"));
static cl::opt<bool> json("json", cl::cat(trainCategory),
                          cl::desc("End with one JSON object of the runs"));
static cl::opt<std::string>
    onSpike("on-spike", cl::init("continue"), cl::cat(trainCategory),
            cl::desc("stop | skip | continue: what a loss spike or a "
                     "non-finite loss or gradient does to its run (it is "
                     "reported in every case); skip drops that step's update"));
static cl::opt<double> spikeFactor(
    "spike-factor", cl::init(3.0), cl::cat(trainCategory),
    cl::desc("A loss over this times the running median is a spike"));
static cl::opt<unsigned> spikeWindow(
    "spike-window", cl::init(20), cl::cat(trainCategory),
    cl::desc("Steps of the running median of the loss"));
static cl::opt<std::string> checkpointDir(
    "checkpoint", cl::cat(trainCategory),
    cl::desc("Directory to save each run's parameters, optimizer and "
             "scaling state to (at the end, and every --checkpoint-every)"));
static cl::opt<unsigned> checkpointEvery("checkpoint-every", cl::init(0),
                                         cl::cat(trainCategory),
                                         cl::desc("Steps between checkpoints"));
static cl::opt<std::string>
    resumeDir("resume", cl::cat(trainCategory),
              cl::desc("Directory of a --checkpoint to continue from; "
                       "--steps counts from the start of the training"));
static cl::opt<unsigned> ranks(
    "ranks", cl::init(1), cl::cat(trainCategory),
    cl::desc("Data-parallel ranks: runs the step (fp8-gen --data-parallel=N) "
             "under mpirun -np N, each rank on its slice of the batch"));
static cl::opt<unsigned> optLevel(
    "O", cl::Prefix, cl::init(3), cl::cat(trainCategory), cl::value_desc("0-3"),
    cl::desc("LLVM optimization level of the JIT (default -O3); results do "
             "not depend on it"));
static cl::opt<bool> verifyEach(
    "verify-each", cl::cat(trainCategory),
    cl::desc("Verify the IR after every pass of the lowering, as fp8-opt "
             "does (slower; by default once, at the end)"));
static cl::opt<bool> quiet("quiet", cl::cat(trainCategory),
                           cl::desc("No progress lines on stderr"));

static int fail(const Twine &message) {
  llvm::errs() << "fp8-train: error: " << message << "\n";
  return 1;
}

//===----------------------------------------------------------------------===//
// The training-step contract
//===----------------------------------------------------------------------===//

namespace {
/// What each argument and result of the step is (docs/fp8-train.md).
struct Contract {
  std::string name;
  unsigned tokens = 0, targets = 0, lossScale = 0, step = 0;
  SmallVector<unsigned> parameters, moment1, moment2;
  unsigned loss = 0;
  SmallVector<unsigned> newParameters, newMoment1, newMoment2;
  std::optional<unsigned> gradNorm;
  /// Tokens per sequence and sequences per batch (per rank).
  int64_t batch = 0, seq = 0;
  /// Ranks the step is written for: the size of the grid its inputs are
  /// sharded over (`fp8.sharded`), 1 without one.
  int64_t ranks = 1;
  /// How each parameter starts: "zeros", "ones" or a standard deviation.
  SmallVector<Attribute> init;
};
} // namespace

static FailureOr<Contract> readContract(ModuleOp module, std::string &error) {
  func::FuncOp func;
  module.walk([&](func::FuncOp candidate) {
    if (functionName.empty() ? candidate->hasAttr("fp8.train_step")
                             : candidate.getName() == functionName)
      func = candidate;
  });
  if (!func || func.isExternal()) {
    error = functionName.empty()
                ? "no function is marked fp8.train_step (fp8-gen "
                  "--mode=train --vocab=N writes it; docs/fp8-train.md)"
                : "no function @" + functionName + " with a body";
    return failure();
  }
  Contract c;
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
      c.gradNorm = i;
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
  auto tokensType = dyn_cast<RankedTensorType>(type.getInput(c.tokens));
  if (!tokensType || tokensType.getRank() != 2 ||
      !tokensType.hasStaticShape() ||
      !tokensType.getElementType().isSignlessInteger() ||
      type.getInput(c.targets) != tokensType) {
    error = "'tokens' and 'targets' must be static [batch, seq] integer "
            "tensors of one type";
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
    for (int64_t extent : grid.getShape())
      c.ranks *= extent;
  }
  for (unsigned i = 0; i < n; ++i) {
    Type param = type.getInput(c.parameters[i]);
    auto tensor = dyn_cast<RankedTensorType>(param);
    if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32() ||
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
  // Byte tokens index the embedding: the vocabulary must hold 256.
  std::optional<int64_t> vocab =
      findIndexedExtent(func.getArgument(c.tokens));
  if (vocab && *vocab < 256) {
    error = llvm::formatv("the tokens index a vocabulary of {0}; byte "
                          "tokens need 256 (fp8-gen --vocab=256)",
                          *vocab)
                .str();
    return failure();
  }
  return c;
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

namespace {
struct Recipe {
  std::string label;
  enum Kind { FP32, BF16, FP8 } kind;
  /// fp8-pipeline options (FP8 only).
  std::string pipeline;
};

/// One run's state and history.
struct Run {
  Recipe recipe;
  std::unique_ptr<CompiledFunction> fn;
  SmallVector<QuantizeProbe> probes;
  llvm::StringMap<RankedTensorType> scalingState;
  SmallVector<HostTensor> parameters, moment1, moment2;
  struct Row {
    unsigned step;
    double loss, gradNorm, valLoss, seconds;
  };
  std::vector<Row> rows;
  struct TensorRow {
    unsigned step;
    std::string tensor;
    double amax, scale, saturated, flushed;
  };
  std::vector<TensorRow> tensorRows;
  std::vector<std::string> events;
  unsigned firstStep = 1, lastStep = 0;
  bool stopped = false;
  double finalLoss = NAN, finalValLoss = NAN;
  /// The all-reduces (MAX) that fp8-pipeline added for amaxes: one step's.
  unsigned amaxCollectives = 0;
};
} // namespace

static FailureOr<SmallVector<Recipe>> parseRecipes(std::string &error) {
  SmallVector<Recipe> result;
  for (StringRef item : llvm::split(recipes, ',')) {
    item = item.trim();
    if (item.empty())
      continue;
    Recipe r;
    if (item == "fp32") {
      r = {"fp32", Recipe::FP32, ""};
    } else if (item == "bf16") {
      r = {"bf16", Recipe::BF16, ""};
    } else if (item == "delayed" || item == "current") {
      r = {item.str(), Recipe::FP8, ("scaling=" + item).str()};
    } else if (item.contains('=')) {
      auto [label, options] = item.split('=');
      r = {label.trim().str(), Recipe::FP8, options.trim().str()};
    } else {
      error = ("unknown recipe '" + item +
               "' (fp32, bf16, delayed, current, or LABEL=OPTIONS)")
                  .str();
      return failure();
    }
    if (llvm::any_of(result,
                     [&](const Recipe &o) { return o.label == r.label; })) {
      error = "recipe '" + r.label + "' is listed twice";
      return failure();
    }
    result.push_back(r);
  }
  if (result.empty()) {
    error = "--recipes names no run";
    return failure();
  }
  return result;
}

/// Whether the step computes in bf16 anywhere (fp8-gen --dtype=bf16).
static bool computesInBF16(func::FuncOp func) {
  bool found = false;
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (getElementTypeOrSelf(type).isBF16())
        found = true;
  });
  return found;
}

/// The step of `recipe`, lowered and compiled.
static LogicalResult prepare(ModuleOp input, const Contract &contract,
                             Run &run, std::string &error) {
  OwningOpRef<ModuleOp> module = input.clone();
  auto func = module->lookupSymbol<func::FuncOp>(contract.name);
  switch (run.recipe.kind) {
  case Recipe::FP32:
    if (failed(widenFloats(*module, Float32Type::get(module->getContext()),
                           error)))
      return failure();
    break;
  case Recipe::BF16:
    if (!computesInBF16(func)) {
      error = "recipe bf16 needs a step that computes in bf16 from f32 "
              "master weights (fp8-gen --dtype=bf16); @" +
              contract.name + " computes in f32";
      return failure();
    }
    break;
  case Recipe::FP8: {
    std::unique_ptr<FP8PipelineOptions> options =
        FP8PipelineOptions::createFromString(run.recipe.pipeline);
    if (!options) {
      error = "bad fp8-pipeline options '" + run.recipe.pipeline +
              "' in recipe " + run.recipe.label;
      return failure();
    }
    if (options->state != "globals") {
      error = "recipe " + run.recipe.label +
              ": fp8-train keeps the scaling state in the module's globals "
              "(state=globals)";
      return failure();
    }
    auto countAmaxCollectives = [&] {
      unsigned count = 0;
      module->walk([&](shard::AllReduceOp op) {
        count += op.getReduction() == shard::ReductionKind::Max;
      });
      return count;
    };
    unsigned before = countAmaxCollectives();
    PassManager pm(module->getContext());
    buildFP8Pipeline(pm, *options);
    if (failed(pm.run(*module))) {
      error = "fp8-pipeline failed for recipe " + run.recipe.label;
      return failure();
    }
    run.amaxCollectives = countAmaxCollectives() - before;
    run.probes = addQuantizeProbes(*module);
    run.scalingState = findScalingState(*module);
    break;
  }
  }
  CompileOptions compileOptions;
  compileOptions.optLevel = optLevel;
  compileOptions.verifyEachPass = verifyEach;
  run.fn = CompiledFunction::compile(*module, contract.name, error,
                                     compileOptions);
  return success(run.fn != nullptr);
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

namespace {
/// Byte tokens, split into training and validation text.
struct Corpus {
  std::string train, validation;
  /// This process's rank among `contract.ranks`.
  int64_t rank = 0;

  /// This rank's `contract.batch` rows of a global batch of
  /// `contract.batch * contract.ranks` sequences of `seq + 1` bytes at
  /// positions drawn from `rng` (the same global batch for any number of
  /// ranks): the tokens and the targets (the same, shifted by one).
  std::pair<HostTensor, HostTensor> batch(const std::string &text,
                                          const Contract &contract, Type type,
                                          std::mt19937_64 &rng) const {
    HostTensor tokens(type, {contract.batch, contract.seq});
    HostTensor targets(type, {contract.batch, contract.seq});
    std::uniform_int_distribution<size_t> start(0, text.size() -
                                                       contract.seq - 1);
    for (int64_t row = 0; row < contract.batch * contract.ranks; ++row) {
      size_t at = start(rng);
      int64_t b = row - rank * contract.batch;
      if (b < 0 || b >= contract.batch)
        continue;
      for (int64_t s = 0; s < contract.seq; ++s) {
        tokens.set(b * contract.seq + s,
                   static_cast<unsigned char>(text[at + s]));
        targets.set(b * contract.seq + s,
                    static_cast<unsigned char>(text[at + s + 1]));
      }
    }
    return {std::move(tokens), std::move(targets)};
  }
};
} // namespace

static FailureOr<Corpus> readCorpus(const Contract &contract,
                                    std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(corpus);
  if (!file) {
    error = "cannot read corpus '" + corpus + "': " + file.getError().message();
    return failure();
  }
  StringRef text = (*file)->getBuffer();
  Corpus c;
  size_t split = text.size() - text.size() / 10;
  c.train = text.take_front(split).str();
  c.validation = text.drop_front(split).str();
  size_t need = static_cast<size_t>(contract.seq) + 1;
  if (c.train.size() < need * contract.batch * contract.ranks ||
      c.validation.size() < need) {
    error = llvm::formatv("corpus '{0}' has {1} bytes: too short for a "
                          "batch of {2} x {3} tokens (training set) and one "
                          "sequence (its last 10%, validation)",
                          corpus, text.size(), contract.batch * contract.ranks,
                          need)
                .str();
    return failure();
  }
  return c;
}

/// The initial parameters, the same for every run: "zeros", "ones", or
/// N(0, std^2) from `seed` (std 0.02 when the contract does not say).
static SmallVector<HostTensor> initialParameters(func::FuncOp func,
                                                 const Contract &contract) {
  std::mt19937_64 rng(seed);
  SmallVector<HostTensor> values;
  for (auto [i, arg] : llvm::enumerate(contract.parameters)) {
    auto type = cast<RankedTensorType>(func.getArgumentTypes()[arg]);
    HostTensor value(type.getElementType(), type.getShape());
    Attribute init = contract.init[i];
    auto word = dyn_cast_or_null<StringAttr>(init);
    double std = 0.02;
    if (auto f = dyn_cast_or_null<FloatAttr>(init))
      std = f.getValueAsDouble();
    std::normal_distribution<double> normal(0, std);
    for (int64_t k = 0, e = value.getNumElements(); k < e; ++k)
      value.set(k, word ? (word.getValue() == "ones" ? 1.0 : 0.0)
                        : normal(rng));
    values.push_back(std::move(value));
  }
  return values;
}

static HostTensor zerosLike(const HostTensor &like) {
  HostTensor zeros(like.getElementType(), like.getShape());
  std::memset(zeros.data(), 0,
              like.getNumElements() * size_t(like.getElementBytes()));
  return zeros;
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

static std::string checkpointPath(StringRef dir, const Run &run,
                                  const Twine &file) {
  SmallString<256> path(dir);
  llvm::sys::path::append(path, run.recipe.label, file);
  return std::string(path);
}

static LogicalResult saveCheckpoint(const Run &run, unsigned step,
                                    std::string &error) {
  SmallString<256> dir(checkpointDir);
  llvm::sys::path::append(dir, run.recipe.label);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = ("cannot create '" + dir + "': " + ec.message()).str();
    return failure();
  }
  auto save = [&](ArrayRef<HostTensor> values, StringRef kind) {
    for (auto [i, value] : llvm::enumerate(values))
      if (failed(writeNpy(checkpointPath(checkpointDir, run,
                                         kind + "." + Twine(i) + ".npy"),
                          value, error)))
        return failure();
    return success();
  };
  if (failed(save(run.parameters, "parameter")) ||
      failed(save(run.moment1, "moment1")) ||
      failed(save(run.moment2, "moment2")))
    return failure();
  for (const auto &entry : run.scalingState) {
    FailureOr<HostTensor> value =
        run.fn->readGlobal(entry.getKey(), entry.getValue(), error);
    if (failed(value) ||
        failed(writeNpy(checkpointPath(checkpointDir, run,
                                       entry.getKey() + ".npy"),
                        *value, error)))
      return failure();
  }
  std::error_code ec;
  llvm::raw_fd_ostream meta(checkpointPath(checkpointDir, run, "step"), ec);
  if (ec) {
    error = "cannot write the checkpoint's step: " + ec.message();
    return failure();
  }
  meta << step << "\n";
  return success();
}

/// Loads `run`'s state from --resume; returns the step it had finished.
static FailureOr<unsigned> loadCheckpoint(Run &run, std::string &error) {
  auto file = llvm::MemoryBuffer::getFile(checkpointPath(resumeDir, run, "step"));
  unsigned step;
  if (!file || (*file)->getBuffer().trim().getAsInteger(10, step)) {
    error = "no checkpoint of recipe " + run.recipe.label + " in '" +
            resumeDir + "'";
    return failure();
  }
  auto load = [&](SmallVector<HostTensor> &values, StringRef kind) {
    for (auto [i, value] : llvm::enumerate(values)) {
      FailureOr<HostTensor> read = readNpy(
          checkpointPath(resumeDir, run, kind + "." + Twine(i) + ".npy"),
          value.getElementType(), error);
      if (failed(read))
        return failure();
      if (read->getShape() != value.getShape()) {
        error = ("the checkpoint's " + kind + " #" + Twine(i) +
                 " does not have the step's shape")
                    .str();
        return failure();
      }
      value = std::move(*read);
    }
    return success();
  };
  if (failed(load(run.parameters, "parameter")) ||
      failed(load(run.moment1, "moment1")) ||
      failed(load(run.moment2, "moment2")))
    return failure();
  for (const auto &entry : run.scalingState) {
    FailureOr<HostTensor> value =
        readNpy(checkpointPath(resumeDir, run, entry.getKey() + ".npy"),
                entry.getValue().getElementType(), error);
    if (failed(value) ||
        failed(run.fn->writeGlobal(entry.getKey(), *value, error)))
      return failure();
  }
  return step;
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

namespace {
/// A snapshot of the FP8 scaling state, to undo a step (validation, skip).
using StateSnapshot = SmallVector<std::pair<std::string, HostTensor>>;
} // namespace

static FailureOr<StateSnapshot> snapshot(const Run &run, std::string &error) {
  StateSnapshot state;
  for (const auto &entry : run.scalingState) {
    FailureOr<HostTensor> value =
        run.fn->readGlobal(entry.getKey(), entry.getValue(), error);
    if (failed(value))
      return failure();
    state.push_back({entry.getKey().str(), std::move(*value)});
  }
  return state;
}

static LogicalResult restore(Run &run, const StateSnapshot &state,
                             std::string &error) {
  for (const auto &[name, value] : state)
    if (failed(run.fn->writeGlobal(name, value, error)))
      return failure();
  return success();
}

/// The step's inputs in argument order.
static SmallVector<HostTensor> stepInputs(const Run &run,
                                          const Contract &contract,
                                          FunctionType type, HostTensor tokens,
                                          HostTensor targets, unsigned step) {
  SmallVector<HostTensor> inputs(type.getNumInputs());
  inputs[contract.tokens] = std::move(tokens);
  inputs[contract.targets] = std::move(targets);
  auto scalar = [&](unsigned arg, double value) {
    Type t = type.getInput(arg);
    auto tensor = dyn_cast<RankedTensorType>(t);
    HostTensor h(tensor ? tensor.getElementType() : t,
                 tensor ? tensor.getShape() : ArrayRef<int64_t>());
    for (int64_t i = 0, e = h.getNumElements(); i < e; ++i)
      h.set(i, value);
    inputs[arg] = std::move(h);
  };
  scalar(contract.lossScale, 1.0);
  scalar(contract.step, step);
  for (auto [i, arg] : llvm::enumerate(contract.parameters)) {
    inputs[arg] = run.parameters[i];
    inputs[contract.moment1[i]] = run.moment1[i];
    inputs[contract.moment2[i]] = run.moment2[i];
  }
  return inputs;
}

static bool allFinite(const HostTensor &tensor) {
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
    if (!std::isfinite(tensor.get(i)))
      return false;
  return true;
}

static double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2,
                   values.end());
  return values[values.size() / 2];
}

/// The mean loss over the validation batches (fixed by the seed), the
/// scaling state left as it was.
static FailureOr<double> validationLoss(Run &run, const Contract &contract,
                                        FunctionType type,
                                        const Corpus &data, Type tokenType,
                                        unsigned step, std::string &error) {
  FailureOr<StateSnapshot> state = snapshot(run, error);
  if (failed(state))
    return failure();
  std::mt19937_64 rng(seed ^ 0xda7aULL);
  double sum = 0;
  for (unsigned b = 0; b < valBatches; ++b) {
    auto [tokens, targets] =
        data.batch(data.validation, contract, tokenType, rng);
    FailureOr<SmallVector<HostTensor>> out =
        run.fn->call(stepInputs(run, contract, type, std::move(tokens),
                                std::move(targets), step),
                     error);
    if (failed(out))
      return failure();
    sum += (*out)[contract.loss].get(0);
  }
  if (failed(restore(run, *state, error)))
    return failure();
  return sum / valBatches;
}

/// Per quantized tensor after a step: amax (newest history entry) and scale
/// from the delayed-scaling state, saturated and flushed from the probes.
static LogicalResult recordTensors(Run &run, unsigned step,
                                   std::string &error) {
  for (const QuantizeProbe &probe : run.probes) {
    Run::TensorRow row{step, probe.name, NAN, NAN, NAN, NAN};
    auto history = run.scalingState.find(probe.name + ".amax_history");
    auto scale = run.scalingState.find(probe.name + ".scale");
    if (history != run.scalingState.end()) {
      FailureOr<HostTensor> value =
          run.fn->readGlobal(history->getKey(), history->getValue(), error);
      if (failed(value))
        return failure();
      // fp8.roll_history moved the step's amax to the back (TE's order);
      // a history of one keeps none.
      int64_t length = value->getNumElements();
      if (length > 1)
        row.amax = value->get(length - 1);
    }
    if (scale != run.scalingState.end()) {
      FailureOr<HostTensor> value =
          run.fn->readGlobal(scale->getKey(), scale->getValue(), error);
      if (failed(value))
        return failure();
      row.scale = value->get(0);
    }
    run.tensorRows.push_back(row);
  }
  return success();
}

/// Reads the probes' counters of the last call into the newest tensor rows.
static LogicalResult recordCounts(Run &run, MLIRContext &context,
                                  std::string &error) {
  auto type = RankedTensorType::get({3}, IntegerType::get(&context, 64));
  size_t first = run.tensorRows.size() - run.probes.size();
  for (auto [i, probe] : llvm::enumerate(run.probes)) {
    FailureOr<HostTensor> counts = run.fn->readGlobal(probe.global, type, error);
    if (failed(counts))
      return failure();
    double total = std::max(1.0, counts->get(2));
    run.tensorRows[first + i].saturated = counts->get(0) / total;
    run.tensorRows[first + i].flushed = counts->get(1) / total;
  }
  return success();
}

/// The quantized tensor whose amax grew the most at the last step, for a
/// spike report.
static std::string largestAmaxJump(const Run &run) {
  size_t n = run.probes.size();
  if (n == 0 || run.tensorRows.size() < 2 * n)
    return "";
  std::string best;
  double bestRatio = 1;
  for (size_t i = 0; i < n; ++i) {
    const Run::TensorRow &now = run.tensorRows[run.tensorRows.size() - n + i];
    const Run::TensorRow &before =
        run.tensorRows[run.tensorRows.size() - 2 * n + i];
    double ratio = now.amax / before.amax;
    if (std::isfinite(ratio) && ratio > bestRatio) {
      bestRatio = ratio;
      best = llvm::formatv("{0} (amax {1:e} -> {2:e})", now.tensor,
                           before.amax, now.amax)
                 .str();
    }
  }
  return best;
}

static LogicalResult train(Run &run, const Contract &contract,
                           FunctionType type, const Corpus &data,
                           MLIRContext &context, std::string &error) {
  Type tokenType =
      cast<RankedTensorType>(type.getInput(contract.tokens)).getElementType();
  unsigned every = valEvery ? valEvery : std::max(1u, steps / 10);
  std::vector<double> recent;
  for (unsigned step = run.firstStep; step <= steps && !run.stopped; ++step) {
    auto start = std::chrono::steady_clock::now();
    // The same batch for every run: seeded by the step.
    std::mt19937_64 rng(seed * 1000003ULL + step);
    auto [tokens, targets] = data.batch(data.train, contract, tokenType, rng);
    FailureOr<StateSnapshot> before;
    if (onSpike == "skip" && failed(before = snapshot(run, error)))
      return failure();
    FailureOr<SmallVector<HostTensor>> out = run.fn->call(
        stepInputs(run, contract, type, std::move(tokens), std::move(targets),
                   step),
        error);
    if (failed(out))
      return failure();
    double loss = (*out)[contract.loss].get(0);
    double gradNorm =
        contract.gradNorm ? (*out)[*contract.gradNorm].get(0) : NAN;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (failed(recordTensors(run, step, error)) ||
        failed(recordCounts(run, context, error)))
      return failure();

    // Watch the run (seed 004's runbook): non-finite values, loss spikes.
    std::string problem;
    bool finiteState = true;
    for (unsigned i : contract.newParameters)
      finiteState &= allFinite((*out)[i]);
    if (!std::isfinite(loss))
      problem = llvm::formatv("the loss is {0}", loss).str();
    else if (contract.gradNorm && !std::isfinite(gradNorm))
      problem = llvm::formatv("the gradient norm is {0}", gradNorm).str();
    else if (!finiteState)
      problem = "a parameter is no longer finite";
    else if (recent.size() >= std::max(2u, spikeWindow / 2) &&
             loss > spikeFactor * median(recent))
      problem = llvm::formatv("loss spike: {0:f4} is {1:f1}x the running "
                              "median {2:f4}",
                              loss, loss / median(recent), median(recent))
                    .str();
    bool apply = true;
    if (!problem.empty()) {
      std::string jump = largestAmaxJump(run);
      std::string event =
          llvm::formatv("{0}: step {1}: {2}{3}; {4}", run.recipe.label, step,
                        problem, jump.empty() ? "" : "; amax jumped in " + jump,
                        onSpike == "stop"   ? "run stopped"
                        : onSpike == "skip" ? "update skipped"
                                            : "continuing")
              .str();
      llvm::errs() << "fp8-train: " << event << "\n";
      run.events.push_back(event);
      if (onSpike == "stop")
        run.stopped = true;
      if (onSpike == "skip") {
        apply = false;
        if (failed(restore(run, *before, error)))
          return failure();
      }
    }
    if (apply) {
      for (size_t i = 0; i < run.parameters.size(); ++i) {
        run.parameters[i] = std::move((*out)[contract.newParameters[i]]);
        run.moment1[i] = std::move((*out)[contract.newMoment1[i]]);
        run.moment2[i] = std::move((*out)[contract.newMoment2[i]]);
      }
    }
    if (std::isfinite(loss)) {
      recent.push_back(loss);
      if (recent.size() > spikeWindow)
        recent.erase(recent.begin());
    }

    double valLoss = NAN;
    if (step % every == 0 || step == steps || run.stopped) {
      FailureOr<double> value = validationLoss(run, contract, type, data,
                                               tokenType, step, error);
      if (failed(value))
        return failure();
      valLoss = *value;
      run.finalValLoss = valLoss;
    }
    run.finalLoss = loss;
    run.lastStep = step;
    run.rows.push_back({step, loss, gradNorm, valLoss, seconds});
    if (!quiet && (step % every == 0 || step == steps))
      llvm::errs() << llvm::formatv(
          "fp8-train: {0,-10} step {1,5}/{2}  loss {3:f4}  val {4:f4}  "
          "{5:f2} s/step\n",
          run.recipe.label, step, unsigned(steps), loss, valLoss, seconds);
    if (!checkpointDir.empty() && checkpointEvery &&
        step % checkpointEvery == 0 &&
        failed(saveCheckpoint(run, step, error)))
      return failure();
  }
  if (!checkpointDir.empty() && run.lastStep >= run.firstStep &&
      failed(saveCheckpoint(run, run.lastStep, error)))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

/// "+0.30%": a relative gap as a signed percentage.
static std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.2f%%", 100 * fraction);
  return text;
}

static std::string number(double value) {
  if (!std::isfinite(value))
    return "";
  char text[32];
  std::snprintf(text, sizeof(text), "%.7g", value);
  return text;
}

static LogicalResult writeCsv(ArrayRef<Run> runs, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(csvFile, ec);
  if (ec) {
    error = "cannot write '" + csvFile + "': " + ec.message();
    return failure();
  }
  os << "recipe,step,train_loss,val_loss,grad_norm,seconds\n";
  for (const Run &run : runs)
    for (const Run::Row &row : run.rows)
      os << run.recipe.label << "," << row.step << "," << number(row.loss)
         << "," << number(row.valLoss) << "," << number(row.gradNorm) << ","
         << number(row.seconds) << "\n";
  llvm::raw_fd_ostream tensors(csvFile + ".tensors.csv", ec);
  if (ec) {
    error = "cannot write '" + csvFile + ".tensors.csv': " + ec.message();
    return failure();
  }
  tensors << "recipe,step,tensor,amax,scale,saturated,flushed\n";
  for (const Run &run : runs)
    for (const Run::TensorRow &row : run.tensorRows)
      tensors << run.recipe.label << "," << row.step << "," << row.tensor
              << "," << number(row.amax) << "," << number(row.scale) << ","
              << number(row.saturated) << "," << number(row.flushed) << "\n";
  return success();
}

/// The relative gap of `run`'s final validation loss to the BF16 run's.
static std::optional<double> gapToBF16(const Run &run, ArrayRef<Run> runs) {
  auto *bf16 = llvm::find_if(
      runs, [](const Run &r) { return r.recipe.kind == Recipe::BF16; });
  if (bf16 == runs.end() || !std::isfinite(bf16->finalValLoss) ||
      !std::isfinite(run.finalValLoss))
    return std::nullopt;
  return (run.finalValLoss - bf16->finalValLoss) / bf16->finalValLoss;
}

/// Train and validation curves of every run, through gnuplot.
static LogicalResult plot(ArrayRef<Run> runs, std::string &error) {
  auto gnuplot = llvm::sys::findProgramByName("gnuplot");
  if (!gnuplot) {
    error = "--plot needs gnuplot (Debian: gnuplot-nox)";
    return failure();
  }
  SmallString<128> dataFile, scriptFile;
  if (llvm::sys::fs::createTemporaryFile("fp8-train", "dat", dataFile) ||
      llvm::sys::fs::createTemporaryFile("fp8-train", "gp", scriptFile)) {
    error = "cannot create temporary files for gnuplot";
    return failure();
  }
  std::error_code ec;
  {
    llvm::raw_fd_ostream data(dataFile, ec);
    // One gnuplot data block per run (two blank lines apart): step, train
    // loss, validation loss ("NaN" where not measured).
    for (const Run &run : runs) {
      for (const Run::Row &row : run.rows)
        data << row.step << " " << row.loss << " "
             << (std::isfinite(row.valLoss) ? number(row.valLoss) : "NaN")
             << "\n";
      data << "\n\n";
    }
  }
  {
    llvm::raw_fd_ostream script(scriptFile, ec);
    script << "set terminal pngcairo size 1100,700 noenhanced\n"
           << "set output '" << plotFile << "'\n"
           << "set title 'Training loss ("
           << llvm::sys::path::filename(inputFile) << ")'\n"
           << "set xlabel 'step'\nset ylabel 'cross entropy (nats)'\n"
           << "set key top right\nset grid\nset datafile missing 'NaN'\n"
           << "plot ";
    for (auto [i, run] : llvm::enumerate(runs)) {
      std::optional<double> gap = gapToBF16(run, runs);
      std::string label = run.recipe.label;
      if (gap && run.recipe.kind != Recipe::BF16)
        label += " (val " + percent(*gap) + " vs bf16)";
      script << (i ? ", " : "") << "'" << dataFile << "' index " << i
             << " using 1:2 with lines lw 1 lc " << i + 1 << " title '"
             << label << " train', '" << dataFile << "' index " << i
             << " using 1:3 with linespoints pt 7 ps 0.6 lw 2 lc " << i + 1
             << " title '" << run.recipe.label << " val'";
    }
    script << "\n";
  }
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*gnuplot, {*gnuplot, scriptFile},
                                         std::nullopt, {}, 0, 0, &message);
  llvm::sys::fs::remove(dataFile);
  llvm::sys::fs::remove(scriptFile);
  if (status != 0) {
    error = "gnuplot failed" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Data parallelism
//===----------------------------------------------------------------------===//

/// --ranks=N from a shell: the same command line, N times, under mpirun.
static int relaunchUnderMpirun(int argc, char **argv) {
  llvm::ErrorOr<std::string> mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun)
    return fail("--ranks runs the ranks with mpirun, which is not on PATH "
                "(OpenMPI: scripts/setup.sh installs it)");
  std::string self = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&relaunchUnderMpirun));
  // The ranks share the cores: OpenMP threads divided among them, no
  // pinning; more ranks than cores is allowed.
  unsigned threads =
      std::max(1u, std::thread::hardware_concurrency() / unsigned(ranks));
  SmallVector<std::string> args = {*mpirun,     "-np",    std::to_string(ranks),
                                   "--oversubscribe", "--bind-to", "none",
                                   "-x", "OMP_NUM_THREADS=" + std::to_string(threads)};
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  args.push_back(self);
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  SmallVector<StringRef> refs(args.begin(), args.end());
  std::string error;
  int code = llvm::sys::ExecuteAndWait(*mpirun, refs, std::nullopt, {}, 0, 0,
                                       &error);
  if (code < 0)
    return fail("cannot run mpirun: " + error);
  return code;
}

/// A digest of what must be the same on every rank after a run: the FP8
/// scaling state (amax histories, scales) and the parameters, bit for bit.
static FailureOr<uint64_t> digestState(const Run &run, std::string &error) {
  FailureOr<StateSnapshot> state = snapshot(run, error);
  if (failed(state))
    return failure();
  llvm::sort(*state, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });
  uint64_t digest = digestBytes(nullptr, 0);
  auto add = [&](const HostTensor &tensor) {
    digest = digestBytes(tensor.data(),
                         tensor.getNumElements() * tensor.getElementBytes(),
                         digest);
  };
  for (const auto &[name, value] : *state) {
    digest = digestBytes(name.data(), name.size(), digest);
    add(value);
  }
  for (const HostTensor &parameter : run.parameters)
    add(parameter);
  return digest;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(trainCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp8-train: train a step function in FP32, BF16 and FP8 recipes on a "
      "corpus, side by side\n");
  if (optLevel > 3)
    return fail("-O" + Twine(optLevel.getValue()) +
                ": the optimization level is one of -O0..-O3");
  if (onSpike != "stop" && onSpike != "skip" && onSpike != "continue")
    return fail("--on-spike must be stop, skip or continue");
  if (steps == 0)
    return fail("--steps must be at least 1");
  if (valBatches == 0)
    return fail("--val-batches must be at least 1");
  if (ranks == 0)
    return fail("--ranks must be at least 1");
  std::string error;
  FailureOr<SmallVector<Recipe>> recipeList = parseRecipes(error);
  if (failed(recipeList))
    return fail(error);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerRunnerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  auto file = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!file)
    return fail("cannot read '" + inputFile + "': " + file.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  FailureOr<Contract> contract = readContract(*module, error);
  if (failed(contract))
    return fail(error);
  if (auto step = module->lookupSymbol<func::FuncOp>(contract->name);
      step && failed(checkNoUndefinedReads(step)))
    return 1;
  if (contract->ranks == 1 && ranks > 1)
    return fail(llvm::formatv("@{0} is a single-rank step: --ranks={1} needs "
                              "one written for {1} ranks (fp8-gen "
                              "--data-parallel={1})",
                              contract->name, unsigned(ranks))
                    .str());
  if (contract->ranks != int64_t(ranks))
    return fail(llvm::formatv("@{0} is the step of one of {1} data-parallel "
                              "ranks (fp8.sharded over a grid of {1}); run it "
                              "with --ranks={1}",
                              contract->name, contract->ranks)
                    .str());
  // Each rank trains on its slice of every batch; the first one reports.
  if (ranks > 1 && !MpiSession::launchedByMpirun())
    return relaunchUnderMpirun(argc, argv);
  std::unique_ptr<MpiSession> mpi;
  if (ranks > 1) {
    mpi = MpiSession::start(error);
    if (!mpi)
      return fail(error);
    if (mpi->getSize() != int(ranks))
      return fail(llvm::formatv("--ranks={0}, but mpirun started {1} "
                                "processes",
                                unsigned(ranks), mpi->getSize())
                      .str());
    if (mpi->getRank() != 0) {
      quiet = true;
      csvFile = "";
      plotFile = "";
      checkpointDir = "";
      json = false;
    }
  }
  bool lead = !mpi || mpi->getRank() == 0;
  FailureOr<Corpus> data = readCorpus(*contract, error);
  if (failed(data))
    return fail(error);
  data->rank = mpi ? mpi->getRank() : 0;
  auto func = module->lookupSymbol<func::FuncOp>(contract->name);
  FunctionType type = func.getFunctionType();
  SmallVector<HostTensor> initial = initialParameters(func, *contract);

  // Every recipe is compiled before any trains: a bad one fails at once.
  std::vector<Run> runs;
  for (const Recipe &recipe : *recipeList) {
    Run &run = runs.emplace_back();
    run.recipe = recipe;
    if (!quiet)
      llvm::errs() << "fp8-train: compiling " << recipe.label << "\n";
    if (failed(prepare(*module, *contract, run, error)))
      return fail(error);
  }
  for (Run &run : runs) {
    const Recipe &recipe = run.recipe;
    run.parameters = initial;
    for (const HostTensor &p : initial) {
      run.moment1.push_back(zerosLike(p));
      run.moment2.push_back(zerosLike(p));
    }
    if (!resumeDir.empty()) {
      FailureOr<unsigned> done = loadCheckpoint(run, error);
      if (failed(done))
        return fail(error);
      run.firstStep = *done + 1;
    }
    if (failed(train(run, *contract, type, *data, context, error)))
      return fail(recipe.label + ": " + error);
    if (mpi) {
      FailureOr<uint64_t> digest = digestState(run, error);
      if (failed(digest))
        return fail(recipe.label + ": " + error);
      if (!mpi->allEqual(*digest))
        return fail(recipe.label + ": the parameters or the FP8 scaling "
                                   "state differ between the ranks after "
                                   "the run");
    }
  }
  if (!lead)
    return 0;

  if (!csvFile.empty() && failed(writeCsv(runs, error)))
    return fail(error);
  if (!plotFile.empty() && failed(plot(runs, error)))
    return fail(error);

  // The summary table, then JSON.
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("{0,-14} {1,6} {2,11} {3,11} {4,12} {5,9}\n", "recipe",
                      "steps", "final loss", "final val", "val vs bf16",
                      "s/step");
  llvm::json::Array jsonRuns;
  for (const Run &run : runs) {
    double seconds = 0;
    for (const Run::Row &row : run.rows)
      seconds += row.seconds;
    seconds /= std::max<size_t>(1, run.rows.size());
    std::optional<double> gap = gapToBF16(run, runs);
    os << llvm::formatv("{0,-14} {1,6} {2,11:f4} {3,11:f4} {4,12} {5,9:f3}\n",
                        run.recipe.label, run.lastStep, run.finalLoss,
                        run.finalValLoss,
                        gap ? percent(*gap) : std::string("-"),
                        seconds);
    llvm::json::Object entry{{"recipe", run.recipe.label},
                             {"final_loss", jsonNumber(run.finalLoss)},
                             {"final_val_loss", jsonNumber(run.finalValLoss)},
                             {"steps", int64_t(run.lastStep)},
                             {"seconds_per_step", seconds},
                             {"stopped", run.stopped}};
    if (!run.recipe.pipeline.empty()) {
      entry["fp8_pipeline"] = run.recipe.pipeline;
      entry["amax_collectives_per_step"] = int64_t(run.amaxCollectives);
    }
    if (gap)
      entry["val_gap_to_bf16"] = jsonNumber(*gap);
    llvm::json::Array events;
    for (const std::string &event : run.events)
      events.push_back(event);
    entry["events"] = std::move(events);
    jsonRuns.push_back(std::move(entry));
  }
  for (const Run &run : runs)
    for (const std::string &event : run.events)
      os << "event: " << event << "\n";
  if (json) {
    // With several ranks, their parameters and FP8 state were checked equal
    // bit for bit after every run (a mismatch fails above).
    llvm::json::Object result{{"ranks", int64_t(ranks)},
                              {"runs", std::move(jsonRuns)}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(result))) << "\n";
  }
  return 0;
}
