//===- HostMemory.cpp - The host allocator's policy for JIT runs ----------===//

#include "fp8/Runner/HostMemory.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

bool mlir::fp8::runner::retainFreedHostMemory() {
#if defined(__GLIBC__)
  // Setting either turns off glibc's own adjustment of both, which raises the
  // mmap threshold only after a mapped buffer is freed and keeps the trim
  // threshold at twice it: a step then still trims and regrows the heap. The
  // trim threshold alone would leave the mmap threshold at its 128 KiB start.
  static_assert(kRetainedBufferLimit <= INT_MAX);
  return mallopt(M_MMAP_THRESHOLD, static_cast<int>(kRetainedBufferLimit)) ==
             1 &&
         mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
#else
  return false;
#endif
}
