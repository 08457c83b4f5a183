//===- MemoryBudget.cpp - What training holds in memory -------------------===//

#include "fp8/Train/MemoryBudget.h"

#include "fp8/Runner/Runner.h"
#include "fp8/Train/Contract.h"
#include "fp8/Train/Run.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

LogicalResult MemoryBudget::reserve(std::optional<uint64_t> bytes,
                                    uint64_t copies, const Twine &what,
                                    std::string &error) {
  bool overflow = !bytes;
  uint64_t total =
      bytes ? llvm::SaturatingMultiplyAdd(*bytes, copies, used, &overflow) : 0;
  if (!overflow && total <= limit) {
    used = total;
    return success();
  }
  error = (what + " need " +
           (overflow ? std::string("more than 2^64 bytes")
                     : formatBytes(total - used)) +
           ", which with the rest of the training is more than the memory "
           "budget of " +
           formatBytes(limit) + " (--memory-budget)")
              .str();
  return failure();
}

LogicalResult train::reserveTraining(MemoryBudget &budget,
                                     const Contract &contract, size_t runs,
                                     std::string &error) {
  std::optional<uint64_t> parameterBytes = 0;
  for (unsigned arg : contract.parameters) {
    std::optional<uint64_t> bytes =
        getStorageBytes(contract.type.getInput(arg), 0);
    bool overflow = !bytes || !parameterBytes;
    if (!overflow)
      parameterBytes = llvm::SaturatingAdd(*parameterBytes, *bytes, &overflow);
    if (overflow)
      parameterBytes = std::nullopt;
  }
  // The initial parameters; each run's parameters and two moments; a call's
  // copies of them as inputs and its updated ones as results.
  uint64_t copies = 1 + 3 * uint64_t(runs) + 6;
  // A batch's tokens and targets, and the validation's.
  return failure(
      failed(budget.reserve(parameterBytes, copies,
                            "the parameters and AdamW moments", error)) ||
      failed(budget.reserve(
          getStorageBytes(contract.type.getInput(contract.tokens), 0), 4,
          "the batches", error)));
}

LogicalResult train::reserveRun(MemoryBudget &budget, ModuleOp module,
                                const Run &run, uint64_t steps,
                                std::string &error) {
  std::optional<uint64_t> globalBytes = 0;
  module.walk([&](Operation *op) {
    Type type = getGlobalType(op);
    if (!type)
      return;
    std::optional<uint64_t> bytes = getStorageBytes(type, 0);
    bool overflow = !bytes || !globalBytes;
    if (!overflow)
      globalBytes = llvm::SaturatingAdd(*globalBytes, *bytes, &overflow);
    if (overflow)
      globalBytes = std::nullopt;
  });
  // A tensor's row: the struct and its name.
  uint64_t rowBytes =
      sizeof(Run::Row) + run.probes.size() * (sizeof(Run::TensorRow) + 64);
  // The globals, a snapshot of them (validation, --on-spike=skip) and a
  // copy read back (statistics, checkpoints).
  return failure(
      failed(budget.reserve(globalBytes, 3,
                            "recipe " + run.recipe.label +
                                ": the step's globals (the FP8 scaling state)",
                            error)) ||
      failed(budget.reserve(rowBytes, steps,
                            "recipe " + run.recipe.label + ": the records of " +
                                Twine(steps) + " steps",
                            error)));
}
