//===- fp8-fuzz-train-contract.cpp - libFuzzer target for fp8-train's contract ===//
//
// Each input is parsed as MLIR (the dialects fp8-train reads); a module that
// parses has its training-step contract read by train::readContract, as
// `fp8-train STEP.mlir` does before it compiles anything. Errors are fine; a
// failure without a message, a crash, a sanitizer report, or a contract that
// names an argument or result the step does not have is a finding.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/Runner.h"
#include "fp8/Support/UpstreamParserBugs.h"
#include "fp8/Train/Contract.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

[[noreturn]] static void finding(const Twine &what) {
  llvm::errs() << "fp8-fuzz-train-contract finding: " << what << "\n";
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    fp8::runner::registerRunnerDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  std::string text(reinterpret_cast<const char *>(data), size);
  if (fp8::hitsLinalgParserCrash(text))
    return 0;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  std::string error;
  FailureOr<fp8::train::Contract> contract =
      fp8::train::readContract(*module, /*functionName=*/"", error);
  if (failed(contract)) {
    if (error.empty())
      finding("a refused contract without a message");
    return 0;
  }
  // Every index the contract gives is one the step's signature has.
  unsigned inputs = contract->type.getNumInputs();
  unsigned results = contract->type.getNumResults();
  auto checkArgs = [&](ArrayRef<unsigned> indices, StringRef what) {
    for (unsigned i : indices)
      if (i >= inputs)
        finding("the contract's " + what + " is argument " + Twine(i) +
                " of a step with " + Twine(inputs));
  };
  auto checkResults = [&](ArrayRef<unsigned> indices, StringRef what) {
    for (unsigned i : indices)
      if (i >= results)
        finding("the contract's " + what + " is result " + Twine(i) +
                " of a step with " + Twine(results));
  };
  checkArgs({contract->tokens, contract->targets, contract->lossScale,
             contract->step},
            "tokens, targets, loss scale or step");
  checkArgs(contract->parameters, "parameter");
  checkArgs(contract->moment1, "first moment");
  checkArgs(contract->moment2, "second moment");
  checkResults(contract->loss, "loss");
  checkResults(contract->newParameters, "updated parameter");
  checkResults(contract->newMoment1, "updated first moment");
  checkResults(contract->newMoment2, "updated second moment");
  if (contract->gradNorm)
    checkResults(*contract->gradNorm, "gradient norm");
  if (contract->parameters.size() != contract->newParameters.size() ||
      contract->parameters.size() != contract->moment1.size() ||
      contract->parameters.size() != contract->moment2.size() ||
      contract->parameters.size() != contract->init.size())
    finding("the contract's parameters, moments and initializers differ in "
            "number");
  if (contract->batch <= 0 || contract->seq <= 0 || contract->ranks <= 0)
    finding("the contract has a batch, sequence or rank count below 1");
  return 0;
}
