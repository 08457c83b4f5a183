//===- mx_rounding.cpp - MX scale exponents rounded up or down ------------===//
//
// OCP's MX spec derives a block's shared exponent by rounding down,
// X = 2^(floor(log2(amax)) - emax_elem), so a block's largest elements can
// exceed the element format and saturate; Transformer Engine rounds up
// (X = 2^ceil(log2(amax / fp8_max)), what fp8.compute_block_scales does), so
// nothing saturates (arXiv 2506.08027: rounding down made training diverge).
// This measures both on 1x32 E4M3 blocks, with the numerics library's
// saturating cast: the SQNR of the cast tensor and of a GEMM on cast
// operands against double precision, and how much saturates.
//
//   fp8-mx-rounding     (prints a markdown table)
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using namespace mlir::fp8::numerics;

namespace {

constexpr int kBlock = 32;
constexpr int kEmaxE4M3 = 8; // 448 = 1.75 * 2^8

enum class Rounding { Up, Down };

struct Cast {
  std::vector<double> values;
  long saturated = 0;
};

/// Quantizes rows of `cols` elements in 1x32 blocks and dequantizes them.
Cast castMX(const std::vector<float> &x, int cols, Rounding rounding) {
  Cast cast;
  cast.values.resize(x.size());
  for (size_t start = 0; start < x.size(); start += kBlock) {
    size_t end = std::min(x.size(), start + kBlock);
    float amax = computeAmax(x.data() + start, end - start);
    float multiplier, scaleInv;
    if (rounding == Rounding::Up) {
      uint8_t code = computeMXScaleInvCode(amax, 448.0f);
      multiplier = mxScaleFromCode(code);
      scaleInv = e8m0ToF32(code);
    } else {
      int exponent = amax > 0 ? std::ilogb(amax) - kEmaxE4M3 : -127;
      exponent = std::max(-127, std::min(127, exponent));
      multiplier = std::ldexp(1.0f, -exponent);
      scaleInv = std::ldexp(1.0f, exponent);
    }
    for (size_t i = start; i < end; ++i) {
      float scaled = x[i] * multiplier;
      cast.saturated += std::fabs(scaled) > 464.0f; // rounds past 448
      uint8_t code = fromF32(scaled, Format::E4M3FN, Overflow::SatFinite);
      cast.values[i] = double(toF32(code, Format::E4M3FN)) * double(scaleInv);
    }
  }
  (void)cols;
  return cast;
}

double sqnr(const std::vector<double> &ref, const std::vector<double> &out) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    signal += ref[i] * ref[i];
    noise += (ref[i] - out[i]) * (ref[i] - out[i]);
  }
  return 10 * std::log10(signal / noise);
}

/// y[m, n] = sum_k x[m, k] w[n, k] in double.
std::vector<double> gemm(const std::vector<double> &x,
                         const std::vector<double> &w, int m, int n, int k) {
  std::vector<double> y(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += x[size_t(i) * k + p] * w[size_t(j) * k + p];
      y[size_t(i) * n + j] = sum;
    }
  return y;
}

} // namespace

int main() {
  const int m = 256, n = 1024, k = 2048;
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> normal(0, 1);
  std::vector<float> w(size_t(n) * k);
  for (float &v : w)
    v = float(normal(rng) / std::sqrt(double(k)));

  std::printf("| activations | rounding | cast SQNR (dB) | saturated | GEMM SQNR (dB) |\n");
  std::printf("|---|---|---|---|---|\n");
  for (bool outliers : {false, true}) {
    std::vector<float> x(size_t(m) * k);
    for (float &v : x)
      v = float(normal(rng));
    if (outliers) // 0.1% of the channels x100
      for (int c = 0; c < k / 1000; ++c) {
        int column = int(rng() % k);
        for (int r = 0; r < m; ++r)
          x[size_t(r) * k + column] *= 100.0f;
      }
    std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
    std::vector<double> reference = gemm(xd, wd, m, n, k);
    for (Rounding rounding : {Rounding::Up, Rounding::Down}) {
      Cast xq = castMX(x, k, rounding), wq = castMX(w, k, rounding);
      std::printf("| %s | %s | %.2f | %.2f%% | %.2f |\n",
                  outliers ? "N(0,1), 0.1% channels x100" : "N(0,1)",
                  rounding == Rounding::Up ? "up (TE)" : "down (OCP)",
                  sqnr(xd, xq.values), 100.0 * xq.saturated / double(x.size()),
                  sqnr(reference, gemm(xq.values, wq.values, m, n, k)));
    }
  }
  return 0;
}
