//===- FakeCudaDriver.cpp - A CUDA driver API over host memory ------------===//
//
// Loaded by CudaRuntime through FP8_CUDA_DRIVER in tests on machines without
// a GPU: "device" memory is host memory (calloc), copies and memsets are
// real, modules must be PTX text, cuModuleGetFunction finds `.entry NAME`
// in it, and cuLaunchKernel runs nothing: it prints the launch to stderr
// ("fake-cuda: launch NAME grid X,Y,Z block X,Y,Z smem N"). So the host
// program fp8-run interprets is checked end to end, and outputs that only
// kernels write come back as zeros.
//
// FP8_FAKE_CUDA_TRACE=1 also prints every module load, allocation, free,
// copy, stream and event call, and at exit how many allocations, modules
// and streams are still live. FP8_FAKE_CUDA_MEMORY=N makes allocations
// fail with CUDA_ERROR_OUT_OF_MEMORY once more than N bytes are live.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using CUresult = int;
using CUdeviceptr = unsigned long long;

namespace {
struct Function {
  std::string name;
  /// Bytes of each parameter, from the PTX `.entry` (cuFuncGetParamInfo).
  std::vector<size_t> params;
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

/// Allocation sizes, for the live byte count.
std::vector<std::pair<CUdeviceptr, size_t>> allocations;

CUresult allocate(CUdeviceptr *ptr, size_t bytes, const char *kind) {
  if (!bytes)
    return 1;
  if (const char *limit = std::getenv("FP8_FAKE_CUDA_MEMORY");
      limit && live.bytes + bytes > std::strtoull(limit, nullptr, 10))
    return 2;
  *ptr = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytes));
  allocations.push_back({*ptr, bytes});
  ++live.allocations;
  live.bytes += bytes;
  trace("%s %zu bytes", kind, bytes);
  return 0;
}
} // namespace

FAKE cuInit(unsigned) { return 0; }
FAKE cuGetErrorName(CUresult code, const char **name) {
  *name = code == 500 ? "CUDA_ERROR_NOT_FOUND"
          : code == 2 ? "CUDA_ERROR_OUT_OF_MEMORY"
                      : "CUDA_ERROR_INVALID_VALUE";
  return 0;
}
FAKE cuGetErrorString(CUresult code, const char **text) {
  *text = code == 500 ? "named symbol not found"
          : code == 2 ? "out of memory"
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
  // 75/76: compute capability major/minor; 16: multiprocessors.
  *value = attribute == 75 ? 9 : attribute == 16 ? 132 : 0;
  return 0;
}
FAKE cuDevicePrimaryCtxRetain(void **context, int) {
  static int dummy;
  *context = &dummy;
  return 0;
}
FAKE cuDevicePrimaryCtxRelease_v2(int) { return 0; }
FAKE cuCtxSetCurrent(void *) { return 0; }
FAKE cuCtxSynchronize() { return 0; }
FAKE cuModuleLoadDataEx(void **module, const void *image, unsigned, int *,
                        void **) {
  const char *text = static_cast<const char *>(image);
  if (!std::strstr(text, ".entry"))
    return 1;
  *module = new Module{text, {}};
  ++live.modules;
  trace("load module (%zu bytes of PTX)", std::strlen(text));
  return 0;
}
FAKE cuModuleUnload(void *module) {
  delete static_cast<Module *>(module);
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
  functions.push_back(
      std::make_unique<Function>(Function{name, parseParams(image, at)}));
  *function = functions.back().get();
  return 0;
}
FAKE cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  return allocate(ptr, bytes, "alloc");
}
FAKE cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned) {
  return allocate(ptr, bytes, "alloc managed");
}
namespace {
CUresult release(CUdeviceptr ptr, const char *kind) {
  for (auto it = allocations.begin(); it != allocations.end(); ++it) {
    if (it->first != ptr)
      continue;
    std::free(reinterpret_cast<void *>(ptr));
    --live.allocations;
    live.bytes -= it->second;
    trace("%s %zu bytes", kind, it->second);
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
  return allocate(ptr, bytes, "alloc async");
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
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return 0;
}
FAKE cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return 0;
}
FAKE cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                          void *) {
  std::memcpy(reinterpret_cast<void *>(dst),
              reinterpret_cast<const void *>(src), bytes);
  return 0;
}
FAKE cuMemsetD32_v2(CUdeviceptr dst, unsigned value, size_t count) {
  if (!dst)
    return 1;
  auto *words = reinterpret_cast<uint32_t *>(dst);
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
  // As the driver: an empty grid or block is CUDA_ERROR_INVALID_VALUE.
  if (!params || !gx || !gy || !gz || !bx || !by || !bz)
    return 1;
  std::fprintf(stderr,
               "fake-cuda: launch %s grid %u,%u,%u block %u,%u,%u smem %u\n",
               static_cast<Function *>(function)->name.c_str(), gx, gy, gz,
               bx, by, bz, smem);
  return 0;
}
FAKE cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, void *) {
  if (!dst || !src)
    return 1;
  std::memcpy(reinterpret_cast<void *>(dst),
              reinterpret_cast<const void *>(src), bytes);
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
  auto *halves = reinterpret_cast<uint16_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    halves[i] = value;
  trace("memset %zu halves", count);
  return 0;
}
FAKE cuStreamCreate(void **stream, unsigned) {
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
  trace("stream synchronize");
  return 0;
}
FAKE cuStreamWaitEvent(void *, void *, unsigned) { return 0; }
FAKE cuFuncSetAttribute(void *function, int attribute, int value) {
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
/// Every allocation is "managed" (IS_MANAGED, 8); anything else is not the
/// driver's.
FAKE cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
  for (auto [base, bytes] : allocations)
    if (ptr >= base && ptr < base + bytes) {
      unsigned value = attribute == 8 ? 1 : 0;
      std::memcpy(data, &value, sizeof(value));
      return 0;
    }
  return 1;
}
FAKE cuEventCreate(void **event, unsigned) {
  static int dummy;
  *event = &dummy;
  return 0;
}
FAKE cuEventDestroy_v2(void *) { return 0; }
FAKE cuEventRecord(void *, void *) { return 0; }
FAKE cuEventSynchronize(void *) { return 0; }
FAKE cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0;
  return 0;
}
