//===- MemoryBudget.h - What training holds in memory ------------*- C++
//-*-===//
//
// fp8-run's memory budget applied to training: what a training holds at
// once, estimated from types and sizes before anything is allocated, against
// a limit (runner::getDefaultMemoryBudget unless told otherwise), so that a
// huge parameter, corpus or amax history is refused with a message instead
// of ending the process when memory runs out.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_MEMORYBUDGET_H
#define FP8_TRAIN_MEMORYBUDGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::fp8::train {

struct Contract;
struct Run;

class MemoryBudget {
public:
  explicit MemoryBudget(uint64_t limit) : limit(limit) {}

  /// Counts `copies` of `bytes` (nullopt: more than 2^64) for `what`; fails,
  /// with `error` saying what needs how much, when the total exceeds the
  /// limit.
  LogicalResult reserve(std::optional<uint64_t> bytes, uint64_t copies,
                        const Twine &what, std::string &error);

  uint64_t getLimit() const { return limit; }
  uint64_t getRemaining() const { return limit - used; }

private:
  uint64_t limit, used = 0;
};

/// Reserves what training `contract`'s step in `runs` recipes holds: the
/// initial parameters, each run's parameters and moments, a call's inputs
/// and results, and the batches.
LogicalResult reserveTraining(MemoryBudget &budget, const Contract &contract,
                              size_t runs, std::string &error);

/// Reserves what `run`, compiled from `module`, holds besides: the module's
/// globals (the FP8 scaling state, amax histories included, which the
/// validation and the statistics copy) and the records of `steps` steps.
LogicalResult reserveRun(MemoryBudget &budget, ModuleOp module, const Run &run,
                         uint64_t steps, std::string &error);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_MEMORYBUDGET_H
