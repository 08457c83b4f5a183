//===- Mpi.cpp - The MPI library of a data-parallel run -------------------===//

#include "fp8/Runner/Mpi.h"

#include "llvm/Support/DynamicLibrary.h"

#include <cstdlib>

using namespace mlir::fp8::runner;

namespace {
// OpenMPI's ABI: handles are pointers to the library's predefined objects.
using Handle = void *;
using InitFn = int (*)(int *, char ***);
using FinalizeFn = int (*)();
using CommQueryFn = int (*)(Handle, int *);
using AllreduceFn = int (*)(const void *, void *, int, Handle, Handle, Handle);
} // namespace

struct MpiSession::Api {
  InitFn init;
  FinalizeFn finalize;
  CommQueryFn commRank, commSize;
  AllreduceFn allreduce;
  Handle world, uint64Type, maxOp, minOp;
};

bool MpiSession::launchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
}

std::unique_ptr<MpiSession> MpiSession::start(std::string &error) {
  const char *override = std::getenv("FP8_MPI_LIBRARY");
  std::string library = override ? override : "libmpi.so.40";
  // Permanently and globally: the compiled program's MPI calls resolve
  // against it, and OpenMPI's own plugins need its symbols.
  if (llvm::sys::DynamicLibrary::LoadLibraryPermanently(library.c_str(),
                                                        &error)) {
    error = "cannot load the MPI library '" + library + "' (" + error +
            "): install OpenMPI (scripts/setup.sh) or set FP8_MPI_LIBRARY";
    return nullptr;
  }
  auto symbol = [&](const char *name) {
    void *address = llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(name);
    if (!address && error.empty())
      error = std::string("the MPI library '") + library + "' has no " + name +
              " (fp8-mlir compiles for OpenMPI's ABI)";
    return address;
  };
  auto api = std::make_unique<Api>();
  api->init = reinterpret_cast<InitFn>(symbol("MPI_Init"));
  api->finalize = reinterpret_cast<FinalizeFn>(symbol("MPI_Finalize"));
  api->commRank = reinterpret_cast<CommQueryFn>(symbol("MPI_Comm_rank"));
  api->commSize = reinterpret_cast<CommQueryFn>(symbol("MPI_Comm_size"));
  api->allreduce = reinterpret_cast<AllreduceFn>(symbol("MPI_Allreduce"));
  api->world = symbol("ompi_mpi_comm_world");
  api->uint64Type = symbol("ompi_mpi_uint64_t");
  api->maxOp = symbol("ompi_mpi_op_max");
  api->minOp = symbol("ompi_mpi_op_min");
  if (!error.empty())
    return nullptr;
  if (api->init(nullptr, nullptr) != 0) {
    error = "MPI_Init failed";
    return nullptr;
  }
  std::unique_ptr<MpiSession> session(new MpiSession());
  api->commRank(api->world, &session->rank);
  api->commSize(api->world, &session->size);
  session->api = std::move(api);
  return session;
}

MpiSession::~MpiSession() {
  if (api)
    api->finalize();
}

bool MpiSession::allEqual(uint64_t digest) {
  uint64_t largest = 0, smallest = 0;
  api->allreduce(&digest, &largest, 1, api->uint64Type, api->maxOp,
                 api->world);
  api->allreduce(&digest, &smallest, 1, api->uint64Type, api->minOp,
                 api->world);
  return largest == smallest;
}

uint64_t mlir::fp8::runner::digestBytes(const void *bytes, size_t count,
                                        uint64_t hash) {
  const auto *data = static_cast<const unsigned char *>(bytes);
  for (size_t i = 0; i < count; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}
