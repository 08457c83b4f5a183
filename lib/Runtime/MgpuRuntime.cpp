//===- MgpuRuntime.cpp - MLIR's GPU runtime ABI over the CUDA driver ------===//
//
// libfp8_gpu_runtime.so: the `mgpu*` functions that MLIR's GPU lowerings
// call (gpu-to-llvm for gpu.alloc / gpu.memcpy / gpu.wait / streams and
// events; the gpu.binary offloading translation for module loading and
// gpu.launch_func), as MLIR 22 declares them. Upstream implements them in
// its ExecutionEngine's CUDA wrappers, which Debian does not ship and which
// link the CUDA driver at build time; this one goes through CudaRuntime, so
// it loads the driver with dlopen and builds with no CUDA.
//
// Every call runs in the device's primary context pushed on the calling
// thread's context stack and popped before it returns (upstream's
// ScopedContext): the caller's current context is left as it was. The
// runtime refuses to start on a device without concurrent managed access
// (the host code between kernels touches managed memory while kernels
// run; such a device faults).
//
// What it adds: launches that ask for more than 48 KiB of dynamic shared
// memory get the function attribute that allows it (upstream's wrappers
// leave that to the caller), a launch with an empty grid or block (a
// dynamic extent 0 at run time) is not made, as a loop of no trips runs
// nothing, `gpu.alloc async` / `gpu.dealloc async` are stream-ordered
// (cuMemAllocAsync / cuMemFreeAsync from the device's default pool, told
// to keep what is freed: a call's buffers reuse each other's memory, and
// the next call's come from the pool), the managed buffers compiled
// programs free are kept for their next allocations of the same size while
// a module is loaded (up to FP8_GPU_CACHE_MIB, default 4096), and errors
// are not only printed. Every failing
// call's message, "<call>: CUDA_ERROR_X (<code>): <text>", goes to stderr
// and the first one stays readable through fp8GpuRuntimeError(); after it
// the runtime is in error (as CUDA's sticky errors): allocations return
// null, copies, memsets and launches do nothing, while frees, destroys and
// unloads still release what exists. A caller checks fp8GpuRuntimeError()
// after a call and clears it with fp8GpuRuntimeClearError().
//
//===----------------------------------------------------------------------===//

#include "fp8/Runtime/CudaRuntime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

using namespace mlir::fp8::runtime;

namespace {
/// The driver with the runtime's context pushed on this thread, popped when
/// it goes out of scope; empty (false) when there is no driver to use.
class Scoped {
public:
  Scoped() = default;
  Scoped(CudaRuntime *cuda, bool pushed) : cuda(cuda), pushed(pushed) {}
  Scoped(Scoped &&other) noexcept
      : cuda(std::exchange(other.cuda, nullptr)),
        pushed(std::exchange(other.pushed, false)) {}
  Scoped(const Scoped &) = delete;
  Scoped &operator=(const Scoped &) = delete;
  Scoped &operator=(Scoped &&) = delete;
  ~Scoped() {
    if (pushed)
      (void)cuda->popContext();
  }
  explicit operator bool() const { return cuda != nullptr; }
  CudaRuntime *operator->() const { return cuda; }
  CudaRuntime &operator*() const { return *cuda; }

private:
  CudaRuntime *cuda = nullptr;
  bool pushed = false;
};

/// FP8_GPU_PROFILE=1 (or fp8GpuProfileEnable(true)): every launch
/// synchronized and timed on the host,
/// summed by kernel name, with the time between launches (host code,
/// copies, managed memory moving) as a row of its own;
/// fp8GpuProfileReport() prints the totals and starts again. Synchronizing
/// every launch changes the program's timing: a profile, not a benchmark.
class Profile {
public:
  using Clock = std::chrono::steady_clock;

  static std::atomic<bool> &enabledFlag() {
    static std::atomic<bool> on = [] {
      const char *value = std::getenv("FP8_GPU_PROFILE");
      return value && *value && std::strcmp(value, "0") != 0;
    }();
    return on;
  }
  static bool enabled() { return enabledFlag().load(); }

  void add(FunctionHandle function, Clock::time_point start,
           Clock::time_point end) {
    std::lock_guard<std::mutex> lock(mutex);
    if (lastEnd)
      betweenMs += milliseconds(*lastEnd, start);
    lastEnd = end;
    Row &row = rows[function];
    row.ms += milliseconds(start, end);
    ++row.launches;
  }

  void report(const char *label) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::pair<std::string, Row>> byName;
    std::unordered_map<std::string, size_t> index;
    double kernelMs = 0;
    size_t launches = 0;
    for (const auto &[function, row] : rows) {
      auto name = names.count(function) ? names[function] : "?";
      auto [it, inserted] = index.try_emplace(name, byName.size());
      if (inserted)
        byName.push_back({name, Row{}});
      byName[it->second].second.ms += row.ms;
      byName[it->second].second.launches += row.launches;
      kernelMs += row.ms;
      launches += row.launches;
    }
    std::sort(byName.begin(), byName.end(),
              [](const auto &a, const auto &b) { return a.second.ms > b.second.ms; });
    std::fprintf(stderr,
                 "fp8-gpu-profile: %s: %zu launches, %.3f ms in kernels, "
                 "%.3f ms between launches\n",
                 label ? label : "", launches, kernelMs, betweenMs);
    std::fprintf(stderr, "PROFILE|%s|between|%.3f|0\n", label ? label : "",
                 betweenMs);
    for (size_t i = 0; i < byName.size() && i < 40; ++i)
      std::fprintf(stderr, "PROFILE|%s|%s|%.3f|%zu\n", label ? label : "",
                   byName[i].first.c_str(), byName[i].second.ms,
                   byName[i].second.launches);
    rows.clear();
    lastEnd.reset();
    betweenMs = 0;
  }

  /// The kernel name `function` is reported under.
  void setName(FunctionHandle function, const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    names[function] = name;
  }

private:
  struct Row {
    double ms = 0;
    size_t launches = 0;
  };
  static double milliseconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  }
  std::mutex mutex;
  std::unordered_map<FunctionHandle, std::string> names;
  std::unordered_map<FunctionHandle, Row> rows;
  std::optional<Clock::time_point> lastEnd;
  double betweenMs = 0;
};

/// The process's runtime: created on first use, on the device that
/// mgpuSetDefaultDevice chose (0 by default).
class Runtime {
public:
  static Runtime &get() {
    // Never destroyed: compiled programs unload their modules from their
    // own destructors, which can run after this library's statics are gone.
    static Runtime *runtime = new Runtime;
    return *runtime;
  }

  /// The driver with its context pushed on this thread, or empty when in
  /// error (or when the runtime could not be created).
  Scoped cuda() {
    std::lock_guard<std::mutex> lock(mutex);
    createLocked();
    if (!instance) {
      // Said again after every fp8GpuRuntimeClearError(): nothing runs.
      failLocked(Status::error(creationError));
      return Scoped();
    }
    if (!error.empty())
      return Scoped();
    if (Status status = instance->pushContext()) {
      failLocked(std::move(status));
      return Scoped();
    }
    return Scoped(instance.get(), /*pushed=*/true);
  }

  /// The driver for releasing resources and waiting for queued work:
  /// usable even in error.
  Scoped cudaForRelease() {
    std::lock_guard<std::mutex> lock(mutex);
    // At exit the driver may be gone before the programs' destructors
    // unload their modules (CUDA_ERROR_UNKNOWN on the H200's driver 580):
    // the process's end releases everything anyway.
    if (!instance || exiting)
      return Scoped();
    bool pushed = !instance->pushContext();
    return Scoped(instance.get(), pushed);
  }

  /// Records `status` when it is a failure; returns whether it was.
  bool check(Status status) {
    if (!status)
      return false;
    std::lock_guard<std::mutex> lock(mutex);
    failLocked(std::move(status));
    return true;
  }

  template <typename T> bool check(Result<T> &result) {
    return !result && check(result.takeStatus());
  }

  void setDevice(int ordinal) {
    std::lock_guard<std::mutex> lock(mutex);
    if (created && ordinal != device)
      failLocked(Status::error(
          "mgpuSetDefaultDevice(" + std::to_string(ordinal) +
          "): the runtime already runs on device " + std::to_string(device)));
    else
      device = ordinal;
  }

  /// Functions looked up in `module`, so that unloading it forgets what
  /// was allowed them: the driver may give a later module's function the
  /// same handle.
  void addFunction(void *module, FunctionHandle function, const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    functions[module].push_back(function);
    profile.setName(function, name);
  }
  void forgetFunctions(void *module) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = functions.find(module);
    if (it == functions.end())
      return;
    for (FunctionHandle function : it->second)
      allowed.erase(function);
    functions.erase(it);
  }

  /// Allows `function` at least `bytes` of dynamic shared memory (the
  /// attribute is a maximum: it is only ever raised).
  Status allowSharedMemory(CudaRuntime &cuda, FunctionHandle function,
                           unsigned bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    unsigned &allowedBytes = allowed[function];
    if (bytes <= allowedBytes)
      return Status();
    if (Status status = cuda.setDynamicSharedMemory(function, bytes))
      return status;
    allowedBytes = bytes;
    return Status();
  }

  /// Buffers from cuMemAllocAsync (freed with cuMemFreeAsync).
  void addStreamOrdered(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    streamOrdered.insert(ptr);
  }
  bool removeStreamOrdered(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    return streamOrdered.erase(ptr) != 0;
  }

  /// Host allocations made when managed memory failed.
  void addFallback(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    fallbacks.insert(ptr);
  }
  bool removeFallback(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    return fallbacks.erase(ptr) != 0;
  }

  /// Managed buffers of the compiled programs (`_mlir_memref_to_llvm_*`):
  /// what a program frees is kept, while a module is loaded and up to the
  /// cache limit, for its next allocation of the same size. A call's
  /// buffers are the same from one call to the next, and the driver's
  /// managed allocation and free cost tens of microseconds each (a free
  /// may synchronize the device). Programs free a buffer only once no
  /// queued work uses it (fp8-async-gpu-host waits first), so a cached
  /// buffer is idle.
  void *takeCached(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = idle.find(bytes);
    if (it == idle.end() || it->second.empty())
      return nullptr;
    void *ptr = it->second.back();
    it->second.pop_back();
    idleBytes -= bytes;
    return ptr;
  }
  void addManaged(void *ptr, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    managed[ptr] = bytes;
  }
  /// Keeps `ptr` for reuse; false when it is to be freed now (not a
  /// managed buffer of ours, no module loaded, or the cache is full).
  bool keep(void *ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = managed.find(ptr);
    if (it == managed.end())
      return false;
    size_t bytes = it->second;
    // In error, the waits before a free did nothing (no driver call runs):
    // the buffer may still be in use, and cuMemFree waits for it.
    if (!error.empty() || loadedModules == 0 ||
        idleBytes + bytes > cacheLimit()) {
      managed.erase(it);
      return false;
    }
    idle[bytes].push_back(ptr);
    idleBytes += bytes;
    return true;
  }
  /// The loaded module, counted, or null (the failure recorded).
  void *loaded(Result<ModuleHandle> &module) {
    if (check(module))
      return nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    ++loadedModules;
    return *module;
  }
  /// After the last module is unloaded, the idle buffers to free;
  /// nothing while a module is still loaded.
  std::optional<std::vector<void *>> moduleUnloaded() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<void *> release;
    if (loadedModules > 0 && --loadedModules > 0)
      return std::nullopt;
    for (auto &[bytes, ptrs] : idle)
      for (void *ptr : ptrs) {
        managed.erase(ptr);
        release.push_back(ptr);
      }
    idle.clear();
    idleBytes = 0;
    return release;
  }

  /// Valid for the life of the process (another thread may clear and
  /// replace the current error meanwhile).
  const char *getError() {
    std::lock_guard<std::mutex> lock(mutex);
    if (error.empty())
      return nullptr;
    if (reported.empty() || *reported.back() != error)
      reported.push_back(std::make_unique<std::string>(error));
    return reported.back()->c_str();
  }

  void clearError() {
    std::lock_guard<std::mutex> lock(mutex);
    error.clear();
  }

private:
  void createLocked() {
    if (created)
      return;
    created = true;
    // The caller's context stays current: each call pushes ours.
    auto runtime = CudaRuntime::create(device, /*makeCurrent=*/false);
    if (!runtime) {
      creationError = runtime.takeStatus().message();
      return;
    }
    if (!(*runtime)->hasConcurrentManagedAccess()) {
      creationError =
          "the GPU " + (*runtime)->getDeviceName() +
          " has no concurrent managed access "
          "(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0, as on "
          "Windows, WSL and some virtualized GPUs): compiled GPU programs "
          "read and write managed memory on the host while their kernels "
          "run, which such a device does not allow";
      return;
    }
    instance = std::move(*runtime);
    // After cuInit: run before the driver's own teardown at exit.
    std::atexit([] {
      Runtime &rt = get();
      std::lock_guard<std::mutex> lock(rt.mutex);
      rt.exiting = true;
    });
  }

  /// FP8_GPU_CACHE_MIB (default 4096; 0 keeps nothing).
  size_t cacheLimit() {
    if (!cacheLimitBytes) {
      const char *value = std::getenv("FP8_GPU_CACHE_MIB");
      cacheLimitBytes = (value && *value ? std::strtoull(value, nullptr, 10)
                                         : 4096ull)
                        << 20;
    }
    return *cacheLimitBytes;
  }

  void failLocked(Status status) {
    if (!error.empty())
      return;
    error = status.message();
    std::fprintf(stderr, "fp8-gpu-runtime: %s\n", error.c_str());
  }

public:
  Profile profile;

private:
  std::mutex mutex;
  bool exiting = false;
  bool created = false;
  int device = 0;
  std::unique_ptr<CudaRuntime> instance;
  std::string creationError;
  std::string error;
  std::vector<std::unique_ptr<std::string>> reported;
  std::unordered_map<FunctionHandle, unsigned> allowed;
  std::unordered_map<void *, std::vector<FunctionHandle>> functions;
  std::unordered_set<void *> fallbacks;
  std::unordered_set<void *> streamOrdered;
  /// Managed buffers by size (live and idle), the idle ones by size.
  std::unordered_map<void *, size_t> managed;
  std::unordered_map<size_t, std::vector<void *>> idle;
  size_t idleBytes = 0;
  std::optional<size_t> cacheLimitBytes;
  int loadedModules = 0;
};

DevicePtr address(const void *ptr) { return reinterpret_cast<DevicePtr>(ptr); }

/// The default dynamic shared memory limit of a launch.
constexpr unsigned kDefaultSharedBytes = 48 * 1024;
} // namespace

#define MGPU extern "C" __attribute__((visibility("default")))

MGPU const char *fp8GpuRuntimeError() { return Runtime::get().getError(); }
MGPU void fp8GpuRuntimeClearError() { Runtime::get().clearError(); }

MGPU void mgpuSetDefaultDevice(int32_t device) {
  Runtime::get().setDevice(device);
}

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

/// A cubin or fatbin image of `size` bytes.
MGPU void *mgpuModuleLoad(void *data, size_t size) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return nullptr;
  auto module =
      cuda->loadModule(std::string_view(static_cast<char *>(data), size));
  return rt.loaded(module);
}

/// NUL-terminated PTX, JIT-compiled by the driver at `optLevel`.
MGPU void *mgpuModuleLoadJIT(void *data, int optLevel) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return nullptr;
  auto module = cuda->loadModule(static_cast<const char *>(data), optLevel);
  return rt.loaded(module);
}

MGPU void mgpuModuleUnload(void *module) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cudaForRelease();
  if (!cuda || !module)
    return;
  rt.forgetFunctions(module);
  rt.check(cuda->unloadModule(static_cast<ModuleHandle>(module)));
  // No program left: the buffers kept for one, and what the memory pool
  // holds, go back to the driver.
  if (auto idle = rt.moduleUnloaded()) {
    for (void *ptr : *idle)
      rt.check(cuda->free(address(ptr)));
    rt.check(cuda->trimPool());
  }
}

MGPU void *mgpuModuleGetFunction(void *module, const char *name) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return nullptr;
  if (!module) {
    rt.check(Status::error(std::string("mgpuModuleGetFunction(") + name +
                           "): its module did not load"));
    return nullptr;
  }
  auto function = cuda->getFunction(static_cast<ModuleHandle>(module), name);
  if (rt.check(function))
    return nullptr;
  rt.addFunction(module, *function, name);
  return *function;
}

MGPU void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                           intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                           intptr_t blockZ, int32_t sharedBytes, void *stream,
                           void **params, void ** /*extra*/,
                           size_t /*paramsCount*/) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return;
  if (!function) {
    rt.check(Status::error("mgpuLaunchKernel: no kernel (its module or "
                           "function did not load)"));
    return;
  }
  // A grid or block with no extent has nothing to run (a parallel loop of
  // zero trips: a dynamic extent 0 at run time); the driver would reject
  // it with CUDA_ERROR_INVALID_VALUE.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0 || blockX <= 0 || blockY <= 0 ||
      blockZ <= 0)
    return;
  auto handle = static_cast<FunctionHandle>(function);
  auto bytes = static_cast<unsigned>(sharedBytes);
  if (bytes > kDefaultSharedBytes &&
      rt.check(rt.allowSharedMemory(*cuda, handle, bytes)))
    return;
  Dim3 grid{static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
            static_cast<unsigned>(gridZ)};
  Dim3 block{static_cast<unsigned>(blockX), static_cast<unsigned>(blockY),
             static_cast<unsigned>(blockZ)};
  if (!Profile::enabled()) {
    rt.check(cuda->launch(handle, grid, block, bytes,
                          static_cast<StreamHandle>(stream), params));
    return;
  }
  if (rt.check(cuda->synchronize()))
    return;
  auto start = Profile::Clock::now();
  if (rt.check(cuda->launch(handle, grid, block, bytes,
                            static_cast<StreamHandle>(stream), params)) ||
      rt.check(cuda->synchronize()))
    return;
  rt.profile.add(handle, start, Profile::Clock::now());
}

/// Turns the launch profile (FP8_GPU_PROFILE) on or off.
MGPU void fp8GpuProfileEnable(bool on) { Profile::enabledFlag() = on; }

/// Prints what FP8_GPU_PROFILE gathered since the last report, under
/// `label`, and starts again; nothing without FP8_GPU_PROFILE.
MGPU void fp8GpuProfileReport(const char *label) {
  if (Profile::enabled())
    Runtime::get().profile.report(label);
}

//===----------------------------------------------------------------------===//
// What the FP8 GEMM launches need (fp8-lower-to-gpu's wgmma launchers)
//===----------------------------------------------------------------------===//

/// The kind of memory at `ptr` (MemoryKind: 0 host, 1 managed, 2 device),
/// which decides how a compiled program stages an argument
/// (fp8-stage-buffers-for-gpu): managed memory is used where it is; device
/// memory too when only kernels touch the argument, else it is copied by
/// the driver; host memory is copied. 0 in error (a copy is then the safe
/// way; nothing runs anyway).
MGPU int32_t fp8GpuMemoryKind(void *ptr) {
  Scoped cuda = Runtime::get().cuda();
  return cuda && ptr ? static_cast<int32_t>(cuda->getMemoryKind(address(ptr)))
                     : 0;
}

/// Whether the buffer at `ptr` is managed memory (programs compiled before
/// fp8GpuMemoryKind call it). False in error.
MGPU bool fp8GpuIsManagedMemory(void *ptr) {
  return fp8GpuMemoryKind(ptr) ==
         static_cast<int32_t>(MemoryKind::Managed);
}

/// The SM count (the persistent GEMM grid); 1 when the runtime is in error,
/// so that a grid computed from it stays valid (nothing launches then).
MGPU int32_t fp8GpuMultiprocessorCount() {
  Scoped cuda = Runtime::get().cuda();
  return cuda ? std::max(1, cuda->getMultiprocessorCount()) : 1;
}

/// Writes the 128-byte CUtensorMap of a 3-D tiled view into `map`
/// (CudaRuntime::encodeTensorMap; `swizzle128` nonzero for 128-byte
/// swizzle); zeros when it fails or in error.
MGPU void fp8GpuEncodeTensorMap(void *map, void *base, int64_t cols,
                                int64_t rows, int64_t batch, int64_t pitch,
                                int32_t boxCols, int32_t boxRows,
                                int32_t elementBytes, int32_t swizzle128) {
  std::memset(map, 0, sizeof(TensorMap));
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return;
  TensorMapShape shape;
  shape.cols = cols;
  shape.rows = rows;
  shape.batch = batch;
  shape.pitch = pitch;
  shape.boxCols = static_cast<unsigned>(boxCols);
  shape.boxRows = static_cast<unsigned>(boxRows);
  shape.elementBytes = static_cast<unsigned>(elementBytes);
  shape.swizzle128 = swizzle128 != 0;
  TensorMap encoded;
  if (!rt.check(cuda->encodeTensorMap(encoded, address(base), shape)))
    std::memcpy(map, &encoded, sizeof(TensorMap));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

MGPU void *mgpuStreamCreate() {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return nullptr;
  auto stream = cuda->createStream();
  return rt.check(stream) ? nullptr : *stream;
}

MGPU void mgpuStreamDestroy(void *stream) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cudaForRelease(); cuda && stream)
    rt.check(cuda->destroyStream(static_cast<StreamHandle>(stream)));
}

/// Waits even in error, as a stream's destruction does: the work queued
/// before the error may still run and write what the host reads next (the
/// device-resident scaling state).
MGPU void mgpuStreamSynchronize(void *stream) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cudaForRelease())
    rt.check(cuda->synchronizeStream(static_cast<StreamHandle>(stream)));
}

MGPU void mgpuStreamWaitEvent(void *stream, void *event) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cuda())
    rt.check(cuda->waitEvent(static_cast<StreamHandle>(stream),
                             static_cast<EventHandle>(event)));
}

MGPU void *mgpuEventCreate() {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda)
    return nullptr;
  auto event = cuda->createEvent(/*timing=*/false);
  return rt.check(event) ? nullptr : *event;
}

MGPU void mgpuEventDestroy(void *event) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cudaForRelease(); cuda && event)
    rt.check(cuda->destroyEvent(static_cast<EventHandle>(event)));
}

/// Waits even in error (mgpuStreamSynchronize).
MGPU void mgpuEventSynchronize(void *event) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cudaForRelease(); cuda && event)
    rt.check(cuda->synchronizeEvent(static_cast<EventHandle>(event)));
}

MGPU void mgpuEventRecord(void *event, void *stream) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cuda())
    rt.check(cuda->recordEvent(static_cast<EventHandle>(event),
                               static_cast<StreamHandle>(stream)));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// A `gpu.alloc async` (a buffer only queued work touches, fp8-async-gpu-host)
/// is stream-ordered: it may reuse memory that earlier work on the stream
/// freed, so a call's intermediates share memory; a synchronous one is
/// plain device memory, a host-shared one managed memory.
MGPU void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cuda();
  if (!cuda || (bytes == 0 && !stream))
    return nullptr;
  // An empty stream-ordered buffer still gets an address: a tensor map over
  // it (a GEMM with K = 0) needs one, though it reads nothing.
  auto ptr = hostShared ? cuda->allocateManaged(bytes)
             : stream   ? cuda->allocateAsync(std::max<uint64_t>(bytes, 1),
                                            static_cast<StreamHandle>(stream))
                        : cuda->allocate(bytes);
  if (rt.check(ptr))
    return nullptr;
  if (stream && !hostShared)
    rt.addStreamOrdered(reinterpret_cast<void *>(*ptr));
  return reinterpret_cast<void *>(*ptr);
}

MGPU void mgpuMemFree(void *ptr, void *stream) {
  Runtime &rt = Runtime::get();
  Scoped cuda = rt.cudaForRelease();
  if (!cuda || !ptr)
    return;
  // In error the queued work may not have run, or may still run: a
  // stream-ordered free is still correct (the memory returns to the pool
  // once the stream gets there).
  if (rt.removeStreamOrdered(ptr))
    rt.check(cuda->freeAsync(address(ptr), static_cast<StreamHandle>(stream)));
  else
    rt.check(cuda->free(address(ptr)));
}

MGPU void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cuda(); cuda && bytes)
    rt.check(cuda->copyAsync(address(dst), address(src), bytes,
                             static_cast<StreamHandle>(stream)));
}

MGPU void mgpuMemset32(void *dst, unsigned value, size_t count,
                       void *stream) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cuda(); cuda && count)
    rt.check(cuda->memsetAsync(address(dst), value, count, 4,
                               static_cast<StreamHandle>(stream)));
}

MGPU void mgpuMemset16(void *dst, int value, size_t count, void *stream) {
  Runtime &rt = Runtime::get();
  if (Scoped cuda = rt.cuda(); cuda && count)
    rt.check(cuda->memsetAsync(address(dst), static_cast<uint16_t>(value),
                               count, 2, static_cast<StreamHandle>(stream)));
}

//===----------------------------------------------------------------------===//
// Generic allocation functions (managed memory)
//===----------------------------------------------------------------------===//

/// Managed memory is aligned to at least 256 bytes.
constexpr size_t kManagedAlignment = 256;

MGPU void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                             size_t bytes) {
  Runtime &rt = Runtime::get();
  if (bytes > 0 && alignment <= kManagedAlignment) {
    if (Scoped cuda = rt.cuda()) {
      if (void *kept = rt.takeCached(bytes))
        return kept;
      auto ptr = cuda->allocateManaged(bytes);
      if (!rt.check(ptr)) {
        void *managed = reinterpret_cast<void *>(*ptr);
        rt.addManaged(managed, bytes);
        return managed;
      }
    }
  }
  // Host memory: aligned_alloc wants a multiple of the alignment.
  size_t align = alignment < sizeof(void *) ? sizeof(void *) : alignment;
  size_t size = bytes == 0 ? align : (bytes + align - 1) / align * align;
  void *ptr = std::aligned_alloc(align, size);
  if (ptr)
    rt.addFallback(ptr);
  return ptr;
}

MGPU void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return _mlir_memref_to_llvm_aligned_alloc(kManagedAlignment, bytes);
}

MGPU void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  Runtime &rt = Runtime::get();
  if (rt.removeFallback(ptr)) {
    std::free(ptr);
    return;
  }
  if (rt.keep(ptr))
    return;
  if (Scoped cuda = rt.cudaForRelease())
    rt.check(cuda->free(address(ptr)));
}

/// Frees a buffer that a compiled GPU program returned.
MGPU void fp8GpuFree(void *ptr) { _mlir_memref_to_llvm_free(ptr); }
