//===- Corpus.cpp - Byte tokens of a text, batched ------------------------===//

#include "fp8/Train/Corpus.h"

#include "fp8/Train/Contract.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;
using namespace mlir::fp8::train;

std::pair<HostTensor, HostTensor> Corpus::batch(const std::string &text,
                                                const Contract &contract,
                                                Type type,
                                                std::mt19937_64 &rng) const {
  HostTensor tokens(type, {contract.batch, contract.seq});
  HostTensor targets(type, {contract.batch, contract.seq});
  std::uniform_int_distribution<size_t> start(0,
                                              text.size() - contract.seq - 1);
  for (int64_t row = 0; row < contract.batch * contract.ranks; ++row) {
    size_t at = start(rng);
    int64_t b = row - rank * contract.batch;
    if (b < 0 || b >= contract.batch)
      continue;
    for (int64_t s = 0; s < contract.seq; ++s) {
      tokens.set(b * contract.seq + s,
                 static_cast<unsigned char>(text[at + s]));
      targets.set(b * contract.seq + s,
                  static_cast<unsigned char>(text[at + s + 1]));
    }
  }
  return {std::move(tokens), std::move(targets)};
}

FailureOr<Corpus> train::readCorpus(StringRef path, const Contract &contract,
                                    std::string &error, uint64_t maxBytes) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    error = ("cannot read corpus '" + path + "': " + ec.message()).str();
    return failure();
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    error = ("corpus '" + path + "' is not a regular file").str();
    return failure();
  }
  if (status.getSize() > maxBytes) {
    error = ("corpus '" + path + "' (" + formatBytes(status.getSize()) +
             ") is larger than the memory budget leaves for it (" +
             formatBytes(maxBytes) + "; --memory-budget)")
                .str();
    return failure();
  }
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file) {
    error = ("cannot read corpus '" + path + "': " + file.getError().message())
                .str();
    return failure();
  }
  StringRef text = (*file)->getBuffer();
  Corpus c;
  size_t split = text.size() - text.size() / 10;
  c.train = text.take_front(split).str();
  c.validation = text.drop_front(split).str();
  size_t need = static_cast<size_t>(contract.seq) + 1;
  if (c.train.size() < need * contract.batch * contract.ranks ||
      c.validation.size() < need) {
    error =
        llvm::formatv("corpus '{0}' has {1} bytes: too short for a "
                      "batch of {2} x {3} tokens (training set) and one "
                      "sequence (its last 10%, validation)",
                      path, text.size(), contract.batch * contract.ranks, need)
            .str();
    return failure();
  }
  return c;
}
