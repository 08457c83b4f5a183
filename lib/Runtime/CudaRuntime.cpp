//===- CudaRuntime.cpp - CUDA driver API, loaded at run time --------------===//
//
// The few driver types and entry points used here are declared below from
// the driver API's documented C ABI (cuda.h), so the build needs no CUDA.
// Versioned entry points are looked up under the names cuda.h maps them to
// (cuMemAlloc -> cuMemAlloc_v2, ...).
//
//===----------------------------------------------------------------------===//

#include "fp8/Runtime/CudaRuntime.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace mlir::fp8::runtime;

namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUevent = void *;
using CUstream = void *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 2;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
using CUmemoryPool = void *;

/// Names and descriptions of the results this wrapper is most likely to see,
/// for drivers whose cuGetErrorName/String fail (the toolkit's link stub).
struct KnownResult {
  CUresult code;
  const char *name;
  const char *text;
};
constexpr KnownResult kKnownResults[] = {
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library (no NVIDIA driver installed)"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
     "CUDA driver version is insufficient"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};
} // namespace

/// The driver entry points, resolved from the loaded library.
struct CudaRuntime::Driver {
  void *library = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
  /// Optional (drivers >= 11.2: stream-ordered allocation): null when
  /// absent.
  CUresult (*cuMemAllocAsync)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*cuDeviceGetMemPool)(CUmemoryPool *, CUdevice) = nullptr;
  CUresult (*cuMemPoolSetAttribute)(CUmemoryPool, int, void *) = nullptr;
  CUresult (*cuMemPoolTrimTo)(CUmemoryPool, size_t) = nullptr;
  /// Optional (drivers >= 12.4): a kernel's parameter layout.
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *,
                                 size_t *) = nullptr;
  /// Optional (drivers >= 12.0): null when absent.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int) = nullptr;

  ~Driver() {
    // libcuda is never unloaded once initialized (it keeps threads); only a
    // library that failed to initialize is closed.
    if (library && !initialized)
      dlclose(library);
  }
  bool initialized = false;

  /// "<call>: CUDA_ERROR_X (<code>): <description>".
  Status check(CUresult result, const std::string &call) const {
    if (result == CUDA_SUCCESS)
      return Status();
    const char *name = nullptr, *text = nullptr;
    if (cuGetErrorName(result, &name) != CUDA_SUCCESS)
      name = nullptr;
    if (cuGetErrorString(result, &text) != CUDA_SUCCESS)
      text = nullptr;
    for (const KnownResult &known : kKnownResults) {
      if (known.code != result)
        continue;
      name = name ? name : known.name;
      text = text ? text : known.text;
    }
    name = name ? name : "CUDA_ERROR_UNKNOWN";
    text = text ? text : "no description from the driver";
    return Status::error(call + ": " + name + " (" + std::to_string(result) +
                         "): " + text);
  }
};

template <typename Fn>
static bool resolve(void *library, const char *name, Fn *&fn) {
  fn = reinterpret_cast<Fn *>(dlsym(library, name));
  return fn != nullptr;
}

static Result<std::unique_ptr<CudaRuntime::Driver>> loadDriver() {
  const char *path = std::getenv("FP8_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  auto driver = std::make_unique<CudaRuntime::Driver>();
  driver->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!driver->library) {
    const char *reason = dlerror();
    return Status::error(std::string("no CUDA driver: cannot load ") + path +
                         " (" + (reason ? reason : "unknown reason") +
                         "); this machine has no NVIDIA driver, so no GPU "
                         "can be used");
  }
  void *lib = driver->library;
  CudaRuntime::Driver &d = *driver;
  bool ok = resolve(lib, "cuInit", d.cuInit) &&
            resolve(lib, "cuGetErrorName", d.cuGetErrorName) &&
            resolve(lib, "cuGetErrorString", d.cuGetErrorString) &&
            resolve(lib, "cuDeviceGetCount", d.cuDeviceGetCount) &&
            resolve(lib, "cuDeviceGet", d.cuDeviceGet) &&
            resolve(lib, "cuDeviceGetName", d.cuDeviceGetName) &&
            resolve(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
            resolve(lib, "cuDevicePrimaryCtxRetain",
                    d.cuDevicePrimaryCtxRetain) &&
            resolve(lib, "cuDevicePrimaryCtxRelease_v2",
                    d.cuDevicePrimaryCtxRelease) &&
            resolve(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
            resolve(lib, "cuCtxPushCurrent_v2", d.cuCtxPushCurrent) &&
            resolve(lib, "cuCtxPopCurrent_v2", d.cuCtxPopCurrent) &&
            resolve(lib, "cuCtxSynchronize", d.cuCtxSynchronize) &&
            resolve(lib, "cuModuleLoadDataEx", d.cuModuleLoadDataEx) &&
            resolve(lib, "cuModuleUnload", d.cuModuleUnload) &&
            resolve(lib, "cuModuleGetFunction", d.cuModuleGetFunction) &&
            resolve(lib, "cuMemAlloc_v2", d.cuMemAlloc) &&
            resolve(lib, "cuMemFree_v2", d.cuMemFree) &&
            resolve(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD) &&
            resolve(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH) &&
            resolve(lib, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync) &&
            resolve(lib, "cuMemsetD32_v2", d.cuMemsetD32) &&
            resolve(lib, "cuLaunchKernel", d.cuLaunchKernel) &&
            resolve(lib, "cuEventCreate", d.cuEventCreate) &&
            resolve(lib, "cuEventDestroy_v2", d.cuEventDestroy) &&
            resolve(lib, "cuEventRecord", d.cuEventRecord) &&
            resolve(lib, "cuEventSynchronize", d.cuEventSynchronize) &&
            resolve(lib, "cuEventElapsedTime", d.cuEventElapsedTime) &&
            resolve(lib, "cuMemAllocManaged", d.cuMemAllocManaged) &&
            resolve(lib, "cuStreamCreate", d.cuStreamCreate) &&
            resolve(lib, "cuStreamDestroy_v2", d.cuStreamDestroy) &&
            resolve(lib, "cuStreamSynchronize", d.cuStreamSynchronize) &&
            resolve(lib, "cuStreamWaitEvent", d.cuStreamWaitEvent) &&
            resolve(lib, "cuMemcpyAsync", d.cuMemcpyAsync) &&
            resolve(lib, "cuMemsetD32Async", d.cuMemsetD32Async) &&
            resolve(lib, "cuMemsetD16Async", d.cuMemsetD16Async) &&
            resolve(lib, "cuFuncSetAttribute", d.cuFuncSetAttribute) &&
            resolve(lib, "cuPointerGetAttribute", d.cuPointerGetAttribute);
  if (ok) {
    resolve(lib, "cuTensorMapEncodeTiled", d.cuTensorMapEncodeTiled);
    resolve(lib, "cuFuncGetParamInfo", d.cuFuncGetParamInfo);
    // All or none: a pool that keeps its memory until trimmed, or no pool.
    if (!resolve(lib, "cuMemAllocAsync", d.cuMemAllocAsync) ||
        !resolve(lib, "cuMemFreeAsync", d.cuMemFreeAsync) ||
        !resolve(lib, "cuDeviceGetMemPool", d.cuDeviceGetMemPool) ||
        !resolve(lib, "cuMemPoolSetAttribute", d.cuMemPoolSetAttribute) ||
        !resolve(lib, "cuMemPoolTrimTo", d.cuMemPoolTrimTo))
      d.cuMemAllocAsync = nullptr;
  }
  if (!ok) {
    const char *reason = dlerror();
    return Status::error(std::string("no usable CUDA driver: ") + path +
                         " lacks a driver API entry point (" +
                         (reason ? reason : "unknown symbol") + ")");
  }
  return std::move(driver);
}

Result<std::unique_ptr<CudaRuntime>> CudaRuntime::create(int device,
                                                         bool makeCurrent) {
  auto driver = loadDriver();
  if (!driver)
    return driver.takeStatus();
  std::unique_ptr<CudaRuntime> runtime(new CudaRuntime(std::move(*driver)));
  Driver &d = *runtime->driver;

  if (Status err = d.check(d.cuInit(0), "cuInit"))
    return std::move(err).withContext(
        "no GPU: the CUDA driver did not initialize");
  d.initialized = true;
  int count = 0;
  if (Status err = d.check(d.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(err);
  if (count == 0)
    return Status::error("no GPU: the CUDA driver sees no device");
  if (device < 0 || device >= count)
    return Status::error("no GPU #" + std::to_string(device) +
                         ": the CUDA driver sees " + std::to_string(count) +
                         " device(s)");

  CUdevice handle;
  if (Status err = d.check(d.cuDeviceGet(&handle, device), "cuDeviceGet"))
    return std::move(err);
  runtime->device = handle;
  char name[256] = {};
  if (Status err =
          d.check(d.cuDeviceGetName(name, sizeof(name) - 1, handle),
                  "cuDeviceGetName"))
    return std::move(err);
  runtime->deviceName = name;
  int major = 0, minor = 0;
  if (Status err = d.check(
          d.cuDeviceGetAttribute(
              &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
          "cuDeviceGetAttribute"))
    return std::move(err);
  if (Status err = d.check(
          d.cuDeviceGetAttribute(
              &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle),
          "cuDeviceGetAttribute"))
    return std::move(err);
  runtime->computeCapability = major * 10 + minor;
  if (Status err = d.check(d.cuDeviceGetAttribute(
                              &runtime->multiprocessors,
                              CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle),
                          "cuDeviceGetAttribute"))
    return std::move(err);
  int concurrent = 0;
  if (Status err = d.check(
          d.cuDeviceGetAttribute(
              &concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
              handle),
          "cuDeviceGetAttribute"))
    return std::move(err);
  runtime->concurrentManagedAccess = concurrent != 0;

  CUcontext context = nullptr;
  if (Status err = d.check(d.cuDevicePrimaryCtxRetain(&context, handle),
                          "cuDevicePrimaryCtxRetain"))
    return std::move(err);
  runtime->context = context;
  if (Status err = makeCurrent ? runtime->makeCurrent()
                               : runtime->pushContext())
    return std::move(err);
  // Stream-ordered allocations come from the device's current pool; by
  // default it returns its memory to the OS at every synchronization, and
  // each call of a compiled program would allocate anew. Keep it until
  // trimPool (what PyTorch's caching allocator does too); without a pool,
  // allocations are synchronous.
  CUmemoryPool pool = nullptr;
  uint64_t keepAll = UINT64_MAX;
  if (d.cuMemAllocAsync &&
      (d.cuDeviceGetMemPool(&pool, handle) != CUDA_SUCCESS ||
       d.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                               &keepAll) != CUDA_SUCCESS))
    d.cuMemAllocAsync = nullptr;
  runtime->pool = pool;
  if (!makeCurrent)
    if (Status err = runtime->popContext())
      return std::move(err);
  return std::move(runtime);
}

CudaRuntime::CudaRuntime(std::unique_ptr<Driver> driver)
    : driver(std::move(driver)) {}

CudaRuntime::~CudaRuntime() {
  if (context)
    (void)driver->cuDevicePrimaryCtxRelease(device);
}

Status CudaRuntime::makeCurrent() {
  return driver->check(driver->cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

Status CudaRuntime::pushContext() {
  return driver->check(driver->cuCtxPushCurrent(context), "cuCtxPushCurrent");
}

Status CudaRuntime::popContext() {
  CUcontext popped = nullptr;
  return driver->check(driver->cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
}

Result<ModuleHandle> CudaRuntime::loadModule(std::string_view image,
                                             int jitOptLevel) {
  // PTX must be NUL-terminated; a binary image is passed as it is.
  std::string copy;
  const void *data = image.data();
  bool isElf = image.substr(0, 4) == "\x7f"
                                      "ELF";
  if (!isElf && (image.empty() || image.back() != '\0')) {
    copy = std::string(image);
    data = copy.c_str();
  }
  char log[8192] = {};
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1),
                    reinterpret_cast<void *>(static_cast<intptr_t>(
                        jitOptLevel < 0 ? 4 : jitOptLevel))};
  unsigned numOptions = jitOptLevel < 0 ? 2 : 3;
  CUmodule module = nullptr;
  if (Status err = driver->check(
          driver->cuModuleLoadDataEx(&module, data, numOptions, options,
                                     values),
          "cuModuleLoadDataEx")) {
    if (!*log)
      return std::move(err);
    return Status::error(err.message() + "\nJIT log: " + log);
  }
  return static_cast<ModuleHandle>(module);
}

Status CudaRuntime::unloadModule(ModuleHandle module) {
  return driver->check(driver->cuModuleUnload(module), "cuModuleUnload");
}

Result<FunctionHandle> CudaRuntime::getFunction(ModuleHandle module,
                                                std::string_view name) {
  CUfunction function = nullptr;
  std::string symbol(name);
  if (Status err = driver->check(
          driver->cuModuleGetFunction(&function, module, symbol.c_str()),
          "cuModuleGetFunction(" + symbol + ")"))
    return std::move(err);
  return static_cast<FunctionHandle>(function);
}

void *CudaRuntime::getDriverEntryPoint(std::string_view name) const {
  return dlsym(driver->library, std::string(name).c_str());
}

Result<DevicePtr> CudaRuntime::allocate(size_t bytes) {
  CUdeviceptr ptr = 0;
  if (Status err =
          driver->check(driver->cuMemAlloc(&ptr, bytes),
                        "cuMemAlloc(" + std::to_string(bytes) + " bytes)"))
    return std::move(err);
  return ptr;
}

Result<DevicePtr> CudaRuntime::allocateManaged(size_t bytes) {
  CUdeviceptr ptr = 0;
  if (Status err = driver->check(
          driver->cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL),
          "cuMemAllocManaged(" + std::to_string(bytes) + " bytes)"))
    return std::move(err);
  return ptr;
}

Status CudaRuntime::free(DevicePtr ptr) {
  return driver->check(driver->cuMemFree(ptr), "cuMemFree");
}

bool CudaRuntime::hasStreamOrderedAllocation() const {
  return driver->cuMemAllocAsync != nullptr;
}

Result<DevicePtr> CudaRuntime::allocateAsync(size_t bytes,
                                             StreamHandle stream) {
  if (!hasStreamOrderedAllocation())
    return allocate(bytes);
  CUdeviceptr ptr = 0;
  if (Status err = driver->check(
          driver->cuMemAllocAsync(&ptr, bytes, static_cast<CUstream>(stream)),
          "cuMemAllocAsync(" + std::to_string(bytes) + " bytes)"))
    return std::move(err);
  return ptr;
}

Status CudaRuntime::freeAsync(DevicePtr ptr, StreamHandle stream) {
  // The work queued on `stream` may still use the buffer: a plain free
  // waits for it first, and a free off the program's streams (no stream:
  // the legacy stream, not ordered with non-blocking ones) waits for
  // everything.
  if (!hasStreamOrderedAllocation() || !stream) {
    Status done = stream ? synchronizeStream(stream) : synchronize();
    if (done)
      return done;
    return hasStreamOrderedAllocation()
               ? driver->check(driver->cuMemFreeAsync(ptr, nullptr),
                               "cuMemFreeAsync")
               : free(ptr);
  }
  return driver->check(
      driver->cuMemFreeAsync(ptr, static_cast<CUstream>(stream)),
      "cuMemFreeAsync");
}

Status CudaRuntime::trimPool() {
  if (!hasStreamOrderedAllocation())
    return Status();
  return driver->check(driver->cuMemPoolTrimTo(pool, 0), "cuMemPoolTrimTo");
}

Status CudaRuntime::copyToDevice(DevicePtr dst, const void *src, size_t bytes) {
  return driver->check(driver->cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

Status CudaRuntime::copyToHost(void *dst, DevicePtr src, size_t bytes) {
  return driver->check(driver->cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

Status CudaRuntime::copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes) {
  return driver->check(driver->cuMemcpyDtoDAsync(dst, src, bytes, nullptr),
                       "cuMemcpyDtoDAsync");
}

Status CudaRuntime::memsetD32(DevicePtr dst, uint32_t value, size_t count) {
  return driver->check(driver->cuMemsetD32(dst, value, count), "cuMemsetD32");
}

Result<StreamHandle> CudaRuntime::createStream() {
  CUstream stream = nullptr;
  if (Status err = driver->check(
          driver->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate"))
    return std::move(err);
  return static_cast<StreamHandle>(stream);
}

Status CudaRuntime::destroyStream(StreamHandle stream) {
  return driver->check(driver->cuStreamDestroy(stream), "cuStreamDestroy");
}

Status CudaRuntime::synchronizeStream(StreamHandle stream) {
  return driver->check(driver->cuStreamSynchronize(stream),
                       "cuStreamSynchronize");
}

Status CudaRuntime::waitEvent(StreamHandle stream, EventHandle event) {
  return driver->check(driver->cuStreamWaitEvent(stream, event, 0),
                       "cuStreamWaitEvent");
}

Status CudaRuntime::copyAsync(DevicePtr dst, DevicePtr src, size_t bytes,
                              StreamHandle stream) {
  return driver->check(driver->cuMemcpyAsync(dst, src, bytes, stream),
                       "cuMemcpyAsync(" + std::to_string(bytes) + " bytes)");
}

Status CudaRuntime::memsetAsync(DevicePtr dst, uint32_t value, size_t count,
                                unsigned elementBytes, StreamHandle stream) {
  if (elementBytes == 2)
    return driver->check(
        driver->cuMemsetD16Async(dst, static_cast<unsigned short>(value),
                                 count, stream),
        "cuMemsetD16Async");
  return driver->check(driver->cuMemsetD32Async(dst, value, count, stream),
                       "cuMemsetD32Async");
}

Status CudaRuntime::launch(FunctionHandle function, Dim3 grid, Dim3 block,
                           unsigned sharedBytes, StreamHandle stream,
                           void **params) {
  return driver->check(
      driver->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x,
                             block.y, block.z, sharedBytes, stream, params,
                             nullptr),
      "cuLaunchKernel");
}

Status CudaRuntime::checkParameters(FunctionHandle function,
                                    const KernelArgs &args) {
  if (!driver->cuFuncGetParamInfo)
    return Status();
  auto [it, inserted] = parameterSizes.try_emplace(function);
  std::vector<size_t> &sizes = it->second;
  if (inserted) {
    // CUDA_ERROR_INVALID_VALUE past the last parameter; any other error
    // means the driver cannot tell: no check.
    constexpr CUresult kInvalidValue = 1;
    for (size_t offset = 0, size = 0;; sizes.push_back(size)) {
      CUresult result =
          driver->cuFuncGetParamInfo(function, sizes.size(), &offset, &size);
      if (result == kInvalidValue)
        break;
      if (result != 0) {
        parameterSizes.erase(it);
        return Status();
      }
    }
  }
  if (sizes.size() != args.size())
    return Status::error("kernel launch: the kernel takes " +
                         std::to_string(sizes.size()) +
                         " parameters, the launch passes " +
                         std::to_string(args.size()));
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != args.sizeOf(i))
      return Status::error("kernel launch: parameter #" + std::to_string(i) +
                           " of the kernel is " + std::to_string(sizes[i]) +
                           " bytes, the launch passes " +
                           std::to_string(args.sizeOf(i)));
  return Status();
}

Status CudaRuntime::launch(FunctionHandle function, Dim3 grid, Dim3 block,
                          unsigned sharedBytes, KernelArgs &args) {
  if (Status status = checkParameters(function, args))
    return status;
  return launch(function, grid, block, sharedBytes, nullptr, args.pointers());
}

Status CudaRuntime::setDynamicSharedMemory(FunctionHandle function,
                                           unsigned bytes) {
  return driver->check(
      driver->cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
          static_cast<int>(bytes)),
      "cuFuncSetAttribute(max dynamic shared memory " +
          std::to_string(bytes) + " bytes)");
}

Status CudaRuntime::encodeTensorMap(TensorMap &map, DevicePtr base,
                                    const TensorMapShape &shape) {
  std::string call = "cuTensorMapEncodeTiled(" + std::to_string(shape.cols) +
                     " x " + std::to_string(shape.rows) + " x " +
                     std::to_string(shape.batch) + ", pitch " +
                     std::to_string(shape.pitch) + " bytes)";
  if (!driver->cuTensorMapEncodeTiled)
    return Status::error(call + ": the CUDA driver has no tensor maps "
                                "(driver >= 12.0 needed)");
  // TMA's own rules, said before the driver answers INVALID_VALUE.
  if (shape.pitch % 16 != 0 || base % 16 != 0)
    return Status::error(call + ": TMA needs 16-byte aligned rows; the "
                                "pitch or the base address is not");
  constexpr int kUint8 = 0, kUint16 = 1, kUint32 = 2, kInterleaveNone = 0,
                kSwizzleNone = 0, kSwizzle128B = 3, kL2Promotion256B = 3,
                kOobFillNone = 0;
  uint64_t dims[3] = {uint64_t(shape.cols), uint64_t(shape.rows),
                      uint64_t(shape.batch)};
  uint64_t strides[2] = {uint64_t(shape.pitch),
                         uint64_t(shape.pitch) * uint64_t(shape.rows)};
  uint32_t box[3] = {shape.boxCols, shape.boxRows, 1};
  uint32_t elementStrides[3] = {1, 1, 1};
  int type = shape.elementBytes == 1   ? kUint8
             : shape.elementBytes == 2 ? kUint16
                                       : kUint32;
  map = TensorMap{};
  return driver->check(
      driver->cuTensorMapEncodeTiled(
          &map, type, 3, reinterpret_cast<void *>(base), dims, strides, box,
          elementStrides, kInterleaveNone,
          shape.swizzle128 ? kSwizzle128B : kSwizzleNone,
          kL2Promotion256B, kOobFillNone),
      call);
}

bool CudaRuntime::isManagedMemory(DevicePtr ptr) {
  return getMemoryKind(ptr) == MemoryKind::Managed;
}

MemoryKind CudaRuntime::getMemoryKind(DevicePtr ptr) {
  // Memory the driver did not allocate (malloc, stack, static data) is an
  // error to ask about: that is the answer "host", not a failure. Managed
  // memory reports the memory type DEVICE too: IS_MANAGED tells them apart.
  unsigned managed = 0, type = 0;
  if (driver->cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    ptr) == CUDA_SUCCESS &&
      managed != 0)
    return MemoryKind::Managed;
  if (driver->cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    ptr) == CUDA_SUCCESS &&
      type == CU_MEMORYTYPE_DEVICE)
    return MemoryKind::Device;
  return MemoryKind::Host;
}

Status CudaRuntime::synchronize() {
  return driver->check(driver->cuCtxSynchronize(), "cuCtxSynchronize");
}

Result<EventHandle> CudaRuntime::createEvent(bool timing) {
  CUevent event = nullptr;
  if (Status err = driver->check(
          driver->cuEventCreate(
              &event, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING),
          "cuEventCreate"))
    return std::move(err);
  return static_cast<EventHandle>(event);
}

Status CudaRuntime::destroyEvent(EventHandle event) {
  return driver->check(driver->cuEventDestroy(event), "cuEventDestroy");
}

Status CudaRuntime::recordEvent(EventHandle event, StreamHandle stream) {
  return driver->check(driver->cuEventRecord(event, stream), "cuEventRecord");
}

Status CudaRuntime::synchronizeEvent(EventHandle event) {
  return driver->check(driver->cuEventSynchronize(event),
                       "cuEventSynchronize");
}

Result<float> CudaRuntime::elapsedMilliseconds(EventHandle start,
                                                 EventHandle end) {
  if (Status err =
          driver->check(driver->cuEventSynchronize(end), "cuEventSynchronize"))
    return std::move(err);
  float ms = 0;
  if (Status err = driver->check(driver->cuEventElapsedTime(&ms, start, end),
                                "cuEventElapsedTime"))
    return std::move(err);
  return ms;
}
