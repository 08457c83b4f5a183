//===- float8_sweep.cpp - Exhaustive f32 -> FP8 check and throughput ------===//
//
// Converts every f32 bit pattern (or every Nth with --stride N) to E4M3FN and
// E5M2 under both overflow policies, checks each result against a reference
// that shares no code with the library, and reports the converter's speed.
//
// APFloat is far too slow for 4 * 2^32 conversions, so the reference is a
// table built from it: the 256 codes of each format are decoded with APFloat,
// the exact midpoints between consecutive positive finite values (plus the one
// between the largest finite value and the next value the exponent range would
// have) are computed in double, where they are exact, and each input is
// classified by binary search, ties going to the even code. Inputs beyond the
// last midpoint overflow, and NaN inputs are converted by APFloat itself. The
// table is validated against APFloat on a stride before the sweep.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Float8.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mlir::fp8::numerics;
using llvm::APFloat;
using llvm::APInt;

namespace {

constexpr Format kFormats[] = {Format::E4M3FN, Format::E5M2};
constexpr Overflow kPolicies[] = {Overflow::NonSaturating, Overflow::SatFinite};
constexpr uint64_t kAllInputs = uint64_t(1) << 32;
constexpr size_t kChunk = size_t(1) << 16;

const llvm::fltSemantics &semantics(Format format) {
  return format == Format::E4M3FN ? APFloat::Float8E4M3FN()
                                  : APFloat::Float8E5M2();
}

const char *policyName(Overflow overflow) {
  return overflow == Overflow::SatFinite ? "SatFinite" : "NonSaturating";
}

uint8_t apfloatConvert(uint32_t bits, Format format) {
  APFloat value(APFloat::IEEEsingle(), APInt(32, bits));
  bool losesInfo;
  value.convert(semantics(format), APFloat::rmNearestTiesToEven, &losesInfo);
  return uint8_t(value.bitcastToAPInt().getZExtValue());
}

/// The midpoint-table reference for one format.
class Reference {
public:
  explicit Reference(Format format) : format(format) {
    const llvm::fltSemantics &sem = semantics(format);
    maxCode = uint8_t(APFloat::getLargest(sem).bitcastToAPInt().getZExtValue());
    std::vector<double> values;
    for (unsigned code = 0; code <= maxCode; ++code) {
      APFloat value(sem, APInt(8, code));
      if (!value.isFinite() || value.isNegative() ||
          (code > 0 && value.convertToDouble() <= values.back())) {
        std::fprintf(stderr,
                     "error: positive finite %s codes are not 0..0x%x "
                     "in increasing order\n",
                     getFormatInfo(format).name, maxCode);
        std::exit(2);
      }
      values.push_back(value.convertToDouble());
    }
    // The largest value is not a power of two in either format, so the gap
    // below it is the ulp of its binade.
    values.push_back(2 * values[maxCode] - values[maxCode - 1]);
    for (unsigned code = 0; code <= maxCode; ++code)
      midpoints.push_back((values[code] + values[code + 1]) / 2);
  }

  uint8_t convert(uint32_t bits, Overflow overflow) const {
    uint8_t sign = uint8_t((bits >> 24) & 0x80);
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    if (std::isnan(value))
      return overflow == Overflow::SatFinite ? 0x7F
                                             : apfloatConvert(bits, format);
    double magnitude = std::fabs(double(value));
    size_t code =
        std::lower_bound(midpoints.begin(), midpoints.end(), magnitude) -
        midpoints.begin();
    if (code < midpoints.size() && midpoints[code] == magnitude && code % 2)
      ++code;
    if (code <= maxCode)
      return uint8_t(sign | code);
    if (overflow == Overflow::SatFinite)
      return uint8_t(sign | maxCode);
    return uint8_t(sign | (format == Format::E4M3FN ? 0x7F : 0x7C));
  }

  /// APFloat's answer for the same question, the rule defining SatFinite
  /// applied on top of it.
  uint8_t convertWithAPFloat(uint32_t bits, Overflow overflow) const {
    uint8_t code = apfloatConvert(bits, format);
    if (overflow == Overflow::NonSaturating)
      return code;
    APFloat input(APFloat::IEEEsingle(), APInt(32, bits));
    APFloat result(semantics(format), APInt(8, code));
    if (input.isNaN())
      return 0x7F;
    if (result.isInfinity() || result.isNaN())
      return uint8_t((bits >> 24 & 0x80) | maxCode);
    return code;
  }

  /// f32 patterns where the table could plausibly be wrong: a few ulps
  /// around every midpoint, both signs.
  std::vector<uint32_t> midpointNeighbourhoods() const {
    std::vector<uint32_t> patterns;
    for (double midpoint : midpoints) {
      float f = float(midpoint);
      uint32_t center;
      std::memcpy(&center, &f, sizeof(center));
      for (uint32_t bits = center - 3; bits <= center + 3; ++bits) {
        patterns.push_back(bits);
        patterns.push_back(bits | 0x80000000u);
      }
    }
    return patterns;
  }

private:
  Format format;
  uint8_t maxCode;
  std::vector<double> midpoints;
};

/// Checks the reference itself against APFloat; returns the disagreements.
uint64_t validateReference(const Reference &reference, uint64_t &checked) {
  std::vector<uint32_t> inputs = reference.midpointNeighbourhoods();
  for (uint64_t bits = 0; bits < kAllInputs; bits += 65521)
    inputs.push_back(uint32_t(bits));
  // NaNs with assorted payloads, signaling and quiet, and the infinities.
  for (uint32_t payload : {0x1u, 0x1FFFFFu, 0x200000u, 0x3FFFFFu, 0x400000u,
                           0x400001u, 0x600000u, 0x7FFFFFu, 0u})
    for (uint32_t sign : {0u, 0x80000000u})
      inputs.push_back(sign | 0x7F800000u | payload);
  uint64_t disagreements = 0;
  for (uint32_t bits : inputs)
    for (Overflow overflow : kPolicies) {
      ++checked;
      uint8_t fromTable = reference.convert(bits, overflow);
      uint8_t fromAPFloat = reference.convertWithAPFloat(bits, overflow);
      if (fromTable == fromAPFloat)
        continue;
      if (++disagreements <= 5)
        std::printf("  reference disagrees with APFloat: 0x%08" PRIx32
                    " %s: table 0x%02x, APFloat 0x%02x\n",
                    bits, policyName(overflow), fromTable, fromAPFloat);
    }
  return disagreements;
}

struct Mismatch {
  uint32_t input;
  Format format;
  Overflow overflow;
  uint8_t actual, expected;
};

/// Per (format, policy) totals, indexed [format][policy].
struct Totals {
  uint64_t checked[2][2] = {};
  uint64_t mismatches[2][2] = {};
  double converterSeconds[2][2] = {};

  void add(const Totals &other) {
    for (int f = 0; f < 2; ++f)
      for (int p = 0; p < 2; ++p) {
        checked[f][p] += other.checked[f][p];
        mismatches[f][p] += other.mismatches[f][p];
        converterSeconds[f][p] += other.converterSeconds[f][p];
      }
  }
};

struct Sweep {
  uint64_t stride;
  uint64_t inputCount;
  const Reference *references[2];
  std::atomic<uint64_t> nextChunk{0};
  std::mutex mutex;
  Totals totals;
  std::vector<Mismatch> firstMismatches;

  void worker() {
    Totals local;
    std::vector<uint32_t> inputs(kChunk);
    std::vector<uint8_t> outputs[2][2];
    for (auto &byFormat : outputs)
      for (auto &buffer : byFormat)
        buffer.resize(kChunk);
    uint64_t chunkCount = (inputCount + kChunk - 1) / kChunk;
    for (uint64_t chunk; (chunk = nextChunk++) < chunkCount;) {
      uint64_t first = chunk * kChunk;
      size_t count = size_t(std::min<uint64_t>(kChunk, inputCount - first));
      for (size_t i = 0; i < count; ++i)
        inputs[i] = uint32_t((first + i) * stride);

      // Only the converter is timed; the check below runs outside the clock.
      for (int f = 0; f < 2; ++f)
        for (int p = 0; p < 2; ++p) {
          auto start = std::chrono::steady_clock::now();
          fromF32Bits(inputs.data(), outputs[f][p].data(), count, kFormats[f],
                      kPolicies[p]);
          local.converterSeconds[f][p] +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                            start)
                  .count();
        }

      for (int f = 0; f < 2; ++f)
        for (int p = 0; p < 2; ++p) {
          local.checked[f][p] += count;
          for (size_t i = 0; i < count; ++i) {
            uint8_t want = references[f]->convert(inputs[i], kPolicies[p]);
            if (outputs[f][p][i] != want)
              recordMismatch(local, f, p,
                             {inputs[i], kFormats[f], kPolicies[p],
                              outputs[f][p][i], want});
          }
        }
    }
    std::lock_guard<std::mutex> lock(mutex);
    totals.add(local);
  }

  void recordMismatch(Totals &local, int f, int p, const Mismatch &mismatch) {
    ++local.mismatches[f][p];
    std::lock_guard<std::mutex> lock(mutex);
    if (firstMismatches.size() < 10)
      firstMismatches.push_back(mismatch);
  }
};

[[noreturn]] void usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--stride N] [-j THREADS]\n"
               "  --stride N   check every Nth f32 bit pattern (default 1: all "
               "2^32)\n"
               "  -j THREADS   worker threads (default: available cores)\n",
               argv0);
  std::exit(2);
}

uint64_t parsePositive(const char *text, const char *argv0) {
  char *end;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value == 0)
    usage(argv0);
  return value;
}

} // namespace

int main(int argc, char **argv) {
  uint64_t stride = 1;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--stride" && i + 1 < argc)
      stride = parsePositive(argv[++i], argv[0]);
    else if (arg == "-j" && i + 1 < argc)
      threads = unsigned(parsePositive(argv[++i], argv[0]));
    else
      usage(argv[0]);
  }
  if (stride >= kAllInputs)
    usage(argv[0]);

  Reference e4m3(Format::E4M3FN), e5m2(Format::E5M2);
  uint64_t referenceChecks = 0;
  uint64_t referenceErrors = validateReference(e4m3, referenceChecks) +
                             validateReference(e5m2, referenceChecks);
  std::printf("reference: %" PRIu64 " strided/boundary conversions checked "
              "against APFloat, %" PRIu64 " disagreements\n",
              referenceChecks, referenceErrors);
  if (referenceErrors)
    return 1;

  Sweep sweep;
  sweep.stride = stride;
  sweep.inputCount = (kAllInputs + stride - 1) / stride;
  sweep.references[0] = &e4m3;
  sweep.references[1] = &e5m2;
  std::printf("sweep: %" PRIu64 " f32 bit patterns (stride %" PRIu64
              "), %u threads\n",
              sweep.inputCount, stride, threads);
#ifndef __OPTIMIZE__
  std::printf("warning: built without optimisation; rates are not "
              "representative\n");
#endif

  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&sweep] { sweep.worker(); });
  for (std::thread &worker : workers)
    worker.join();
  double wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  uint64_t totalMismatches = 0;
  std::printf("\n%-9s %-14s %12s %11s %16s %16s\n", "format", "policy",
              "checked", "mismatches", "conv/s/thread", "conv/s x threads");
  for (int f = 0; f < 2; ++f)
    for (int p = 0; p < 2; ++p) {
      const Totals &totals = sweep.totals;
      double perThread = totals.checked[f][p] / totals.converterSeconds[f][p];
      std::printf("%-9s %-14s %12" PRIu64 " %11" PRIu64 " %16.3e %16.3e\n",
                  getFormatInfo(kFormats[f]).name, policyName(kPolicies[p]),
                  totals.checked[f][p], totals.mismatches[f][p], perThread,
                  perThread * threads);
      totalMismatches += totals.mismatches[f][p];
    }
  for (const Mismatch &m : sweep.firstMismatches)
    std::printf("  mismatch: f32 0x%08" PRIx32 " -> %s %s: got 0x%02x, "
                "expected 0x%02x\n",
                m.input, getFormatInfo(m.format).name, policyName(m.overflow),
                m.actual, m.expected);
  std::printf("\n%s: %" PRIu64 " mismatches in %" PRIu64
              " conversions; %.1f s wall (converter and check)\n",
              totalMismatches ? "FAIL" : "PASS", totalMismatches,
              sweep.inputCount * 4, wallSeconds);
  return totalMismatches ? 1 : 0;
}
