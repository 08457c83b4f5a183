//===- CudaRuntime.h - CUDA driver API, loaded at run time ------*- C++ -*-===//
//
// The host side of GPU runs: a thin wrapper over the CUDA driver API that
// loads libcuda.so.1 with dlopen when a runtime is created, so nothing in the
// build needs CUDA headers or libraries. On a machine without a driver or a
// GPU, create() returns an error that says so; nothing crashes.
//
// Every failing call becomes a Status "<call>: <CUDA_ERROR_NAME> (<code>):
// <cuGetErrorString>". Nothing here depends on LLVM: the GPU kit's host
// drivers build from these sources with any C++17 compiler.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNTIME_CUDARUNTIME_H
#define FP8_RUNTIME_CUDARUNTIME_H

#include "fp8/Runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace mlir::fp8::runtime {

/// A device address (CUdeviceptr).
using DevicePtr = uint64_t;

/// Opaque driver handles.
using ModuleHandle = struct CudaModuleOpaque *;
using FunctionHandle = struct CudaFunctionOpaque *;
using EventHandle = struct CudaEventOpaque *;
using StreamHandle = struct CudaStreamOpaque *;

/// What the driver says a pointer designates (cuPointerGetAttribute):
/// host memory it did not allocate (or pinned host memory), managed memory
/// (host and kernels both address it), or device memory (kernels only; the
/// host reaches it only through the driver's copies).
enum class MemoryKind { Host = 0, Managed = 1, Device = 2 };

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

/// A TMA descriptor (CUtensorMap): 128 bytes, 64-byte aligned, passed to
/// kernels by value (__grid_constant__).
struct alignas(64) TensorMap {
  uint64_t words[16];
};

/// A 3-D tiled tensor map {cols, rows, batch} of 1-, 2- or 4-byte elements
/// (UINT8 / UINT16 / UINT32) over rows `pitch` bytes apart (a multiple of
/// 16), read or written in boxes {boxCols, boxRows, 1}. Out-of-bounds reads
/// give zeros, out-of-bounds writes are dropped. `swizzle128`: the box's
/// 128-byte shared-memory rows are 128-byte swizzled (boxCols times the
/// element size at most 128), as the GEMM kernels' operand tiles and staged
/// results are (GemmKernelABI.h).
struct TensorMapShape {
  int64_t cols = 0, rows = 0, batch = 1, pitch = 0;
  unsigned boxCols = 0, boxRows = 0, elementBytes = 1;
  bool swizzle128 = false;
};

/// Kernel parameters in cuLaunchKernel's form: each argument copied into
/// owned storage, `pointers()` the array of their addresses.
class KernelArgs {
public:
  template <typename T>
  KernelArgs &add(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    auto &slot = storage.emplace_back(sizeof(T));
    std::memcpy(slot.data(), &value, sizeof(T));
    return *this;
  }
  /// Valid until the next add().
  void **pointers() {
    addresses.clear();
    for (auto &slot : storage)
      addresses.push_back(slot.data());
    return addresses.data();
  }
  size_t size() const { return storage.size(); }
  /// Bytes of argument `i`.
  size_t sizeOf(size_t i) const { return storage[i].size(); }

private:
  std::vector<std::vector<unsigned char>> storage;
  std::vector<void *> addresses;
};

class CudaRuntime {
public:
  /// Loads the driver ($FP8_CUDA_DRIVER, else libcuda.so.1), initializes it
  /// and, when `makeCurrent`, makes `device`'s primary context current on
  /// this thread (a library that runs inside someone else's program leaves
  /// the caller's context alone and pushes its own around each call).
  static Result<std::unique_ptr<CudaRuntime>> create(int device = 0,
                                                     bool makeCurrent = true);
  ~CudaRuntime();
  CudaRuntime(const CudaRuntime &) = delete;
  CudaRuntime &operator=(const CudaRuntime &) = delete;

  const std::string &getDeviceName() const { return deviceName; }
  /// major * 10 + minor (90 for Hopper).
  int getComputeCapability() const { return computeCapability; }
  int getMultiprocessorCount() const { return multiprocessors; }
  /// CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: whether the host may
  /// touch managed memory while kernels run (0 on Windows/WSL and some
  /// virtualized GPUs: a host access then faults).
  bool hasConcurrentManagedAccess() const { return concurrentManagedAccess; }

  /// Makes the runtime's context current on the calling thread.
  Status makeCurrent();
  /// Pushes the runtime's context on the calling thread's context stack
  /// (cuCtxPushCurrent); popContext restores the caller's.
  Status pushContext();
  Status popContext();

  /// A PTX (text) or cubin / fatbin image. PTX is JIT-compiled by the
  /// driver (at `jitOptLevel` 0-4 when given); its log is part of the error.
  Result<ModuleHandle> loadModule(std::string_view image,
                                  int jitOptLevel = -1);
  Status unloadModule(ModuleHandle module);
  Result<FunctionHandle> getFunction(ModuleHandle module,
                                             std::string_view name);

  /// An entry point of the loaded driver that this wrapper does not wrap
  /// (cuTensorMapEncodeTiled, ...); null when the driver lacks it.
  void *getDriverEntryPoint(std::string_view name) const;

  Result<DevicePtr> allocate(size_t bytes);
  /// Memory that host and device both address (cuMemAllocManaged).
  Result<DevicePtr> allocateManaged(size_t bytes);
  Status free(DevicePtr ptr);
  /// Stream-ordered device memory (cuMemAllocAsync / cuMemFreeAsync from
  /// the device's default pool, which keeps what is freed for later
  /// allocations): usable by work queued on `stream` after the call, and
  /// reusable by later allocations once `stream` reaches the free. Without
  /// the driver support, plain cuMemAlloc / cuMemFree.
  bool hasStreamOrderedAllocation() const;
  Result<DevicePtr> allocateAsync(size_t bytes, StreamHandle stream);
  /// Without a stream (or without the pool) it waits for the device first.
  Status freeAsync(DevicePtr ptr, StreamHandle stream);
  /// Returns the pool's unused memory to the driver (cuMemPoolTrimTo).
  Status trimPool();
  Status copyToDevice(DevicePtr dst, const void *src, size_t bytes);
  Status copyToHost(void *dst, DevicePtr src, size_t bytes);
  /// Asynchronous on the default stream (time it with events).
  Status copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes);
  Status memsetD32(DevicePtr dst, uint32_t value, size_t count);

  /// Streams and the asynchronous operations on them. Copies take any two
  /// addresses (unified addressing: host, device or managed).
  Result<StreamHandle> createStream();
  Status destroyStream(StreamHandle stream);
  Status synchronizeStream(StreamHandle stream);
  Status waitEvent(StreamHandle stream, EventHandle event);
  Status copyAsync(DevicePtr dst, DevicePtr src, size_t bytes,
                   StreamHandle stream);
  /// `count` elements of 2 or 4 bytes set to `value`.
  Status memsetAsync(DevicePtr dst, uint32_t value, size_t count,
                     unsigned elementBytes, StreamHandle stream);
  /// Launches with cuLaunchKernel's parameter array.
  Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                unsigned sharedBytes, StreamHandle stream, void **params);
  /// Allows `bytes` of dynamic shared memory (above the default 48 KiB).
  Status setDynamicSharedMemory(FunctionHandle function, unsigned bytes);
  /// Whether `ptr` is managed memory, which both the host and kernels
  /// address (false for device-only memory and for host memory the driver
  /// did not allocate).
  bool isManagedMemory(DevicePtr ptr);
  /// The kind of memory at `ptr` (Host for memory the driver did not
  /// allocate: malloc, the stack, static data).
  MemoryKind getMemoryKind(DevicePtr ptr);
  /// cuTensorMapEncodeTiled of `shape` at `base` (drivers >= 12.0).
  Status encodeTensorMap(TensorMap &map, DevicePtr base,
                         const TensorMapShape &shape);

  /// Launches on the default stream; returns when queued. When the driver
  /// reports kernel parameter layouts (>= 12.4), `args` must match the
  /// kernel's parameters in number and size: a launch built for another
  /// ABI is an error, not garbage.
  Status launch(FunctionHandle function, Dim3 grid, Dim3 block,
                unsigned sharedBytes, KernelArgs &args);
  /// That check alone (success when the driver cannot tell).
  Status checkParameters(FunctionHandle function, const KernelArgs &args);
  Status synchronize();

  /// `timing` false: cheaper events that only order work.
  Result<EventHandle> createEvent(bool timing = true);
  Status destroyEvent(EventHandle event);
  /// Records on `stream` (default: the default stream).
  Status recordEvent(EventHandle event, StreamHandle stream = nullptr);
  Status synchronizeEvent(EventHandle event);
  /// Waits for `end`, then the time from `start` to `end` in milliseconds.
  Result<float> elapsedMilliseconds(EventHandle start,
                                            EventHandle end);

  struct Driver;

private:
  explicit CudaRuntime(std::unique_ptr<Driver> driver);

  std::unique_ptr<Driver> driver;
  int device = 0;
  void *context = nullptr;
  std::string deviceName;
  int computeCapability = 0;
  int multiprocessors = 0;
  bool concurrentManagedAccess = false;
  /// The device's current memory pool (stream-ordered allocations).
  void *pool = nullptr;
  /// Each checked kernel's parameter sizes, asked of the driver once.
  std::unordered_map<FunctionHandle, std::vector<size_t>> parameterSizes;
};

} // namespace mlir::fp8::runtime

#endif // FP8_RUNTIME_CUDARUNTIME_H
