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
//  * checks the backward kernel (fp8.attention_grad) against the same
//    reference's gradients in double, from the forward's output rounded to
//    the element type and its f32 lse, as a training step hands them over;
//  * times the bf16 and the FP8 kernels on Llama-3-8B's attention (32
//    query and 8 key/value heads, D = 128, causal) at 4096 and 16384 tokens
//    and prints TFLOP/s (a causal attention counts half of 4 b h s^2 D),
//    and the backward kernel (2.5 times the forward's flops, FlashAttention's
//    count; the host's delta, transposes and dQ rounding not included).
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

#include <array>
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
  /// The mask operand and which of [batch, heads, sq, sk] it has (1 along
  /// the others, which it broadcasts).
  aabi::Mask mask = aabi::Mask::None;
  bool maskDims[4] = {false, false, true, true};

  aabi::AttentionConfig config() const {
    aabi::AttentionConfig c;
    c.qk = qk;
    c.v = v;
    c.out = out;
    c.causal = causal;
    c.lse = lse;
    c.mask = mask;
    c.headDim = int(d);
    return aabi::selectStages(c);
  }
  bool fp8Scores() const { return gabi::bytes(qk) == 1; }
  bool fp8Values() const { return gabi::bytes(v) == 1; }
  /// The mask's extents and its element strides (0 where it broadcasts).
  std::array<int64_t, 4> maskShape() const {
    std::array<int64_t, 4> full = {batch, heads, sq, sk}, shape;
    for (int d = 0; d < 4; ++d)
      shape[d] = maskDims[d] ? full[d] : 1;
    return shape;
  }
  std::array<int64_t, 4> maskStrides() const {
    std::array<int64_t, 4> shape = maskShape(), strides;
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) {
      strides[d] = shape[d] == 1 ? 0 : stride;
      stride *= shape[d];
    }
    return strides;
  }
  int64_t maskElements() const {
    std::array<int64_t, 4> shape = maskShape();
    return mask == aabi::Mask::None ? 0
                                    : shape[0] * shape[1] * shape[2] * shape[3];
  }
  /// The element of (batch n, query head h, row i, key j).
  int64_t maskIndex(int64_t n, int64_t h, int64_t i, int64_t j) const {
    std::array<int64_t, 4> st = maskStrides();
    return n * st[0] + h * st[1] + i * st[2] + j * st[3];
  }
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
  /// The mask as stored and its values: additive (exact in its type, a
  /// tenth of them -inf for f32) or boolean (1 keeps, as 1.0f).
  std::vector<uint8_t> maskBytes;
  std::vector<float> maskValues;
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
          if (p.mask == aabi::Mask::Bool) {
            if (in.maskValues[p.maskIndex(n, h, i, j)] == 0.0f)
              s[j] = -inf;
          } else if (p.mask != aabi::Mask::None) {
            s[j] += in.maskValues[p.maskIndex(n, h, i, j)];
          }
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
    DevicePtr dmask = 0;
    if (p.mask != aabi::Mask::None) {
      dmask = upload(in.maskBytes.data(), in.maskBytes.size());
      l.buffers.push_back(dmask);
    }
    l.args.add(dmask);
    for (int64_t stride : p.maskStrides())
      l.args.add(stride);
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

uint16_t toHalfBits(float x, Elem e);

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
  int64_t count = p.maskElements();
  int maskBytes = aabi::bytes(p.mask);
  in.maskValues.resize(count);
  in.maskBytes.resize(count * maskBytes);
  for (int64_t i = 0; i < count; ++i) {
    float x;
    // The last batch's boolean mask drops every key (an empty sequence):
    // its rows give NaN and lse -inf.
    bool emptyBatch = p.mask == aabi::Mask::Bool && p.maskDims[0] &&
                      p.batch > 1 && i >= count / p.batch * (p.batch - 1);
    if (p.mask == aabi::Mask::Bool)
      x = !emptyBatch && uniform() < 0.8f ? 1.0f : 0.0f;
    else if (p.mask == aabi::Mask::F32 && uniform() < 0.1f)
      x = -std::numeric_limits<float>::infinity();
    else
      x = -float(int(uniform() * 32)) / 8; // 0 .. -3.875: exact in bf16, f16
    in.maskValues[i] = x;
    uint8_t *at = &in.maskBytes[i * maskBytes];
    if (p.mask == aabi::Mask::Bool) {
      *at = uint8_t(x);
    } else if (p.mask == aabi::Mask::F32) {
      std::memcpy(at, &x, 4);
    } else {
      uint16_t h = toHalfBits(x, p.mask == aabi::Mask::BF16 ? Elem::BF16
                                                            : Elem::F16);
      std::memcpy(at, &h, 2);
    }
  }
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

//===----------------------------------------------------------------------===//
// The backward
//===----------------------------------------------------------------------===//

/// f32 to the bits of bf16 or f16, rounded to nearest even (finite inputs).
uint16_t toHalfBits(float x, Elem e) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if (e == Elem::BF16)
    return uint16_t((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
  uint32_t sign = (bits >> 16) & 0x8000, mantissa = bits & 0x7FFFFF;
  int exponent = int((bits >> 23) & 0xFF) - 127 + 15;
  if (exponent >= 31)
    return uint16_t(sign | 0x7C00);
  if (exponent <= 0) {
    if (exponent < -10)
      return uint16_t(sign);
    mantissa |= 0x800000;
    int shift = 14 - exponent;
    uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1),
             tie = 1u << (shift - 1);
    if (rest > tie || (rest == tie && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

/// fp8.attention_grad's gradients in double, each with the sum of the
/// magnitudes of its terms (what a bf16 rounding of P or dS scales with).
struct Gradients {
  std::vector<double> dq, dk, dv, dqMagnitude, dkMagnitude, dvMagnitude;
};

Gradients referenceGrad(const Problem &p, const Inputs &in,
                        const std::vector<float> &output,
                        const std::vector<float> &lse,
                        const std::vector<float> &gradOutput) {
  const double inf = std::numeric_limits<double>::infinity();
  int64_t group = p.heads / p.kvHeads, d = p.d;
  Gradients g;
  g.dq.assign(p.batch * p.heads * p.sq * d, 0);
  g.dqMagnitude = g.dq;
  g.dk.assign(p.batch * p.kvHeads * p.sk * d, 0);
  g.dv = g.dkMagnitude = g.dvMagnitude = g.dk;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t h = 0; h < p.heads; ++h) {
      int64_t kv = n * p.kvHeads + h / group;
      for (int64_t i = 0; i < p.sq; ++i) {
        int64_t row = (n * p.heads + h) * p.sq + i;
        double delta = 0;
        for (int64_t c = 0; c < d; ++c)
          delta += double(gradOutput[row * d + c]) * output[row * d + c];
        for (int64_t j = 0; j < p.sk; ++j) {
          int64_t keyRow = kv * p.sk + j;
          double s = 0, dp = 0;
          for (int64_t c = 0; c < d; ++c) {
            s += double(in.q.values[row * d + c]) * in.k.values[keyRow * d + c];
            dp += double(gradOutput[row * d + c]) * in.v.values[keyRow * d + c];
          }
          s *= p.scale;
          if (p.causal && j > i + p.causalOffset)
            s = -inf;
          double prob = std::exp(s - double(lse[row]));
          double ds = prob * (dp - delta);
          for (int64_t c = 0; c < d; ++c) {
            double kc = in.k.values[keyRow * d + c];
            double qc = in.q.values[row * d + c];
            double oc = gradOutput[row * d + c];
            g.dq[row * d + c] += p.scale * ds * kc;
            g.dqMagnitude[row * d + c] += std::fabs(p.scale * ds * kc);
            g.dk[keyRow * d + c] += p.scale * ds * qc;
            g.dkMagnitude[keyRow * d + c] += std::fabs(p.scale * ds * qc);
            g.dv[keyRow * d + c] += prob * oc;
            g.dvMagnitude[keyRow * d + c] += std::fabs(prob * oc);
          }
        }
      }
    }
  return g;
}

/// [layers, rows, D] values as [layers, D, pitch] bytes of `e`, zero-padded.
std::vector<uint8_t> transposedBytes(const Tensor &t, int64_t layers,
                                     int64_t rows, int64_t d) {
  int64_t pitch = aabi::valuePitch(rows), eb = gabi::bytes(t.e);
  std::vector<uint8_t> out(layers * d * pitch * eb, 0);
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < d; ++c)
        std::memcpy(&out[((l * d + c) * pitch + r) * eb],
                    &t.bytes[((l * rows + r) * d + c) * eb], eb);
  return out;
}

/// The backward on `p` (16-bit, no lse in the forward's sense: the grad
/// kernel's own variant), against referenceGrad; `launchOnly` launches
/// without comparing. Returns whether it passed.
bool checkGrad(Run &run, const Problem &p, bool launchOnly,
               unsigned timingIterations = 0) {
  CudaRuntime &cuda = run.cuda;
  aabi::AttentionGradConfig config;
  config.type = p.qk;
  config.causal = p.causal;
  config.headDim = int(p.d);
  config = aabi::selectGradStages(config);
  FunctionHandle kernel = check(cuda.getFunction(run.module, config.name()),
                                "kernel " + config.name());
  check(cuda.setDynamicSharedMemory(kernel, unsigned(config.sharedBytes())),
        "allow shared memory");
  Inputs in = makeInputs(p);
  int64_t queries = p.batch * p.heads * p.sq, keys = p.batch * p.kvHeads * p.sk;
  int64_t d = p.d, eb = gabi::bytes(p.qk);
  // The forward's output (rounded to the element type) and lse (f32), and
  // dO: what the training step hands the backward.
  Tensor gradOutput = random(p.qk, queries * d, 2.0f);
  std::vector<double> forward, forwardLse;
  if (!launchOnly)
    reference(p, in, forward, forwardLse);
  else
    forward.assign(queries * d, 0), forwardLse.assign(queries, 0);
  Tensor output{p.qk, std::vector<uint8_t>(queries * d * eb),
                std::vector<float>(queries * d)};
  std::vector<float> lse(queries);
  for (int64_t i = 0; i < queries * d; ++i) {
    uint16_t h = toHalfBits(float(forward[i]), p.qk);
    std::memcpy(&output.bytes[2 * i], &h, 2);
    output.values[i] = toFloat(&output.bytes[2 * i], p.qk);
  }
  for (int64_t r = 0; r < queries; ++r)
    lse[r] = float(forwardLse[r]);
  std::vector<float> delta(queries);
  for (int64_t r = 0; r < queries; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < d; ++c)
      sum += double(gradOutput.values[r * d + c]) * output.values[r * d + c];
    delta[r] = float(sum);
  }
  std::vector<uint8_t> keyT = transposedBytes(in.k, p.batch * p.kvHeads, p.sk, d);
  std::vector<uint8_t> queryT =
      transposedBytes(in.q, p.batch * p.heads, p.sq, d);
  std::vector<uint8_t> gradOutputT =
      transposedBytes(gradOutput, p.batch * p.heads, p.sq, d);
  std::vector<DevicePtr> owned;
  auto upload = [&](const void *data, size_t bytes) {
    DevicePtr ptr = run.upload(data, bytes);
    owned.push_back(ptr);
    return ptr;
  };
  DevicePtr dk = upload(in.k.bytes.data(), in.k.bytes.size());
  DevicePtr dv = upload(in.v.bytes.data(), in.v.bytes.size());
  DevicePtr dkt = upload(keyT.data(), keyT.size());
  DevicePtr dq = upload(in.q.bytes.data(), in.q.bytes.size());
  DevicePtr ddo = upload(gradOutput.bytes.data(), gradOutput.bytes.size());
  DevicePtr dqt = upload(queryT.data(), queryT.size());
  DevicePtr ddot = upload(gradOutputT.data(), gradOutputT.size());
  DevicePtr dlse = upload(lse.data(), lse.size() * 4);
  DevicePtr ddelta = upload(delta.data(), delta.size() * 4);
  std::vector<uint8_t> poison(keys * d * eb, 0xff);
  DevicePtr gradKey = upload(poison.data(), poison.size());
  DevicePtr gradValue = upload(poison.data(), poison.size());
  std::vector<float> zeros(queries * d, 0.0f);
  DevicePtr gradQuery = upload(zeros.data(), zeros.size() * 4);

  int64_t keyPitch = std::max<int64_t>(aabi::valuePitch(p.sk), 16);
  int64_t queryPitch = std::max<int64_t>(aabi::valuePitch(p.sq), 16);
  int box = gabi::kRowBytes / int(eb);
  TensorMap mapK = run.encode(dk, d, p.sk, p.batch * p.kvHeads, d * eb, box,
                              config.blockN, int(eb));
  TensorMap mapV = run.encode(dv, d, p.sk, p.batch * p.kvHeads, d * eb, box,
                              config.blockN, int(eb));
  TensorMap mapKT = run.encode(dkt, keyPitch, d, p.batch * p.kvHeads,
                               keyPitch * eb, box, int(d), int(eb));
  TensorMap mapQ = run.encode(dq, d, p.sq, p.batch * p.heads, d * eb, box,
                              config.blockM, int(eb));
  TensorMap mapDO = run.encode(ddo, d, p.sq, p.batch * p.heads, d * eb, box,
                               config.blockM, int(eb));
  TensorMap mapQT = run.encode(dqt, queryPitch, d, p.batch * p.heads,
                               queryPitch * eb, box, int(d), int(eb));
  TensorMap mapDOT = run.encode(ddot, queryPitch, d, p.batch * p.heads,
                                queryPitch * eb, box, int(d), int(eb));
  KernelArgs args;
  args.add(mapK).add(mapV).add(mapKT).add(mapQ).add(mapDO).add(mapQT);
  args.add(mapDOT).add(gradKey).add(gradValue).add(gradQuery).add(dlse);
  args.add(ddelta).add(int32_t(p.sq)).add(int32_t(p.sk));
  args.add(int32_t(p.heads)).add(int32_t(p.heads / p.kvHeads));
  args.add(int32_t(p.batch)).add(int32_t(p.causalOffset)).add(p.scale);
  unsigned grid =
      unsigned(aabi::gradGridSize(config, p.batch, p.kvHeads, p.sk));
  auto launch = [&] {
    check(cuda.launch(kernel, Dim3{grid}, Dim3{unsigned(config.threads())},
                      unsigned(config.sharedBytes()), args),
          "launch " + config.name());
  };
  bool pass = true;
  if (timingIterations) {
    // dQ accumulates: its value after the timing is no result.
    bench::Timer timer(cuda, 2, timingIterations);
    float ms = timer([&](unsigned) { launch(); });
    double flops = 2.5 * 4.0 * p.batch * p.heads * double(p.sq) * p.sk * d /
                   (p.causal ? 2 : 1);
    std::printf("ATTNBWD|%s|%lld|%.4f|%.1f\n", gabi::tag(p.qk),
                (long long)p.sq, ms, flops / (ms * 1e-3) / 1e12);
  } else {
    launch();
    check(cuda.synchronize(), "synchronize");
  }
  if (!launchOnly && !timingIterations) {
    std::vector<uint8_t> gotK(keys * d * eb), gotV(keys * d * eb);
    std::vector<float> gotQ(queries * d);
    check(cuda.copyToHost(gotK.data(), gradKey, gotK.size()), "copy D2H");
    check(cuda.copyToHost(gotV.data(), gradValue, gotV.size()), "copy D2H");
    check(cuda.copyToHost(gotQ.data(), gradQuery, gotQ.size() * 4),
          "copy D2H");
    Gradients want = referenceGrad(p, in, output.values, lse, gradOutput.values);
    // P and dS are rounded to the element type for their wgmma (half an
    // ulp, 2^-9 for bf16, of each term); dK and dV are rounded once more.
    double ulp = p.qk == Elem::F16 ? 1.0 / 2048 : 1.0 / 256;
    auto compare = [&](const char *name, auto got,
                       const std::vector<double> &value,
                       const std::vector<double> &magnitude, double rounding) {
      int64_t bad = 0;
      double worst = 0;
      for (size_t i = 0; i < value.size(); ++i) {
        double g = got(i), w = value[i];
        double tolerance = 2 * ulp * magnitude[i] + rounding * std::fabs(w) +
                           1e-6;
        worst = std::max(worst, std::fabs(g - w));
        bad += !(std::fabs(g - w) <= tolerance);
      }
      std::printf("  %s: %lld / %zu outside tolerance (max |err| %.3g)\n",
                  name, (long long)bad, value.size(), worst);
      return bad == 0;
    };
    bool okQ = compare("dQ", [&](size_t i) { return double(gotQ[i]) * p.scale; },
                       want.dq, want.dqMagnitude, 1e-6);
    bool okK = compare("dK", [&](size_t i) { return double(toFloat(&gotK[i * eb], p.qk)); },
                       want.dk, want.dkMagnitude, ulp);
    bool okV = compare("dV", [&](size_t i) { return double(toFloat(&gotV[i * eb], p.qk)); },
                       want.dv, want.dvMagnitude, ulp);
    pass = okQ && okK && okV;
    std::printf("%-58s %-52s %s\n", p.what.c_str(), config.name().c_str(),
                pass ? "ok: 0 outside tolerance" : "MISMATCH: gradients");
  }
  for (DevicePtr ptr : owned)
    check(cuda.free(ptr), "free");
  return pass;
}

std::vector<Problem> gradProblems() {
  std::vector<Problem> list;
  Problem p;
  p.what = "backward bf16 causal GQA 4/2 heads, 200 tokens";
  p.causal = true;
  list.push_back(p);
  p.what = "backward bf16 causal, 130 queries after 77 cached keys";
  p.sq = 130;
  p.sk = 207;
  p.causalOffset = 77;
  list.push_back(p);
  Problem f;
  f.what = "backward f16 D=64, 2x12 heads, 130 queries x 77 keys";
  f.qk = f.v = Elem::F16;
  f.d = 64;
  f.batch = 2;
  f.heads = f.kvHeads = 12;
  f.sq = 130;
  f.sk = 77;
  f.scale = 0.125f;
  list.push_back(f);
  return list;
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
  // Masks: an f32 bias per head, row and key with -inf entries, causal
  // GQA; a boolean padding mask per batch and key (rows with every key
  // dropped give NaN, -inf), FP8 scores; an f16 mask shared by all.
  Problem m;
  m.what = "bf16 causal GQA, f32 mask [1, 4, 200, 200] with -inf";
  m.causal = true;
  m.mask = aabi::Mask::F32;
  m.maskDims[1] = true;
  list.push_back(m);
  Problem b = e;
  b.what = "FP8 scores, bool mask [2, 1, 1, 300] (batch 1 all dropped), lse";
  b.v = Elem::BF16;
  b.batch = 2;
  b.causal = false;
  b.causalOffset = 0;
  b.sq = 150;
  b.sk = 300;
  b.mask = aabi::Mask::Bool;
  b.maskDims[0] = true;
  b.maskDims[2] = false;
  list.push_back(b);
  Problem h = f;
  h.what = "f16 D=64, f16 mask [1, 1, 130, 77]";
  h.out = Elem::F16;
  h.lse = false;
  h.mask = aabi::Mask::F16;
  list.push_back(h);
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
    for (const Problem &p : gradProblems())
      checkGrad(run, p, /*launchOnly=*/true);
    check(cuda->synchronize(), "synchronize");
    return 0;
  }

  bool allPass = true;
  for (const Problem &p : correctnessProblems())
    allPass &= checkProblem(run, p);
  for (const Problem &p : gradProblems())
    allPass &= checkGrad(run, p, /*launchOnly=*/false);
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
  for (int64_t tokens : {4096, 16384}) {
    Problem p;
    p.heads = 32;
    p.kvHeads = 8;
    p.sq = p.sk = tokens;
    p.causal = true;
    checkGrad(run, p, /*launchOnly=*/true, iterations);
  }
  return allPass ? 0 : 1;
}
