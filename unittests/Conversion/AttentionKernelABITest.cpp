//===- AttentionKernelABITest.cpp - The flash attention's register algebra ===//
//
// The flash attention kernel hands P from the f32 accumulator of S = Q K^T
// to the A operand of P V in registers, with no shuffle: 16-bit P as it
// lies, E4M3 P with its keys permuted, V^T permuted to match
// (AttentionKernelABI.h: probabilityElement, valueKeyAt). Checked here
// against the fragment layouts as the PTX ISA defines them (wgmma
// m64nNk16 / k32 register fragments, as CUTLASS's CLayout_64xN,
// ALayout_64x16 and ALayout_64x32 spell them): every (row, key) of a
// consumer's 64 x 128 tile reaches the A position that V^T pairs with the
// same key, exactly once. Also the shared memory plan and the host's sizes.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/FP8ToNVVM/AttentionKernelABI.h"

#include "gtest/gtest.h"

#include <set>
#include <utility>

namespace aabi = mlir::fp8::attention_abi;
using aabi::Elem;

namespace {

struct Coord {
  int row, col;
};

/// f32 accumulator element i of warpgroup thread t (m64nN).
Coord accumulator(int t, int i) {
  int w = t / 32, l = t % 32;
  return {16 * w + l / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (l % 4) + i % 2};
}

/// 16-bit A element `half` (0 low) of register r (m64nNk16).
Coord a16(int t, int r, int half) {
  int w = t / 32, l = t % 32;
  return {16 * w + l / 4 + 8 * (r % 2), 8 * (r / 2) + 2 * (l % 4) + half};
}

/// 8-bit A byte `byte` (0 least significant) of register r (m64nNk32).
Coord a8(int t, int r, int byte) {
  int w = t / 32, l = t % 32;
  int i = 4 * r + byte;
  return {16 * w + l / 4 + 8 * ((i / 4) % 2), 16 * (i / 8) + 4 * (l % 4) + i % 4};
}

void checkTile(bool fp8) {
  int keysPerStep = fp8 ? 32 : 16, slots = fp8 ? 4 : 2;
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 128; ++t)
    for (int kk = 0; kk < aabi::kBlockN / keysPerStep; ++kk)
      for (int r = 0; r < 4; ++r)
        for (int slot = 0; slot < slots; ++slot) {
          int element = aabi::probabilityElement(fp8, kk, r, slot);
          ASSERT_GE(element, 0);
          ASSERT_LT(element, aabi::kBlockN / 2);
          Coord p = accumulator(t, element);
          Coord a = fp8 ? a8(t, r, slot) : a16(t, r, slot);
          // The A operand's row is P's row, and its column (a position of
          // V^T along the keys) holds P's key.
          EXPECT_EQ(a.row, p.row) << "thread " << t << " step " << kk;
          int position = kk * keysPerStep + a.col;
          EXPECT_EQ(aabi::valueKeyAt(position, fp8), p.col)
              << "thread " << t << " step " << kk << " register " << r
              << " slot " << slot;
          EXPECT_TRUE(seen.insert({p.row, p.col}).second);
        }
  EXPECT_EQ(seen.size(), size_t(64 * aabi::kBlockN));
}

TEST(AttentionKernelABI, SixteenBitProbabilitiesAreTheAFragment) {
  checkTile(/*fp8=*/false);
}

TEST(AttentionKernelABI, FP8ProbabilitiesMeetTheirPermutedKeys) {
  checkTile(/*fp8=*/true);
}

TEST(AttentionKernelABI, ValueKeysArePermutedWithinSixteen) {
  // FlashAttention-3's order: 0, 1, 8, 9, 2, 3, 10, 11, ...
  const int expected[16] = {0, 1, 8, 9, 2, 3, 10, 11,
                            4, 5, 12, 13, 6, 7, 14, 15};
  for (int p = 0; p < 16; ++p)
    EXPECT_EQ(aabi::valueKeyAt(p, true), expected[p]);
  for (int p = 0; p < 64; ++p) {
    EXPECT_EQ(aabi::valueKeyAt(p, true) / 16, p / 16);
    EXPECT_EQ(aabi::valueKeyAt(p, true) % 16, expected[p % 16]);
    EXPECT_EQ(aabi::valueKeyAt(p, false), p);
  }
}

TEST(AttentionKernelABI, SharedMemoryPlan) {
  // bf16, D = 128: 32 KiB of queries, 64 KiB of keys and values a stage:
  // 3 stages in 227 KiB; 1024 + 32768 + 3 * 65536 + (1 + 4 * 3) * 8.
  aabi::AttentionConfig c;
  c = aabi::selectStages(c);
  EXPECT_EQ(c.stages, 3);
  EXPECT_EQ(c.sharedBytes(), 1024 + 32768 + 3 * 65536 + 13 * 8);
  EXPECT_EQ(c.threads(), 384);
  EXPECT_EQ(c.name(), "flash_attention_bf16_bf16_bf16_d128_128x128_s3");
  // FP8: half the bytes, 4 stages (the cap).
  aabi::AttentionConfig f;
  f.qk = f.v = Elem::E4M3;
  f.causal = f.lse = true;
  f = aabi::selectStages(f);
  EXPECT_EQ(f.stages, 4);
  EXPECT_EQ(f.sharedBytes(), 1024 + 16384 + 4 * 32768 + 17 * 8);
  EXPECT_EQ(f.keyPanels(), 1);
  EXPECT_EQ(f.valuePanels(), 1);
  EXPECT_EQ(f.name(), "flash_attention_e4m3_e4m3_bf16_causal_lse_d128_128x128_s4");
  for (const aabi::AttentionConfig &config : {c, f})
    EXPECT_LE(config.sharedBytes(), mlir::fp8::gemm_abi::kMaxSharedBytes);
  // Every tile starts on the 1024-byte swizzle period.
  for (const aabi::AttentionConfig &config : {c, f}) {
    EXPECT_EQ(config.keyOffset() % 1024, 0);
    EXPECT_EQ(config.valueOffset() % 1024, 0);
    EXPECT_EQ(config.keyTileBytes() % 1024, 0);
    EXPECT_EQ(config.valueTileBytes() % 1024, 0);
  }
}

TEST(AttentionKernelABI, SupportedVariants) {
  EXPECT_TRUE(aabi::isSupported(Elem::BF16, Elem::BF16, Elem::BF16, 128));
  EXPECT_TRUE(aabi::isSupported(Elem::F16, Elem::F16, Elem::F32, 64));
  EXPECT_TRUE(aabi::isSupported(Elem::E4M3, Elem::BF16, Elem::BF16, 128));
  EXPECT_TRUE(aabi::isSupported(Elem::E5M2, Elem::E4M3, Elem::F16, 128));
  // Rows of whole 128-byte panels, at most two.
  EXPECT_FALSE(aabi::isSupported(Elem::BF16, Elem::BF16, Elem::BF16, 96));
  EXPECT_FALSE(aabi::isSupported(Elem::BF16, Elem::BF16, Elem::BF16, 256));
  EXPECT_FALSE(aabi::isSupported(Elem::E4M3, Elem::E4M3, Elem::BF16, 64));
  // Mixed 16-bit types, an FP8 value under 16-bit scores, f32 operands.
  EXPECT_FALSE(aabi::isSupported(Elem::BF16, Elem::F16, Elem::BF16, 128));
  EXPECT_FALSE(aabi::isSupported(Elem::BF16, Elem::E4M3, Elem::BF16, 128));
  EXPECT_FALSE(aabi::isSupported(Elem::F32, Elem::F32, Elem::F32, 128));
  EXPECT_FALSE(aabi::isSupported(Elem::BF16, Elem::BF16, Elem::E4M3, 128));
}

TEST(AttentionKernelABI, BackwardPlan) {
  // bf16, D = 128: K, V, K^T (16 KiB each) and dS (8 KiB), stages of Q,
  // dO, Q^T, dO^T (64 KiB): two in 227 KiB, 189480 bytes with the slack
  // and 1 + 2 x 2 mbarriers.
  aabi::AttentionGradConfig c;
  c.causal = true;
  c = aabi::selectGradStages(c);
  EXPECT_EQ(c.stages, 2);
  EXPECT_EQ(c.sharedBytes(), 1024 + 3 * 16384 + 8192 + 2 * 65536 + 5 * 8);
  EXPECT_EQ(c.threads(), 256);
  EXPECT_EQ(c.name(), "flash_attention_grad_bf16_causal_d128_64x64_s2");
  // D = 64: half the tiles, four stages (the cap).
  aabi::AttentionGradConfig f;
  f.type = Elem::F16;
  f.headDim = 64;
  f = aabi::selectGradStages(f);
  EXPECT_EQ(f.stages, 4);
  EXPECT_EQ(f.name(), "flash_attention_grad_f16_d64_64x64_s4");
  for (const aabi::AttentionGradConfig &config : {c, f}) {
    EXPECT_LE(config.sharedBytes(), mlir::fp8::gemm_abi::kMaxSharedBytes);
    EXPECT_EQ(config.gradScoresOffset() % 1024, 0);
    EXPECT_EQ(config.stageOffset() % 1024, 0);
    EXPECT_EQ(config.queryTileBytes() % 1024, 0);
  }
  EXPECT_TRUE(aabi::isGradSupported(Elem::BF16, 128));
  EXPECT_TRUE(aabi::isGradSupported(Elem::F16, 64));
  EXPECT_FALSE(aabi::isGradSupported(Elem::BF16, 96));
  EXPECT_FALSE(aabi::isGradSupported(Elem::E4M3, 128));
  EXPECT_FALSE(aabi::isGradSupported(Elem::F32, 128));
  EXPECT_EQ(aabi::gradGridSize(c, 1, 8, 4096), 8 * 64);
  EXPECT_EQ(aabi::gradGridSize(c, 1, 2, 200), 2 * 4);
}

TEST(AttentionKernelABI, HostSizes) {
  aabi::AttentionConfig c;
  EXPECT_EQ(aabi::gridSize(c, 1, 32, 4096), 32 * 32);
  EXPECT_EQ(aabi::gridSize(c, 2, 12, 130), 2 * 12 * 2);
  EXPECT_EQ(aabi::gridSize(c, 1, 4, 0), 0);
  EXPECT_EQ(aabi::valuePitch(200), 208);
  EXPECT_EQ(aabi::valuePitch(208), 208);
  EXPECT_EQ(aabi::valuePitch(0), 0);
}

} // namespace
