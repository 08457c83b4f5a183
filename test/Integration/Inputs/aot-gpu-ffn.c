/* Calls llama-ffn-block.mlir compiled by fp8-compile --target=cuda on host,
   managed and device memory (cuMemAlloc'd by the CUDA driver, as a CUDA
   program or a PyTorch tensor has it), reads one piece of its
   delayed-scaling state, sets it and reads it back, and frees everything;
   with the fake driver, fp8-compile-cuda.test checks the driver calls this
   makes. Prints the runtime's error status after each call. */
#include "libffn.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver API this program uses itself, as cuda.h declares it. */
typedef unsigned long long CUdeviceptr;
static int (*cuInit)(unsigned);
static int (*cuDeviceGet)(int *, int);
static int (*cuDevicePrimaryCtxRetain)(void **, int);
static int (*cuCtxSetCurrent)(void *);
static int (*cuCtxGetCurrent)(void **);
static int (*cuMemAlloc)(CUdeviceptr *, size_t);
static int (*cuMemFree)(CUdeviceptr);
static int (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);

/* The driver the runtime loads, with the device's primary context current
   on this thread (a CUDA program's state before it calls the library);
   null without one. */
static void *openDriver(void **context) {
  const char *path = getenv("FP8_CUDA_DRIVER");
  void *driver = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver)
    return NULL;
  *(void **)&cuInit = dlsym(driver, "cuInit");
  *(void **)&cuDeviceGet = dlsym(driver, "cuDeviceGet");
  *(void **)&cuDevicePrimaryCtxRetain =
      dlsym(driver, "cuDevicePrimaryCtxRetain");
  *(void **)&cuCtxSetCurrent = dlsym(driver, "cuCtxSetCurrent");
  *(void **)&cuCtxGetCurrent = dlsym(driver, "cuCtxGetCurrent");
  *(void **)&cuMemAlloc = dlsym(driver, "cuMemAlloc_v2");
  *(void **)&cuMemFree = dlsym(driver, "cuMemFree_v2");
  *(void **)&cuMemcpyHtoD = dlsym(driver, "cuMemcpyHtoD_v2");
  int device;
  if (!cuInit || !cuDeviceGet || !cuDevicePrimaryCtxRetain ||
      !cuCtxSetCurrent || !cuCtxGetCurrent || !cuMemAlloc || !cuMemFree ||
      !cuMemcpyHtoD || cuInit(0) || cuDeviceGet(&device, 0) ||
      cuDevicePrimaryCtxRetain(context, device) || cuCtxSetCurrent(*context))
    return NULL;
  return driver;
}

/* Device memory holding `bytes` of `host`. */
static void *onDevice(const void *host, size_t bytes) {
  CUdeviceptr ptr = 0;
  if (cuMemAlloc(&ptr, bytes) || cuMemcpyHtoD(ptr, host, bytes)) {
    printf("cannot place an argument in device memory\n");
    exit(1);
  }
  return (void *)(size_t)ptr;
}

/* The runtime library's allocation function (CUDA managed memory). */
void *_mlir_memref_to_llvm_alloc(size_t bytes);

static void report(const char *what) {
  const char *error = fp8GpuRuntimeError();
  printf("%s: %s\n", what, error ? error : "ok");
}

static uint16_t x[16 * 64], g[64], wg[128 * 64], wu[128 * 64], wd[64 * 128];

/* One call on device memory, which the host cannot read: the kernels use
   it where it is (only they and the driver touch these arguments). */
static int callOnDevice(void) {
  void *context = NULL, *current = NULL;
  if (!openDriver(&context)) {
    printf("no CUDA driver\n");
    return 1;
  }
  fprintf(stderr, "--- arguments in device memory\n");
  uint16_t *dx = onDevice(x, sizeof x), *dg = onDevice(g, sizeof g);
  uint16_t *dwg = onDevice(wg, sizeof wg), *dwu = onDevice(wu, sizeof wu);
  uint16_t *dwd = onDevice(wd, sizeof wd);
  fp8_memref_bf16_2d dxd = {dx, dx, 0, {16, 64}, {64, 1}};
  fp8_memref_bf16_1d dgd = {dg, dg, 0, {64}, {1}};
  fp8_memref_bf16_2d dwgd = {dwg, dwg, 0, {128, 64}, {64, 1}};
  fp8_memref_bf16_2d dwud = {dwu, dwu, 0, {128, 64}, {64, 1}};
  fp8_memref_bf16_2d dwdd = {dwd, dwd, 0, {64, 128}, {128, 1}};
  fp8_memref_bf16_2d out;
  _mlir_ciface_llama_ffn(&out, &dxd, &dgd, &dwgd, &dwud, &dwdd);
  report("call on device memory");
  fprintf(stderr, "--- done on device\n");
  printf("result %lld x %lld\n", (long long)out.sizes[0],
         (long long)out.sizes[1]);
  /* The caller's context is current again. */
  printf("context kept: %s\n",
         !cuCtxGetCurrent(&current) && current == context ? "yes" : "no");
  fp8GpuFree(out.allocated);
  cuMemFree((CUdeviceptr)(size_t)dx);
  cuMemFree((CUdeviceptr)(size_t)dg);
  cuMemFree((CUdeviceptr)(size_t)dwg);
  cuMemFree((CUdeviceptr)(size_t)dwu);
  cuMemFree((CUdeviceptr)(size_t)dwd);
  return 0;
}

/* `gpu-ffn`: host memory, managed memory, the state; `gpu-ffn device`: one
   call on device memory. */
int main(int argc, char **argv) {
  for (int i = 0; i < 16 * 64; ++i)
    x[i] = 0x3F80; /* 1.0 */
  for (int i = 0; i < 64; ++i)
    g[i] = 0x3F80;
  for (int i = 0; i < 128 * 64; ++i)
    wg[i] = wu[i] = wd[i] = 0x3E00; /* 0.125 */
  if (argc > 1 && !strcmp(argv[1], "device"))
    return callOnDevice();
  fp8_memref_bf16_2d xd = {x, x, 0, {16, 64}, {64, 1}};
  fp8_memref_bf16_1d gd = {g, g, 0, {64}, {1}};
  fp8_memref_bf16_2d wgd = {wg, wg, 0, {128, 64}, {64, 1}};
  fp8_memref_bf16_2d wud = {wu, wu, 0, {128, 64}, {64, 1}};
  fp8_memref_bf16_2d wdd = {wd, wd, 0, {64, 128}, {128, 1}};
  fp8_memref_bf16_2d out;
  _mlir_ciface_llama_ffn(&out, &xd, &gd, &wgd, &wud, &wdd);
  report("call");
  printf("result %lld x %lld\n", (long long)out.sizes[0],
         (long long)out.sizes[1]);
  fp8GpuFree(out.allocated);

  /* The same call on buffers the GPU can read where they are (managed
     memory from the runtime): the program uses them without copies. */
  fprintf(stderr, "--- arguments in managed memory\n");
  uint16_t *mx = _mlir_memref_to_llvm_alloc(sizeof x);
  uint16_t *mg = _mlir_memref_to_llvm_alloc(sizeof g);
  uint16_t *mwg = _mlir_memref_to_llvm_alloc(sizeof wg);
  uint16_t *mwu = _mlir_memref_to_llvm_alloc(sizeof wu);
  uint16_t *mwd = _mlir_memref_to_llvm_alloc(sizeof wd);
  memcpy(mx, x, sizeof x);
  memcpy(mg, g, sizeof g);
  memcpy(mwg, wg, sizeof wg);
  memcpy(mwu, wu, sizeof wu);
  memcpy(mwd, wd, sizeof wd);
  fp8_memref_bf16_2d mxd = {mx, mx, 0, {16, 64}, {64, 1}};
  fp8_memref_bf16_1d mgd = {mg, mg, 0, {64}, {1}};
  fp8_memref_bf16_2d mwgd = {mwg, mwg, 0, {128, 64}, {64, 1}};
  fp8_memref_bf16_2d mwud = {mwu, mwu, 0, {128, 64}, {64, 1}};
  fp8_memref_bf16_2d mwdd = {mwd, mwd, 0, {64, 128}, {128, 1}};
  _mlir_ciface_llama_ffn(&out, &mxd, &mgd, &mwgd, &mwud, &mwdd);
  report("call on managed memory");
  fprintf(stderr, "--- done\n");
  fp8GpuFree(out.allocated);
  fp8GpuFree(mx);
  fp8GpuFree(mg);
  fp8GpuFree(mwg);
  fp8GpuFree(mwu);
  fp8GpuFree(mwd);

  fp8_memref_f32_0d scale;
  _mlir_ciface_ffn_state_get_fp8_llama_ffn_arg2_scale(&scale);
  report("state");
  fp8GpuFree(scale.allocated);

  /* A checkpoint restored: the setter writes the copy the kernels use (on
     the device: a driver copy, no allocation), the getter reads it back. */
  fprintf(stderr, "--- state round trip\n");
  float half = 0.5f;
  fp8_memref_f32_0d restored = {&half, &half, 0};
  _mlir_ciface_ffn_state_set_fp8_llama_ffn_arg2_scale(&restored);
  _mlir_ciface_ffn_state_get_fp8_llama_ffn_arg2_scale(&scale);
  printf("state round trip: %g\n", *scale.aligned);
  fp8GpuFree(scale.allocated);
  fprintf(stderr, "--- exit\n");
  return 0;
}
