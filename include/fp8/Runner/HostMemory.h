//===- HostMemory.h - The host allocator's policy for JIT runs --*- C++ -*-===//
//
// The programs fp8-run, fp8-train and fp8-tune compile allocate and free the
// same buffers on every call of a step. glibc's malloc maps the large ones
// afresh (mmap above its threshold) and trims the heap top after a free, so
// every call pays page faults on pages the kernel zeroes again: on the parity
// study's small training step, a fifth of the step's time at two threads and
// 4-9 times the page faults (bench/train-step-time.sh, docs/cpu-codegen.md).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_HOSTMEMORY_H
#define FP8_RUNNER_HOSTMEMORY_H

#include <cstddef>

namespace mlir::fp8::runner {

/// The largest buffer the policy below keeps in the heap: glibc's ceiling for
/// its mmap threshold on 64-bit hosts. Larger buffers are still mapped per
/// call; their page faults are small beside the work done on them.
constexpr std::size_t kRetainedBufferLimit = std::size_t(32) << 20;

/// Keeps freed host memory for the next call instead of returning it to the
/// kernel: buffers up to kRetainedBufferLimit come from the heap, and the heap
/// is not trimmed, so a process's resident size stays at its high-water mark
/// (which a repeated step reaches on its first call anyway). It is a policy
/// of the whole process, so tools choose it at startup; a library that links
/// the runner leaves its host's allocator alone. Returns false, changing
/// nothing, where the C library offers no such control (not glibc).
bool retainFreedHostMemory();

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_HOSTMEMORY_H
