//===- Corpus.h - Byte tokens of a text, batched -----------------*- C++
//-*-===//

#ifndef FP8_TRAIN_CORPUS_H
#define FP8_TRAIN_CORPUS_H

#include "fp8/Runner/Runner.h"

#include "mlir/Support/LLVM.h"

#include <random>
#include <string>
#include <utility>

namespace mlir::fp8::train {

struct Contract;

/// Byte tokens, split into training and validation text.
struct Corpus {
  std::string train, validation;
  /// This process's rank among `contract.ranks`.
  int64_t rank = 0;

  /// This rank's `contract.batch` rows of a global batch of
  /// `contract.batch * contract.ranks` sequences of `seq + 1` bytes at
  /// positions drawn from `rng` (the same global batch for any number of
  /// ranks): the tokens and the targets (the same, shifted by one), of
  /// element type `type`.
  std::pair<runner::HostTensor, runner::HostTensor>
  batch(const std::string &text, const Contract &contract, Type type,
        std::mt19937_64 &rng) const;
};

/// Reads `path` as byte tokens, its last 10% the validation set; fails when
/// that is too short for a batch of `contract` or a validation sequence, and
/// before reading when it is not a regular file (/dev/zero would be read
/// until memory runs out) or larger than `maxBytes`.
FailureOr<Corpus> readCorpus(StringRef path, const Contract &contract,
                             std::string &error,
                             uint64_t maxBytes = UINT64_MAX);

} // namespace mlir::fp8::train

#endif // FP8_TRAIN_CORPUS_H
