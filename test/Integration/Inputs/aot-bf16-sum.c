// Calls the library of aot-bf16-sum.mlir and prints its result.
#include <stdio.h>

#include "libsum.h"

int main(void) {
  printf("sum %g\n", (double)_mlir_ciface_sum300());
  return 0;
}
