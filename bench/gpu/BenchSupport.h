//===- BenchSupport.h - What the GPU bench drivers share --------*- C++ -*-===//
//
// hopper-casts and hopper-gemm report a runtime error the same way (the step
// that failed, then exit status 2, which their scripts read as "no result"),
// read their --name=value options, open the device and load PTX the same
// way, and time launches between two events on the default stream.
//
// The drivers travel in the GPU kit (scripts/gpu-kit.sh) as binaries and as
// sources that build on the GPU machine, which has no LLVM: this header, the
// drivers, lib/Runtime and lib/Numerics use the C++17 standard library only.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_BENCH_GPU_BENCHSUPPORT_H
#define FP8_BENCH_GPU_BENCHSUPPORT_H

#include "fp8/Runtime/CudaRuntime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace mlir::fp8::bench {

/// Prefixes every message; each driver sets it before anything else.
inline const char *toolName = "bench";

/// A runtime error, not a mismatch: exit status 2.
[[noreturn]] inline void fail(const std::string &what) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", toolName, what.c_str());
  std::exit(2);
}

template <typename T>
T check(runtime::Result<T> value, const std::string &what) {
  if (!value)
    fail(what + ": " + value.takeStatus().message());
  return std::move(*value);
}

inline void check(runtime::Status status, const std::string &what) {
  if (status)
    fail(what + ": " + status.message());
}

/// `--name=value` (or `--name value`) and `--flag` options. Each is read once
/// with its default; finish() then refuses anything left (a typo), printing the
/// usage.
class Options {
public:
  Options(int argc, char **argv, std::string usage) : usage(std::move(usage)) {
    // Line by line, also into a file: a driver killed by a time limit still
    // leaves everything it printed (the kit's first H200 run lost a whole
    // part's log to a full buffer).
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::printf("%s\n", this->usage.c_str());
        std::exit(0);
      }
      if (arg.rfind("--", 0) != 0)
        fail("unexpected argument '" + arg + "'\n" + this->usage);
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        values[arg.substr(2, eq - 2)] = arg.substr(eq + 1);
        continue;
      }
      // `--name value`, as llvm::cl takes it; a flag has no value.
      bool hasValue = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0);
      values[arg.substr(2)] = hasValue ? argv[++i] : "";
    }
  }

  std::string text(const std::string &name, const std::string &fallback) {
    auto it = values.find(name);
    if (it == values.end())
      return fallback;
    std::string value = it->second;
    values.erase(it);
    return value;
  }
  std::string required(const std::string &name) {
    if (!values.count(name))
      fail("--" + name + " is required\n" + usage);
    return text(name, "");
  }
  bool flag(const std::string &name) {
    auto it = values.find(name);
    if (it == values.end())
      return false;
    bool set = it->second.empty() || it->second == "true" || it->second == "1";
    values.erase(it);
    return set;
  }
  unsigned number(const std::string &name, unsigned fallback) {
    std::string value = text(name, std::to_string(fallback));
    return parse(name, value);
  }
  /// A comma-separated list of numbers.
  std::vector<unsigned> numbers(const std::string &name,
                                std::vector<unsigned> fallback) {
    if (!values.count(name))
      return fallback;
    std::vector<unsigned> list;
    std::stringstream items(text(name, ""));
    for (std::string item; std::getline(items, item, ',');)
      list.push_back(parse(name, item));
    return list;
  }
  void finish() {
    if (!values.empty())
      fail("unknown option --" + values.begin()->first + "\n" + usage);
  }

private:
  unsigned parse(const std::string &name, const std::string &value) {
    char *end = nullptr;
    unsigned long parsed = std::strtoul(value.c_str(), &end, 10);
    if (value.empty() || *end || parsed > 0xffffffffu)
      fail("--" + name + ": '" + value + "' is not a number");
    return static_cast<unsigned>(parsed);
  }

  std::string usage;
  std::map<std::string, std::string> values;
};

/// The runtime on device 0, described on stdout; exits 2 without a GPU.
inline std::unique_ptr<runtime::CudaRuntime> openDevice() {
  auto created = runtime::CudaRuntime::create();
  if (!created)
    fail("no GPU to run on: " + created.takeStatus().message());
  runtime::CudaRuntime &cuda = **created;
  std::printf("device: %s (sm_%d, %d SMs)\n", cuda.getDeviceName().c_str(),
              cuda.getComputeCapability(), cuda.getMultiprocessorCount());
  return std::move(*created);
}

inline runtime::ModuleHandle loadPtx(runtime::CudaRuntime &cuda,
                                     const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fail("cannot read " + path);
  std::stringstream image;
  image << file.rdbuf();
  return check(cuda.loadModule(image.str()), "load PTX " + path);
}

/// Milliseconds per launch, the median of `iterations` launches after
/// `warmups` untimed ones: an event before every launch and after the last,
/// so each launch is timed alone and a stray slow one does not move the
/// result. `launchOnce(i)` gets the launch's index (to rotate inputs).
class Timer {
public:
  Timer(runtime::CudaRuntime &cuda, unsigned warmups, unsigned iterations)
      : cuda(cuda), warmups(warmups) {
    if (iterations == 0)
      fail("--iterations must be positive");
    for (unsigned i = 0; i <= iterations; ++i)
      marks.push_back(check(cuda.createEvent(), "create event"));
  }
  ~Timer() {
    for (runtime::EventHandle mark : marks)
      check(cuda.destroyEvent(mark), "destroy event");
  }
  Timer(const Timer &) = delete;
  Timer &operator=(const Timer &) = delete;

  template <typename Fn> float operator()(Fn &&launchOnce) {
    for (unsigned i = 0; i < warmups; ++i)
      launchOnce(i);
    for (size_t i = 0; i + 1 < marks.size(); ++i) {
      check(cuda.recordEvent(marks[i]), "record event");
      launchOnce(warmups + i);
    }
    check(cuda.recordEvent(marks.back()), "record event");
    std::vector<float> times;
    for (size_t i = 0; i + 1 < marks.size(); ++i)
      times.push_back(check(cuda.elapsedMilliseconds(marks[i], marks[i + 1]),
                            "elapsed time"));
    std::nth_element(times.begin(), times.begin() + times.size() / 2,
                     times.end());
    return times[times.size() / 2];
  }

private:
  runtime::CudaRuntime &cuda;
  unsigned warmups;
  std::vector<runtime::EventHandle> marks;
};

/// `--probe`: open the device, describe it and exit 0 (exit 2 without one).
/// The GPU kit's run.sh asks this before anything else.
inline void probeIfAsked(Options &options) {
  if (!options.flag("probe"))
    return;
  options.finish();
  openDevice();
  std::exit(0);
}

} // namespace mlir::fp8::bench

#endif // FP8_BENCH_GPU_BENCHSUPPORT_H
