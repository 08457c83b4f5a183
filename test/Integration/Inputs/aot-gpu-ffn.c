/* Calls llama-ffn-block.mlir compiled by fp8-compile --target=cuda twice,
   reads one piece of its delayed-scaling state, sets it and reads it back,
   and frees everything; with
   the fake driver, fp8-compile-cuda.test checks the driver calls this
   makes. Prints the runtime's error status after each call. */
#include "libffn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime library's allocation function (CUDA managed memory). */
void *_mlir_memref_to_llvm_alloc(size_t bytes);

static void report(const char *what) {
  const char *error = fp8GpuRuntimeError();
  printf("%s: %s\n", what, error ? error : "ok");
}

int main(void) {
  static uint16_t x[16 * 64], g[64], wg[128 * 64], wu[128 * 64], wd[64 * 128];
  for (int i = 0; i < 16 * 64; ++i)
    x[i] = 0x3F80; /* 1.0 */
  for (int i = 0; i < 64; ++i)
    g[i] = 0x3F80;
  for (int i = 0; i < 128 * 64; ++i)
    wg[i] = wu[i] = wd[i] = 0x3E00; /* 0.125 */
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
