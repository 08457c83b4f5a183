//===- fp8-run.cpp - Run a function in high precision and in FP8 ----------===//
//
// JIT-compiles a function twice, as written and through fp8-pipeline, runs
// both on the same seeded (or .npy) inputs, and reports per output the SQNR,
// max abs / rel error, and per quantized tensor the fractions saturated and
// flushed to zero. --steps runs several steps carrying the delayed-scaling
// state. "It got faster" means nothing until this says the accuracy holds.
//
//===----------------------------------------------------------------------===//

#include "fp8/AOT/InputDialects.h"
#include "fp8/Dialect/FP8/Analysis/GemmAnalysis.h"
#include "fp8/Dialect/FP8/Analysis/RankVariance.h"
#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Runner/Golden.h"
#include "fp8/Runner/GpuFunction.h"
#include "fp8/Runner/HostMemory.h"
#include "fp8/Runner/InputDefaults.h"
#include "fp8/Runner/JSON.h"
#include "fp8/Runner/Probes.h"
#include "fp8/Runner/Runner.h"
#include "fp8/Runner/TiedDimensions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <unistd.h>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("fp8-run options");

static cl::opt<std::string> inputFile(cl::cat(runCategory), cl::Positional,
                                      cl::desc("<input.mlir>"), cl::Required);
static cl::opt<std::string>
    functionName(cl::cat(runCategory), "function",
                 cl::desc("Function to run (default: the only "
                          "public function with a body)"));
static cl::opt<std::string>
    pipelineOptions(cl::cat(runCategory), "fp8-pipeline",
                    cl::desc("Options for fp8-pipeline, as in fp8-opt "
                             "(e.g. \"scaling=current format=e4m3\")"),
                    cl::init(""));
static cl::opt<std::string>
    distribution(cl::cat(runCategory), "dist",
                 cl::desc("Input generator: normal | uniform | outliers | "
                          "zeros"),
                 cl::init("normal"));
static cl::opt<double> scale(cl::cat(runCategory), "scale",
                             cl::desc("Generator scale (std dev, or bound)"),
                             cl::init(1.0));
static cl::list<std::string>
    argOverrides(cl::cat(runCategory), "arg",
                 cl::desc("INDEX:DIST[:SCALE] or INDEX:file.npy for "
                          "one argument (repeatable)"));
static cl::opt<uint64_t> seed(cl::cat(runCategory), "seed",
                              cl::desc("Random seed"), cl::init(42));
static cl::opt<int64_t> integerRange(cl::cat(runCategory), "int-range",
                                     cl::desc("Integer inputs are uniform in "
                                              "[0, N)"),
                                     cl::init(2));
static cl::opt<int64_t> dynamicSize(cl::cat(runCategory), "dynamic-size",
                                    cl::desc("Size of every dynamic dimension"),
                                    cl::init(16));
static cl::opt<unsigned> steps(cl::cat(runCategory), "steps",
                               cl::desc("Steps to run, carrying the "
                                        "delayed-scaling state"),
                               cl::init(1));
static cl::opt<bool> sameInputs(cl::cat(runCategory), "same-inputs",
                                cl::desc("Reuse step 0's inputs every step"));
static cl::opt<int> spikeStep(cl::cat(runCategory), "spike-step",
                              cl::desc("Multiply the float inputs of this "
                                       "step by --spike-factor"),
                              cl::init(-1));
static cl::opt<double> spikeFactor(cl::cat(runCategory), "spike-factor",
                                   cl::init(1000.0),
                                   cl::desc("See --spike-step"));
static cl::opt<bool> json(cl::cat(runCategory), "json",
                          cl::desc("Print JSON instead of a table"));
static cl::opt<std::string>
    device(cl::cat(runCategory), "device",
           cl::desc("cpu | cuda: cuda also runs the FP8 version on the GPU "
                    "and checks it against the CPU run (FP8 bytes, amax and "
                    "scales bit-exact; exit 1 on a mismatch)"),
           cl::init("cpu"));
static cl::opt<bool> plainInputs(
    cl::cat(runCategory), "plain-inputs",
    cl::desc("Draw every input from --dist/--scale/--int-range, instead of "
             "weights N(0, 1/K) for their GEMM's K and integer indices over "
             "the dimension they index"));
static cl::opt<bool> quiet(cl::cat(runCategory), "quiet",
                           cl::desc("No progress lines on stderr"));
static cl::opt<bool> scalarLoops(
    cl::cat(runCategory), "scalar-loops",
    cl::desc("Compile every version as scalar loops on one thread "
             "(fp8-lower-to-cpu{vectorize=false threads=false}), to compare "
             "with the tiled, vectorized, threaded code; same FP8 bits"));
static cl::opt<bool> verifyEach(
    cl::cat(runCategory), "verify-each",
    cl::desc("Verify the IR after every pass of the lowering, as fp8-opt "
             "does (slower; by default once, at the end)"));
static cl::opt<unsigned> optLevel(
    "O", cl::Prefix, cl::init(3), cl::cat(runCategory), cl::value_desc("0-3"),
    cl::desc("LLVM optimization level of the JIT (default -O3); results do "
             "not depend on it, -O0 compiles about 3x faster"));
static cl::opt<std::string> golden(
    cl::cat(runCategory), "golden",
    cl::desc("What both versions are measured against: the graph evaluated "
             "in f32 (bf16/f16 widened; the default), f64 (f32 too), or "
             "none (the graph as written)"),
    cl::init("f32"));
static cl::opt<Accumulation> accumulation(
    cl::cat(runCategory), "accumulation",
    cl::desc("How bf16/f16 GEMMs left in high precision accumulate, in the "
             "graph as written and in the FP8 version"),
    cl::init(Accumulation::F32), accumulationValues());
static cl::opt<std::string> memoryBudget(
    cl::cat(runCategory), "memory-budget",
    cl::desc("Most memory the run may need, e.g. 512M or 8G (default: the "
             "machine's memory, or the process limit when lower); checked "
             "before anything is allocated or compiled"),
    cl::init(""));
static cl::list<std::string>
    sharedLibs(cl::cat(runCategory), "shared-libs", cl::CommaSeparated,
               cl::desc("Libraries providing external functions (default: "
                        "MLIR's runner utils)"));

namespace {
/// While alive, the process's stdout is its stderr: what the compiled
/// functions print themselves (buddy-mlir's timers, printMemref) must not mix
/// with the report, which --json readers parse.
class StdoutToStderr {
public:
  StdoutToStderr(const StdoutToStderr &) = delete;
  StdoutToStderr &operator=(const StdoutToStderr &) = delete;
  StdoutToStderr() {
    llvm::outs().flush();
    std::fflush(stdout);
    saved = ::dup(STDOUT_FILENO);
    if (saved >= 0)
      ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutToStderr() {
    std::fflush(stdout);
    if (saved < 0)
      return;
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
  }

private:
  int saved;
};
} // namespace

static int fail(const Twine &message) {
  llvm::errs() << "fp8-run: error: " << message << "\n";
  return 1;
}

static FailureOr<std::string> pickFunction(ModuleOp module) {
  if (!functionName.empty())
    return std::string(functionName);
  SmallVector<std::string> candidates;
  module.walk([&](func::FuncOp func) {
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func.getName().str());
  });
  if (candidates.size() == 1)
    return candidates.front();
  std::string message = "the module has " + std::to_string(candidates.size()) +
                        " public functions; choose one with --function";
  if (!candidates.empty())
    message += " (" + llvm::join(candidates, ", ") + ")";
  fail(message);
  return failure();
}

namespace {
/// state=arguments: the FP8 function takes the scaling state as trailing
/// arguments and returns the next state as trailing results, each named by
/// `fp8.state`; the runner carries it from step to step.
struct ArgumentState {
  /// Name and current value of each trailing state argument, in order.
  SmallVector<std::string> names;
  SmallVector<HostTensor> values;
  /// FP8 function result index -> index into `values`.
  SmallVector<std::pair<unsigned, unsigned>> outputs;

  /// Reads the state arguments and results of `func` beyond the reference's
  /// `numArguments`; the initial state is Transformer Engine's (scale 1,
  /// history 0), as the globals of state=globals start.
  static FailureOr<ArgumentState> get(func::FuncOp func,
                                      unsigned numArguments) {
    ArgumentState state;
    for (unsigned i = numArguments, e = func.getNumArguments(); i < e; ++i) {
      auto name = func.getArgAttrOfType<StringAttr>(i, "fp8.state");
      auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
      if (!name || !type || !type.hasStaticShape()) {
        fail("argument #" + std::to_string(i) + " of the FP8 version of @" +
             func.getName() + " is not scaling state");
        return failure();
      }
      HostTensor value(type.getElementType(), type.getShape());
      double init = name.getValue().ends_with(".scale") ? 1.0 : 0.0;
      for (int64_t k = 0, n = value.getNumElements(); k < n; ++k)
        value.set(k, init);
      state.names.push_back(name.getValue().str());
      state.values.push_back(std::move(value));
    }
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "fp8.state");
      if (!name)
        continue;
      auto *it = llvm::find(state.names, name.getValue());
      if (it == state.names.end()) {
        fail("result #" + std::to_string(i) + " of the FP8 version of @" +
             func.getName() + " returns state @" + name.getValue() +
             " that no argument takes");
        return failure();
      }
      state.outputs.push_back({i, unsigned(it - state.names.begin())});
    }
    return state;
  }

  const HostTensor *lookup(StringRef name) const {
    auto *it = llvm::find(names, name);
    return it == names.end() ? nullptr : &values[it - names.begin()];
  }
};
} // namespace

/// Constants and globals whose values the file does not hold become extern
/// globals, which the runner draws like any other (weights N(0, 1/K) for
/// their GEMM's K, boolean masks causal before a softmax): a graph exported
/// without its weights still runs, and its FP8 accuracy means what it does
/// for drawn weights. Float and boolean tensors only: other integers
/// (indices, shapes) cannot be made up, and are an error at their location.
/// Returns how many constants were replaced.
static FailureOr<unsigned> externalizeElidedConstants(ModuleOp module) {
  MLIRContext *context = module.getContext();
  context->getOrLoadDialect<ml_program::MLProgramDialect>();
  auto drawable = [](Operation *op, Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && tensor.hasStaticShape() &&
        (isa<FloatType>(tensor.getElementType()) ||
         tensor.getElementType().isInteger(1)))
      return true;
    mlir::emitError(op->getLoc(), "the values of this ")
        << type << " are elided in the file (dense_resource<__elided__>); "
        << "fp8-run draws elided values of static float and boolean "
           "tensors only";
    return false;
  };
  SmallVector<Operation *> constants;
  WalkResult walk = module.walk([&](Operation *op) {
    if (op->getParentOfType<ModuleOp>() != module)
      return WalkResult::advance(); // Another program's.
    if (auto global = dyn_cast<ml_program::GlobalOp>(op)) {
      if (!aot::isElidedResource(global.getValueAttr()))
        return WalkResult::advance();
      if (!drawable(op, global.getType()))
        return WalkResult::interrupt();
      global.setValueAttr(
          ml_program::ExternAttr::get(context, global.getType()));
      return WalkResult::advance();
    }
    Attribute value;
    if (op->getNumResults() != 1 || !matchPattern(op, m_Constant(&value)) ||
        !aot::isElidedResource(value))
      return WalkResult::advance();
    if (!drawable(op, op->getResult(0).getType()))
      return WalkResult::interrupt();
    constants.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  SymbolTable symbols(module);
  // The globals at the top of the module, in the constants' order.
  auto globals = OpBuilder::atBlockBegin(module.getBody());
  OpBuilder builder(context);
  for (Operation *op : constants) {
    Type type = op->getResult(0).getType();
    auto global = ml_program::GlobalOp::create(
        globals, op->getLoc(), "elided", type, /*is_mutable=*/false,
        ml_program::ExternAttr::get(context, type),
        builder.getStringAttr("private"));
    symbols.insert(global); // Renamed to be unique.
    builder.setInsertionPoint(op);
    op->getResult(0).replaceAllUsesWith(ml_program::GlobalLoadConstOp::create(
        builder, op->getLoc(), type, FlatSymbolRefAttr::get(global)));
    op->erase();
  }
  return constants.size();
}

/// Globals without a value in the module (`#ml_program.extern`: weights that
/// fp8-gen --weights=globals leaves to the caller) get one from the runner:
/// they become public mutable globals, read with global_load, which the
/// runner fills with the same seeded values in both versions before the
/// first step. Returns them, by name.
static SmallVector<std::pair<std::string, RankedTensorType>>
materializeExternGlobals(ModuleOp module) {
  SmallVector<std::pair<std::string, RankedTensorType>> externs;
  module.walk([&](ml_program::GlobalOp global) {
    auto type = dyn_cast<RankedTensorType>(global.getType());
    if (!isa_and_present<ml_program::ExternAttr>(global.getValueAttr()) ||
        !type || !type.hasStaticShape())
      return;
    global.setValueAttr(Builder(module.getContext()).getZeroAttr(type));
    global.setIsMutable(true);
    SymbolTable::setSymbolVisibility(global, SymbolTable::Visibility::Public);
    externs.push_back({global.getSymName().str(), type});
  });
  module.walk([&](ml_program::GlobalLoadConstOp load) {
    auto symbol = dyn_cast<FlatSymbolRefAttr>(load.getGlobal());
    if (!symbol || !llvm::is_contained(llvm::make_first_range(externs),
                                       symbol.getValue()))
      return;
    OpBuilder builder(load);
    load.replaceAllUsesWith(ml_program::GlobalLoadOp::create(
                                builder, load.getLoc(), load.getType(), symbol)
                                .getResult());
    load.erase();
  });
  return externs;
}

/// The generators' scales: a standard deviation or a bound.
static bool isPositiveFinite(double value) {
  return std::isfinite(value) && value > 0;
}

/// What an input of `type` is drawn from when nothing names it: its
/// default from the analysis, if any, else --dist/--scale or --int-range.
static std::string describeDefault(const InputDefault *byDefault, Type type) {
  if (byDefault && byDefault->scale)
    return llvm::formatv("{0}(0, {1:f4}^2): {2}", distribution,
                         *byDefault->scale, byDefault->why);
  if (byDefault && byDefault->integerRange)
    return llvm::formatv("uniform [0, {0}): {1}", *byDefault->integerRange,
                         byDefault->why);
  if (byDefault && byDefault->mask != InputDefault::Mask::None)
    return llvm::formatv("{0} mask: {1}",
                         byDefault->mask == InputDefault::Mask::Causal
                             ? "causal"
                             : "all-true",
                         byDefault->why);
  if (!isa<FloatType>(getElementTypeOrSelf(type)))
    return llvm::formatv("uniform [0, {0})", integerRange.getValue());
  return llvm::formatv("{0}(0, {1:f4}^2)", distribution, scale.getValue());
}

/// Draws `tensor` as `byDefault` says: a mask, or --dist with the default's
/// scale or integer range (else --scale and --int-range).
static void drawDefault(HostTensor &tensor, const InputDefault *byDefault,
                        Distribution dist, std::mt19937_64 &rng) {
  if (byDefault && byDefault->mask != InputDefault::Mask::None) {
    fillMask(tensor, byDefault->mask == InputDefault::Mask::Causal);
    return;
  }
  fill(tensor, dist,
       byDefault ? byDefault->scale.value_or(scale) : double(scale),
       byDefault ? byDefault->integerRange.value_or(integerRange)
                 : int64_t(integerRange),
       rng);
}

/// The default of `key` ("arg<i>", "global @name"), or null.
static const InputDefault *
lookupDefault(const llvm::StringMap<InputDefault> &defaults, StringRef key) {
  auto it = defaults.find(key);
  return it == defaults.end() ? nullptr : &it->second;
}

namespace {
/// What --arg says of one argument: a distribution and scale, or a file.
struct ArgOverride {
  std::string source;
  double scale;
};

/// The arguments' inputs as far as they are fixed before the first step:
/// the --arg overrides, the .npy files (read once), and every argument's
/// shape, with the dynamic sizes that the graph ties to a file's (or to a
/// static size) taken from it; the results' shapes that follow.
struct InputPlan {
  DenseMap<unsigned, ArgOverride> overrides;
  DenseMap<unsigned, HostTensor> files;
  uint64_t fileBytes = 0;
  SmallVector<SmallVector<int64_t>> argumentShapes, resultShapes;
};
} // namespace

/// Reads --arg, loads its .npy files and chooses the arguments' shapes for
/// `reference` (the graph as written, through the TOSA front end: its
/// linalg ops say which dimensions are tied).
static FailureOr<InputPlan> planInputs(func::FuncOp reference,
                                       uint64_t budgetBytes) {
  FunctionType signature = reference.getFunctionType();
  InputPlan plan;
  for (StringRef spec : argOverrides) {
    auto [index, what] = spec.split(':');
    auto [source, scaleText] = what.split(':');
    unsigned i;
    double argScale = scale;
    if (index.getAsInteger(10, i) || source.empty() ||
        i >= signature.getNumInputs() ||
        (!scaleText.empty() &&
         (scaleText.getAsDouble(argScale) || !isPositiveFinite(argScale)))) {
      fail("bad --arg '" + spec +
           "' (expected INDEX:DIST[:SCALE] with "
           "SCALE > 0, or INDEX:file.npy, with INDEX < " +
           std::to_string(signature.getNumInputs()) + ")");
      return failure();
    }
    if (!source.ends_with(".npy") && !parseDistribution(source)) {
      fail("unknown distribution '" + source + "' in --arg");
      return failure();
    }
    plan.overrides[i] = {source.str(), argScale};
  }

  SmallVector<std::optional<GivenShape>> given(signature.getNumInputs());
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    auto it = plan.overrides.find(index);
    if (it == plan.overrides.end() || !StringRef(it->second.source).ends_with(".npy"))
      continue;
    StringRef path = it->second.source;
    auto tensorType = dyn_cast<RankedTensorType>(type);
    std::string error;
    FailureOr<HostTensor> tensor =
        readNpy(path, getElementTypeOrSelf(type), error,
                budgetBytes - std::min(budgetBytes, plan.fileBytes));
    if (failed(tensor)) {
      fail(error);
      return failure();
    }
    if (!tensorType || failed(verifyCompatibleShape(tensor->getShape(),
                                                    tensorType.getShape()))) {
      fail("'" + path + "' does not have the shape of argument #" +
           std::to_string(index));
      return failure();
    }
    plan.fileBytes += tensor->getNumElements() * tensor->getElementBytes();
    given[index] = GivenShape{SmallVector<int64_t>(tensor->getShape()),
                              ("'" + path + "'").str()};
    plan.files[index] = std::move(*tensor);
  }
  // Sizes that disagree where the graph ties them make its ops undefined
  // (a matmul reading past an operand): refused, as a drawn argument that
  // did not match a file's would be.
  TiedDimensions tied(reference);
  std::string error;
  FailureOr<SmallVector<SmallVector<int64_t>>> shapes =
      tied.getArgumentShapes(given, dynamicSize, error);
  if (failed(shapes)) {
    fail(error);
    return failure();
  }
  plan.argumentShapes = std::move(*shapes);
  plan.resultShapes = tied.getResultShapes(plan.argumentShapes, dynamicSize);
  return plan;
}

static FailureOr<SmallVector<HostTensor>>
makeInputs(FunctionType signature, unsigned step, const InputPlan &plan,
           const llvm::StringMap<InputDefault> &defaults) {
  Distribution dist = *parseDistribution(distribution);
  std::mt19937_64 rng(seed + (sameInputs ? 0 : step));

  // The spike scales every float input of its step, .npy files included.
  auto addSpike = [&](HostTensor &tensor) {
    if (static_cast<int>(step) != spikeStep ||
        !isa<FloatType>(tensor.getElementType()))
      return;
    for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
      tensor.set(i, tensor.get(i) * spikeFactor);
  };

  SmallVector<HostTensor> inputs;
  for (auto [index, type] : llvm::enumerate(signature.getInputs())) {
    if (auto file = plan.files.find(index); file != plan.files.end()) {
      HostTensor tensor = file->second;
      addSpike(tensor);
      inputs.push_back(std::move(tensor));
      continue;
    }
    const InputDefault *byDefault =
        lookupDefault(defaults, "arg" + std::to_string(index));
    Distribution argDist = dist;
    // --arg: its distribution and scale, the default's integer range.
    InputDefault given;
    if (auto it = plan.overrides.find(index); it != plan.overrides.end()) {
      argDist = *parseDistribution(it->second.source);
      given.scale = it->second.scale;
      given.integerRange = byDefault ? byDefault->integerRange : std::nullopt;
      byDefault = &given;
    }
    // checkMemoryBudget made sure that these sizes fit.
    HostTensor tensor(getElementTypeOrSelf(type), plan.argumentShapes[index]);
    drawDefault(tensor, byDefault, argDist, rng);
    addSpike(tensor);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

/// The bytes of a value of `type` with `shape` (its dynamic sizes'), or
/// nullopt on overflow.
static std::optional<uint64_t> getBytes(Type type, ArrayRef<int64_t> shape) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || static_cast<int64_t>(shape.size()) != tensor.getRank())
    return getStorageBytes(type, dynamicSize);
  return getStorageBytes(
      RankedTensorType::get(shape, tensor.getElementType()), 0);
}

/// What running `func` of `module` holds in memory at once, estimated from
/// types and the planned shapes: its arguments and results (twice: the
/// reference and the FP8 version keep their own), the .npy files kept for
/// every step, every global of the module, and a copy of the longest amax
/// history (read for the report after each step).
static LogicalResult checkMemoryBudget(ModuleOp module, func::FuncOp func,
                                       const InputPlan &plan, uint64_t budget,
                                       StringRef what) {
  uint64_t total = plan.fileBytes;
  bool overflow = false;
  auto add = [&](std::optional<uint64_t> bytes, uint64_t copies) {
    if (!bytes) {
      overflow = true;
      return;
    }
    bool overflowed = false;
    total = llvm::SaturatingMultiplyAdd(*bytes, copies, total, &overflowed);
    overflow |= overflowed;
  };
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    add(getBytes(type, i < plan.argumentShapes.size()
                           ? ArrayRef(plan.argumentShapes[i])
                           : ArrayRef<int64_t>()),
        1);
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    add(getBytes(type, i < plan.resultShapes.size()
                           ? ArrayRef(plan.resultShapes[i])
                           : ArrayRef<int64_t>()),
        2);
  uint64_t longestHistory = 0;
  module.walk([&](Operation *op) {
    if (auto global = dyn_cast<ml_program::GlobalOp>(op)) {
      std::optional<uint64_t> bytes =
          getStorageBytes(global.getType(), dynamicSize);
      add(bytes, 1);
      if (bytes && global.getSymName().ends_with(".amax_history"))
        longestHistory = std::max(longestHistory, *bytes);
    } else if (auto global = dyn_cast<memref::GlobalOp>(op)) {
      add(getStorageBytes(global.getType(), dynamicSize), 1);
    }
  });
  add(longestHistory, 1);
  if (!overflow && total <= budget)
    return success();
  std::string need = overflow ? "more than 2^64 bytes" : formatBytes(total);
  std::string sizes = "dynamic sizes " + std::to_string(dynamicSize);
  if (!plan.files.empty())
    sizes += " where not tied to a .npy input's";
  fail("running @" + func.getName() + " " + what + " needs " + need +
       " for its arguments, results and globals (" + sizes +
       "), more than the memory budget of " + formatBytes(budget) +
       " (--memory-budget)");
  return failure();
}

/// `tensor` with its elements in `elementType` (exact when widening).
static HostTensor convertTo(const HostTensor &tensor, Type elementType) {
  if (tensor.getElementType() == elementType)
    return tensor;
  HostTensor converted(elementType, tensor.getShape());
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i)
    converted.set(i, tensor.get(i));
  return converted;
}

/// What each argument was drawn from, for the report (the JSON "inputs"
/// and the table's header), unless --arg named it; then each extern global.
static llvm::json::Array
describeInputs(func::FuncOp func, const InputPlan &plan,
               const llvm::StringMap<InputDefault> &defaults,
               ArrayRef<std::pair<std::string, RankedTensorType>> globals) {
  DenseSet<unsigned> overridden;
  for (StringRef spec : argOverrides) {
    unsigned index;
    if (!spec.split(':').first.getAsInteger(10, index))
      overridden.insert(index);
  }
  llvm::json::Array inputs;
  for (BlockArgument arg : func.getArguments()) {
    unsigned index = arg.getArgNumber();
    std::string text =
        overridden.contains(index)
            ? "--arg"
            : describeDefault(
                  lookupDefault(defaults, "arg" + std::to_string(index)),
                  arg.getType());
    llvm::json::Array shape;
    for (int64_t size : plan.argumentShapes[index])
      shape.push_back(size);
    inputs.push_back(llvm::json::Object{{"argument", int64_t(index)},
                                        {"shape", std::move(shape)},
                                        {"drawn_from", text}});
  }
  for (const auto &[global, type] : globals)
    inputs.push_back(llvm::json::Object{
        {"global", "@" + global},
        {"drawn_from",
         describeDefault(lookupDefault(defaults, "global @" + global), type)}});
  return inputs;
}

/// Which BF16 "as written" is: how its 16-bit GEMMs accumulate.
static std::string describeAccumulation() {
  return accumulation == Accumulation::F32
             ? "the graph in its own types, bf16/f16 GEMMs accumulating in "
               "f32 and rounded once, as GPUs compute them "
               "(--accumulation=f32)"
             : "the graph in its own types, bf16/f16 GEMMs rounding every "
               "multiply-add to bf16/f16, as linalg defines them "
               "(--accumulation=as-written)";
}

/// The golden type of --golden (f32 or f64).
static FloatType getGoldenTarget(MLIRContext *context) {
  return golden == "f64" ? FloatType(Float64Type::get(context))
                         : FloatType(Float32Type::get(context));
}

/// `values` converted to the argument types of `signature`.
static SmallVector<HostTensor> convertInputs(ArrayRef<HostTensor> values,
                                             FunctionType signature) {
  SmallVector<HostTensor> converted;
  for (auto [value, type] : llvm::zip(values, signature.getInputs()))
    converted.push_back(convertTo(value, getElementTypeOrSelf(type)));
  return converted;
}

namespace {
/// Progress on stderr for runs that take a while: after the first two
/// seconds, a line per phase with the step and the time so far. Off with
/// --quiet and when stderr is not a terminal (logs, pipes, tests).
class Progress {
public:
  Progress()
      : enabled(!quiet && llvm::sys::Process::StandardErrIsDisplayed()),
        start(std::chrono::steady_clock::now()) {}

  void operator()(const Twine &phase) {
    if (!enabled)
      return;
    double elapsed = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (elapsed < 2.0)
      return;
    llvm::errs() << llvm::formatv("fp8-run: [{0,6:f1} s] ", elapsed) << phase
                 << "\n";
  }

private:
  bool enabled;
  std::chrono::steady_clock::time_point start;
};
} // namespace

/// JSON has no inf or NaN: a non-finite SQNR is null under `<name>_db`, and
/// `<name>` says which ("exact", "broken_output" or "not_comparable").
static void putSqnr(llvm::json::Object &record, StringRef name, double db) {
  record[(name + "_db").str()] = jsonNumber(db);
  if (std::isnan(db))
    record[name] = "not_comparable";
  else if (std::isinf(db))
    record[name] = db > 0 ? "exact" : "broken_output";
}

/// Histories longer than this are summarized in the report: a record of
/// every entry would take about 50 bytes per entry, per tensor and step
/// (gigabytes for history=1e8, after the memory budget said yes).
static constexpr int64_t kReportedHistory = 1024;

/// The amax history after a step into `record`: its length, and all of it
/// (`amax_history`) up to kReportedHistory entries; beyond, the most recent
/// kReportedHistory (`amax_history_recent`, oldest first, as in the history)
/// and the largest entry (`amax_history_max`, NaN entries skipped).
static void summarizeHistory(const HostTensor &history,
                             llvm::json::Object &record) {
  int64_t length = history.getNumElements();
  record["amax_history_length"] = length;
  llvm::json::Array rows;
  for (int64_t i = std::max<int64_t>(0, length - kReportedHistory);
       i < length; ++i)
    rows.push_back(jsonNumber(history.get(i)));
  if (length <= kReportedHistory) {
    record["amax_history"] = std::move(rows);
    return;
  }
  record["amax_history_recent"] = std::move(rows);
  double largest = -INFINITY;
  for (int64_t i = 0; i < length; ++i)
    if (double amax = history.get(i); !std::isnan(amax))
      largest = std::max(largest, amax);
  record["amax_history_max"] = jsonNumber(largest);
}

/// A SQNR of the report for the table: dB, or what a null stands for.
static std::string formatSqnr(const llvm::json::Object &record,
                              StringRef name) {
  if (std::optional<double> db = record.getNumber((name + "_db").str()))
    return llvm::formatv("{0:f2}", *db).str();
  std::optional<StringRef> kind = record.getString(name);
  return kind == "not_comparable" ? "n/c"
         : kind == "broken_output" ? "-inf"
                                   : "inf";
}

static double seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The compiled steps free and allocate the same buffers call after call.
  runner::retainFreedHostMemory();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp8-run: run a function in high precision and through the FP8 "
      "pipeline, and compare\n");

  if (optLevel > 3)
    return fail("-O" + Twine(optLevel.getValue()) +
                ": the optimization level is one of -O0..-O3");
  if (!parseDistribution(distribution))
    return fail("unknown --dist '" + distribution +
                "' (expected normal, uniform, outliers or zeros)");
  if (device != "cpu" && device != "cuda")
    return fail("unknown --device '" + device + "' (expected cpu or cuda)");
  if (golden != "f32" && golden != "f64" && golden != "none")
    return fail("unknown --golden '" + golden +
                "' (expected f32, f64 or none)");
  if (steps == 0)
    return fail("--steps must be at least 1");
  if (!isPositiveFinite(scale))
    return fail("--scale must be a positive number");
  if (dynamicSize < 0)
    return fail("--dynamic-size must not be negative");
  uint64_t budget = getDefaultMemoryBudget();
  if (!memoryBudget.empty()) {
    std::optional<uint64_t> parsed = parseByteSize(memoryBudget);
    if (!parsed)
      return fail("bad --memory-budget '" + memoryBudget +
                  "' (expected a positive size such as 512M or 8G)");
    budget = *parsed;
  }

  SmallVector<std::string> libs(sharedLibs.begin(), sharedLibs.end());
  if (libs.empty())
    for (const char *lib : {"/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so",
                            "/usr/lib/llvm-22/lib/libmlir_runner_utils.so"})
      if (llvm::sys::fs::exists(lib))
        libs.push_back(lib);
  for (const std::string &lib : libs) {
    std::string error;
    if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(lib.c_str(), &error))
      return fail("cannot load '" + lib + "': " + error);
  }

  DialectRegistry registry;
  registerRunnerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  std::string openError;
  OwningOpRef<ModuleOp> module =
      parseModuleFile(inputFile, sourceMgr, context, openError);
  if (!module)
    return fail(openError);
  FailureOr<std::string> name = pickFunction(*module);
  if (failed(name))
    return 1;
  func::FuncOp func;
  module->walk([&](func::FuncOp candidate) {
    if (!func && candidate.getName() == *name && !candidate.isExternal())
      func = candidate;
  });
  if (!func)
    return fail("no function @" + *name + " with a body in '" + inputFile +
                "'");
  // One process runs one rank; a data-parallel program needs all of them.
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto grid =
            func.getArgAttrOfType<FlatSymbolRefAttr>(i, fp8::kShardedAttrName))
      return fail("@" + *name + " is data-parallel (argument #" +
                  Twine(i) + " is sharded over @" + grid.getValue() +
                  "): fp8-run runs one process; train it with fp8-train "
                  "--ranks");
  // A function in a nested module runs with that module as its program
  // (its globals and callees are there).
  if (auto parent = func->getParentOfType<ModuleOp>(); parent != *module) {
    module = OwningOpRef<ModuleOp>(parent.clone());
    func = module->lookupSymbol<func::FuncOp>(*name);
  }
  if (func.getNumResults() == 0)
    llvm::errs() << "fp8-run: note: @" << *name
                 << " returns nothing: both versions run, but there is no "
                    "output to compare\n";
  if (failed(checkNoUndefinedReads(func)))
    return 1;
  for (const std::string &stub : stubUnresolvedExternals(*module))
    llvm::errs() << "fp8-run: note: @" << stub
                 << " has no definition; it runs as a no-op\n";
  FailureOr<unsigned> elided = externalizeElidedConstants(*module);
  if (failed(elided))
    return 1;
  if (*elided)
    llvm::errs() << "fp8-run: note: "
                 << (*elided == 1 ? "1 constant is"
                                  : std::to_string(*elided) + " constants are")
                 << " elided in the file (dense_resource<__elided__>); "
                 << (*elided == 1 ? "it runs as an extern global\n"
                                  : "they run as extern globals\n");
  SmallVector<std::pair<std::string, RankedTensorType>> externGlobals =
      materializeExternGlobals(*module);

  // The reference: TOSA front end only. The FP8 version: the whole pipeline.
  // Compile times include these passes, the lowering and the JIT.
  std::string error;
  Progress progress;
  auto compileStart = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> reference = module->clone();
  {
    PassManager pm(&context);
    buildTosaFrontEnd(pm);
    if (failed(pm.run(*reference)))
      return fail("the TOSA front end failed on '" + inputFile + "'");
  }
  double frontEndSeconds = seconds(compileStart);
  FailureOr<InputPlan> plan =
      planInputs(reference->lookupSymbol<func::FuncOp>(*name), budget);
  if (failed(plan) ||
      failed(checkMemoryBudget(*module, func, *plan, budget, "as written")))
    return 1;
  progress("compiling the graph as written");
  compileStart = std::chrono::steady_clock::now();
  llvm::StringMap<InputDefault> inputDefaults;
  if (!plainInputs)
    inputDefaults = chooseInputDefaults(
        *reference, reference->lookupSymbol<func::FuncOp>(*name));
  CompileOptions compileOptions;
  compileOptions.vectorize = !scalarLoops;
  compileOptions.optLevel = optLevel;
  compileOptions.verifyEachPass = verifyEach;
  compileOptions.accumulation = accumulation;
  std::unique_ptr<CompiledFunction> referenceFn =
      CompiledFunction::compile(*reference, *name, error, compileOptions);
  if (!referenceFn)
    return fail(error);
  double referenceCompileSeconds = frontEndSeconds + seconds(compileStart);

  // The golden reference: the same graph in f32 (or f64), when that is not
  // the graph as written already. Both versions are measured against it.
  std::unique_ptr<CompiledFunction> goldenFn;
  std::string goldenDescription = "the graph as written";
  if (golden != "none") {
    OwningOpRef<ModuleOp> wide = reference->clone();
    FailureOr<bool> changed =
        widenFloats(*wide, getGoldenTarget(&context), error);
    if (failed(changed)) {
      llvm::errs() << "fp8-run: note: no golden reference (" << error
                   << "); measuring against the graph as written\n";
    } else if (!*changed) {
      goldenDescription = "the graph as written (already " + golden + ")";
    } else {
      progress("compiling the golden graph (" + golden + ")");
      if (failed(checkMemoryBudget(*wide,
                                   wide->lookupSymbol<func::FuncOp>(*name),
                                   *plan, budget, "in " + golden)))
        return 1;
      goldenFn =
          CompiledFunction::compile(*wide, *name, error, compileOptions);
      if (!goldenFn)
        return fail(error);
      goldenDescription = "the graph in " + golden;
    }
  }

  progress("fp8-pipeline and compiling the FP8 version");
  compileStart = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> quantized = module->clone();
  {
    std::unique_ptr<FP8PipelineOptions> options =
        FP8PipelineOptions::createFromString(pipelineOptions);
    if (!options)
      return fail("bad --fp8-pipeline options '" + pipelineOptions + "'");
    PassManager pm(&context);
    buildFP8Pipeline(pm, *options);
    if (failed(pm.run(*quantized)))
      return fail("fp8-pipeline failed on '" + inputFile + "'");
  }
  // --device=cuda: the FP8 module as it is (before the CPU-only probes),
  // lowered for the GPU; unsupported ops fail here, before any CUDA call.
  std::unique_ptr<GpuFunction> gpuFn;
  bool gpuMismatch = false;
  if (device == "cuda") {
    gpuFn = GpuFunction::compile(*quantized, *name, error, compileOptions);
    if (!gpuFn || failed(gpuFn->connect(error)))
      return fail(error);
  }
  if (failed(checkMemoryBudget(*quantized,
                                quantized->lookupSymbol<func::FuncOp>(*name),
                                *plan, budget, "through fp8-pipeline")))
    return 1;
  FailureOr<ArgumentState> argumentState = ArgumentState::get(
      quantized->lookupSymbol<func::FuncOp>(*name), func.getNumArguments());
  if (failed(argumentState))
    return 1;
  SmallVector<QuantizeProbe> probes = addQuantizeProbes(*quantized);
  llvm::StringMap<RankedTensorType> scalingState =
      findScalingState(*quantized);
  std::unique_ptr<CompiledFunction> fp8Fn =
      CompiledFunction::compile(*quantized, *name, error, compileOptions);
  if (!fp8Fn)
    return fail(error);
  double fp8CompileSeconds = seconds(compileStart);

  // Both versions read the same values of the extern globals (weights).
  {
    std::mt19937_64 rng(seed ^ 0x5eedf00dULL);
    for (auto &[global, type] : externGlobals) {
      HostTensor value(type.getElementType(), type.getShape());
      drawDefault(value, lookupDefault(inputDefaults, "global @" + global),
                  *parseDistribution(distribution), rng);
      if (failed(referenceFn->writeGlobal(global, value, error)) ||
          failed(fp8Fn->writeGlobal(global, value, error)) ||
          (gpuFn && failed(gpuFn->writeGlobal(global, value, error))) ||
          (goldenFn &&
           failed(goldenFn->writeGlobal(
               global,
               convertTo(value, getGoldenType(type.getElementType(),
                                              getGoldenTarget(&context))),
               error))))
        return fail(error);
    }
    if (!externGlobals.empty())
      llvm::errs() << "fp8-run: note: " << externGlobals.size()
                   << (externGlobals.size() == 1 ? " extern global"
                                                 : " extern globals")
                   << " drawn (weights N(0, 1/K), masks by "
                      "their use, the rest --dist="
                   << distribution << " --scale="
                   << llvm::format("%g", scale.getValue())
                   << "; --json says how each was drawn)\n";
  }

  llvm::json::Array stepRecords;
  double referenceSeconds = 0, fp8Seconds = 0;
  auto countsType = RankedTensorType::get({3}, IntegerType::get(&context, 64));
  std::optional<StdoutToStderr> redirect(std::in_place);
  for (unsigned step = 0; step < steps; ++step) {
    FailureOr<SmallVector<HostTensor>> inputs =
        makeInputs(referenceFn->getSignature(), step, *plan, inputDefaults);
    if (failed(inputs))
      return 1;
    std::string stepText =
        "step " + std::to_string(step + 1) + "/" + std::to_string(steps);
    progress(stepText + ": the graph as written");
    auto start = std::chrono::steady_clock::now();
    FailureOr<SmallVector<HostTensor>> expected =
        referenceFn->call(*inputs, error);
    referenceSeconds += seconds(start);
    if (failed(expected))
      return fail(error);
    FailureOr<SmallVector<HostTensor>> goldenOutputs = *expected;
    if (goldenFn) {
      progress(stepText + ": the golden graph");
      goldenOutputs = goldenFn->call(
          convertInputs(*inputs, goldenFn->getSignature()), error);
      if (failed(goldenOutputs))
        return fail(error);
    }
    SmallVector<HostTensor> fp8Inputs(*inputs);
    llvm::append_range(fp8Inputs, argumentState->values);
    progress(stepText + ": the FP8 version");
    start = std::chrono::steady_clock::now();
    FailureOr<SmallVector<HostTensor>> actual = fp8Fn->call(fp8Inputs, error);
    fp8Seconds += seconds(start);
    if (failed(actual))
      return fail(error);
    for (auto [result, state] : argumentState->outputs)
      argumentState->values[state] = (*actual)[result];

    llvm::json::Array outputs;
    // The FP8 version may return its scaling state after the outputs.
    for (auto [index, ref, written, out] :
         llvm::enumerate(*goldenOutputs, *expected,
                         ArrayRef(*actual).take_front(expected->size()))) {
      // The FP8 version against the golden run, and the graph as written
      // against it (exact when it is the golden run).
      Comparison c = compare(ref, out);
      double asWritten =
          goldenFn ? compare(ref, written).sqnrDb : double(INFINITY);
      llvm::json::Object record{{"output", static_cast<int64_t>(index)},
                                {"max_abs_error", jsonNumber(c.maxAbsError)},
                                {"max_rel_error", jsonNumber(c.maxRelError)},
                                {"non_finite", c.nonFinite},
                                {"reference_non_finite", c.referenceNonFinite}};
      putSqnr(record, "sqnr", c.sqnrDb);
      putSqnr(record, "as_written_sqnr", asWritten);
      putSqnr(record, "worst_row_sqnr", c.worstRowSqnrDb);
      putSqnr(record, "median_row_sqnr", c.medianRowSqnrDb);
      outputs.push_back(std::move(record));
    }
    llvm::json::Array tensors;
    for (const QuantizeProbe &probe : probes) {
      FailureOr<HostTensor> counts =
          fp8Fn->readGlobal(probe.global, countsType, error);
      if (failed(counts))
        return fail(error);
      double total = std::max(1.0, counts->get(2));
      llvm::json::Object record{{"tensor", probe.name},
                                {"saturated", counts->get(0) / total},
                                {"flushed_to_zero", counts->get(1) / total}};
      // The state after this step: the scale the next step casts with, and
      // the history (row 0 cleared for the next amax, TE's roll order).
      for (StringRef field : {"scale", "amax_history"}) {
        std::string global = probe.name + "." + field.str();
        FailureOr<HostTensor> value;
        if (const HostTensor *carried = argumentState->lookup(global)) {
          value = *carried;
        } else if (auto it = scalingState.find(global);
                   it != scalingState.end()) {
          value = fp8Fn->readGlobal(global, it->second, error);
          if (failed(value))
            return fail(error);
        } else {
          continue;
        }
        if (field == "scale") {
          record["next_scale"] = jsonNumber(value->get(0));
          continue;
        }
        summarizeHistory(*value, record);
      }
      tensors.push_back(std::move(record));
    }
    llvm::json::Object gpuRecord;
    if (gpuFn) {
      // The inputs the CPU's FP8 run had, its argument state included.
      FailureOr<SmallVector<HostTensor>> onGpu = gpuFn->call(fp8Inputs, error);
      if (failed(onGpu))
        return fail(error);
      gpuRecord = gpuChecksToJSON(gpuFn->getDeviceName(),
                                  checkGpuOutputs(*actual, *onGpu));
      gpuMismatch |= !gpuRecord.getBoolean("ok").value_or(false);
    }
    stepRecords.push_back(
        llvm::json::Object{{"step", step},
                           {"outputs", std::move(outputs)},
                           {"quantized", std::move(tensors)}});
    if (gpuFn)
      stepRecords.back().getAsObject()->try_emplace("gpu",
                                                    std::move(gpuRecord));
  }

  redirect.reset();
  llvm::json::Object report{
      {"function", *name},
      {"fp8_pipeline", pipelineOptions},
      {"device", device},
      {"golden", goldenDescription},
      {"accumulation", stringifyAccumulation(accumulation)},
      {"as_written", describeAccumulation()},
      {"inputs", describeInputs(func, *plan, inputDefaults, externGlobals)},
      {"reference_compile_seconds", referenceCompileSeconds},
      {"fp8_compile_seconds", fp8CompileSeconds},
      {"reference_run_seconds", referenceSeconds / steps},
      {"fp8_run_seconds", fp8Seconds / steps},
      {"steps", std::move(stepRecords)}};
  if (json) {
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(report)))
                 << "\n";
    return gpuMismatch ? fail("the GPU run differs from the CPU run") : 0;
  }

  llvm::outs() << "fp8-run: @" << *name << "  fp8-pipeline{" << pipelineOptions
               << "}  golden: " << goldenDescription << "\n";
  llvm::outs() << "as written: " << describeAccumulation() << "\n";
  llvm::outs() << "inputs:";
  for (const llvm::json::Value &input : *report.getArray("inputs")) {
    const llvm::json::Object &object = *input.getAsObject();
    if (std::optional<int64_t> argument = object.getInteger("argument"))
      llvm::outs() << "  arg" << *argument << " "
                   << *object.getString("drawn_from") << ";";
  }
  if (!externGlobals.empty())
    llvm::outs() << "  " << externGlobals.size()
                 << " extern globals (--json says how each was drawn);";
  llvm::outs() << "\n"
               << llvm::formatv("compile: reference {0:f2} s, fp8 {1:f2} s; "
                                "run per step: reference {2:f4} s, fp8 "
                                "{3:f4} s\n",
                                referenceCompileSeconds, fp8CompileSeconds,
                                referenceSeconds / steps, fp8Seconds / steps);
  for (const llvm::json::Value &stepValue : *report.getArray("steps")) {
    const llvm::json::Object &stepRecord = *stepValue.getAsObject();
    llvm::outs() << "step " << *stepRecord.getInteger("step") << "\n";
    llvm::outs() << llvm::formatv(
        "  {0,-6} {1,9} {2,10} {3,9} {4,10} {5,11} {6,11} {7,10} {8,10}\n",
        "output", "SQNR dB", "as written", "worst row", "median row",
        "max abs err", "max rel err", "non-finite", "ref non-f.");
    for (const llvm::json::Value &o : *stepRecord.getArray("outputs")) {
      const llvm::json::Object &out = *o.getAsObject();
      llvm::outs() << llvm::formatv(
          "  {0,-6} {1,9} {2,10} {3,9} {4,10} {5,11:e3} {6,11:e3} {7,10} "
          "{8,10}\n",
          *out.getInteger("output"), formatSqnr(out, "sqnr"),
          formatSqnr(out, "as_written_sqnr"), formatSqnr(out, "worst_row_sqnr"),
          formatSqnr(out, "median_row_sqnr"),
          out.getNumber("max_abs_error").value_or(INFINITY),
          out.getNumber("max_rel_error").value_or(INFINITY),
          *out.getInteger("non_finite"),
          *out.getInteger("reference_non_finite"));
    }
    if (const llvm::json::Object *gpu = stepRecord.getObject("gpu"))
      printGpuChecks(*gpu, llvm::outs());
    const llvm::json::Array &tensors = *stepRecord.getArray("quantized");
    if (tensors.empty())
      continue;
    llvm::outs() << llvm::formatv("  {0,-36} {1,10} {2,10} {3,12}\n",
                                  "quantized tensor", "saturated", "flushed",
                                  "next scale");
    for (const llvm::json::Value &t : tensors) {
      const llvm::json::Object &tensor = *t.getAsObject();
      std::optional<double> next = tensor.getNumber("next_scale");
      llvm::outs() << llvm::formatv(
          "  {0,-36} {1,9:f4}% {2,9:f4}% {3,12}\n",
          *tensor.getString("tensor"),
          100 * *tensor.getNumber("saturated"),
          100 * *tensor.getNumber("flushed_to_zero"),
          next ? llvm::formatv("{0:e4}", *next).str() : std::string("-"));
    }
  }
  return gpuMismatch ? fail("the GPU run differs from the CPU run") : 0;
}
