//===- BenchSupport.h - What the GPU bench drivers share --------*- C++ -*-===//
//
// hopper-casts and hopper-gemm report a runtime error the same way (the step
// that failed, then exit status 2, which their scripts read as "no result"),
// open the device and load PTX the same way, and time launches between two
// events on the default stream.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_BENCH_GPU_BENCHSUPPORT_H
#define FP8_BENCH_GPU_BENCHSUPPORT_H

#include "fp8/Runtime/CudaRuntime.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>

namespace mlir::fp8::bench {

/// Prefixes every message; each driver sets it before anything else.
inline const char *toolName = "bench";

/// A runtime error, not a mismatch: exit status 2.
[[noreturn]] inline void fail(const llvm::Twine &what) {
  llvm::errs() << toolName << ": " << what << "\n";
  std::exit(2);
}

template <typename T>
T check(llvm::Expected<T> value, const llvm::Twine &what) {
  if (!value)
    fail(what + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

inline void check(llvm::Error err, const llvm::Twine &what) {
  if (err)
    fail(what + ": " + llvm::toString(std::move(err)));
}

/// The runtime on device 0, described on stdout; exits 2 without a GPU.
inline std::unique_ptr<runtime::CudaRuntime> openDevice() {
  auto created = runtime::CudaRuntime::create();
  if (!created)
    fail("no GPU to run on: " + llvm::toString(created.takeError()));
  runtime::CudaRuntime &cuda = **created;
  llvm::outs() << "device: " << cuda.getDeviceName() << " (sm_"
               << cuda.getComputeCapability() << ", "
               << cuda.getMultiprocessorCount() << " SMs)\n";
  return std::move(*created);
}

inline runtime::ModuleHandle loadPtx(runtime::CudaRuntime &cuda,
                                     const std::string &path) {
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    fail("cannot read " + path + ": " + file.getError().message());
  return check(cuda.loadModule((*file)->getBuffer()), "load PTX " + path);
}

/// Milliseconds per launch: `warmups` untimed launches, then `iterations`
/// between two events.
class Timer {
public:
  Timer(runtime::CudaRuntime &cuda, unsigned warmups, unsigned iterations)
      : cuda(cuda), warmups(warmups), iterations(iterations) {
    if (iterations == 0)
      fail("--iterations must be positive");
    start = check(cuda.createEvent(), "create event");
    end = check(cuda.createEvent(), "create event");
  }
  ~Timer() {
    check(cuda.destroyEvent(start), "destroy event");
    check(cuda.destroyEvent(end), "destroy event");
  }
  Timer(const Timer &) = delete;
  Timer &operator=(const Timer &) = delete;

  template <typename Fn> float operator()(Fn &&launchOnce) {
    for (unsigned i = 0; i < warmups; ++i)
      launchOnce();
    check(cuda.recordEvent(start), "record event");
    for (unsigned i = 0; i < iterations; ++i)
      launchOnce();
    check(cuda.recordEvent(end), "record event");
    return check(cuda.elapsedMilliseconds(start, end), "elapsed time") /
           iterations;
  }

private:
  runtime::CudaRuntime &cuda;
  unsigned warmups, iterations;
  runtime::EventHandle start, end;
};

} // namespace mlir::fp8::bench

#endif // FP8_BENCH_GPU_BENCHSUPPORT_H
