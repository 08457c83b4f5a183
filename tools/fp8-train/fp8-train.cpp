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
// resumes. The machinery is lib/Train's; this is its command line.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/HostMemory.h"
#include "fp8/Runner/Mpi.h"
#include "fp8/Runner/Runner.h"
#include "fp8/Train/Checkpoint.h"
#include "fp8/Train/Contract.h"
#include "fp8/Train/Corpus.h"
#include "fp8/Train/MemoryBudget.h"
#include "fp8/Train/Record.h"
#include "fp8/Train/Report.h"
#include "fp8/Train/Run.h"
#include "fp8/Train/Trainer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;
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
static cl::opt<std::string>
    recipes("recipes", cl::init("fp32,bf16,delayed,current"),
            cl::cat(trainCategory),
            cl::desc("Comma-separated runs: fp32, bf16, delayed, current, or "
                     "LABEL=OPTIONS with fp8-pipeline options (e.g. "
                     "'e4m3=scaling=delayed format=e4m3')"));
static cl::opt<std::string> corpus(
    "corpus", cl::init(FP8_DEFAULT_CORPUS), cl::cat(trainCategory),
    cl::desc("Text read as byte tokens; the last 10% is the validation set"));
static cl::opt<uint64_t> seed("seed", cl::init(1), cl::cat(trainCategory),
                              cl::desc("Seed of the initial weights and of "
                                       "the batches"));
static cl::opt<unsigned>
    seeds("seeds", cl::init(1), cl::cat(trainCategory),
          cl::desc("Runs per recipe, from seeds --seed, --seed+1, ...: means, "
                   "95% intervals and verdicts against BF16 (each recipe "
                   "compiled once)"));
static cl::opt<double> parityTolerance(
    "parity-tolerance", cl::init(0.01), cl::cat(trainCategory),
    cl::desc("The relative validation-loss gap to BF16 within which a "
             "recipe is at parity (0.01 = 1%), for the verdicts"));
static cl::opt<unsigned>
    valEvery("val-every", cl::init(0), cl::cat(trainCategory),
             cl::desc("Validation loss every N steps and at the last (default: "
                      "steps / 10)"));
static cl::opt<unsigned> valBatches("val-batches", cl::init(16),
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
static cl::opt<unsigned>
    spikeWindow("spike-window", cl::init(20), cl::cat(trainCategory),
                cl::desc("Steps of the running median of the loss"));
static cl::opt<std::string>
    spike("spike", cl::cat(trainCategory),
          cl::desc("lr:F | outliers:F, injected at --spike-step: that step's "
                   "update F times larger, or every 64th channel of the norm "
                   "gains times F from then on (a stress run)"));
static cl::opt<uint64_t> spikeStep("spike-step", cl::init(0),
                                   cl::cat(trainCategory),
                                   cl::desc("The step --spike hits"));
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
static cl::opt<std::string> recordsDir(
    "records", cl::cat(trainCategory),
    cl::desc("Directory that keeps each finished run (recipe and seed) as a "
             "record: runs found there with the same settings are reported "
             "from it instead of trained again, so a long study can be "
             "stopped and continued"));
static cl::opt<unsigned> ranks(
    "ranks", cl::init(1), cl::cat(trainCategory),
    cl::desc("Data-parallel ranks: runs the step (fp8-gen --data-parallel=N) "
             "under mpirun -np N, each rank on its slice of the batch"));
static cl::opt<std::string> memoryBudget(
    "memory-budget", cl::cat(trainCategory), cl::value_desc("bytes"),
    cl::desc("Memory the training may hold (e.g. 512M, 8G; default: the "
             "physical memory, or the process's limit when lower), checked "
             "before anything large is allocated"));
static cl::opt<Accumulation> accumulation(
    "accumulation", cl::cat(trainCategory),
    cl::desc("How bf16/f16 GEMMs left in high precision accumulate (the bf16 "
             "recipe's GEMMs, and those FP8 recipes keep)"),
    cl::init(Accumulation::F32), accumulationValues());
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
  SmallVector<std::string> args = {*mpirun,
                                   "-np",
                                   std::to_string(ranks),
                                   "--oversubscribe",
                                   "--bind-to",
                                   "none",
                                   "-x",
                                   "OMP_NUM_THREADS=" +
                                       std::to_string(threads)};
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  args.push_back(self);
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  SmallVector<StringRef> refs(args.begin(), args.end());
  std::string error;
  int code =
      llvm::sys::ExecuteAndWait(*mpirun, refs, std::nullopt, {}, 0, 0, &error);
  if (code < 0)
    return fail("cannot run mpirun: " + error);
  return code;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The compiled steps free and allocate the same buffers call after call.
  retainFreedHostMemory();
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
  if (steps == 0 || steps > kMaxSteps)
    return fail("--steps must be from 1 to " + Twine(kMaxSteps) +
                " (the step function gets the step as an f32)");
  if (seeds == 0)
    return fail("--seeds must be at least 1 (runs per recipe)");
  if (!(parityTolerance >= 0 && parityTolerance < 1))
    return fail("--parity-tolerance must be from 0 to 1 (0.01 = 1%)");
  if (seeds > 1 && (!checkpointDir.empty() || !resumeDir.empty()))
    return fail("--checkpoint and --resume keep one run per recipe: use them "
                "with --seeds=1");
  if (!recordsDir.empty() && !resumeDir.empty())
    return fail("--records keeps runs trained from the start: it cannot be "
                "used with --resume");
  if (valBatches == 0)
    return fail("--val-batches must be at least 1");
  if (ranks == 0)
    return fail("--ranks must be at least 1");
  uint64_t budgetBytes = getDefaultMemoryBudget();
  if (!memoryBudget.empty()) {
    std::optional<uint64_t> parsed = parseByteSize(memoryBudget);
    if (!parsed)
      return fail("bad --memory-budget '" + memoryBudget +
                  "' (expected a positive size such as 512M or 8G)");
    budgetBytes = *parsed;
  }
  MemoryBudget budget(budgetBytes);
  std::string error;
  FailureOr<SmallVector<Recipe>> recipeList = parseRecipes(recipes, error);
  if (failed(recipeList))
    return fail(error);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerRunnerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseModuleFile(inputFile, sourceMgr, context, error);
  if (!module)
    return fail(error);
  FailureOr<Contract> contract = readContract(*module, functionName, error);
  if (failed(contract))
    return fail(error);
  // A step in a nested module runs with that module as its program (its
  // globals and callees are there), as fp8-run runs it.
  if (auto parent = contract->func->getParentOfType<ModuleOp>();
      parent != *module) {
    module = OwningOpRef<ModuleOp>(parent.clone());
    contract = readContract(*module, contract->name, error);
    if (failed(contract))
      return fail(error);
  }
  if (failed(reserveTraining(budget, *contract, recipeList->size(), error)))
    return fail(error);
  if (failed(checkNoUndefinedReads(contract->func)))
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

  TrainOptions options;
  options.steps = steps;
  options.seed = seed;
  options.valEvery = valEvery;
  options.valBatches = valBatches;
  options.onSpike = onSpike == "stop"   ? OnSpike::Stop
                    : onSpike == "skip" ? OnSpike::Skip
                                        : OnSpike::Continue;
  options.spikeFactor = spikeFactor;
  options.spikeWindow = spikeWindow;
  if (!spike.empty() || spikeStep) {
    FailureOr<Stress> stress = parseStress(spike, spikeStep, error);
    if (failed(stress))
      return fail(error);
    options.stress = *stress;
  }
  options.checkpointDir = checkpointDir;
  options.checkpointEvery = checkpointEvery;
  options.log = &llvm::errs();
  options.progress = !quiet;
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
      options.progress = false;
      options.checkpointDir.clear();
    }
  }
  bool lead = !mpi || mpi->getRank() == 0;
  // The file's bytes and the training and validation text copied from it.
  FailureOr<Corpus> data =
      readCorpus(corpus, *contract, error, budget.getRemaining() / 2);
  if (failed(data) ||
      failed(budget.reserve(data->train.size() + data->validation.size(), 2,
                            "the corpus", error)))
    return fail(error);
  data->rank = mpi ? mpi->getRank() : 0;

  // The runs already in --records: their recipes need no compilation when
  // every seed is there.
  auto recordKey = [&](const Run &run) {
    return llvm::formatv(
               "step {0:x} corpus {1:x}/{2:x} steps {3} val-every {4} "
               "val-batches {5} accumulation {6} on-spike {7} spike-factor "
               "{8} spike-window {9} spike '{10}' at {11} ranks {12} recipe "
               "{13} '{14}' seed {15}",
               llvm::xxh3_64bits(
                   sourceMgr.getMemoryBuffer(1)->getBuffer()),
               llvm::xxh3_64bits(data->train),
               llvm::xxh3_64bits(data->validation), unsigned(steps),
               unsigned(valEvery), unsigned(valBatches),
               stringifyAccumulation(accumulation), onSpike.getValue(),
               double(spikeFactor), unsigned(spikeWindow), spike.getValue(),
               uint64_t(spikeStep), unsigned(ranks), int(run.recipe.kind),
               run.recipe.pipeline, run.seed)
        .str();
  };
  std::vector<std::vector<std::optional<Run>>> recorded(recipeList->size());
  for (auto [r, recipe] : llvm::enumerate(*recipeList)) {
    recorded[r].resize(seeds);
    for (unsigned i = 0; i < seeds && !recordsDir.empty(); ++i) {
      Run run;
      run.recipe = recipe;
      run.seed = seed + i;
      FailureOr<bool> found = loadRecord(recordsDir, recordKey(run), run, error);
      if (failed(found))
        return fail(error);
      if (*found)
        recorded[r][i] = std::move(run);
    }
  }

  // Every recipe is compiled before any trains: a bad one fails at once.
  // Each is compiled once; every seed restarts it from the parameters of
  // its seed, zero moments and the scaling state it was compiled with.
  CompileOptions compileOptions;
  compileOptions.optLevel = optLevel;
  compileOptions.verifyEachPass = verifyEach;
  compileOptions.accumulation = accumulation;
  std::vector<Run> compiled;
  SmallVector<StateSnapshot> compiledState;
  for (auto [r, recipe] : llvm::enumerate(*recipeList)) {
    Run &run = compiled.emplace_back();
    run.recipe = recipe;
    if (llvm::all_of(recorded[r], [](auto &run) { return run.has_value(); })) {
      compiledState.emplace_back();
      continue;
    }
    if (options.progress)
      llvm::errs() << "fp8-train: compiling " << recipe.label << "\n";
    FailureOr<OwningOpRef<ModuleOp>> step =
        transformForRecipe(*module, *contract, run, error);
    if (failed(step) ||
        failed(
            reserveRun(budget, **step, run, uint64_t(steps) * seeds, error)) ||
        failed(compileRun(**step, *contract, run, compileOptions, error)))
      return fail(error);
    FailureOr<StateSnapshot> state = snapshotState(run, error);
    if (failed(state))
      return fail(recipe.label + ": " + error);
    compiledState.push_back(std::move(*state));
  }
  std::vector<Run> runs;
  runs.reserve(compiled.size() * seeds);
  for (unsigned i = 0; i < seeds; ++i) {
    options.seed = seed + i;
    SmallVector<HostTensor> initial =
        initialParameters(*contract, options.seed);
    for (auto [r, recipeRun] : llvm::enumerate(compiled)) {
      if (recorded[r][i]) {
        if (options.progress)
          llvm::errs() << "fp8-train: " << recorded[r][i]->getName()
                       << ": from " << recordPath(recordsDir, *recorded[r][i])
                       << "\n";
        runs.push_back(std::move(*recorded[r][i]));
        continue;
      }
      Run run = recipeRun;
      run.seed = options.seed;
      if (seeds > 1)
        run.name = llvm::formatv("{0} seed {1}", run.recipe.label, run.seed);
      if (failed(restoreState(run, compiledState[r], error)))
        return fail(run.getName() + ": " + error);
      startRun(run, initial);
      if (!resumeDir.empty()) {
        FailureOr<uint64_t> done =
            loadCheckpoint(resumeDir, run, error, budget.getLimit());
        if (failed(done))
          return fail(error);
        run.firstStep = *done + 1;
      }
      if (failed(trainRun(run, *contract, *data, options, error)))
        return fail(run.getName() + ": " + error);
      if (mpi) {
        FailureOr<uint64_t> digest = digestState(run, error);
        if (failed(digest))
          return fail(run.getName() + ": " + error);
        if (!mpi->allEqual(*digest))
          return fail(run.getName() + ": the parameters or the FP8 scaling "
                                      "state differ between the ranks after "
                                      "the run");
      }
      if (lead && !recordsDir.empty() &&
          failed(saveRecord(recordsDir, recordKey(run), run, error)))
        return fail(run.getName() + ": " + error);
      // The report needs the records only.
      run.parameters.clear();
      run.moment1.clear();
      run.moment2.clear();
      runs.push_back(std::move(run));
    }
  }
  if (!lead)
    return 0;

  if (!csvFile.empty() && failed(writeCsv(csvFile, runs, accumulation, error)))
    return fail(error);
  if (!plotFile.empty() &&
      failed(writePlot(plotFile, llvm::sys::path::filename(inputFile), runs,
                       error)))
    return fail(error);
  printSummary(llvm::outs(), runs, json, ranks, accumulation, seeds,
               parityTolerance);
  return 0;
}
