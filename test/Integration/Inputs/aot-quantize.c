/* Calls the functions of aot-quantize.mlir compiled by fp8-compile and
   prints what fp8-compile.test checks against hand-derived values. */
#include "libquant.h"

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  /* Scaled by 2: 1.0, -448, 2^-4, 500 (saturates), 2^-9 (the smallest
     subnormal), 0, 2/3 (rounds to 1.375 * 2^-1). */
  float x[] = {0.5f, -224.0f, 0.03125f, 250.0f, 0x1p-10f, 0.0f, 1.0f / 3};
  fp8_memref_f32_1d in = {x, x, 0, {7}, {1}};
  quantize_results out;
  _mlir_ciface_quantize(&out, &in, 2.0f);
  printf("quantize: %lld codes:", (long long)out.r0.sizes[0]);
  for (int64_t i = 0; i < out.r0.sizes[0]; ++i)
    printf(" %02x", out.r0.aligned[out.r0.offset + i]);
  printf(" amax %g\n", out.r1);
  free(out.r0.allocated);

  /* bf16 bit patterns: 1.5, -3.25, 0.5, -0.0, 2.0, 0.25 as a 2x3 tensor. */
  uint16_t b[] = {0x3FC0, 0xC050, 0x3F00, 0x8000, 0x4000, 0x3E80};
  fp8_memref_bf16_2d m = {b, b, 0, {2, 3}, {3, 1}};
  printf("amax: %g\n", _mlir_ciface_amax(&m));
  return 0;
}
