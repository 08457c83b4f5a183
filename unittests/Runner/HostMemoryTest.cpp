//===- HostMemoryTest.cpp - The allocator policy of the JIT tools ---------===//
//
// retainFreedHostMemory() is process-wide, so it has a test binary of its
// own. glibc's mallinfo2 says where a buffer came from: mapped bytes
// (hblkhd) or the heap (arena), and whether a free trimmed the heap. With
// glibc's defaults the first buffer below is mapped (its 128 KiB threshold
// has not moved in a fresh process) and the heap is trimmed after frees.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/HostMemory.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace mlir::fp8::runner;

namespace {

#if defined(__GLIBC__)
/// Keeps the compiler from folding a malloc / free pair away.
void escape(void *pointer) { asm volatile("" : : "r"(pointer) : "memory"); }

TEST(HostMemory, FreedBuffersStayInTheHeap) {
  if (!retainFreedHostMemory())
    GTEST_SKIP() << "the allocator takes no policy (a sanitizer's malloc)";

  constexpr std::size_t kBelow = kRetainedBufferLimit - 4096;
  struct mallinfo2 before = mallinfo2();
  char *buffer = static_cast<char *>(std::malloc(kBelow));
  ASSERT_NE(buffer, nullptr);
  std::memset(buffer, 1, kBelow);
  escape(buffer);
  struct mallinfo2 allocated = mallinfo2();
  // From the heap, not a new mapping.
  EXPECT_EQ(allocated.hblkhd, before.hblkhd);
  EXPECT_GE(allocated.arena, before.arena + kBelow);

  std::free(buffer);
  struct mallinfo2 freed = mallinfo2();
  // Not trimmed: the heap keeps its size and the buffer's bytes as free
  // space, which the next call's buffer of the same size reuses.
  EXPECT_EQ(freed.arena, allocated.arena);
  EXPECT_GE(freed.fordblks, kBelow);
  char *again = static_cast<char *>(std::malloc(kBelow));
  escape(again);
  EXPECT_EQ(mallinfo2().arena, allocated.arena);
  std::free(again);

  // Beyond the limit a buffer the heap's free top cannot hold is mapped, as
  // before.
  constexpr std::size_t kBeyond = 4 * kRetainedBufferLimit;
  char *large = static_cast<char *>(std::malloc(kBeyond));
  ASSERT_NE(large, nullptr);
  escape(large);
  EXPECT_GE(mallinfo2().hblkhd, before.hblkhd + kBeyond);
  std::free(large);
}
#endif

} // namespace
