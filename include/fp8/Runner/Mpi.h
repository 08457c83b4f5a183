//===- Mpi.h - The MPI library of a data-parallel run -----------*- C++ -*-===//
//
// A data-parallel program (fp8-gen --data-parallel) calls MPI from its
// compiled code; the process that runs it must load libmpi, initialize it
// and, at the end, finalize it. The library is loaded at run time (OpenMPI's
// libmpi.so.40, or $FP8_MPI_LIBRARY), so that nothing builds against MPI and
// single-process runs never need it. The compiled code and this class both
// use OpenMPI's ABI (fp8-lower-shard-to-mpi's default).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_MPI_H
#define FP8_RUNNER_MPI_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mlir::fp8::runner {

class MpiSession {
public:
  /// Whether this process was started by mpirun (OpenMPI's environment).
  static bool launchedByMpirun();

  /// Loads libmpi and initializes it; null with `error` set on failure.
  static std::unique_ptr<MpiSession> start(std::string &error);
  ~MpiSession();

  int getRank() const { return rank; }
  int getSize() const { return size; }

  /// Whether every rank passed the same `digest` (a collective).
  bool allEqual(uint64_t digest);

private:
  MpiSession() = default;
  struct Api;
  std::unique_ptr<Api> api;
  int rank = 0, size = 1;
};

/// FNV-1a over `bytes`, continuing from `hash`.
uint64_t digestBytes(const void *bytes, size_t count,
                     uint64_t hash = 0xcbf29ce484222325ULL);

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_MPI_H
