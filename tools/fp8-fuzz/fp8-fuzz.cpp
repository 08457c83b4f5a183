//===- fp8-fuzz.cpp - libFuzzer target for the fp8 pipelines --------------===//
//
// Each input is parsed as MLIR with the dialects fp8-opt knows. A module that
// parses and verifies goes through fp8-pipeline (its scaling granularity
// picked by a hash of the input); when that succeeds, the
// output must verify after every pass, fp8-pipeline must change nothing when
// run again, and the two CPU lowerings (convert-fp8-to-linalg +
// fp8-expand-float8, and fp8-lower-to-cpu) must, when they succeed, print IR
// that parses and verifies in a context with upstream dialects only (unless
// the input wrote `#fp8` attributes itself). Pass failures with diagnostics
// are fine; anything else aborts, and libFuzzer keeps the input. Inputs that
// hit two known upstream bugs are skipped. At exit it prints how many inputs
// got how far (docs/reliability.md).
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Support/UpstreamParserBugs.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// How far the inputs got; printed at exit.
struct Counters {
  uint64_t inputs = 0;
  uint64_t skipped = 0;
  uint64_t parsed = 0;
  uint64_t pipelined = 0;
  uint64_t lowered = 0;
};
Counters counters;

void printCounters() {
  auto percent = [](uint64_t part) {
    return counters.inputs ? 100.0 * part / counters.inputs : 0.0;
  };
  llvm::errs() << llvm::format(
      "fp8-fuzz: %llu inputs, %llu parsed (%.1f%%), %llu through "
      "fp8-pipeline (%.1f%%), %llu through fp8-lower-to-cpu (%.1f%%), "
      "%llu skipped (known upstream bugs)\n",
      counters.inputs, counters.parsed, percent(counters.parsed),
      counters.pipelined, percent(counters.pipelined), counters.lowered,
      percent(counters.lowered), counters.skipped);
}

/// The upstream dialects of fp8-opt (and what the lowerings produce): the
/// whole context of checkUpstream, so it lists those registerAllFP8Dialects
/// also brings (DLTI, MPI, shard).
void registerUpstreamDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  DLTIDialect, func::FuncDialect, gpu::GPUDialect,
                  index::IndexDialect, LLVM::LLVMDialect,
                  linalg::LinalgDialect, NVVM::NVVMDialect,
                  ml_program::MLProgramDialect, math::MathDialect,
                  memref::MemRefDialect, mpi::MPIDialect, omp::OpenMPDialect,
                  scf::SCFDialect, shard::ShardDialect, tensor::TensorDialect,
                  tosa::TosaDialect, ub::UBDialect, vector::VectorDialect>();
}

DialectRegistry &getFP8Registry() {
  static DialectRegistry registry = [] {
    DialectRegistry r;
    registerUpstreamDialects(r);
    fp8::registerAllFP8Dialects(r);
    return r;
  }();
  return registry;
}

/// MLIR 22's ml_program.global verifier accepts an initial value of another
/// type than the global's, and One-Shot Bufferize turns it into a
/// memref.global that fails to verify (upstream; found by this target).
/// Such modules are skipped like the parser crash above.
bool hasMistypedGlobal(ModuleOp module) {
  bool mistyped = false;
  module.walk([&](ml_program::GlobalOp global) {
    auto value = dyn_cast_or_null<TypedAttr>(global.getValueAttr());
    if (value && value.getType() != global.getType())
      mistyped = true;
  });
  return mistyped;
}

/// The diagnostics of the current input, printed only with a finding.
std::string diagnostics;

[[noreturn]] void finding(StringRef what, StringRef ir = {}) {
  llvm::errs() << "fp8-fuzz finding: " << what << "\n";
  if (!diagnostics.empty())
    llvm::errs() << "diagnostics:\n" << diagnostics;
  if (!ir.empty())
    llvm::errs() << "IR:\n" << ir << "\n";
  abort();
}

/// Verifies the IR after every pass that succeeded (the pass manager's own
/// verifier is off, so that a verifier failure is told apart from a pass
/// that failed with a diagnostic).
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      finding(("verifier failed after " + pass->getArgument() +
               " succeeded")
                  .str());
  }
};

std::unique_ptr<PassManager> makePassManager(MLIRContext &context) {
  auto pm = std::make_unique<PassManager>(&context);
  pm->enableVerifier(false);
  pm->addInstrumentation(std::make_unique<VerifyAfterEachPass>());
  return pm;
}

std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// `text` must parse and verify with upstream dialects only, as mlir-opt
/// would read it.
void checkParsesUpstream(StringRef text, StringRef stage) {
  DialectRegistry registry;
  registerUpstreamDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  if (!parseSourceString<ModuleOp>(text, &context))
    finding(("output of " + stage + " does not parse upstream").str(), text);
}

/// Lowers a copy of `module` with `build`; success must give upstream IR,
/// unless the input itself wrote fp8 attributes (`#fp8...`) where the
/// lowerings do not look, e.g. on a function: those stay, rightly.
template <typename BuildFn>
bool lowerCopy(ModuleOp module, StringRef stage, bool upstreamOnly,
               BuildFn build) {
  OwningOpRef<ModuleOp> copy = module.clone();
  std::unique_ptr<PassManager> pm = makePassManager(*module.getContext());
  build(*pm);
  if (failed(pm->run(*copy)))
    return false;
  if (upstreamOnly)
    checkParsesUpstream(print(*copy), stage);
  return true;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fp8::registerAllFP8Passes();
  std::atexit(printCounters);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ++counters.inputs;
  diagnostics.clear();
  MLIRContext context(getFP8Registry(), MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });

  // MLIR's lexer stops at a NUL, as in the buffers mlir-opt reads files
  // into; libFuzzer's data has none after its end.
  std::string text(reinterpret_cast<const char *>(data), size);
  StringRef input = text;
  if (fp8::hitsLinalgParserCrash(input)) {
    ++counters.skipped;
    return 0;
  }
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(input, &context);
  if (!module)
    return 0;
  ++counters.parsed;
  if (hasMistypedGlobal(*module)) {
    ++counters.skipped;
    return 0;
  }

  // Every scaling granularity, chosen by the input so that a run is
  // reproducible from its input alone.
  fp8::FP8PipelineOptions options;
  static constexpr const char *kGranularities[] = {"tensor", "row", "block",
                                                   "mx"};
  options.granularity = kGranularities[llvm::xxh3_64bits(input) % 4];
  std::unique_ptr<PassManager> pipeline = makePassManager(context);
  fp8::buildFP8Pipeline(*pipeline, options);
  if (failed(pipeline->run(*module)))
    return 0;
  ++counters.pipelined;

  std::string once = print(*module);
  std::unique_ptr<PassManager> again = makePassManager(context);
  fp8::buildFP8Pipeline(*again, options);
  if (failed(again->run(*module)))
    finding("fp8-pipeline fails on its own output", once);
  if (print(*module) != once)
    finding("fp8-pipeline is not idempotent", once);

  bool upstreamOnly = !input.contains("#fp8");
  if (!lowerCopy(*module, "convert-fp8-to-linalg,fp8-expand-float8",
                 upstreamOnly, [](OpPassManager &pm) {
                   pm.addPass(fp8::createConvertFP8ToLinalg());
                   pm.addPass(fp8::createFP8ExpandFloat8());
                 }))
    return 0;
  if (lowerCopy(*module, "fp8-lower-to-cpu", upstreamOnly,
                [](OpPassManager &pm) { fp8::buildLowerToCPUPipeline(pm); }))
    ++counters.lowered;
  return 0;
}
