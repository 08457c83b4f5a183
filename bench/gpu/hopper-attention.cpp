//===- hopper-attention.cpp - The flash attention kernel on a GPU ---------===//
//
// Loads the PTX that fp8-lower-gemm-to-nvvm made from
// bench/gpu/hopper-attention.mlir and:
//  * checks every kernel against a CPU reference of fp8.attention's
//    semantics in double (FP8Ops.td: the scaled scores, the causal and
//    length masks, the softmax; for FP8 values the tile-rounded E4M3 P of
//    128-key tiles and the value scale), on odd lengths (a last tile cut
//    short, rows past sq), GQA and MQA, a KV-cache prefix (causal_offset),
//    the log-sum-exp, and no keys at all (every row fully masked: NaN
//    output, -inf lse);
//  * times the bf16 and the FP8 kernels on Llama-3-8B's attention (32
//    query and 8 key/value heads, D = 128, causal) at 4096 and 16384 tokens
//    and prints TFLOP/s (a causal attention counts half of 4 b h s^2 D).
//    torch_attention.py times PyTorch's scaled_dot_product_attention on the
//    same shapes.
// The host does what fp8-lower-to-gpu's launcher does (AttentionKernelABI.h):
// V transposed to [b, hkv, D, pitch], keys padded to 16 with zeros and, for
// FP8 values, permuted within each 16 (valueKeyAt). Exit status: 0 all
// checks pass, 1 a mismatch, 2 no GPU (or another runtime error).
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"

#include "fp8/Conversion/FP8ToNVVM/AttentionKernelABI.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Runtime/CudaRuntime.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::fp8;
using bench::check;
using bench::fail;
using runtime::CudaRuntime;
using runtime::DevicePtr;
using runtime::Dim3;
using runtime::FunctionHandle;
using runtime::KernelArgs;
using runtime::ModuleHandle;
using runtime::TensorMap;
namespace aabi = mlir::fp8::attention_abi;
namespace gabi = mlir::fp8::gemm_abi;
namespace num = mlir::fp8::numerics;
using aabi::Elem;

static const char *const kUsage =
    "usage: fp8-hopper-attention --ptx=ATTENTION.ptx [--iterations=20]"
    " [--skip-timing] [--launch-only]\n"
    "Flash attention: correctness against a double reference of "
    "fp8.attention, then TFLOP/s on Llama-3-8B's heads.";

namespace {

std::mt19937 rng(42);
float uniform() { return std::uniform_real_distribution<float>(0, 1)(rng); }

/// One problem: a kernel variant and the sizes it runs on.
struct Problem {
  std::string what;
  Elem qk = Elem::BF16, v = Elem::BF16, out = Elem::BF16;
  bool causal = false, lse = false;
  int64_t d = 128, batch = 1, heads = 4, kvHeads = 2, sq = 200, sk = 200;
  int64_t causalOffset = 0;
  float scale = 0.0883883461f, probabilityScale = 256.0f;

  aabi::AttentionConfig config() const {
    aabi::AttentionConfig c;
    c.qk = qk;
    c.v = v;
    c.out = out;
    c.causal = causal;
    c.lse = lse;
    c.headDim = int(d);
    return aabi::selectStages(c);
  }
  bool fp8Scores() const { return gabi::bytes(qk) == 1; }
  bool fp8Values() const { return gabi::bytes(v) == 1; }
};

/// Elements as stored (bytes) and as values (the exact f32 they hold).
struct Tensor {
  Elem e;
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

num::Format fp8Format(Elem e) {
  return e == Elem::E5M2 ? num::Format::E5M2 : num::Format::E4M3FN;
}

/// `count` random values in `e`: FP8 codes of |x| <= 8 (for 16-bit types
/// their exact bf16 / f16 bits), so that every stored value is known.
Tensor random(Elem e, int64_t count, float range) {
  Tensor t{e, std::vector<uint8_t>(count * gabi::bytes(e)),
           std::vector<float>(count)};
  for (int64_t i = 0; i < count; ++i) {
    float x = (uniform() * 2 - 1) * range;
    num::Format format = fp8Format(e);
    uint8_t code = num::fromF32(x, format, num::Overflow::SatFinite);
    t.values[i] = num::toF32(code, format);
    if (gabi::bytes(e) == 1) {
      t.bytes[i] = code;
    } else {
      uint16_t h = e == Elem::BF16 ? num::toBF16Bits(code, format)
                                   : num::toF16Bits(code, format);
      std::memcpy(&t.bytes[2 * i], &h, 2);
    }
  }
  return t;
}

float toFloat(const uint8_t *p, Elem e) {
  switch (e) {
  case Elem::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case Elem::BF16:
  case Elem::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t bits = e == Elem::BF16 ? num::bf16BitsToF32Bits(h)
                                    : num::f16BitsToF32Bits(h);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  default:
    return num::toF32(*p, fp8Format(e));
  }
}

/// Powers of two 2^-2 .. 2^2: the scales fp8-quantize makes, exact.
std::vector<float> powerOfTwoScales(int64_t count) {
  std::vector<float> s(count);
  for (float &x : s)
    x = std::ldexp(1.0f, int(uniform() * 5) - 2);
  return s;
}

struct Inputs {
  Tensor q, k, v;
  std::vector<float> qs, ks, vs;
};

/// fp8.attention in double: output [b, hq, sq, D] and lse [b, hq, sq].
void reference(const Problem &p, const Inputs &in, std::vector<double> &out,
               std::vector<double> &lse) {
  const double inf = std::numeric_limits<double>::infinity();
  int64_t group = p.heads / p.kvHeads, d = p.d;
  out.assign(p.batch * p.heads * p.sq * d, 0);
  lse.assign(p.batch * p.heads * p.sq, 0);
  std::vector<double> s(p.sk), acc(d);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t h = 0; h < p.heads; ++h) {
      int64_t g = n * p.kvHeads + h / group;
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t row = (n * p.heads + h) * p.sq + i;
        double m = -inf;
        for (int64_t j = 0; j < p.sk; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(in.q.values[row * d + c]) *
                   in.k.values[(g * p.sk + j) * d + c];
          if (p.fp8Scores())
            dot = dot * in.qs[row] * in.ks[g * p.sk + j];
          s[j] = dot * double(p.scale);
          if (p.causal && j > i + p.causalOffset)
            s[j] = -inf;
          m = std::max(m, s[j]);
        }
        double l = 0;
        for (int64_t j = 0; j < p.sk; ++j)
          l += m == -inf ? 0 : std::exp(s[j] - m);
        std::fill(acc.begin(), acc.end(), 0.0);
        double tileMax = -inf;
        for (int64_t j = 0; j < p.sk; ++j) {
          double weight;
          if (p.fp8Values()) {
            // The running max through j's 128-key tile.
            if (j % aabi::kBlockN == 0)
              for (int64_t t = j; t < std::min(p.sk, j + aabi::kBlockN); ++t)
                tileMax = std::max(tileMax, s[t]);
            double e = tileMax == -inf ? 0 : std::exp(s[j] - tileMax);
            uint8_t p8 = num::fromF32(float(e * p.probabilityScale),
                                      num::Format::E4M3FN,
                                      num::Overflow::SatFinite);
            weight = (tileMax == -inf ? 0 : std::exp(tileMax - m)) *
                     num::toF32(p8, num::Format::E4M3FN);
          } else {
            weight = m == -inf ? 0 : std::exp(s[j] - m);
          }
          for (int64_t c = 0; c < d; ++c)
            acc[c] += weight * in.v.values[(g * p.sk + j) * d + c];
        }
        double factor = p.fp8Values() ? in.vs[g] / p.probabilityScale : 1.0;
        for (int64_t c = 0; c < d; ++c)
          out[row * d + c] = acc[c] * factor / l;
        lse[row] = m + std::log(l);
      }
    }
}

struct Run {
  CudaRuntime &cuda;
  ModuleHandle module;

  DevicePtr upload(const void *data, size_t bytes) {
    DevicePtr p = check(cuda.allocate(std::max<size_t>(bytes, 16)), "allocate");
    if (bytes)
      check(cuda.copyToDevice(p, data, bytes), "copy H2D");
    return p;
  }

  TensorMap encode(DevicePtr base, int64_t cols, int64_t rows, int64_t layers,
                   int64_t pitch, int boxCols, int boxRows, int elementBytes) {
    TensorMap map;
    runtime::TensorMapShape shape;
    shape.cols = std::max<int64_t>(cols, 1);
    shape.rows = std::max<int64_t>(rows, 1);
    shape.batch = std::max<int64_t>(layers, 1);
    shape.pitch = pitch;
    shape.boxCols = unsigned(boxCols);
    shape.boxRows = unsigned(boxRows);
    shape.elementBytes = unsigned(elementBytes);
    shape.swizzle128 = true;
    check(cuda.encodeTensorMap(map, base, shape), "encode tensor map");
    return map;
  }

  /// Device buffers and the launch of one problem.
  struct Launch {
    FunctionHandle kernel;
    aabi::AttentionConfig config;
    std::vector<DevicePtr> buffers;
    DevicePtr out = 0, lse = 0;
    TensorMap mapQ, mapK, mapV;
    KernelArgs args;
    unsigned grid = 0;
  };

  Launch prepare(const Problem &p, const Inputs &in) {
    Launch l;
    l.config = p.config();
    l.kernel = check(cuda.getFunction(module, l.config.name()),
                     "kernel " + l.config.name() +
                         " (is it in hopper-attention.mlir?)");
    check(cuda.setDynamicSharedMemory(l.kernel, unsigned(l.config.sharedBytes())),
          "allow shared memory");
    // V^T [b, hkv, D, pitch]: zeros past sk, FP8 keys permuted.
    int64_t pitch = aabi::valuePitch(p.sk), vb = gabi::bytes(p.v);
    std::vector<uint8_t> vt(p.batch * p.kvHeads * p.d * pitch * vb, 0);
    for (int64_t layer = 0; layer < p.batch * p.kvHeads; ++layer)
      for (int64_t c = 0; c < p.d; ++c)
        for (int64_t col = 0; col < pitch; ++col) {
          int64_t key = aabi::valueKeyAt(col, p.fp8Values());
          if (key >= p.sk)
            continue;
          std::memcpy(&vt[((layer * p.d + c) * pitch + col) * vb],
                      &in.v.bytes[((layer * p.sk + key) * p.d + c) * vb], vb);
        }
    DevicePtr dq = upload(in.q.bytes.data(), in.q.bytes.size());
    DevicePtr dk = upload(in.k.bytes.data(), in.k.bytes.size());
    DevicePtr dv = upload(vt.data(), vt.size());
    l.buffers = {dq, dk, dv};
    DevicePtr dqs = 0, dks = 0, dvs = 0;
    if (p.fp8Scores()) {
      dqs = upload(in.qs.data(), in.qs.size() * 4);
      dks = upload(in.ks.data(), in.ks.size() * 4);
      l.buffers.push_back(dqs);
      l.buffers.push_back(dks);
    }
    if (p.fp8Values()) {
      dvs = upload(in.vs.data(), in.vs.size() * 4);
      l.buffers.push_back(dvs);
    }
    // Poisoned: all-ones bytes are NaN, so an element the kernel does not
    // write fails the check.
    int64_t rows = p.batch * p.heads * p.sq;
    size_t outWords = (rows * p.d * gabi::bytes(p.out) + 3) / 4;
    l.out = check(cuda.allocate(std::max<size_t>(outWords, 1) * 4), "allocate");
    check(cuda.memsetD32(l.out, 0xffffffffu, outWords), "poison output");
    l.buffers.push_back(l.out);
    if (p.lse) {
      l.lse = check(cuda.allocate(std::max<int64_t>(rows, 1) * 4), "allocate");
      check(cuda.memsetD32(l.lse, 0xffffffffu, rows), "poison lse");
      l.buffers.push_back(l.lse);
    }
    int qb = gabi::bytes(p.qk);
    l.mapQ = encode(dq, p.d, p.sq, p.batch * p.heads, p.d * qb,
                    gabi::kRowBytes / qb, l.config.blockM, qb);
    l.mapK = encode(dk, p.d, p.sk, p.batch * p.kvHeads, p.d * qb,
                    gabi::kRowBytes / qb, l.config.blockN, qb);
    // No keys: a map of one 16-element row that no tile reads.
    int64_t mapPitch = std::max<int64_t>(pitch, 16);
    l.mapV = encode(dv, mapPitch, p.d, p.batch * p.kvHeads, mapPitch * vb,
                    gabi::kRowBytes / int(vb), int(p.d), int(vb));
    l.args.add(l.mapQ).add(l.mapK).add(l.mapV).add(l.out).add(l.lse);
    l.args.add(dqs).add(dks).add(dvs);
    l.args.add(int32_t(p.sq)).add(int32_t(p.sk)).add(int32_t(p.heads));
    l.args.add(int32_t(p.heads / p.kvHeads)).add(int32_t(p.batch));
    l.args.add(int32_t(p.causalOffset)).add(p.scale).add(p.probabilityScale);
    l.grid = unsigned(aabi::gridSize(l.config, p.batch, p.heads, p.sq));
    return l;
  }

  void launch(Launch &l) {
    if (l.grid == 0)
      return;
    check(cuda.launch(l.kernel, Dim3{l.grid},
                      Dim3{unsigned(l.config.threads())},
                      unsigned(l.config.sharedBytes()), l.args),
          "launch " + l.config.name());
  }

  void release(Launch &l) {
    for (DevicePtr b : l.buffers)
      check(cuda.free(b), "free");
  }
};

Inputs makeInputs(const Problem &p) {
  Inputs in;
  int64_t queries = p.batch * p.heads * p.sq, keys = p.batch * p.kvHeads * p.sk;
  in.q = random(p.qk, queries * p.d, p.fp8Scores() ? 8.0f : 2.0f);
  in.k = random(p.qk, keys * p.d, p.fp8Scores() ? 8.0f : 2.0f);
  in.v = random(p.v, keys * p.d, p.fp8Values() ? 8.0f : 2.0f);
  if (p.fp8Scores()) {
    in.qs = powerOfTwoScales(queries);
    in.ks = powerOfTwoScales(keys);
    // |q k| up to 64 x 128 x 16: a scale of 2^-6 keeps scores near 1.
    for (float &s : in.qs)
      s *= 1.0f / 64;
  }
  if (p.fp8Values())
    in.vs = powerOfTwoScales(p.batch * p.kvHeads);
  return in;
}

/// Runs `p` and compares with the reference: elements within
/// |got - want| <= atol + rtol |want| (atol relative to the largest
/// |value|), NaN where the reference is NaN; lse within 1e-4.
bool checkProblem(Run &run, const Problem &p) {
  Inputs in = makeInputs(p);
  Run::Launch l = run.prepare(p, in);
  run.launch(l);
  check(run.cuda.synchronize(), "synchronize");
  int64_t rows = p.batch * p.heads * p.sq, ob = gabi::bytes(p.out);
  std::vector<uint8_t> out(rows * p.d * ob);
  std::vector<float> lse(p.lse ? rows : 0);
  if (!out.empty())
    check(run.cuda.copyToHost(out.data(), l.out, out.size()), "copy D2H");
  if (p.lse && rows)
    check(run.cuda.copyToHost(lse.data(), l.lse, rows * 4), "copy D2H");
  run.release(l);

  std::vector<double> want, wantLse;
  reference(p, in, want, wantLse);
  double largest = 0;
  for (size_t i = 0; i < in.v.values.size(); ++i)
    largest = std::max(largest, std::fabs(double(in.v.values[i]) *
                                          (p.fp8Values() ? in.vs[i / (p.sk * p.d)]
                                                         : 1.0)));
  // 16-bit P costs a half ulp of the value type per weight; E4M3 P can
  // differ from the reference by one E4M3 ulp where ex2.approx moves a
  // product across a rounding boundary; then the output's rounding.
  double atol = largest * (p.fp8Values() ? 1.0 / 64 : 1.0 / 256);
  double rtol = p.out == Elem::F32 ? 1e-6 : p.out == Elem::F16 ? 1.0 / 1024
                                                                : 1.0 / 128;
  int64_t bad = 0, badLse = 0;
  double worst = 0;
  for (int64_t i = 0; i < rows * p.d; ++i) {
    double got = toFloat(&out[i * ob], p.out), w = want[i];
    bool ok = std::isnan(w) ? std::isnan(got)
                            : std::fabs(got - w) <= atol + rtol * std::fabs(w);
    if (!std::isnan(w))
      worst = std::max(worst, std::fabs(got - w));
    bad += !ok;
  }
  for (int64_t r = 0; r < int64_t(lse.size()); ++r) {
    double w = wantLse[r], got = lse[r];
    bool ok = std::isinf(w) ? got == w
                            : std::fabs(got - w) <= 1e-4 * std::max(1.0, std::fabs(w));
    badLse += !ok;
  }
  bool pass = bad == 0 && badLse == 0;
  std::printf("%-58s %-52s %s: %lld / %lld outside tolerance (max |err| %.3g, "
              "atol %.3g)%s\n",
              p.what.c_str(), l.config.name().c_str(), pass ? "ok" : "MISMATCH",
              (long long)bad, (long long)(rows * p.d), worst, atol,
              p.lse ? (", lse " + std::to_string(badLse) + " bad").c_str() : "");
  return pass;
}

std::vector<Problem> correctnessProblems() {
  std::vector<Problem> list;
  Problem p;
  p.what = "bf16 causal GQA 4/2 heads, 200 tokens";
  p.causal = true;
  list.push_back(p);
  p.what = "bf16 causal lse, 300 queries after 77 cached keys";
  p.lse = true;
  p.sq = 300;
  p.sk = 377;
  p.causalOffset = 77;
  list.push_back(p);
  p.what = "bf16 causal lse, no keys (rows fully masked: NaN, -inf)";
  p.sq = 5;
  p.sk = 0;
  p.causalOffset = 0;
  list.push_back(p);
  Problem f;
  f.what = "f16 D=64 f32 out lse, 2x12 heads, 130 queries x 77 keys";
  f.qk = f.v = Elem::F16;
  f.out = Elem::F32;
  f.lse = true;
  f.d = 64;
  f.batch = 2;
  f.heads = f.kvHeads = 12;
  f.sq = 130;
  f.sk = 77;
  f.scale = 0.125f;
  list.push_back(f);
  Problem e;
  e.what = "FP8 scores, bf16 V, causal MQA 4/1, 257 tokens";
  e.qk = Elem::E4M3;
  e.causal = true;
  e.kvHeads = 1;
  e.sq = e.sk = 257;
  list.push_back(e);
  e.what = "FP8 P V, causal, 300 tokens";
  e.v = Elem::E4M3;
  e.kvHeads = 2;
  e.sq = e.sk = 300;
  list.push_back(e);
  e.what = "FP8 P V, causal lse, 129 queries after 255 cached keys";
  e.lse = true;
  e.sq = 129;
  e.sk = 384;
  e.causalOffset = 255;
  list.push_back(e);
  return list;
}

} // namespace

int main(int argc, char **argv) {
  bench::toolName = "fp8-hopper-attention";
  bench::Options options(argc, argv, kUsage);
  bench::probeIfAsked(options);
  std::string ptx = options.required("ptx");
  unsigned iterations = options.number("iterations", 20);
  bool skipTiming = options.flag("skip-timing");
  bool launchOnly = options.flag("launch-only");
  options.finish();

  std::unique_ptr<CudaRuntime> cuda = bench::openDevice();
  Run run{*cuda, bench::loadPtx(*cuda, ptx)};

  // --launch-only (the fake driver's test): every launch, nothing compared.
  if (launchOnly) {
    for (const Problem &p : correctnessProblems()) {
      Inputs in = makeInputs(p);
      Run::Launch l = run.prepare(p, in);
      run.launch(l);
      run.release(l);
    }
    check(cuda->synchronize(), "synchronize");
    return 0;
  }

  bool allPass = true;
  for (const Problem &p : correctnessProblems())
    allPass &= checkProblem(run, p);
  if (skipTiming)
    return allPass ? 0 : 1;

  // Llama-3-8B heads, causal: TFLOP/s of half of 4 b h s^2 D.
  for (int64_t tokens : {4096, 16384})
    for (bool fp8 : {false, true}) {
      Problem p;
      p.heads = 32;
      p.kvHeads = 8;
      p.sq = p.sk = tokens;
      p.causal = true;
      if (fp8)
        p.qk = p.v = Elem::E4M3;
      Inputs in = makeInputs(p);
      Run::Launch l = run.prepare(p, in);
      bench::Timer timer(*cuda, 3, iterations);
      float ms = timer([&](unsigned) { run.launch(l); });
      run.release(l);
      double flops = 4.0 * p.batch * p.heads * double(tokens) * tokens * p.d / 2;
      std::printf("ATTN|%s|%lld|%.4f|%.1f\n", fp8 ? "fp8" : "bf16",
                  (long long)tokens, ms, flops / (ms * 1e-3) / 1e12);
    }
  return allPass ? 0 : 1;
}
