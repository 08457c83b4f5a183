//===- FakeCudaDriver.cpp - A CUDA driver API over host memory ------------===//
//
// Loaded by CudaRuntime through FP8_CUDA_DRIVER in tests on machines without
// a GPU. Managed memory (cuMemAllocManaged) is host memory (calloc); device
// memory (cuMemAlloc, cuMemAllocAsync) is host memory the host cannot touch:
// the address handed out is a PROT_NONE mapping of pages the driver reaches
// through a second, writable mapping, so a host read or write of device
// memory is a SIGSEGV, as on a GPU, while the driver's copies and memsets
// work. cuPointerGetAttribute tells the three kinds apart as the driver does
// (IS_MANAGED; MEMORY_TYPE DEVICE for both allocations; an error for
// memory it did not allocate). Copies and memsets are real, modules must be
// PTX text, cuModuleGetFunction finds `.entry NAME` in it (a function
// handle of an unloaded module is reused by the next lookup, as a driver
// may), and cuLaunchKernel runs nothing: it prints the launch to stderr
// ("fake-cuda: launch NAME grid X,Y,Z block X,Y,Z smem N"), and refuses
// one asking for more than 48 KiB of dynamic shared memory than its
// function was allowed (cuFuncSetAttribute), as the driver does. Contexts
// are a per-thread stack (cuCtxSetCurrent / PushCurrent / PopCurrent /
// GetCurrent); allocations, module loads, launches and stream creation
// need one current (CUDA_ERROR_INVALID_CONTEXT). So the host program
// fp8-run interprets is checked end to end, and outputs that only kernels
// write come back as zeros.
//
// FP8_FAKE_CUDA_TRACE=1 also prints every module load, allocation, free,
// copy, stream and event call, and at exit how many allocations, modules
// and streams are still live. FP8_FAKE_CUDA_MEMORY=N makes allocations
// fail with CUDA_ERROR_OUT_OF_MEMORY once more than N bytes are live.
// FP8_FAKE_CUDA_PARAMS=1 prints each launch's scalar parameters.
// FP8_FAKE_CUDA_NO_CONCURRENT_MANAGED=1 reports a device without concurrent
// managed access. fakeCudaCount(NAME) tells a test how often a call was
// made ("cuStreamSynchronize", "cuFuncSetAttribute", ...).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using CUresult = int;
using CUdeviceptr = unsigned long long;

namespace {
struct Function {
  std::string name;
  /// Bytes of each parameter, from the PTX `.entry` (cuFuncGetParamInfo).
  std::vector<size_t> params;
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
  unsigned maxDynamicShared = 48 * 1024;
};

/// The parameter sizes of `.entry NAME(` at `at` in PTX text: `.param
/// .u64 x`, `.param .f32 y`, `.param .align 64 .b8 map[128]`, ...
std::vector<size_t> parseParams(const std::string &image, size_t at) {
  std::vector<size_t> sizes;
  size_t end = image.find(')', at);
  size_t pos = at;
  while ((pos = image.find(".param", pos)) != std::string::npos &&
         pos < end) {
    size_t stop = std::min(image.find_first_of(",)", pos), end);
    std::string decl = image.substr(pos, stop - pos);
    pos = stop;
    size_t bits = 0;
    for (const char *type : {".u8", ".s8", ".b8", ".u16", ".s16", ".b16",
                             ".f16", ".u32", ".s32", ".b32", ".f32", ".u64",
                             ".s64", ".b64", ".f64"}) {
      size_t t = decl.find(std::string(type) + " ");
      if (t != std::string::npos)
        bits = std::stoul(std::string(type).substr(2));
    }
    size_t count = 1, bracket = decl.find('[');
    if (bracket != std::string::npos)
      count = std::stoul(decl.substr(bracket + 1));
    sizes.push_back(bits / 8 * count);
  }
  return sizes;
}
/// Functions live with their module, as the driver's do.
struct Module {
  std::string image;
  std::vector<std::unique_ptr<Function>> functions;
};
} // namespace

#define FAKE extern "C" __attribute__((visibility("default"))) CUresult

namespace {
/// What the trace counts, reported at exit.
struct Live {
  long allocations = 0, modules = 0, streams = 0;
  size_t bytes = 0;
  ~Live() {
    if (trace())
      std::fprintf(stderr,
                   "fake-cuda: at exit %ld allocations, %ld modules, %ld "
                   "streams live\n",
                   allocations, modules, streams);
  }
  static bool trace() {
    const char *value = std::getenv("FP8_FAKE_CUDA_TRACE");
    return value && *value && *value != '0';
  }
};
Live live;

template <typename... Args> void trace(const char *format, Args... args) {
  if (!Live::trace())
    return;
  std::fprintf(stderr, "fake-cuda: ");
  if constexpr (sizeof...(args) == 0)
    std::fputs(format, stderr);
  else
    std::fprintf(stderr, format, args...);
  std::fprintf(stderr, "\n");
}

constexpr CUresult kInvalidContext = 201;

// The driver's state is never destroyed: programs unload their modules and
// free their buffers from their own destructors, which run after this
// library's at exit.

/// How often each entry point was called (fakeCudaCount).
std::map<std::string, long> &counts() {
  static auto *calls = new std::map<std::string, long>;
  return *calls;
}
std::mutex countsMutex;
void countCall(const char *call) {
  std::lock_guard<std::mutex> lock(countsMutex);
  ++counts()[call];
}

/// The calling thread's context stack, its current context on top.
std::vector<void *> &contextStack() {
  thread_local auto *stack = new std::vector<void *>;
  return *stack;
}
bool hasContext() { return !contextStack().empty(); }

struct Allocation {
  CUdeviceptr base;
  size_t bytes;
  bool managed;
  /// Device memory: the driver's writable view of the PROT_NONE pages at
  /// `base` (null for managed memory, which is plain host memory).
  void *view;
  size_t mapped;
};
/// Live allocations, for the live byte count and pointer attributes.
std::vector<Allocation> &allocations = *new std::vector<Allocation>;

/// Pages the host cannot touch at the returned address, and `view`, a
/// writable mapping of the same pages for the driver's copies.
void *mapDevice(size_t bytes, size_t &mapped, void *&view) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  mapped = (bytes + page - 1) / page * page;
  int fd = memfd_create("fake-cuda-device", 0);
  if (fd < 0)
    return nullptr;
  void *device = MAP_FAILED;
  view = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(mapped)) == 0) {
    view = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    device = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED, fd, 0);
  }
  close(fd);
  if (view == MAP_FAILED || device == MAP_FAILED) {
    if (view != MAP_FAILED)
      munmap(view, mapped);
    if (device != MAP_FAILED)
      munmap(device, mapped);
    return nullptr;
  }
  return device;
}

CUresult allocate(CUdeviceptr *ptr, size_t bytes, const char *kind,
                  bool managed) {
  if (!hasContext())
    return kInvalidContext;
  if (!bytes)
    return 1;
  if (const char *limit = std::getenv("FP8_FAKE_CUDA_MEMORY");
      limit && live.bytes + bytes > std::strtoull(limit, nullptr, 10))
    return 2;
  Allocation allocation{0, bytes, managed, nullptr, 0};
  void *memory = managed ? std::calloc(1, bytes)
                         : mapDevice(bytes, allocation.mapped,
                                     allocation.view);
  if (!memory)
    return 2;
  *ptr = allocation.base = reinterpret_cast<CUdeviceptr>(memory);
  allocations.push_back(allocation);
  ++live.allocations;
  live.bytes += bytes;
  trace("%s %zu bytes", kind, bytes);
  return 0;
}

const Allocation *find(CUdeviceptr ptr) {
  for (const Allocation &allocation : allocations)
    if (ptr >= allocation.base && ptr < allocation.base + allocation.bytes)
      return &allocation;
  return nullptr;
}

/// Where the driver itself reads and writes `ptr`: through the writable
/// view for device memory, at `ptr` for everything else.
void *driverView(CUdeviceptr ptr) {
  if (const Allocation *allocation = find(ptr); allocation && allocation->view)
    return static_cast<char *>(allocation->view) + (ptr - allocation->base);
  return reinterpret_cast<void *>(ptr);
}
} // namespace

/// How often `call` was made (for tests that load this library).
extern "C" __attribute__((visibility("default"))) long
fakeCudaCount(const char *call) {
  std::lock_guard<std::mutex> lock(countsMutex);
  auto it = counts().find(call);
  return it == counts().end() ? 0 : it->second;
}

FAKE cuInit(unsigned) { return 0; }
FAKE cuGetErrorName(CUresult code, const char **name) {
  *name = code == 500   ? "CUDA_ERROR_NOT_FOUND"
          : code == 2   ? "CUDA_ERROR_OUT_OF_MEMORY"
          : code == 201 ? "CUDA_ERROR_INVALID_CONTEXT"
                        : "CUDA_ERROR_INVALID_VALUE";
  return 0;
}
FAKE cuGetErrorString(CUresult code, const char **text) {
  *text = code == 500   ? "named symbol not found"
          : code == 2   ? "out of memory"
          : code == 201 ? "invalid device context"
                        : "invalid argument";
  return 0;
}
FAKE cuDeviceGetCount(int *count) {
  *count = 1;
  return 0;
}
FAKE cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return 0;
}
FAKE cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "Fake GPU");
  return 0;
}
FAKE cuDeviceGetAttribute(int *value, int attribute, int) {
  // 75/76: compute capability major/minor; 16: multiprocessors; 89:
  // concurrent managed access.
  const char *noConcurrent = std::getenv("FP8_FAKE_CUDA_NO_CONCURRENT_MANAGED");
  *value = attribute == 75   ? 9
           : attribute == 16 ? 132
           : attribute == 89 ? !(noConcurrent && *noConcurrent &&
                                 *noConcurrent != '0')
                             : 0;
  return 0;
}
FAKE cuDevicePrimaryCtxRetain(void **context, int) {
  static int dummy;
  *context = &dummy;
  return 0;
}
FAKE cuDevicePrimaryCtxRelease_v2(int) { return 0; }
FAKE cuCtxSetCurrent(void *context) {
  countCall("cuCtxSetCurrent");
  std::vector<void *> &contexts = contextStack();
  // Replaces the top of the stack; null pops it.
  if (!context) {
    if (!contexts.empty())
      contexts.pop_back();
  } else if (contexts.empty()) {
    contexts.push_back(context);
  } else {
    contexts.back() = context;
  }
  return 0;
}
FAKE cuCtxPushCurrent_v2(void *context) {
  countCall("cuCtxPushCurrent");
  std::vector<void *> &contexts = contextStack();
  if (!context)
    return kInvalidContext;
  contexts.push_back(context);
  return 0;
}
FAKE cuCtxPopCurrent_v2(void **context) {
  countCall("cuCtxPopCurrent");
  std::vector<void *> &contexts = contextStack();
  if (contexts.empty())
    return kInvalidContext;
  if (context)
    *context = contexts.back();
  contexts.pop_back();
  return 0;
}
FAKE cuCtxGetCurrent(void **context) {
  std::vector<void *> &contexts = contextStack();
  *context = contexts.empty() ? nullptr : contexts.back();
  return 0;
}
FAKE cuCtxSynchronize() { return 0; }
FAKE cuModuleLoadDataEx(void **module, const void *image, unsigned, int *,
                        void **) {
  if (!hasContext())
    return kInvalidContext;
  const char *text = static_cast<const char *>(image);
  if (!std::strstr(text, ".entry"))
    return 1;
  *module = new Module{text, {}};
  ++live.modules;
  trace("load module (%zu bytes of PTX)", std::strlen(text));
  return 0;
}
namespace {
/// Functions of unloaded modules, whose handles the next lookups reuse.
std::vector<std::unique_ptr<Function>> &unloadedFunctions =
    *new std::vector<std::unique_ptr<Function>>;
} // namespace

FAKE cuModuleUnload(void *module) {
  auto *unloaded = static_cast<Module *>(module);
  for (auto &function : unloaded->functions)
    unloadedFunctions.push_back(std::move(function));
  delete unloaded;
  --live.modules;
  trace("unload module");
  return 0;
}
FAKE cuModuleGetFunction(void **function, void *module, const char *name) {
  const std::string &image = static_cast<Module *>(module)->image;
  std::string entry = std::string(".entry ") + name + "(";
  size_t at = image.find(entry);
  if (at == std::string::npos)
    return 500;
  auto &functions = static_cast<Module *>(module)->functions;
  Function fresh{name, parseParams(image, at)};
  if (unloadedFunctions.empty()) {
    functions.push_back(std::make_unique<Function>(std::move(fresh)));
  } else {
    // The handle of a function of an unloaded module, with nothing of it
    // (its attributes are the defaults again).
    functions.push_back(std::move(unloadedFunctions.back()));
    unloadedFunctions.pop_back();
    *functions.back() = std::move(fresh);
  }
  *function = functions.back().get();
  return 0;
}
FAKE cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  return allocate(ptr, bytes, "alloc", /*managed=*/false);
}
FAKE cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned) {
  return allocate(ptr, bytes, "alloc managed", /*managed=*/true);
}
namespace {
CUresult release(CUdeviceptr ptr, const char *kind) {
  for (auto it = allocations.begin(); it != allocations.end(); ++it) {
    if (it->base != ptr)
      continue;
    if (it->view) {
      munmap(it->view, it->mapped);
      munmap(reinterpret_cast<void *>(ptr), it->mapped);
    } else {
      std::free(reinterpret_cast<void *>(ptr));
    }
    --live.allocations;
    live.bytes -= it->bytes;
    trace("%s %zu bytes", kind, it->bytes);
    allocations.erase(it);
    return 0;
  }
  return 1;
}
} // namespace

FAKE cuMemFree_v2(CUdeviceptr ptr) { return release(ptr, "free"); }
// Stream-ordered allocation: everything here runs at once, so a free in
// stream order is a free (the trace tells them apart). FP8_FAKE_CUDA_NO_POOL
// plays a driver without it.
FAKE cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, void *) {
  return allocate(ptr, bytes, "alloc async", /*managed=*/false);
}
FAKE cuMemFreeAsync(CUdeviceptr ptr, void *) {
  return release(ptr, "free async");
}
FAKE cuDeviceGetMemPool(void **pool, int) {
  static int dummy;
  *pool = &dummy;
  return std::getenv("FP8_FAKE_CUDA_NO_POOL") ? 801 : 0;
}
FAKE cuMemPoolTrimTo(void *, size_t keep) {
  trace("mempool trim to %zu", keep);
  return 0;
}
FAKE cuMemPoolSetAttribute(void *, int attribute, void *value) {
  trace("mempool attribute %d = %llu", attribute,
        *static_cast<unsigned long long *>(value));
  return 0;
}
FAKE cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  std::memcpy(driverView(dst), src, bytes);
  return 0;
}
FAKE cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  std::memcpy(dst, driverView(src), bytes);
  return 0;
}
FAKE cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                          void *) {
  std::memcpy(driverView(dst), driverView(src), bytes);
  return 0;
}
FAKE cuMemsetD32_v2(CUdeviceptr dst, unsigned value, size_t count) {
  if (!dst)
    return 1;
  auto *words = static_cast<uint32_t *>(driverView(dst));
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return 0;
}
FAKE cuFuncGetParamInfo(void *function, size_t index, size_t *offset,
                        size_t *size) {
  const std::vector<size_t> &params = static_cast<Function *>(function)->params;
  if (index >= params.size())
    return 1; // CUDA_ERROR_INVALID_VALUE, as the driver
  // Each parameter aligned to its size, up to 8 bytes (a tensor map's
  // declared 64 is not modelled: nothing reads the offsets).
  auto align = [](size_t bytes) -> size_t { return bytes >= 8 ? 8 : bytes; };
  size_t at = 0;
  for (size_t i = 0; i <= index; ++i) {
    at = (at + align(params[i]) - 1) / align(params[i]) * align(params[i]);
    if (i < index)
      at += params[i];
  }
  *offset = at;
  *size = params[index];
  return 0;
}
FAKE cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz, unsigned smem,
                    void *, void **params, void **) {
  if (!hasContext())
    return kInvalidContext;
  // As the driver: an empty grid or block, or more dynamic shared memory
  // than the function is allowed, is CUDA_ERROR_INVALID_VALUE.
  if (!params || !gx || !gy || !gz || !bx || !by || !bz ||
      smem > static_cast<Function *>(function)->maxDynamicShared)
    return 1;
  auto *f = static_cast<Function *>(function);
  std::fprintf(stderr,
               "fake-cuda: launch %s grid %u,%u,%u block %u,%u,%u smem %u\n",
               f->name.c_str(), gx, gy, gz, bx, by, bz, smem);
  // FP8_FAKE_CUDA_PARAMS=1: the scalar parameters as integers (4 bytes
  // as i32, 8 bytes as i64: pointers and strides), tensor maps as `map`.
  if (const char *value = std::getenv("FP8_FAKE_CUDA_PARAMS");
      value && *value && *value != '0') {
    std::fprintf(stderr, "fake-cuda: params");
    for (size_t i = 0; i < f->params.size(); ++i) {
      if (f->params[i] == 4) {
        int32_t x;
        std::memcpy(&x, params[i], 4);
        std::fprintf(stderr, " %d", x);
      } else if (f->params[i] == 8) {
        int64_t x;
        std::memcpy(&x, params[i], 8);
        std::fprintf(stderr, " %lld", static_cast<long long>(x));
      } else {
        std::fprintf(stderr, " map");
      }
    }
    std::fprintf(stderr, "\n");
  }
  return 0;
}
FAKE cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *) {
  if (!dst || !src)
    return 1;
  std::memcpy(driverView(dst), driverView(src), bytes);
  trace("copy %zu bytes", bytes);
  return 0;
}
FAKE cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count, void *) {
  trace("memset %zu words", count);
  return cuMemsetD32_v2(dst, value, count);
}
FAKE cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                      void *) {
  if (!dst)
    return 1;
  auto *halves = static_cast<uint16_t *>(driverView(dst));
  for (size_t i = 0; i < count; ++i)
    halves[i] = value;
  trace("memset %zu halves", count);
  return 0;
}
FAKE cuStreamCreate(void **stream, unsigned) {
  if (!hasContext())
    return kInvalidContext;
  static int dummy;
  *stream = &dummy;
  ++live.streams;
  trace("stream create");
  return 0;
}
FAKE cuStreamDestroy_v2(void *) {
  --live.streams;
  trace("stream destroy");
  return 0;
}
FAKE cuStreamSynchronize(void *) {
  countCall("cuStreamSynchronize");
  trace("stream synchronize");
  return 0;
}
FAKE cuStreamWaitEvent(void *, void *, unsigned) { return 0; }
FAKE cuFuncSetAttribute(void *function, int attribute, int value) {
  countCall("cuFuncSetAttribute");
  if (attribute == 8)
    static_cast<Function *>(function)->maxDynamicShared =
        static_cast<unsigned>(value);
  trace("set %s attribute %d to %d",
        static_cast<Function *>(function)->name.c_str(), attribute, value);
  return 0;
}
/// A recognizable map: the words are the base address, the dimensions,
/// the row pitch and the box (and the trace says them).
FAKE cuTensorMapEncodeTiled(void *map, int type, uint32_t rank, void *base,
                            const uint64_t *dims, const uint64_t *strides,
                            const uint32_t *box, const uint32_t *, int,
                            int swizzle, int, int) {
  if (rank != 3 || !base || strides[0] % 16 != 0)
    return 1;
  uint64_t words[16] = {reinterpret_cast<uint64_t>(base), dims[0], dims[1],
                        dims[2], strides[0], box[0], box[1]};
  std::memcpy(map, words, sizeof(words));
  trace("tensor map type %d dims %llu,%llu,%llu pitch %llu box %u,%u "
        "swizzle %d",
        type, (unsigned long long)dims[0], (unsigned long long)dims[1],
        (unsigned long long)dims[2], (unsigned long long)strides[0], box[0],
        box[1], swizzle);
  return 0;
}
/// IS_MANAGED (8) and MEMORY_TYPE (2: CU_MEMORYTYPE_DEVICE, 2, for device
/// and managed memory alike) of the driver's allocations; anything else is
/// not the driver's (CUDA_ERROR_INVALID_VALUE).
FAKE cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
  const Allocation *allocation = find(ptr);
  if (!allocation || (attribute != 8 && attribute != 2))
    return 1;
  unsigned value = attribute == 8 ? allocation->managed : 2;
  std::memcpy(data, &value, sizeof(value));
  return 0;
}
FAKE cuEventCreate(void **event, unsigned) {
  static int dummy;
  *event = &dummy;
  return 0;
}
FAKE cuEventDestroy_v2(void *) { return 0; }
FAKE cuEventRecord(void *, void *) { return 0; }
FAKE cuEventSynchronize(void *) {
  countCall("cuEventSynchronize");
  return 0;
}
FAKE cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0;
  return 0;
}
