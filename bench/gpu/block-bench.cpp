//===- block-bench.cpp - A whole block, FP8 against BF16, on the GPU ------===//
//
// fp8-block-bench: part 4 of the GPU kit. The same transformer block
// compiled twice by `fp8-compile --target=cuda` (once after fp8-pipeline,
// once as written: the BF16 program, its GEMMs on the 16-bit wgmma kernel)
// is loaded with dlopen, called on the same inputs in managed memory
// (which the programs use where they are), timed, and compared:
//
//   fp8-block-bench --fp8=libfp8.so --bf16=libbf16.so --signature=block.sig
//                   [--function=forward] [--warmup=3] [--iterations=10]
//                   [--profile=1]
//
// The signature file has one line per argument and one for the result:
// `arg bf16 1x4096x4096`, `result bf16 1x4096x4096` (bf16 or f32). Inputs:
// N(0, 1) for the first argument (the activations), 1 for vectors (norm
// weights), N(0, 1 / fan_in) for matrices (fan_in: the last dimension).
// Reported: the median wall time of a call of each program (each call
// waits for its kernels), their ratio, and the FP8 output's SQNR against
// the BF16 one. Delayed scaling needs a few calls to learn its scales:
// the warm-up calls are those. Then the FP8 program is called once more
// on copies of the inputs in device memory (cuMemAlloc: what a CUDA
// program or a PyTorch tensor passes), which the program must use without
// the host reading them; its output's SQNR against the BF16 one is
// reported too. Exit status 0, 1 when a program's output has non-finite
// values the BF16 one does not, 2 on a runtime error.
//
// No LLVM, no CUDA at build time: the programs and libfp8_gpu_runtime.so
// are opened at run time.
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <utility>

using namespace mlir::fp8;
using namespace mlir::fp8::bench;

static const char *const kUsage =
    "usage: fp8-block-bench --fp8=LIB --bf16=LIB --signature=FILE "
    "[--runtime=libfp8_gpu_runtime.so] [--function=forward] [--warmup=3] "
    "[--iterations=10] [--profile=0|1]\n"
    "A block compiled by fp8-compile --target=cuda with and without "
    "fp8-pipeline: time of each, speedup, FP8 SQNR against BF16.";

namespace {
struct TensorSpec {
  bool bf16 = true;
  std::vector<int64_t> shape;

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const { return size_t(elements()) * (bf16 ? 2 : 4); }
};

struct Signature {
  std::vector<TensorSpec> args;
  TensorSpec result;
};

Signature readSignature(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    fail("cannot read the signature file '" + path + "'");
  Signature signature;
  bool haveResult = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string kind, type, shape;
    if (!(fields >> kind >> type >> shape))
      continue;
    TensorSpec spec;
    if (type != "bf16" && type != "f32")
      fail("signature: element type '" + type + "' (bf16 or f32)");
    spec.bf16 = type == "bf16";
    std::stringstream dims(shape);
    for (std::string dim; std::getline(dims, dim, 'x');)
      spec.shape.push_back(std::stoll(dim));
    if (kind == "arg") {
      signature.args.push_back(spec);
    } else if (kind == "result") {
      signature.result = spec;
      haveResult = true;
    } else {
      fail("signature: '" + kind + "' is neither arg nor result");
    }
  }
  if (signature.args.empty() || !haveResult || signature.args.size() > 16)
    fail("signature: 1 to 16 args and one result expected");
  return signature;
}

/// A memref descriptor as MLIR's C interface lays it out.
struct Descriptor {
  std::vector<int64_t> words;

  Descriptor(void *data, const std::vector<int64_t> &shape) {
    size_t rank = shape.size();
    words.assign(3 + 2 * rank, 0);
    words[0] = words[1] = int64_t(reinterpret_cast<intptr_t>(data));
    int64_t stride = 1;
    for (size_t d = rank; d-- > 0;) {
      words[3 + d] = shape[d];
      words[3 + rank + d] = stride;
      stride *= shape[d];
    }
  }
  explicit Descriptor(size_t rank) : words(3 + 2 * rank, 0) {}
  void *data() const { return reinterpret_cast<void *>(intptr_t(words[1])); }
  void *allocated() const {
    return reinterpret_cast<void *>(intptr_t(words[0]));
  }
};

uint16_t toBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7FFF + ((bits >> 16) & 1); // round to nearest even
  return uint16_t(bits >> 16);
}

double load(const void *data, bool bf16, int64_t i) {
  if (bf16) {
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(data)[i]) << 16;
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  return static_cast<const float *>(data)[i];
}

/// The runtime library and a program, opened for good.
struct Runtime {
  void *(*alloc)(size_t) = nullptr;
  void (*free)(void *) = nullptr;
  const char *(*error)() = nullptr;
  // The launch profile (lib/Runtime/MgpuRuntime.cpp); absent from
  // runtimes built before it.
  void (*profileEnable)(bool) = nullptr;
  void (*profileReport)(const char *) = nullptr;

  explicit Runtime(const std::string &path) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      fail("cannot load the GPU runtime: " + std::string(dlerror()));
    alloc = reinterpret_cast<void *(*)(size_t)>(
        dlsym(handle, "_mlir_memref_to_llvm_alloc"));
    free = reinterpret_cast<void (*)(void *)>(dlsym(handle, "fp8GpuFree"));
    error = reinterpret_cast<const char *(*)()>(
        dlsym(handle, "fp8GpuRuntimeError"));
    profileEnable = reinterpret_cast<void (*)(bool)>(
        dlsym(handle, "fp8GpuProfileEnable"));
    profileReport = reinterpret_cast<void (*)(const char *)>(
        dlsym(handle, "fp8GpuProfileReport"));
    if (!alloc || !free || !error)
      fail("'" + path + "' is not libfp8_gpu_runtime.so");
  }
  void check(const std::string &what) {
    if (const char *message = error())
      fail(what + ": " + message);
  }
};

using Entry = void (*)();

/// `entry` called with the N pointers `p[0..N)` (MLIR's C interface: every
/// parameter a descriptor pointer), through its exact prototype.
template <size_t... I>
void callWith(Entry entry, void *const *p, std::index_sequence<I...>) {
  using Function = void (*)(decltype((void)I, (void *)nullptr)...);
  reinterpret_cast<Function>(entry)(p[I]...);
}

template <size_t... N>
void callWithCount(Entry entry, void *const *p, size_t count,
                   std::index_sequence<N...>) {
  // One prototype per count, 1 to 17 parameters.
  ((count == N + 1 ? callWith(entry, p, std::make_index_sequence<N + 1>{})
                   : void()),
   ...);
}

/// `entry(result, args...)`.
void invoke(Entry entry, Descriptor &result, std::vector<Descriptor> &args) {
  void *p[17] = {result.words.data()};
  for (size_t i = 0; i < args.size(); ++i)
    p[i + 1] = args[i].words.data();
  callWithCount(entry, p, args.size() + 1, std::make_index_sequence<17>{});
}

struct Program {
  std::string name;
  Entry entry = nullptr;

  Program(const std::string &path, const std::string &function,
          std::string label)
      : name(std::move(label)) {
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      fail("cannot load " + name + " program: " + std::string(dlerror()));
    entry = reinterpret_cast<Entry>(
        dlsym(handle, ("_mlir_ciface_" + function).c_str()));
    if (!entry)
      fail(name + " program has no _mlir_ciface_" + function);
  }
};

struct Run {
  double medianMs = 0;
  Descriptor output{0};
};

Run runProgram(Program &program, Runtime &runtime, const Signature &signature,
               std::vector<Descriptor> &args, unsigned warmup,
               unsigned iterations) {
  Run run;
  std::vector<double> times;
  for (unsigned i = 0; i < warmup + iterations; ++i) {
    Descriptor result(signature.result.shape.size());
    auto start = std::chrono::steady_clock::now();
    invoke(program.entry, result, args);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    runtime.check(program.name + " program, call " + std::to_string(i + 1));
    if (i >= warmup)
      times.push_back(ms);
    if (run.output.allocated())
      runtime.free(run.output.allocated());
    run.output = result;
  }
  std::sort(times.begin(), times.end());
  run.medianMs = times.empty() ? 0 : times[times.size() / 2];
  return run;
}
} // namespace

int main(int argc, char **argv) {
  toolName = "fp8-block-bench";
  Options options(argc, argv, kUsage);
  std::string fp8Path = options.required("fp8");
  std::string bf16Path = options.required("bf16");
  Signature signature = readSignature(options.required("signature"));
  std::string runtimePath =
      options.text("runtime", "libfp8_gpu_runtime.so");
  std::string function = options.text("function", "forward");
  unsigned warmup = options.number("warmup", 3);
  unsigned iterations = std::max(1u, options.number("iterations", 10));
  bool profile = options.number("profile", 0) != 0;
  options.finish();

  // The device first: without one, exit 2 before anything is allocated.
  std::unique_ptr<runtime::CudaRuntime> device = openDevice();
  Runtime runtime(runtimePath);
  Program fp8(fp8Path, function, "the FP8");
  Program bf16(bf16Path, function, "the BF16");

  std::mt19937_64 rng(20261202);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<Descriptor> args;
  std::vector<void *> buffers;
  for (size_t a = 0; a < signature.args.size(); ++a) {
    const TensorSpec &spec = signature.args[a];
    void *data = runtime.alloc(spec.bytes());
    runtime.check("allocating argument " + std::to_string(a));
    if (!data)
      fail("no memory for argument " + std::to_string(a));
    float sigma = a == 0 ? 1.0f
                         : spec.shape.size() == 1
                               ? 0.0f
                               : 1.0f / std::sqrt(float(spec.shape.back()));
    for (int64_t i = 0; i < spec.elements(); ++i) {
      float value = sigma == 0.0f ? 1.0f : sigma * normal(rng);
      if (spec.bf16)
        static_cast<uint16_t *>(data)[i] = toBF16(value);
      else
        static_cast<float *>(data)[i] = value;
    }
    buffers.push_back(data);
    args.emplace_back(data, spec.shape);
  }

  Run bf16Run =
      runProgram(bf16, runtime, signature, args, warmup, iterations);
  Run fp8Run = runProgram(fp8, runtime, signature, args, warmup, iterations);

  // Where the time goes: one more call of each, every launch timed alone
  // (PROFILE| rows on stderr, from the runtime).
  if (profile && runtime.profileEnable && runtime.profileReport) {
    runtime.profileEnable(true);
    for (auto [program, label] :
         {std::pair{&bf16, "bf16"}, std::pair{&fp8, "fp8"}}) {
      Run once = runProgram(*program, runtime, signature, args, 0, 1);
      runtime.profileReport(label);
      runtime.free(once.output.allocated());
    }
    runtime.profileEnable(false);
  }

  // The same inputs in device memory, one call.
  std::vector<Descriptor> deviceArgs;
  std::vector<runtime::DevicePtr> deviceBuffers;
  for (size_t a = 0; a < signature.args.size(); ++a) {
    const TensorSpec &spec = signature.args[a];
    auto buffer = device->allocate(spec.bytes());
    if (!buffer)
      fail("device memory for argument " + std::to_string(a) + ": " +
           buffer.takeStatus().message());
    if (runtime::Status status =
            device->copyToDevice(*buffer, buffers[a], spec.bytes()))
      fail("copying argument " + std::to_string(a) + " to the device: " +
           status.message());
    deviceBuffers.push_back(*buffer);
    deviceArgs.emplace_back(reinterpret_cast<void *>(*buffer), spec.shape);
  }
  Run deviceRun = runProgram(fp8, runtime, signature, deviceArgs, 0, 1);

  // FP8 against BF16 on the last call's outputs.
  int64_t newNonFinite = 0;
  const TensorSpec &out = signature.result;
  auto sqnrAgainstBF16 = [&](const Run &run) {
    double signal = 0, noise = 0;
    for (int64_t i = 0; i < out.elements(); ++i) {
      double ref = load(bf16Run.output.data(), out.bf16, i);
      double got = load(run.output.data(), out.bf16, i);
      if (!std::isfinite(got) && std::isfinite(ref)) {
        ++newNonFinite;
        continue;
      }
      if (!std::isfinite(ref))
        continue;
      signal += ref * ref;
      noise += (ref - got) * (ref - got);
    }
    return noise == 0 ? INFINITY : 10 * std::log10(signal / noise);
  };
  double sqnr = sqnrAgainstBF16(fp8Run);
  double deviceSqnr = sqnrAgainstBF16(deviceRun);
  std::printf("block bf16: %.3f ms (median of %u)\n", bf16Run.medianMs,
              iterations);
  std::printf("block fp8: %.3f ms (median of %u)\n", fp8Run.medianMs,
              iterations);
  std::printf("block speedup fp8 over bf16: %.3fx\n",
              fp8Run.medianMs > 0 ? bf16Run.medianMs / fp8Run.medianMs : 0.0);
  std::printf("block fp8 sqnr vs bf16: %.2f dB; non-finite where bf16 is "
              "finite: %lld\n",
              sqnr, static_cast<long long>(newNonFinite));
  // For summarize.py: BLOCK|bf16 ms|fp8 ms|sqnr dB|non-finite
  std::printf("block fp8 on device-memory inputs: %.3f ms, sqnr vs bf16: "
              "%.2f dB\n",
              deviceRun.medianMs, deviceSqnr);
  std::printf("BLOCK|%.4f|%.4f|%.2f|%lld\n", bf16Run.medianMs,
              fp8Run.medianMs, sqnr, static_cast<long long>(newNonFinite));

  runtime.free(bf16Run.output.allocated());
  runtime.free(fp8Run.output.allocated());
  runtime.free(deviceRun.output.allocated());
  for (void *buffer : buffers)
    runtime.free(buffer);
  for (runtime::DevicePtr buffer : deviceBuffers)
    (void)device->free(buffer);
  return newNonFinite ? 1 : 0;
}
