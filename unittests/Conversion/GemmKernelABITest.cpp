//===- GemmKernelABITest.cpp - The GEMM kernels' shared-memory layout -----===//
//
// The `_tmastore` kernels stage their result tiles in shared memory for TMA
// stores through a SWIZZLE_128B tensor map (GemmKernelABI.h). Checked here
// against the swizzle as the PTX ISA defines it (the 16-byte chunk bits
// [4, 7) of an offset xor its 128-byte row bits [7, 10)), against the
// fragment layouts of wgmma's accumulator and of stmatrix, and for bank
// conflicts of the epilogue's shared stores, with a model of the shared
// memory written out here: 32 banks of 4 bytes, one 4-byte word per bank
// per wavefront.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace gabi = mlir::fp8::gemm_abi;
using gabi::Elem;

namespace {

/// SWIZZLE_128B on an offset within a 1024-byte aligned span.
int64_t swizzle128(int64_t offset) {
  return offset ^ (((offset >> 7) & 7) << 4);
}

/// Wavefronts one warp-wide shared access needs: each bank serves one
/// distinct 4-byte word per wavefront. Each entry is (offset, bytes).
int wavefronts(const std::vector<std::pair<int64_t, int>> &accesses) {
  std::map<int, std::set<int64_t>> words;
  for (auto [offset, bytes] : accesses)
    for (int64_t w = offset / 4; w < (offset + bytes) / 4; ++w)
      words[w % 32].insert(w);
  size_t most = 0;
  for (auto &[bank, set] : words)
    most = std::max(most, set.size());
  return int(most);
}

struct Case {
  Elem out;
  int blockN;
};
const Case kCases[] = {{Elem::BF16, 64},  {Elem::BF16, 128}, {Elem::BF16, 256},
                       {Elem::F16, 128},  {Elem::F32, 64},   {Elem::F32, 128}};

TEST(GemmKernelABI, StagedTileIsSwizzled128BytePanels) {
  for (Case c : kCases) {
    int bytes = gabi::bytes(c.out);
    int columns = 128 / bytes;
    EXPECT_EQ(gabi::stagedColumns(c.out), columns);
    std::set<int64_t> seen;
    for (int64_t row = 0; row < 64; ++row)
      for (int64_t col = 0; col < c.blockN; ++col) {
        int64_t offset = gabi::stagedByteOffset(row, col, c.out);
        // Panel col / columns, 64 x 128 bytes, swizzled as TMA reads it.
        int64_t expected =
            col / columns * 8192 + swizzle128(row * 128 + col % columns * bytes);
        ASSERT_EQ(offset, expected) << "row " << row << " col " << col;
        ASSERT_EQ(offset % bytes, 0);
        seen.insert(offset / bytes);
      }
    // A permutation of the tile's elements.
    EXPECT_EQ(int64_t(seen.size()), 64 * c.blockN);
    EXPECT_EQ(*seen.rbegin(), 64 * c.blockN - 1);
  }
}

TEST(GemmKernelABI, StagingStartsOnTheSwizzlePeriod) {
  for (Case c : kCases) {
    for (int blockM : {64, 128}) {
      gabi::GemmConfig config;
      config.out = c.out;
      config.tmaStore = true;
      config = gabi::selectTiles(config, blockM, c.blockN);
      EXPECT_EQ(config.stagingOffset() % 1024, 0);
      EXPECT_EQ(config.stagedTileBytes() % 1024, 0);
      EXPECT_EQ(config.barrierOffset(),
                config.stagingOffset() + config.consumers() * 64 *
                                             config.blockN *
                                             gabi::bytes(c.out));
      EXPECT_LE(config.sharedBytes(), gabi::kMaxSharedBytes);
    }
  }
}

// One stmatrix .m8n8.x4 of 16-bit results: lane L gives the address of row
// L % 8 of matrix q = L / 8, whose 8 elements (16 bytes) land there; the
// kernel's matrix q is column block j0 + q / 2, row half q % 2 of warp w.
TEST(GemmKernelABI, StmatrixStagingIsConflictFree) {
  for (Case c : kCases) {
    if (gabi::bytes(c.out) != 2)
      continue;
    for (int warp = 0; warp < 4; ++warp)
      for (int j0 = 0; j0 < c.blockN / 8; j0 += 2) {
        for (int q = 0; q < 4; ++q) {
          std::vector<std::pair<int64_t, int>> matrix, unswizzled;
          for (int r = 0; r < 8; ++r) {
            int64_t row = 16 * warp + 8 * (q % 2) + r;
            int64_t col = 8 * (j0 + q / 2);
            int64_t address = gabi::stagedByteOffset(row, col, c.out);
            // The matrix row's 8 elements are contiguous from there (the
            // fragment the thread holds, columns 2 (L % 4) and +1, too).
            for (int e = 0; e < 8; ++e)
              ASSERT_EQ(gabi::stagedByteOffset(row, col + e, c.out),
                        address + 2 * e);
            matrix.push_back({address, 16});
            unswizzled.push_back({(row * c.blockN + col) * 2, 16});
          }
          // Each matrix is one 128-byte wavefront; the row-major staging
          // this replaces (rows a multiple of 128 bytes apart) took 8.
          EXPECT_EQ(wavefronts(matrix), 1) << "warp " << warp << " j0 " << j0;
          EXPECT_EQ(wavefronts(unswizzled), 8);
        }
      }
  }
}

// f32 results: each lane stores its pair (columns 8j + 2 (L % 4), +1 of
// row 16w + 8h + L / 4) as one 8-byte store; 256 bytes per warp need 2
// wavefronts at least.
TEST(GemmKernelABI, PairStagingIsConflictFree) {
  for (Case c : kCases) {
    if (gabi::bytes(c.out) != 4)
      continue;
    for (int warp = 0; warp < 4; ++warp)
      for (int j = 0; j < c.blockN / 8; ++j)
        for (int h = 0; h < 2; ++h) {
          std::vector<std::pair<int64_t, int>> swizzled, unswizzled;
          for (int lane = 0; lane < 32; ++lane) {
            int64_t row = 16 * warp + 8 * h + lane / 4;
            int64_t col = 8 * j + 2 * (lane % 4);
            int64_t address = gabi::stagedByteOffset(row, col, c.out);
            ASSERT_EQ(gabi::stagedByteOffset(row, col + 1, c.out),
                      address + 4);
            swizzled.push_back({address, 8});
            unswizzled.push_back({(row * c.blockN + col) * 4, 8});
          }
          EXPECT_EQ(wavefronts(swizzled), 2);
          EXPECT_EQ(wavefronts(unswizzled), 8); // 4-way
        }
  }
}

} // namespace
