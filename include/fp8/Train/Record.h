//===- Record.h - Finished runs kept on disk --------------------*- C++ -*-===//
//
// A record is what the report needs of one finished run (its loss rows,
// events, final losses and, at its validation steps, the per-tensor
// statistics), saved as DIR/<recipe label>.seed<N>.json. `fp8-train
// --records=DIR` saves every run it finishes and takes, instead of training
// again, every run whose record it finds with the same key: a long study
// (many seeds, many recipes) can be stopped and continued, or run a few
// recipes at a time, and its report is the same.
//
// The key is a text that names everything the run's result depends on (the
// step's and the corpus's digests, the steps, validation, recipe, seed,
// accumulation, stress): a record with another key is stale and is trained
// again and overwritten.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TRAIN_RECORD_H
#define FP8_TRAIN_RECORD_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fp8::train {

struct Run;

/// Where the record of `run` (its recipe and seed) lives in `dir`.
std::string recordPath(StringRef dir, const Run &run);

/// Saves `run`'s record under `key`, written beside its place and renamed
/// into it, so that a failed save leaves no half record.
LogicalResult saveRecord(StringRef dir, StringRef key, const Run &run,
                         std::string &error);

/// Fills `run`'s rows, events and finals from its record in `dir`: true when
/// it was there with `key`, false when absent or stale (another key);
/// failure (with `error`) when it cannot be read or is malformed.
FailureOr<bool> loadRecord(StringRef dir, StringRef key, Run &run,
                           std::string &error);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_RECORD_H
