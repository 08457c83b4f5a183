//===- fp8-tune.cpp - The most FP8 a graph takes under a budget -----------===//
//
// A thin driver over lib/Tune: parses the graph and the options, tunes, and
// writes the graph with its fp8.precision decisions and the report.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Runner/HostMemory.h"
#include "fp8/Runner/Runner.h"
#include "fp8/Tune/Tuner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace llvm;

static cl::OptionCategory tuneCategory("fp8-tune options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<graph.mlir>"),
                                      cl::cat(tuneCategory));
static cl::opt<std::string> outputFile("o", cl::Required,
                                       cl::desc("The tuned graph"),
                                       cl::value_desc("file"),
                                       cl::cat(tuneCategory));
static cl::opt<std::string>
    budget("budget", cl::Required,
           cl::desc("The least SQNR (dB) of every output against the f64 "
                    "golden run"),
           cl::cat(tuneCategory));
static cl::opt<std::string>
    perRow("per-row", cl::desc("The least SQNR (dB) of every output's worst "
                               "row"),
           cl::cat(tuneCategory));
static cl::opt<std::string>
    margin("margin",
           cl::desc("dB the calibration inputs must beat the budgets by "
                    "(default 0)"),
           cl::init("0"), cl::cat(tuneCategory));
static cl::opt<std::string>
    pipelineOptions("fp8-pipeline",
                    cl::desc("fp8-pipeline's options: the recipe the graph "
                             "is tuned for"),
                    cl::init(""), cl::cat(tuneCategory));
static cl::opt<std::string> reportFile("report",
                                       cl::desc("Write the JSON report here"),
                                       cl::cat(tuneCategory));
static cl::opt<std::string> functionName(
    "function", cl::desc("The function to tune (default: the only public one)"),
    cl::cat(tuneCategory));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the calibration inputs"),
                              cl::init(0), cl::cat(tuneCategory));
static cl::opt<unsigned> calibrationSets(
    "calibration-sets",
    cl::desc("Input sets (seeds --seed, --seed+1, ...) every GEMM's cost is "
             "measured on and the choice must meet the budget on"),
    cl::init(2), cl::cat(tuneCategory));
static cl::opt<uint64_t>
    freshSeed("fresh-seed",
              cl::desc("Seed of the fresh inputs the choice is checked on "
                       "(default: the seed after the calibration sets')"),
              cl::init(0), cl::cat(tuneCategory));
static cl::opt<std::string>
    distribution("dist",
                 cl::desc("Inputs without a role-based default: normal | "
                          "uniform | outliers | zeros"),
                 cl::init("normal"), cl::cat(tuneCategory));
static cl::opt<double> scale("scale", cl::desc("Their standard deviation or bound"),
                             cl::init(1.0), cl::cat(tuneCategory));
static cl::opt<int64_t>
    integerRange("int-range",
                 cl::desc("Integer inputs without a default: uniform in [0, N)"),
                 cl::init(1000), cl::cat(tuneCategory));
static cl::list<std::string>
    argOverrides("arg",
                 cl::desc("INDEX:DIST[:SCALE] or INDEX:file.npy, as fp8-run"),
                 cl::cat(tuneCategory));
static cl::opt<std::string>
    corpus("corpus",
           cl::desc("A training step's calibration inputs: batches of this "
                    "byte corpus at the initial parameters, as fp8-train "
                    "feeds the step"),
           cl::value_desc("file"), cl::cat(tuneCategory));
static cl::list<std::string> alternatives(
    "alternatives", cl::CommaSeparated,
    cl::desc("Other ways into FP8 each GEMM may take before high precision: "
             "row, block, mx (those granularities' recipes), e4m3 (E4M3 "
             "gradients), current (current scaling); 'none' for none "
             "(default: row,block,mx,e4m3)"),
    cl::cat(tuneCategory));
static cl::opt<unsigned> optLevel("O", cl::Prefix, cl::init(3),
                                  cl::value_desc("0-3"),
                                  cl::desc("LLVM optimization level"),
                                  cl::cat(tuneCategory));

static int fail(const Twine &message) {
  llvm::errs() << "fp8-tune: error: " << message << "\n";
  return 1;
}

static std::optional<double> parseDb(StringRef text) {
  double value;
  if (text.trim().getAsDouble(value) || !std::isfinite(value))
    return std::nullopt;
  return value;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The compiled steps free and allocate the same buffers call after call.
  fp8::runner::retainFreedHostMemory();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(tuneCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp8-tune: the largest FP8 share of a graph's GEMM FLOPs that meets an "
      "accuracy budget, written into the graph as fp8.precision\n");

  tune::TuneOptions options;
  std::optional<double> budgetDb = parseDb(budget);
  if (!budgetDb)
    return fail("--budget='" + budget + "' is not a number of dB");
  options.budgetDb = *budgetDb;
  if (!perRow.empty()) {
    options.perRowDb = parseDb(perRow);
    if (!options.perRowDb)
      return fail("--per-row='" + perRow + "' is not a number of dB");
  }
  std::optional<double> marginDb = parseDb(margin);
  if (!marginDb || *marginDb < 0)
    return fail("--margin='" + margin + "' is not a non-negative number of dB");
  options.marginDb = *marginDb;
  std::optional<runner::Distribution> dist =
      runner::parseDistribution(distribution);
  if (!dist)
    return fail("unknown --dist '" + distribution +
                "' (expected normal, uniform, outliers or zeros)");
  if (!std::isfinite(scale) || scale <= 0)
    return fail("--scale must be a positive number");
  if (optLevel > 3)
    return fail("-O" + Twine(optLevel.getValue()) +
                ": the optimization level is one of -O0..-O3");
  options.distribution = *dist;
  options.scale = scale;
  options.integerRange = integerRange;
  if (calibrationSets == 0)
    return fail("--calibration-sets must be at least 1");
  options.seed = seed;
  options.calibrationSets = calibrationSets;
  options.freshSeed =
      freshSeed.getNumOccurrences() ? freshSeed : seed + calibrationSets;
  options.pipelineOptions = pipelineOptions;
  options.argOverrides.assign(argOverrides.begin(), argOverrides.end());
  options.corpus = corpus;
  if (alternatives.getNumOccurrences() == 0)
    options.alternatives = {"row", "block", "mx", "e4m3"};
  for (const std::string &name : alternatives)
    if (name != "none")
      options.alternatives.push_back(name);
  options.compile.optLevel = optLevel;

  for (const char *lib : {"/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so",
                          "/usr/lib/llvm-22/lib/libmlir_runner_utils.so"}) {
    std::string error;
    if (llvm::sys::fs::exists(lib) &&
        llvm::sys::DynamicLibrary::LoadLibraryPermanently(lib, &error))
      return fail("cannot load '" + Twine(lib) + "': " + error);
  }

  DialectRegistry registry;
  runner::registerRunnerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string error;
  OwningOpRef<ModuleOp> module =
      runner::parseModuleFile(inputFile, sourceMgr, context, error);
  if (!module)
    return fail(error);
  {
    PassManager pm(&context);
    buildTosaFrontEnd(pm);
    if (failed(pm.run(*module)))
      return fail("the TOSA front end failed on '" + inputFile + "'");
  }
  std::string name = functionName;
  if (name.empty()) {
    SmallVector<std::string> publicFunctions;
    module->walk([&](func::FuncOp func) {
      if (func.isPublic() && !func.isExternal())
        publicFunctions.push_back(func.getName().str());
    });
    if (publicFunctions.size() != 1)
      return fail("the module has " + Twine(publicFunctions.size()) +
                  " public functions; choose one with --function");
    name = publicFunctions.front();
  }

  // The trials run a copy whose undefined externals are no-ops; the graph
  // written keeps them as they were.
  OwningOpRef<ModuleOp> runnable = module->clone();
  for (const std::string &stub : runner::stubUnresolvedExternals(*runnable))
    llvm::errs() << "fp8-tune: note: @" << stub
                 << " has no definition; it runs as a no-op\n";
  FailureOr<tune::TuneResult> result =
      tune::tuneGraph(*runnable, name, options, error);
  if (failed(result))
    return fail(error);
  tune::printSummary(llvm::outs(), *result, options);
  if (failed(tune::applyDecisions(*module, options, *result, error)))
    return fail(error);

  auto output = openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  if (!reportFile.empty()) {
    auto report = openOutputFile(reportFile, &error);
    if (!report)
      return fail(error);
    report->os() << llvm::formatv("{0:2}", tune::toJSON(*result, options))
                 << "\n";
    report->keep();
  }
  return 0;
}
