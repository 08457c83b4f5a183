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
//===----------------------------------------------------------------------===//

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
};
/// Functions live with their module, as the driver's do.
struct Module {
  std::string image;
  std::vector<std::unique_ptr<Function>> functions;
};
} // namespace

#define FAKE extern "C" __attribute__((visibility("default"))) CUresult

FAKE cuInit(unsigned) { return 0; }
FAKE cuGetErrorName(CUresult code, const char **name) {
  *name = code == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_INVALID_VALUE";
  return 0;
}
FAKE cuGetErrorString(CUresult code, const char **text) {
  *text = code == 500 ? "named symbol not found" : "invalid argument";
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
  *module = new Module{text};
  return 0;
}
FAKE cuModuleUnload(void *module) {
  delete static_cast<Module *>(module);
  return 0;
}
FAKE cuModuleGetFunction(void **function, void *module, const char *name) {
  const std::string &image = static_cast<Module *>(module)->image;
  std::string entry = std::string(".entry ") + name + "(";
  if (image.find(entry) == std::string::npos)
    return 500;
  auto &functions = static_cast<Module *>(module)->functions;
  functions.push_back(std::make_unique<Function>(Function{name}));
  *function = functions.back().get();
  return 0;
}
FAKE cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  if (!bytes)
    return 1;
  *ptr = reinterpret_cast<CUdeviceptr>(std::calloc(1, bytes));
  return 0;
}
FAKE cuMemFree_v2(CUdeviceptr ptr) {
  std::free(reinterpret_cast<void *>(ptr));
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
  auto *words = reinterpret_cast<uint32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    words[i] = value;
  return 0;
}
FAKE cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz, unsigned smem,
                    void *, void **params, void **) {
  if (!params)
    return 1;
  std::fprintf(stderr,
               "fake-cuda: launch %s grid %u,%u,%u block %u,%u,%u smem %u\n",
               static_cast<Function *>(function)->name.c_str(), gx, gy, gz,
               bx, by, bz, smem);
  return 0;
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
