//===- Checkpoint.h - Saving and resuming a run -----------------*- C++ -*-===//
//
// A checkpoint of a run is the directory DIR/<recipe label>/ with the
// parameters and AdamW moments (parameter.<i>.npy, moment1.<i>.npy,
// moment2.<i>.npy), the FP8 scaling state (<global>.npy) and the number of
// the last step taken (`step`).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_CHECKPOINT_H
#define FP8_TRAIN_CHECKPOINT_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir::fp8::train {

struct Run;

/// Saves `run`'s state after `step` into `dir`. The checkpoint is written
/// into a new directory beside DIR/<label> and renamed into its place, so a
/// save that fails (a full disk, a crash) leaves the previous one whole.
LogicalResult saveCheckpoint(StringRef dir, const Run &run, uint64_t step,
                             std::string &error);

/// Loads `run`'s state from the checkpoint in `dir` (its parameters,
/// moments and scaling state already have their shapes, which every file
/// must have exactly); returns the step it had finished. Files larger than
/// `maxBytes` are refused before they are read.
FailureOr<uint64_t> loadCheckpoint(StringRef dir, Run &run, std::string &error,
                                   uint64_t maxBytes = UINT64_MAX);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_CHECKPOINT_H
