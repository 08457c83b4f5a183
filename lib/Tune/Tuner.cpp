//===- Tuner.cpp - The most FP8 a graph takes under a budget --------------===//

#include "fp8/Tune/Tuner.h"
#include "fp8/Dialect/FP8/IR/FP8Dialect.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Recipes.h"
#include "fp8/Runner/Golden.h"
#include "fp8/Runner/InputDefaults.h"
#include "fp8/Runner/Probes.h"
#include "fp8/Train/Contract.h"
#include "fp8/Train/Corpus.h"
#include "fp8/Train/Run.h"
#include "fp8/Train/Trainer.h"
#include "fp8/Tune/Selection.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::tune;

GemmPolicy tune::getGemmPolicy(const FP8PipelineOptions &options) {
  // fp8-quantize: finer granularities need static shapes; wgrad-high is a
  // rowwise option.
  return GemmPolicy{options.fp8Attention,
                    options.keepFirstLast,
                    options.minFlops,
                    options.wgradHigh,
                    options.granularity != "tensor",
                    llvm::to_vector(options.exclude)};
}

static std::string printLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static std::string formatDb(double db) {
  if (std::isinf(db))
    return db > 0 ? "inf" : "-inf";
  if (std::isnan(db))
    return "nan";
  return llvm::formatv("{0:f2}", db).str();
}

namespace {
using Clock = std::chrono::steady_clock;
/// Per candidate, its version (kTuneHighPrecision, kTuneBaseRecipe, ...).
using Choice = SmallVector<int32_t>;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A training step's calibration on its corpus: the contract, the text and
/// the initial state (parameters, zero moments).
struct TrainCalibration {
  train::Contract contract;
  train::Corpus corpus;
  train::Run initial;
};

/// The graph's inputs, drawn as fp8-run draws them, or for a training step
/// with a corpus, as fp8-train feeds them.
class InputMaker {
public:
  InputMaker(ModuleOp module, func::FuncOp func, const TuneOptions &options)
      : module(module), func(func), signature(func.getFunctionType()),
        options(options), defaults(chooseInputDefaults(module, func)) {}

  /// Parses --arg, reads .npy files and the corpus once.
  LogicalResult prepare(std::string &error) {
    if (!options.corpus.empty()) {
      FailureOr<train::Contract> contract =
          train::readContract(module, func.getName(), error);
      if (failed(contract)) {
        error = "--corpus calibrates a training step (docs/fp8-train.md): " +
                error;
        return failure();
      }
      FailureOr<train::Corpus> corpus =
          train::readCorpus(options.corpus, *contract, error);
      if (failed(corpus))
        return failure();
      training.emplace();
      train::startRun(training->initial,
                      train::initialParameters(*contract, options.seed));
      training->contract = std::move(*contract);
      training->corpus = std::move(*corpus);
    }
    FunctionType type = func.getFunctionType();
    for (auto [index, input] : llvm::enumerate(type.getInputs())) {
      auto shaped = dyn_cast<RankedTensorType>(input);
      if (shaped && !shaped.hasStaticShape()) {
        error = llvm::formatv("argument #{0} of @{1} has a dynamic shape "
                              "({2}): fp8-tune needs static shapes",
                              index, func.getName(), input)
                    .str();
        return failure();
      }
    }
    for (StringRef spec : options.argOverrides) {
      auto [indexText, what] = spec.split(':');
      auto [source, scaleText] = what.split(':');
      unsigned index;
      double scale = options.scale;
      if (indexText.getAsInteger(10, index) || source.empty() ||
          index >= type.getNumInputs() ||
          (!scaleText.empty() &&
           (scaleText.getAsDouble(scale) || !std::isfinite(scale) ||
            scale <= 0))) {
        error = ("bad --arg '" + spec +
                 "' (expected INDEX:DIST[:SCALE] with SCALE > 0, or "
                 "INDEX:file.npy, with INDEX < " +
                 std::to_string(type.getNumInputs()) + ")")
                    .str();
        return failure();
      }
      if (source.ends_with(".npy")) {
        FailureOr<HostTensor> tensor = readNpy(
            source, getElementTypeOrSelf(type.getInput(index)), error);
        if (failed(tensor))
          return failure();
        auto shaped = dyn_cast<RankedTensorType>(type.getInput(index));
        if (shaped ? tensor->getShape() != shaped.getShape()
                   : !tensor->getShape().empty()) {
          error = ("'" + source + "' does not have the shape of argument #" +
                   std::to_string(index))
                      .str();
          return failure();
        }
        files[index] = std::move(*tensor);
        continue;
      }
      std::optional<Distribution> distribution = parseDistribution(source);
      if (!distribution) {
        error = ("unknown distribution '" + source + "' in --arg").str();
        return failure();
      }
      overrides[index] = {*distribution, scale};
    }
    return success();
  }

  /// A training step's batch before the one of `seed`, at the same
  /// parameters: what delayed scaling's state comes from. None otherwise.
  std::optional<SmallVector<HostTensor>> makePrevious(uint64_t seed) const {
    if (!training)
      return std::nullopt;
    return make(seed, /*previousBatch=*/true);
  }

  std::string describe() const {
    if (!training)
      return "fp8-run's draws, delayed scaling in the steady state of each "
             "set";
    return "batches of " + options.corpus +
           " at the initial parameters, delayed scales from the batch "
           "before";
  }

  SmallVector<HostTensor> make(uint64_t seed,
                               bool previousBatch = false) const {
    std::mt19937_64 rng(seed);
    SmallVector<HostTensor> inputs;
    for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
      if (auto file = files.find(index); file != files.end()) {
        inputs.push_back(file->second);
        continue;
      }
      auto shaped = dyn_cast<ShapedType>(type);
      HostTensor tensor(getElementTypeOrSelf(type),
                        shaped ? shaped.getShape() : ArrayRef<int64_t>());
      auto it = defaults.find("arg" + std::to_string(index));
      const InputDefault *byDefault =
          it == defaults.end() ? nullptr : &it->second;
      if (byDefault && byDefault->mask != InputDefault::Mask::None) {
        fillMask(tensor, byDefault->mask == InputDefault::Mask::Causal);
      } else {
        Distribution distribution = options.distribution;
        double scale = byDefault && byDefault->scale ? *byDefault->scale
                                                     : options.scale;
        if (auto given = overrides.find(index); given != overrides.end()) {
          distribution = given->second.first;
          scale = given->second.second;
        }
        int64_t range = byDefault && byDefault->integerRange
                            ? *byDefault->integerRange
                            : options.integerRange;
        fill(tensor, distribution, scale, range, rng);
      }
      inputs.push_back(std::move(tensor));
    }
    if (training)
      feedTrainingStep(inputs, previousBatch ? ~seed : seed);
    return inputs;
  }

private:
  /// What fp8-train feeds the first step (a batch of the training text,
  /// the initial parameters, zero moments, step 1, loss scale 1), where
  /// --arg does not say otherwise.
  void feedTrainingStep(SmallVector<HostTensor> &inputs, uint64_t seed) const {
    const train::Contract &contract = training->contract;
    const train::Run &initial = training->initial;
    std::mt19937_64 rng(seed);
    Type tokenType =
        cast<RankedTensorType>(contract.type.getInput(contract.tokens))
            .getElementType();
    auto [tokens, targets] = training->corpus.batch(
        training->corpus.train, contract, tokenType, rng);
    SmallVector<HostTensor> fed = train::stepInputs(
        contract, std::move(tokens), std::move(targets), /*step=*/1,
        initial.parameters, initial.moment1, initial.moment2);
    for (auto [index, value] : llvm::enumerate(fed))
      if (!files.count(index) && !overrides.count(index))
        inputs[index] = std::move(value);
  }

  ModuleOp module;
  std::optional<TrainCalibration> training;
  func::FuncOp func;
  FunctionType signature;
  const TuneOptions &options;
  llvm::StringMap<InputDefault> defaults;
  DenseMap<unsigned, std::pair<Distribution, double>> overrides;
  DenseMap<unsigned, HostTensor> files;
};

/// `values` converted to the argument types of `signature`.
SmallVector<HostTensor> convertInputs(ArrayRef<HostTensor> values,
                                      FunctionType signature) {
  SmallVector<HostTensor> converted;
  for (auto [value, type] : llvm::zip(values, signature.getInputs())) {
    Type element = getElementTypeOrSelf(type);
    if (value.getElementType() == element) {
      converted.push_back(value);
      continue;
    }
    HostTensor copy(element, value.getShape());
    for (int64_t i = 0, e = value.getNumElements(); i < e; ++i)
      copy.set(i, value.get(i));
    converted.push_back(std::move(copy));
  }
  return converted;
}

/// The compiled golden and variant programs, and their runs on one or
/// more input sets.
class Trials {
public:
  Trials(CompiledFunction &golden, CompiledFunction &variants,
         ArrayRef<unsigned> outputs, unsigned numCandidates,
         llvm::StringMap<RankedTensorType> scalingState, TuneResult &result)
      : golden(golden), variants(variants), outputs(outputs),
        numCandidates(numCandidates), scalingState(std::move(scalingState)),
        result(result) {}

  /// Adds an input set: runs the golden graph on it, then the variants once
  /// with every candidate in FP8, so that delayed scaling has seen amaxes.
  /// Without `previous`, on the set itself: every set is measured in the
  /// steady state of its own inputs (each set draws its own weights: scales
  /// carried from one set to another would be another model's). With
  /// `previous` (a training step's batch before this one, at the same
  /// parameters), on it, and the scaling state it leaves is restored
  /// before every run on the set: each run's delayed scales come from the
  /// batch before, as in training.
  LogicalResult addInputs(SmallVector<HostTensor> inputs,
                          std::optional<SmallVector<HostTensor>> previous,
                          std::string &error) {
    Clock::time_point start = Clock::now();
    FailureOr<SmallVector<HostTensor>> reference =
        golden.call(convertInputs(inputs, golden.getSignature()), error);
    result.runSeconds += secondsSince(start);
    ++result.runs;
    if (failed(reference))
      return failure();
    for (unsigned output : outputs) {
      const HostTensor &ref = (*reference)[output];
      for (int64_t i = 0, e = ref.getNumElements(); i < e; ++i)
        if (!std::isfinite(ref.get(i))) {
          error = llvm::formatv("the golden run is not finite on these "
                                "inputs: output #{0}, element {1} is {2}",
                                output, i, ref.get(i))
                      .str();
          return failure();
        }
    }
    sets.push_back({std::move(inputs), std::move(*reference), {}});
    Choice allFP8(numCandidates, kTuneBaseRecipe);
    if (!previous)
      return failure(failed(run(sets.back(), allFP8, error)));
    if (failed(writeChoice(allFP8, error)))
      return failure();
    start = Clock::now();
    FailureOr<SmallVector<HostTensor>> warmup = variants.call(*previous, error);
    result.runSeconds += secondsSince(start);
    ++result.runs;
    if (failed(warmup))
      return failure();
    FailureOr<CompiledFunction::GlobalSnapshot> state =
        variants.readGlobals(scalingState, error);
    if (failed(state))
      return failure();
    sets.back().state = std::move(*state);
    return success();
  }

  void clearInputs() { sets.clear(); }

  /// The SQNRs with each candidate's version as `choice` says, on every
  /// input set.
  FailureOr<SmallVector<Measurement>> measureEach(ArrayRef<int32_t> choice,
                                                  std::string &error) {
    SmallVector<Measurement> each;
    for (const InputSet &set : sets) {
      FailureOr<Measurement> m = run(set, choice, error);
      if (failed(m))
        return failure();
      each.push_back(std::move(*m));
    }
    return each;
  }

  /// The worst of every SQNR over the input sets.
  FailureOr<Measurement> measure(ArrayRef<int32_t> choice,
                                 std::string &error) {
    FailureOr<SmallVector<Measurement>> each = measureEach(choice, error);
    if (failed(each))
      return failure();
    return combine(*each);
  }

  static Measurement combine(ArrayRef<Measurement> each) {
    Measurement worst = each.front();
    for (const Measurement &m : each.drop_front()) {
      for (auto [w, db] : llvm::zip(worst.outputDb, m.outputDb))
        w = std::min(w, db);
      for (auto [w, db] : llvm::zip(worst.worstRowDb, m.worstRowDb))
        w = std::min(w, db);
      worst.worstDb = std::min(worst.worstDb, m.worstDb);
      worst.worstRowWorstDb = std::min(worst.worstRowWorstDb,
                                       m.worstRowWorstDb);
    }
    return worst;
  }

private:
  struct InputSet {
    SmallVector<HostTensor> inputs, goldenOutputs;
    /// The scaling state every run on the set starts from (empty: the
    /// state the previous run left).
    CompiledFunction::GlobalSnapshot state;
  };

  LogicalResult writeChoice(ArrayRef<int32_t> choice, std::string &error) {
    HostTensor vector(IntegerType::get(golden.getSignature().getContext(), 32),
                      {static_cast<int64_t>(choice.size())});
    for (auto [i, version] : llvm::enumerate(choice))
      vector.set(i, version);
    return variants.writeGlobal(kTuneChoiceName, vector, error);
  }

  FailureOr<Measurement> run(const InputSet &set, ArrayRef<int32_t> choice,
                             std::string &error) {
    if (failed(writeChoice(choice, error)))
      return failure();
    if (failed(variants.writeGlobals(set.state, error)))
      return failure();
    Clock::time_point start = Clock::now();
    FailureOr<SmallVector<HostTensor>> actual =
        variants.call(set.inputs, error);
    result.runSeconds += secondsSince(start);
    ++result.runs;
    if (failed(actual))
      return failure();
    Measurement m;
    m.worstDb = m.worstRowWorstDb = INFINITY;
    for (unsigned output : outputs) {
      Comparison c = compare(set.goldenOutputs[output], (*actual)[output]);
      double db = c.nonFinite ? -INFINITY : c.sqnrDb;
      double rowDb = c.nonFinite ? -INFINITY : c.worstRowSqnrDb;
      m.outputDb.push_back(db);
      m.worstRowDb.push_back(rowDb);
      m.worstDb = std::min(m.worstDb, db);
      m.worstRowWorstDb = std::min(m.worstRowWorstDb, rowDb);
    }
    return m;
  }

  CompiledFunction &golden, &variants;
  ArrayRef<unsigned> outputs;
  unsigned numCandidates;
  llvm::StringMap<RankedTensorType> scalingState;
  TuneResult &result;
  SmallVector<InputSet, 0> sets;
};
} // namespace

/// The metrics the budget bounds, as noise powers: each output's SQNR, then
/// (with a per-row budget) each output's worst row. Summing worst-row noise
/// over GEMMs bounds every row's sum from above, so the row prediction is
/// conservative.
static SmallVector<double> toNoise(const Measurement &m, bool perRow) {
  SmallVector<double> noise;
  for (double db : m.outputDb)
    noise.push_back(noiseFromDb(db));
  if (perRow)
    for (double db : m.worstRowDb)
      noise.push_back(noiseFromDb(db));
  return noise;
}

/// The worst SQNR among the first `numOutputs` metrics (the outputs').
static double worstOutputDb(ArrayRef<double> noise, unsigned numOutputs) {
  double worst = INFINITY;
  for (double n : noise.take_front(numOutputs))
    worst = std::min(worst, dbFromNoise(n));
  return worst;
}

/// Whether `m` meets the budget, raised by `margin` dB.
static bool meetsBudget(const Measurement &m, const TuneOptions &options,
                        double margin = 0) {
  return m.worstDb >= options.budgetDb + margin &&
         (!options.perRowDb ||
          m.worstRowWorstDb >= *options.perRowDb + margin);
}

FailureOr<TuneResult> tune::tuneGraph(ModuleOp module, StringRef name,
                                      const TuneOptions &options,
                                      std::string &error) {
  Clock::time_point tuneStart = Clock::now();
  TuneResult result;
  if (!std::isfinite(options.budgetDb) ||
      (options.perRowDb && !std::isfinite(*options.perRowDb)) ||
      !std::isfinite(options.marginDb) || options.marginDb < 0) {
    error = "the budget must be a finite number of dB";
    return failure();
  }
  std::unique_ptr<FP8PipelineOptions> pipeline =
      FP8PipelineOptions::createFromString(options.pipelineOptions);
  if (!pipeline) {
    error = "bad --fp8-pipeline options '" + options.pipelineOptions + "'";
    return failure();
  }
  if (pipeline->state != "globals") {
    error = "fp8-tune measures state=globals only (the tuned graph runs "
            "under any state)";
    return failure();
  }
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func || func.isExternal()) {
    error = ("no function @" + name + " with a body").str();
    return failure();
  }

  // The pipeline's recipe and the alternatives that differ from it (the
  // dialect of their attribute is not loaded by a graph that names none).
  module.getContext()->getOrLoadDialect<FP8Dialect>();
  auto emitError = [&] { return module.emitError(); };
  FailureOr<RecipeAttr> base = buildRecipe(
      emitError, module.getContext(), pipeline->scaling, pipeline->format,
      pipeline->history, pipeline->algo, pipeline->margin,
      pipeline->powerOfTwo, pipeline->granularity, pipeline->exactScales,
      pipeline->wgradHigh);
  if (failed(base)) {
    error = "bad --fp8-pipeline recipe (see the diagnostics above)";
    return failure();
  }
  // In order of preference: the selection prefers earlier versions.
  SmallVector<std::string> names(options.alternatives);
  llvm::stable_sort(names, [](const std::string &a, const std::string &b) {
    return alternativePreference(a) < alternativePreference(b);
  });
  SmallVector<std::pair<std::string, RecipeAttr>> alternatives;
  for (const std::string &name : names) {
    FailureOr<RecipeAttr> other =
        deriveAlternativeRecipe(emitError, *base, name);
    if (failed(other)) {
      error = "bad --alternatives (see the diagnostics above)";
      return failure();
    }
    if (*other != *base &&
        llvm::none_of(alternatives, [&](auto &a) { return a.second == *other; }))
      alternatives.push_back({name, *other});
  }

  // Every GEMM, for the report; the candidates, in the order of the choice
  // vector, each with its versions as fp8-tune-variants makes them.
  GemmPolicy policy = getGemmPolicy(*pipeline);
  FailureOr<SmallVector<GemmInfo, 0>> gemms = analyzeGemms(module, policy);
  if (failed(gemms)) {
    error = "the GEMM analysis failed (see the diagnostics above)";
    return failure();
  }
  SmallVector<unsigned> candidates;
  for (const GemmInfo &gemm : *gemms) {
    GemmRecord record;
    record.location = printLocation(gemm.op->getLoc());
    record.opName = gemm.op->getName().getStringRef().str();
    record.flops = gemm.getFlops();
    record.reason = gemm.reason;
    if (gemm.isFP8()) {
      record.candidate = candidates.size();
      candidates.push_back(result.gemms.size());
      auto addVersion = [&](StringRef name, RecipeAttr recipe, int32_t choice) {
        VersionRecord version;
        version.name = name.str();
        version.recipe = recipe;
        version.choice = choice;
        record.versions.push_back(std::move(version));
      };
      addVersion("recipe", nullptr, kTuneBaseRecipe);
      for (auto [k, alternative] : llvm::enumerate(alternatives))
        if (quantizesDifferently(gemm, *base, alternative.second))
          addVersion(alternative.first, alternative.second,
                     kTuneFirstAlternative + k);
    } else {
      record.why = ("not a candidate: " + stringifyGemmReason(gemm.reason))
                       .str();
    }
    if (record.flops)
      result.totalFlops += *record.flops;
    result.gemms.push_back(std::move(record));
  }
  for (auto &alternative : alternatives)
    result.alternatives.push_back(alternative.first);
  if (candidates.empty()) {
    error = llvm::formatv("no GEMM of the graph goes to FP8 under these "
                          "options ({0} GEMMs found): there is nothing "
                          "to tune",
                          gemms->size())
                .str();
    return failure();
  }

  SmallVector<unsigned> outputs;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes()))
    if (isa<FloatType>(getElementTypeOrSelf(type))) {
      outputs.push_back(index);
      result.outputNames.push_back("output #" + std::to_string(index));
    }
  if (outputs.empty()) {
    error = ("@" + name + " has no float output to measure").str();
    return failure();
  }

  // The inputs (a bad --arg or corpus fails before anything is compiled).
  InputMaker inputs(module, func, options);
  if (failed(inputs.prepare(error)))
    return failure();

  // The two programs.
  Clock::time_point compileStart = Clock::now();
  OwningOpRef<ModuleOp> wide = module.clone();
  if (failed(widenFloats(*wide, Float64Type::get(module.getContext()), error)))
    return failure();
  std::unique_ptr<CompiledFunction> golden =
      CompiledFunction::compile(*wide, name, error, options.compile);
  if (!golden)
    return failure();
  OwningOpRef<ModuleOp> variantModule = module.clone();
  {
    PassManager pm(module.getContext());
    FP8TuneVariantsOptions variantOptions;
    variantOptions.fp8Attention = policy.fp8Attention;
    variantOptions.keepFirstLast = policy.keepFirstLast;
    variantOptions.minFlops = policy.minFlops;
    variantOptions.exclude = policy.exclude;
    variantOptions.scaling = pipeline->scaling;
    variantOptions.format = pipeline->format;
    variantOptions.history = pipeline->history;
    variantOptions.algo = pipeline->algo;
    variantOptions.margin = pipeline->margin;
    variantOptions.powerOfTwo = pipeline->powerOfTwo;
    variantOptions.granularity = pipeline->granularity;
    variantOptions.exactScales = pipeline->exactScales;
    variantOptions.wgradHigh = pipeline->wgradHigh;
    variantOptions.alternatives = result.alternatives;
    pm.addPass(createFP8TuneVariants(variantOptions));
    buildFP8Pipeline(pm, *pipeline);
    if (failed(pm.run(*variantModule))) {
      error = "fp8-tune-variants and fp8-pipeline failed (see the "
              "diagnostics above)";
      return failure();
    }
  }
  std::unique_ptr<CompiledFunction> variants =
      CompiledFunction::compile(*variantModule, name, error, options.compile);
  if (!variants)
    return failure();
  result.compileSeconds = secondsSince(compileStart);

  unsigned n = candidates.size();
  auto candidate = [&](unsigned c) -> GemmRecord & {
    return result.gemms[candidates[c]];
  };
  Trials trials(*golden, *variants, outputs, n,
                runner::findScalingState(*variantModule), result);
  auto addInputs = [&](uint64_t seed) {
    return trials.addInputs(inputs.make(seed), inputs.makePrevious(seed),
                            error);
  };
  for (unsigned set = 0; set < options.calibrationSets; ++set)
    if (failed(addInputs(options.seed + set)))
      return failure();
  result.calibration = inputs.describe();

  // The baseline: the graph's own arithmetic.
  Choice none(n, kTuneHighPrecision), all(n, kTuneBaseRecipe);
  FailureOr<SmallVector<Measurement>> baselines =
      trials.measureEach(none, error);
  if (failed(baselines))
    return failure();
  result.baseline = Trials::combine(*baselines);
  if (!meetsBudget(result.baseline, options)) {
    std::string figures;
    llvm::raw_string_ostream os(figures);
    for (auto [o, db] : llvm::enumerate(result.baseline.outputDb))
      os << (o ? ", " : "") << result.outputNames[o] << " " << formatDb(db)
         << " dB (worst row " << formatDb(result.baseline.worstRowDb[o])
         << " dB)";
    error = llvm::formatv("the budget of {0} dB{1} is out of reach even with "
                          "no GEMM in FP8: the graph's own arithmetic "
                          "against the f64 golden run gives {2}",
                          formatDb(options.budgetDb),
                          options.perRowDb
                              ? " (rows " + formatDb(*options.perRowDb) + " dB)"
                              : std::string(),
                          figures)
                .str();
    return failure();
  }
  FailureOr<Measurement> allFP8 = trials.measure(all, error);
  if (failed(allFP8))
    return failure();
  result.allFP8 = *allFP8;

  // Each candidate alone, each way.
  bool perRow = options.perRowDb.has_value();
  OptionProblem problem;
  problem.baseline = toNoise(result.baseline, perRow);
  for (unsigned o = 0; o < outputs.size(); ++o)
    problem.limit.push_back(noiseFromDb(options.budgetDb + options.marginDb));
  if (perRow)
    for (unsigned o = 0; o < outputs.size(); ++o)
      problem.limit.push_back(noiseFromDb(*options.perRowDb + options.marginDb));
  for (unsigned c = 0; c < n; ++c) {
    GemmRecord &record = candidate(c);
    problem.flops.push_back(record.flops ? double(*record.flops) : 0.0);
    problem.cost.emplace_back();
    for (VersionRecord &version : record.versions) {
      Choice alone(n, kTuneHighPrecision);
      alone[c] = version.choice;
      FailureOr<SmallVector<Measurement>> each =
          trials.measureEach(alone, error);
      if (failed(each))
        return failure();
      // What it adds on the input set where it adds the most.
      SmallVector<double> cost(problem.limit.size(), 0.0);
      for (auto [m, base] : llvm::zip(*each, *baselines))
        for (auto [total, noise, own] :
             llvm::zip(cost, toNoise(m, perRow), toNoise(base, perRow)))
          total = std::max(total, noise - own);
      Measurement worst = Trials::combine(*each);
      version.aloneWorstDb = worst.worstDb;
      version.aloneWorstRowDb = worst.worstRowWorstDb;
      version.aloneDb = worst.outputDb;
      for (auto [m2, c2] : llvm::enumerate(cost)) {
        double slack = problem.limit[m2] - problem.baseline[m2];
        version.budgetShare =
            std::max(version.budgetShare,
                     slack > 0 ? c2 / slack : double(INFINITY));
      }
      problem.cost.back().push_back(std::move(cost));
    }
    problem.allowed.emplace_back(record.versions.size(), true);
  }
  OptionChoice allBase(n, 0u);
  result.allFP8PredictedDb =
      worstOutputDb(predictNoise(problem, allBase), outputs.size());

  // Choose, verify, and exclude the version that added the most noise to
  // the worst metric while the measurement misses.
  auto toChoice = [&](const OptionChoice &option) {
    Choice choice(n, kTuneHighPrecision);
    for (unsigned c = 0; c < n; ++c)
      if (option[c])
        choice[c] = candidate(c).versions[*option[c]].choice;
    return choice;
  };
  SmallVector<std::string> dropped(n);
  OptionSelection selection;
  Measurement measured;
  for (;;) {
    selection = selectOptions(problem);
    FailureOr<Measurement> m =
        trials.measure(toChoice(selection.option), error);
    if (failed(m))
      return failure();
    ++result.verifications;
    measured = *m;
    if (meetsBudget(measured, options, options.marginDb))
      break;
    SmallVector<double> noise = toNoise(measured, perRow);
    unsigned worstMetric = 0;
    for (unsigned k = 1; k < noise.size(); ++k)
      if (noise[k] / problem.limit[k] >
          noise[worstMetric] / problem.limit[worstMetric])
        worstMetric = k;
    std::optional<unsigned> worst;
    auto costOf = [&](unsigned c) {
      return problem.cost[c][*selection.option[c]][worstMetric];
    };
    for (unsigned c = 0; c < n; ++c)
      if (selection.option[c] && (!worst || costOf(c) > costOf(*worst)))
        worst = c;
    // No FP8 at all: the baseline meets the budget but not the margin on
    // top of it; nothing is left to exclude.
    if (!worst)
      break;
    unsigned version = *selection.option[*worst];
    problem.allowed[*worst][version] = false;
    dropped[*worst] = llvm::formatv(
        "its {0} version excluded after verification {1}: the choice "
        "measured {2} dB against {3} dB predicted, and this GEMM added the "
        "most noise to the metric that missed",
        candidate(*worst).versions[version].name, result.verifications,
        formatDb(measured.worstDb),
        formatDb(worstOutputDb(predictNoise(problem, selection.option),
                               outputs.size())))
                         .str();
  }
  result.chosen = measured;
  result.exactSearch = selection.exact;
  SmallVector<double> predicted = predictNoise(problem, selection.option);
  result.predictedDb = result.predictedRowDb = INFINITY;
  for (auto [k, noise] : llvm::enumerate(predicted)) {
    double &worst = k < outputs.size() ? result.predictedDb
                                       : result.predictedRowDb;
    worst = std::min(worst, dbFromNoise(noise));
  }

  for (unsigned c = 0; c < n; ++c) {
    GemmRecord &record = candidate(c);
    record.chosen = selection.option[c];
    if (record.chosen) {
      result.fp8Flops += record.flops.value_or(0);
      const VersionRecord &version = record.versions[*record.chosen];
      if (*record.chosen == 0)
        record.why = "FP8: the choice meets the budget with it";
      else
        record.why = llvm::formatv(
            "FP8 as {0}: alone {1} dB (worst row {2}) where the pipeline's "
            "recipe gives {3} ({4}); the choice meets the budget with it",
            version.name, formatDb(version.aloneWorstDb),
            formatDb(version.aloneWorstRowDb),
            formatDb(record.base().aloneWorstDb),
            formatDb(record.base().aloneWorstRowDb));
      if (!dropped[c].empty())
        record.why += " (" + dropped[c] + ")";
      continue;
    }
    if (!dropped[c].empty()) {
      record.why = "high precision: " + dropped[c];
      continue;
    }
    const VersionRecord *leanest = &record.base();
    for (const VersionRecord &version : record.versions)
      if (version.budgetShare < leanest->budgetShare)
        leanest = &version;
    // The version that uses the least of the budget, when not the recipe.
    std::string way = leanest == &record.base() ? std::string()
                                                : " as " + leanest->name;
    if (leanest->budgetShare > 1)
      record.why = llvm::formatv("high precision: alone in FP8{0} it uses "
                                 "{1:f2}x the budget",
                                 way, leanest->budgetShare);
    else
      record.why = llvm::formatv("high precision: the budget left by larger "
                                 "GEMMs is too small (it uses {0:f2} of it "
                                 "alone{1})",
                                 leanest->budgetShare, way);
  }
  int64_t candidateFlops = 0;
  for (unsigned index : candidates)
    candidateFlops += result.gemms[index].flops.value_or(0);
  if (result.totalFlops > 0) {
    result.fp8FlopShare = double(result.fp8Flops) / result.totalFlops;
    result.candidateFlopShare = double(candidateFlops) / result.totalFlops;
  }

  // The same choice on inputs it was not tuned on.
  trials.clearInputs();
  if (failed(addInputs(options.freshSeed)))
    return failure();
  FailureOr<Measurement> freshChosen =
      trials.measure(toChoice(selection.option), error);
  if (failed(freshChosen))
    return failure();
  FailureOr<Measurement> freshBaseline = trials.measure(none, error);
  if (failed(freshBaseline))
    return failure();
  result.freshBaseline = *freshBaseline;
  result.freshChosen = *freshChosen;
  result.totalSeconds = secondsSince(tuneStart);
  return result;
}

LogicalResult tune::applyDecisions(ModuleOp module, const TuneOptions &options,
                                   const TuneResult &result,
                                   std::string &error) {
  std::unique_ptr<FP8PipelineOptions> pipeline =
      FP8PipelineOptions::createFromString(options.pipelineOptions);
  if (!pipeline) {
    error = "bad --fp8-pipeline options '" + options.pipelineOptions + "'";
    return failure();
  }
  FailureOr<SmallVector<GemmInfo, 0>> tuned =
      analyzeGemms(module, getGemmPolicy(*pipeline));
  FailureOr<SmallVector<GemmInfo, 0>> byDefault = analyzeGemms(module, {});
  if (failed(tuned) || failed(byDefault) ||
      tuned->size() != result.gemms.size() ||
      byDefault->size() != result.gemms.size()) {
    error = "the module is not the one tuned: its GEMMs differ";
    return failure();
  }
  MLIRContext *context = module.getContext();
  for (auto [gemm, plain, record] :
       llvm::zip_equal(*tuned, *byDefault, result.gemms)) {
    if (gemm.isFP8() != record.candidate.has_value()) {
      error = "the module is not the one tuned: its GEMMs differ";
      return failure();
    }
    if (record.candidate) {
      gemm.op->setAttr("fp8.precision", StringAttr::get(context,
                                                        record.isFP8()
                                                            ? "fp8"
                                                            : "high"));
      if (record.isFP8())
        if (RecipeAttr recipe = record.versions[*record.chosen].recipe)
          gemm.op->setAttr("fp8.recipe", recipe);
    }
    else if (plain.isFP8())
      gemm.op->setAttr("fp8.precision", StringAttr::get(context, "high"));
  }
  return success();
}

static llvm::json::Value jsonDb(double db) {
  if (!std::isfinite(db))
    return nullptr;
  return db;
}

static llvm::json::Object toJSON(const Measurement &m) {
  llvm::json::Array outputs;
  for (auto [db, row] : llvm::zip(m.outputDb, m.worstRowDb))
    outputs.push_back(
        llvm::json::Object{{"sqnr_db", jsonDb(db)}, {"worst_row_sqnr_db", jsonDb(row)}});
  return llvm::json::Object{{"worst_sqnr_db", jsonDb(m.worstDb)},
                            {"worst_row_sqnr_db", jsonDb(m.worstRowWorstDb)},
                            {"outputs", std::move(outputs)}};
}

llvm::json::Value tune::toJSON(const TuneResult &result,
                               const TuneOptions &options) {
  llvm::json::Array gemms;
  for (auto [index, g] : llvm::enumerate(result.gemms)) {
    llvm::json::Object record{
        {"index", static_cast<int64_t>(index)},
        {"op", g.opName},
        {"location", g.location},
        {"flops", g.flops ? llvm::json::Value(*g.flops) : nullptr},
        {"candidate", g.candidate.has_value()},
        {"analysis_reason", stringifyGemmReason(g.reason)},
        {"decision", g.isFP8() ? "fp8" : "high"},
        {"why", g.why}};
    if (g.candidate) {
      record["choice_index"] = static_cast<int64_t>(*g.candidate);
      record["version"] =
          g.isFP8() ? llvm::json::Value(g.versions[*g.chosen].name) : nullptr;
      llvm::json::Array versions;
      for (const VersionRecord &version : g.versions) {
        llvm::json::Array perOutput;
        for (double db : version.aloneDb)
          perOutput.push_back(jsonDb(db));
        llvm::json::Object object{
            {"name", version.name},
            {"choice", static_cast<int64_t>(version.choice)},
            {"alone_worst_sqnr_db", jsonDb(version.aloneWorstDb)},
            {"alone_worst_row_sqnr_db", jsonDb(version.aloneWorstRowDb)},
            {"alone_sqnr_db", std::move(perOutput)},
            {"budget_share", jsonDb(version.budgetShare)}};
        if (version.recipe) {
          std::string text;
          llvm::raw_string_ostream os(text);
          os << version.recipe;
          object["recipe"] = text;
        }
        versions.push_back(std::move(object));
      }
      record["versions"] = std::move(versions);
      // The pipeline's recipe, as before versions existed.
      record["alone_worst_sqnr_db"] = jsonDb(g.base().aloneWorstDb);
      record["budget_share"] = jsonDb(g.base().budgetShare);
    }
    gemms.push_back(std::move(record));
  }
  llvm::json::Object totals{
      {"budget_db", options.budgetDb},
      {"margin_db", options.marginDb},
      {"per_row_budget_db",
       options.perRowDb ? llvm::json::Value(*options.perRowDb) : nullptr},
      {"gemm_flops", result.totalFlops},
      {"fp8_flops", result.fp8Flops},
      {"fp8_flop_share", result.fp8FlopShare},
      {"candidate_flop_share", result.candidateFlopShare},
      {"predicted_worst_sqnr_db", jsonDb(result.predictedDb)},
      {"predicted_worst_row_sqnr_db",
       options.perRowDb ? jsonDb(result.predictedRowDb) : nullptr},
      {"measured_worst_sqnr_db", jsonDb(result.chosen.worstDb)},
      {"measured_worst_row_sqnr_db", jsonDb(result.chosen.worstRowWorstDb)},
      {"fresh_worst_sqnr_db", jsonDb(result.freshChosen.worstDb)},
      {"fresh_worst_row_sqnr_db", jsonDb(result.freshChosen.worstRowWorstDb)},
      {"all_fp8_predicted_worst_sqnr_db", jsonDb(result.allFP8PredictedDb)},
      {"verifications", static_cast<int64_t>(result.verifications)},
      {"exact_search", result.exactSearch},
      {"runs", static_cast<int64_t>(result.runs)},
      {"compile_seconds", result.compileSeconds},
      {"run_seconds", result.runSeconds},
      {"tuning_seconds", result.totalSeconds}};
  llvm::json::Array alternatives;
  for (const std::string &name : result.alternatives)
    alternatives.push_back(name);
  return llvm::json::Object{
      {"seed", static_cast<int64_t>(options.seed)},
      {"alternatives", std::move(alternatives)},
      {"calibration_inputs", result.calibration},
      {"calibration_sets", static_cast<int64_t>(options.calibrationSets)},
      {"fresh_seed", static_cast<int64_t>(options.freshSeed)},
      {"gemms", std::move(gemms)},
      {"calibration",
       llvm::json::Object{{"no_fp8", ::toJSON(result.baseline)},
                          {"all_fp8", ::toJSON(result.allFP8)},
                          {"chosen", ::toJSON(result.chosen)}}},
      {"fresh",
       llvm::json::Object{{"no_fp8", ::toJSON(result.freshBaseline)},
                          {"chosen", ::toJSON(result.freshChosen)}}},
      {"totals", std::move(totals)}};
}

void tune::printSummary(llvm::raw_ostream &os, const TuneResult &result,
                        const TuneOptions &options) {
  os << llvm::formatv("{0,-5} {1,-14} {2,12} {3,10} {4,10}  {5}\n", "gemm",
                      "op", "flops", "alone dB", "choice", "why");
  for (auto [index, g] : llvm::enumerate(result.gemms)) {
    std::string choice = "high";
    if (g.isFP8())
      choice = *g.chosen == 0 ? "fp8" : "fp8:" + g.versions[*g.chosen].name;
    os << llvm::formatv("{0,-5} {1,-14} {2,12} {3,10} {4,10}  {5}\n", index,
                        StringRef(g.opName).drop_front(
                            StringRef(g.opName).find('.') + 1),
                        g.flops ? std::to_string(*g.flops) : "dynamic",
                        g.candidate ? formatDb(g.base().aloneWorstDb) : "-",
                        choice, g.why);
  }
  if (!result.alternatives.empty())
    os << "alternatives offered: " << llvm::join(result.alternatives, ", ")
       << "\n";
  os << llvm::formatv(
      "budget {0} dB{1}: FP8 share of GEMM FLOPs {2:f1}% (candidates "
      "{3:f1}%)\n",
      formatDb(options.budgetDb),
      (options.perRowDb ? " (rows " + formatDb(*options.perRowDb) + " dB)"
                        : std::string()) +
          (options.marginDb > 0
               ? ", calibrated to " + formatDb(options.marginDb) + " dB above"
               : std::string()),
      100 * result.fp8FlopShare, 100 * result.candidateFlopShare);
  os << llvm::formatv(
      "worst output SQNR: no FP8 {0} dB, all FP8 {1} dB (predicted {2}), "
      "chosen {3} dB (predicted {4}; worst row {5} dB)\n",
      formatDb(result.baseline.worstDb), formatDb(result.allFP8.worstDb),
      formatDb(result.allFP8PredictedDb), formatDb(result.chosen.worstDb),
      formatDb(result.predictedDb), formatDb(result.chosen.worstRowWorstDb));
  os << llvm::formatv(
      "fresh inputs (seed {0}): no FP8 {1} dB, chosen {2} dB (worst row "
      "{3} dB){4}\n",
      options.freshSeed, formatDb(result.freshBaseline.worstDb),
      formatDb(result.freshChosen.worstDb),
      formatDb(result.freshChosen.worstRowWorstDb),
      meetsBudget(result.freshChosen, options) ? ""
                                               : ": BUDGET MISSED on fresh "
                                                 "inputs");
  os << llvm::formatv("{0} verification run(s), {1} search; {2} runs; "
                      "compile {3:f1} s, runs {4:f1} s, total {5:f1} s\n",
                      result.verifications,
                      result.exactSearch ? "exact" : "greedy", result.runs,
                      result.compileSeconds, result.runSeconds,
                      result.totalSeconds);
  os << "calibration: " << result.calibration << "\n";
}
