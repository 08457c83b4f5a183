//===- Trainer.cpp - The training loop ------------------------------------===//

#include "fp8/Train/Trainer.h"

#include "fp8/Train/Checkpoint.h"
#include "fp8/Train/Contract.h"
#include "fp8/Train/Corpus.h"
#include "fp8/Train/Run.h"
#include "fp8/Train/Statistics.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

SmallVector<HostTensor> train::initialParameters(const Contract &contract,
                                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  SmallVector<HostTensor> values;
  for (auto [i, arg] : llvm::enumerate(contract.parameters)) {
    auto type = cast<RankedTensorType>(contract.type.getInput(arg));
    HostTensor value(type.getElementType(), type.getShape());
    Attribute init = contract.init[i];
    auto word = dyn_cast_or_null<StringAttr>(init);
    double std = 0.02;
    if (auto f = dyn_cast_or_null<FloatAttr>(init))
      std = f.getValueAsDouble();
    std::normal_distribution<double> normal(0, std);
    for (int64_t k = 0, e = value.getNumElements(); k < e; ++k)
      value.set(k,
                word ? (word.getValue() == "ones" ? 1.0 : 0.0) : normal(rng));
    values.push_back(std::move(value));
  }
  return values;
}

FailureOr<Stress> train::parseStress(StringRef text, uint64_t step,
                                     std::string &error) {
  auto [kind, factorText] = text.split(':');
  Stress stress;
  stress.step = step;
  stress.kind = kind == "lr"         ? Stress::Kind::LearningRate
                : kind == "outliers" ? Stress::Kind::Outliers
                                     : Stress::Kind::None;
  if (stress.kind == Stress::Kind::None ||
      factorText.getAsDouble(stress.factor) || !std::isfinite(stress.factor) ||
      stress.factor <= 0 || step == 0) {
    error = "--spike='" + text.str() +
            "': expected lr:F or outliers:F with a finite F > 0, and "
            "--spike-step >= 1";
    return failure();
  }
  return stress;
}

/// Outliers: every 64th channel of the norm gains (the "ones" parameters),
/// scaled.
static void injectOutliers(Run &run, const Contract &contract,
                           double factor) {
  for (auto [i, init] : llvm::enumerate(contract.init)) {
    auto word = dyn_cast_or_null<StringAttr>(init);
    if (!word || word.getValue() != "ones")
      continue;
    HostTensor &gain = run.parameters[i];
    for (int64_t k = 0, e = gain.getNumElements(); k < e; k += 64)
      gain.set(k, gain.get(k) * factor);
  }
}

static HostTensor zerosLike(const HostTensor &like) {
  HostTensor zeros(like.getElementType(), like.getShape());
  std::memset(zeros.data(), 0,
              like.getNumElements() * size_t(like.getElementBytes()));
  return zeros;
}

void train::startRun(Run &run, ArrayRef<HostTensor> initial) {
  run.parameters.assign(initial.begin(), initial.end());
  run.moment1.clear();
  run.moment2.clear();
  for (const HostTensor &p : initial) {
    run.moment1.push_back(zerosLike(p));
    run.moment2.push_back(zerosLike(p));
  }
}

SmallVector<HostTensor>
train::stepInputs(const Contract &contract, HostTensor tokens,
                  HostTensor targets, uint64_t step,
                  ArrayRef<HostTensor> parameters, ArrayRef<HostTensor> moment1,
                  ArrayRef<HostTensor> moment2) {
  FunctionType type = contract.type;
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
  scalar(contract.step, double(step));
  for (auto [i, arg] : llvm::enumerate(contract.parameters)) {
    inputs[arg] = parameters[i];
    inputs[contract.moment1[i]] = moment1[i];
    inputs[contract.moment2[i]] = moment2[i];
  }
  return inputs;
}

/// Calls the step on a batch with the run's parameters and moments; its
/// results in order.
static FailureOr<SmallVector<HostTensor>>
callStep(Run &run, const Contract &contract, HostTensor tokens,
         HostTensor targets, uint64_t step, std::string &error) {
  return run.fn->call(stepInputs(contract, std::move(tokens),
                                 std::move(targets), step, run.parameters,
                                 run.moment1, run.moment2),
                      error);
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

/// The mean loss over the validation batches (fixed by the seed) and its
/// standard error over them, the scaling state left as it was.
static FailureOr<std::pair<double, double>>
validationLoss(Run &run, const Contract &contract, const Corpus &data,
               Type tokenType, uint64_t step, const TrainOptions &options,
               std::string &error) {
  FailureOr<StateSnapshot> state = snapshotState(run, error);
  if (failed(state))
    return failure();
  std::mt19937_64 rng(options.seed ^ 0xda7aULL);
  double sum = 0, squares = 0;
  for (unsigned b = 0; b < options.valBatches; ++b) {
    auto [tokens, targets] =
        data.batch(data.validation, contract, tokenType, rng);
    FailureOr<SmallVector<HostTensor>> out = callStep(
        run, contract, std::move(tokens), std::move(targets), step, error);
    if (failed(out))
      return failure();
    double loss = (*out)[contract.loss].get(0);
    sum += loss;
    squares += loss * loss;
  }
  if (failed(restoreState(run, *state, error)))
    return failure();
  double n = options.valBatches, mean = sum / n;
  double standardError =
      n > 1 ? std::sqrt(std::max(0.0, squares - n * mean * mean) / (n - 1) / n)
            : NAN;
  return std::make_pair(mean, standardError);
}

std::optional<uint64_t> Run::divergedAt() const {
  if (stopped)
    return lastStep;
  for (const Row &row : rows)
    if (!std::isfinite(row.loss))
      return row.step;
  if (!std::isfinite(finalValLoss) || !std::isfinite(finalLoss))
    return lastStep;
  return std::nullopt;
}

LogicalResult train::trainRun(Run &run, const Contract &contract,
                              const Corpus &data, const TrainOptions &options,
                              std::string &error) {
  Type tokenType =
      cast<RankedTensorType>(contract.type.getInput(contract.tokens))
          .getElementType();
  uint64_t steps = options.steps;
  uint64_t every =
      options.valEvery ? options.valEvery : std::max<uint64_t>(1, steps / 10);
  std::vector<double> recent;
  for (uint64_t step = run.firstStep; step <= steps && !run.stopped; ++step) {
    auto start = std::chrono::steady_clock::now();
    // The same batch for every run: seeded by the step.
    std::mt19937_64 rng(options.seed * 1000003ULL + step);
    auto [tokens, targets] = data.batch(data.train, contract, tokenType, rng);
    const Stress &stress = options.stress;
    bool stressed = stress.kind != Stress::Kind::None && step == stress.step;
    if (stressed && stress.kind == Stress::Kind::Outliers)
      injectOutliers(run, contract, stress.factor);
    FailureOr<StateSnapshot> before;
    if (options.onSpike == OnSpike::Skip &&
        failed(before = snapshotState(run, error)))
      return failure();
    FailureOr<SmallVector<HostTensor>> out = callStep(
        run, contract, std::move(tokens), std::move(targets), step, error);
    if (failed(out))
      return failure();
    double loss = (*out)[contract.loss].get(0);
    double gradNorm =
        contract.gradNorm ? (*out)[*contract.gradNorm].get(0) : NAN;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (failed(recordTensorStatistics(run, step, error)))
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
    else if (recent.size() >= std::max(2u, options.spikeWindow / 2) &&
             loss > options.spikeFactor * median(recent))
      problem = llvm::formatv("loss spike: {0:f4} is {1:f1}x the running "
                              "median {2:f4}",
                              loss, loss / median(recent), median(recent))
                    .str();
    bool apply = true;
    if (!problem.empty()) {
      std::string jump = largestAmaxJump(run);
      std::string event =
          llvm::formatv("{0}: step {1}: {2}{3}; {4}", run.getName(), step,
                        problem, jump.empty() ? "" : "; amax jumped in " + jump,
                        options.onSpike == OnSpike::Stop   ? "run stopped"
                        : options.onSpike == OnSpike::Skip ? "update skipped"
                                                           : "continuing")
              .str();
      if (options.log)
        *options.log << "fp8-train: " << event << "\n";
      run.events.push_back(event);
      if (options.onSpike == OnSpike::Stop)
        run.stopped = true;
      if (options.onSpike == OnSpike::Skip) {
        apply = false;
        if (failed(restoreState(run, *before, error)))
          return failure();
      }
    }
    if (apply && stressed && stress.kind == Stress::Kind::LearningRate) {
      for (size_t i = 0; i < run.parameters.size(); ++i) {
        HostTensor &updated = (*out)[contract.newParameters[i]];
        const HostTensor &old = run.parameters[i];
        for (int64_t k = 0, e = old.getNumElements(); k < e; ++k)
          updated.set(k, old.get(k) +
                             stress.factor * (updated.get(k) - old.get(k)));
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
      if (recent.size() > options.spikeWindow)
        recent.erase(recent.begin());
    }

    double valLoss = NAN;
    if (step % every == 0 || step == steps || run.stopped) {
      FailureOr<std::pair<double, double>> value =
          validationLoss(run, contract, data, tokenType, step, options, error);
      if (failed(value))
        return failure();
      valLoss = value->first;
      run.finalValLoss = valLoss;
      run.finalValStdErr = value->second;
    }
    run.finalLoss = loss;
    run.lastStep = step;
    run.rows.push_back({step, loss, gradNorm, valLoss, seconds});
    if (options.log && options.progress && (step % every == 0 || step == steps))
      *options.log << llvm::formatv(
          "fp8-train: {0,-10} step {1,5}/{2}  loss {3:f4}  val {4:f4}  "
          "{5:f2} s/step\n",
          run.getName(), step, steps, loss, valLoss, seconds);
    if (!options.checkpointDir.empty() && options.checkpointEvery &&
        step % options.checkpointEvery == 0 &&
        failed(saveCheckpoint(options.checkpointDir, run, step, error)))
      return failure();
  }
  if (!options.checkpointDir.empty() && run.lastStep >= run.firstStep &&
      failed(saveCheckpoint(options.checkpointDir, run, run.lastStep, error)))
    return failure();
  return success();
}
