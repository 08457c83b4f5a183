//===- hopper-gemm.cpp - The FP8 wgmma GEMM on a GPU: correctness and speed
//-===//
//
// Loads the PTX that fp8-lower-gemm-to-nvvm made from
// bench/gpu/hopper-gemm.mlir (plain, with promotion, with the TMA-store
// epilogue) and:
//  * checks the kernels against a CPU reference (the same f32-accumulated
//    product of the FP8 values, in double, then the scales, the bias and the
//    output rounding) on odd edges, small M, K = 40 (padded rows), a batch
//    with a shared weight, the E4M3 x E5M2 mix, bias and the fused amax, and
//    on 4096^3 (sampled rows); the block-scaled kernel (1x128 x 128x128,
//    scales per K block) and the row-wise one likewise, with partial K and
//    N blocks;
//  * when libcublasLt is on the machine (dlopen, no build dependency),
//    compares with cuBLASLt's FP8 GEMM on 4096^3, then times our kernel,
//    cuBLASLt FP8 (default and fast accumulation) and cuBLASLt BF16 on
//    4096^3, 8192^3 and the Llama-3-8B layer GEMMs at 4096 tokens, printing
//    TFLOP/s and the ratios (targets: >= 0.9x cuBLASLt FP8, >= 1.3x BF16).
// Launches follow GemmKernelABI.h. Exit status: 0 all checks pass, 1 a
// mismatch, 2 no GPU (or another runtime error).
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"

#include "fp8/Conversion/FP8ToNVVM/GemmKernelABI.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"
#include "fp8/Runtime/CudaRuntime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
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
namespace gabi = mlir::fp8::gemm_abi;
namespace num = mlir::fp8::numerics;

static const char *const kUsage =
    "usage: fp8-hopper-gemm --ptx=GEMM.ptx [--ptx-promote=GEMM.ptx]"
    " [--ptx-tmastore=GEMM.ptx] [--iterations=20] [--skip-timing]"
    " [--launch-only]"
    " [--list-kernels]\n"
    "FP8 wgmma GEMM: correctness against an f32-accumulation reference and "
    "cuBLASLt, then speed.";

namespace {
//===----------------------------------------------------------------------===//
// Tensor maps and the dynamic shared memory limit, through the runtime.
//===----------------------------------------------------------------------===//

using runtime::TensorMap;

struct DriverExtras {
  CudaRuntime &cuda;

  /// Operands: UINT8; results: UINT16 / UINT32 (CudaRuntime::encodeTensorMap),
  /// all with the 128-byte swizzle (GemmKernelABI.h).
  TensorMap encode(DevicePtr base, int64_t cols, int64_t rows, int64_t batch,
                   int64_t pitch, int boxCols, int boxRows, int elementBytes) {
    TensorMap map;
    runtime::TensorMapShape shape;
    shape.cols = cols;
    shape.rows = rows;
    shape.batch = batch;
    shape.pitch = pitch;
    shape.boxCols = unsigned(boxCols);
    shape.boxRows = unsigned(boxRows);
    shape.elementBytes = unsigned(elementBytes);
    shape.swizzle128 = true;
    if (runtime::Status status = cuda.encodeTensorMap(map, base, shape))
      fail(status.message());
    return map;
  }

  void allowSharedMemory(FunctionHandle f, int bytes) {
    if (runtime::Status status =
            cuda.setDynamicSharedMemory(f, unsigned(bytes)))
      fail(status.message());
  }
};

//===----------------------------------------------------------------------===//
// cuBLASLt, loaded at run time (values from cublasLt.h / library_types.h).
//===----------------------------------------------------------------------===//

struct CublasLt {
  enum : int {
    kR32F = 0,
    kR16BF = 14,
    kR8E4M3 = 28,
    kCompute32F = 68,
    kDescScaleType = 1,
    kDescTransA = 3,
    kDescTransB = 4,
    kDescAScalePointer = 17,
    kDescBScalePointer = 18,
    kDescFastAccum = 25,
    kPrefMaxWorkspace = 1,
    kOpN = 0,
    kOpT = 1,
  };
  struct HeuristicResult {
    uint64_t algo[8];
    size_t workspaceSize;
    int state;
    float wavesCount;
    int reserved[4];
  };
  using Handle = void *;
  int (*create)(Handle *);
  int (*descCreate)(Handle *, int, int);
  int (*descSet)(Handle, int, const void *, size_t);
  int (*descDestroy)(Handle);
  int (*layoutCreate)(Handle *, int, uint64_t, uint64_t, int64_t);
  int (*layoutDestroy)(Handle);
  int (*prefCreate)(Handle *);
  int (*prefSet)(Handle, int, const void *, size_t);
  int (*prefDestroy)(Handle);
  int (*heuristic)(Handle, Handle, Handle, Handle, Handle, Handle, Handle, int,
                   HeuristicResult *, int *);
  int (*matmul)(Handle, Handle, const void *, const void *, Handle,
                const void *, Handle, const void *, const void *, Handle,
                void *, Handle, const void *, void *, size_t, void *);
  int (*destroy)(Handle);
  void *library = nullptr;
  Handle handle = nullptr;

  CublasLt() = default;
  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;
  ~CublasLt() {
    // Like libcuda, a library that initialized stays loaded (it keeps CUDA
    // runtime state); only one that failed to is closed.
    if (handle)
      (void)destroy(handle);
    else if (library)
      dlclose(library);
  }

  static std::unique_ptr<CublasLt> load() {
    auto lt = std::make_unique<CublasLt>();
    for (const char *name : {"libcublasLt.so", "libcublasLt.so.13",
                             "libcublasLt.so.12", "libcublasLt.so.11"})
      if ((lt->library = dlopen(name, RTLD_NOW)))
        break;
    if (!lt->library)
      return nullptr;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(lt->library, name));
      return fn != nullptr;
    };
    if (!(sym(lt->create, "cublasLtCreate") &&
          sym(lt->destroy, "cublasLtDestroy") &&
          sym(lt->descCreate, "cublasLtMatmulDescCreate") &&
          sym(lt->descSet, "cublasLtMatmulDescSetAttribute") &&
          sym(lt->descDestroy, "cublasLtMatmulDescDestroy") &&
          sym(lt->layoutCreate, "cublasLtMatrixLayoutCreate") &&
          sym(lt->layoutDestroy, "cublasLtMatrixLayoutDestroy") &&
          sym(lt->prefCreate, "cublasLtMatmulPreferenceCreate") &&
          sym(lt->prefSet, "cublasLtMatmulPreferenceSetAttribute") &&
          sym(lt->prefDestroy, "cublasLtMatmulPreferenceDestroy") &&
          sym(lt->heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
          sym(lt->matmul, "cublasLtMatmul")))
      return nullptr;
    if (lt->create(&lt->handle) != 0) {
      lt->handle = nullptr;
      return nullptr;
    }
    return lt;
  }

  /// Row-major D[M, N] (bf16) = X[M, K] * W[N, K]^T, computed column-major
  /// as D^T = W * X^T in the "TN" form FP8 needs; owns its descriptors.
  struct Plan {
    CublasLt *lt = nullptr;
    Handle desc = nullptr, a = nullptr, b = nullptr, d = nullptr,
           pref = nullptr;
    HeuristicResult result{};
    DevicePtr w = 0, x = 0, out = 0, workspace = 0;
    size_t workspaceBytes = 0;

    Plan() = default;
    Plan(const Plan &) = delete;
    Plan &operator=(const Plan &) = delete;
    ~Plan() {
      if (pref)
        (void)lt->prefDestroy(pref);
      for (Handle layout : {a, b, d})
        if (layout)
          (void)lt->layoutDestroy(layout);
      if (desc)
        (void)lt->descDestroy(desc);
    }

    /// Queues the GEMM; a failure would leave `out` as it was and pass a
    /// stale result off as cuBLASLt's.
    void run() {
      float alpha = 1.0f, beta = 0.0f;
      if (int status = lt->matmul(
              lt->handle, desc, &alpha, reinterpret_cast<void *>(w), a,
              reinterpret_cast<void *>(x), b, &beta,
              reinterpret_cast<void *>(out), d, reinterpret_cast<void *>(out),
              d, result.algo, reinterpret_cast<void *>(workspace),
              workspaceBytes, nullptr))
        fail("cublasLtMatmul failed with status " + std::to_string(status));
    }
  };
  /// Null when cuBLASLt has no algorithm.
  std::unique_ptr<Plan> plan(bool fp8, bool fastAccum, int64_t m, int64_t n,
                             int64_t k, DevicePtr x, DevicePtr w, DevicePtr out,
                             DevicePtr scaleX, DevicePtr scaleW,
                             DevicePtr workspace, size_t workspaceBytes) {
    auto owned = std::make_unique<Plan>();
    Plan &p = *owned;
    p.lt = this;
    p.w = w;
    p.x = x;
    p.out = out;
    p.workspace = workspace;
    p.workspaceBytes = workspaceBytes;
    int in = fp8 ? kR8E4M3 : kR16BF;
    int transA = kOpT, transB = kOpN, scaleType = kR32F;
    int8_t fast = fastAccum ? 1 : 0;
    if (descCreate(&p.desc, kCompute32F, kR32F) ||
        descSet(p.desc, kDescScaleType, &scaleType, sizeof(scaleType)) ||
        descSet(p.desc, kDescTransA, &transA, sizeof(transA)) ||
        descSet(p.desc, kDescTransB, &transB, sizeof(transB)))
      return nullptr;
    if (fp8) {
      void *sa = reinterpret_cast<void *>(scaleW);
      void *sb = reinterpret_cast<void *>(scaleX);
      if (descSet(p.desc, kDescAScalePointer, &sa, sizeof(sa)) ||
          descSet(p.desc, kDescBScalePointer, &sb, sizeof(sb)) ||
          descSet(p.desc, kDescFastAccum, &fast, sizeof(fast)))
        return nullptr;
    }
    uint64_t ws = workspaceBytes;
    if (layoutCreate(&p.a, in, k, n, k) || layoutCreate(&p.b, in, k, m, k) ||
        layoutCreate(&p.d, kR16BF, n, m, n) || prefCreate(&p.pref) ||
        prefSet(p.pref, kPrefMaxWorkspace, &ws, sizeof(ws)))
      return nullptr;
    int found = 0;
    if (heuristic(handle, p.desc, p.a, p.b, p.d, p.d, p.pref, 1, &p.result,
                  &found) ||
        found == 0)
      return nullptr;
    return owned;
  }
};

//===----------------------------------------------------------------------===//
// Problems
//===----------------------------------------------------------------------===//

uint64_t rngState = 0x243F6A8885A308D3ull;
float uniform() {
  rngState = rngState * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<float>(rngState >> 40) / static_cast<float>(1 << 24);
}

num::Format formatOf(gabi::Elem e) {
  return e == gabi::Elem::E5M2 ? num::Format::E5M2 : num::Format::E4M3FN;
}

float toFloat(const uint8_t *p, gabi::Elem e) {
  uint32_t bits = 0;
  if (e == gabi::Elem::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  bits = e == gabi::Elem::BF16 ? num::bf16BitsToF32Bits(h)
                               : num::f16BitsToF32Bits(h);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Relative rounding of the output type.
double outputEpsilon(gabi::Elem e) {
  return e == gabi::Elem::F32    ? 0x1p-23
         : e == gabi::Elem::BF16 ? 0x1p-8
                                 : 0x1p-11;
}

/// The smallest magnitude that rounds to infinity in the output type
/// (round to nearest even: the largest finite value plus half an ulp).
double overflowThreshold(gabi::Elem e) {
  return e == gabi::Elem::F32    ? 0x1.ffffffp127
         : e == gabi::Elem::BF16 ? 0x1.ffp127
                                 : 65520.0;
}

/// Bytes of inputs and outputs the timed launches rotate through.
constexpr double kRotateBytes = 256.0 * (1 << 20);

struct Problem {
  const char *name;
  gabi::Elem a, b, out, bias;
  bool amax;
  int64_t batch, m, n, k;
  bool rhsBatched;
  /// Per-tensor scales, per-block (1x128 lhs blocks, 128x128 rhs blocks;
  /// Blocks1d1d: 1x128 rhs blocks too), row-wise (one per row of A and of B
  /// along all of K) or MX (E8M0 per 32 elements of K on both).
  enum class Scaling {
    Tensor,
    Blocks,
    Blocks1d1d,
    Rows,
    MX
  } scaling = Scaling::Tensor;
};
using Scaling = Problem::Scaling;

/// The kernel that runs `p`, as convert-fp8-scaled-matmul-to-wgmma picks it.
gabi::GemmConfig configFor(const Problem &p, bool promote, bool tmaStore) {
  gabi::GemmConfig c;
  c.lhs = p.a;
  c.rhs = p.b;
  c.out = p.out;
  c.bias = p.bias;
  c.amax = p.amax;
  c.promote = promote;
  c.blockScaled =
      p.scaling == Scaling::Blocks || p.scaling == Scaling::Blocks1d1d;
  c.rhsRowBlocks = p.scaling == Scaling::Blocks1d1d;
  c.rowScaled = p.scaling == Scaling::Rows;
  c.mxScaled = p.scaling == Scaling::MX;
  c.tmaStore = tmaStore && gabi::canTmaStore(p.out, p.n);
  return gabi::selectTiles(c, p.m, p.n);
}

struct Gemm {
  CudaRuntime &cuda;
  DriverExtras &extras;
  int sms;

  struct Buffers {
    Problem p;
    gabi::GemmConfig config;
    int64_t pitch;
    std::vector<uint8_t> a, b; // pitched, zero padded
    std::vector<float> bias;
    std::vector<uint8_t> biasBytes;
    DevicePtr da = 0, db = 0, dout = 0, dsa = 0, dsb = 0, dbias = 0, damax = 0;
    TensorMap mapA, mapB, mapOut{};
    FunctionHandle kernel;
    float sa = 0.5f, sb = 0.25f;
    /// The per-block scale_invs: lhs [batch, M, K blocks], rhs [batch',
    /// N blocks, K blocks]; row-wise: lhs [batch, M], rhs [batch', N].
    std::vector<float> blockSa, blockSb;
    /// MX: the E8M0 codes, lhs [batch, M, K/32], rhs [batch', N, K/32].
    std::vector<uint8_t> mxSa, mxSb;
  };

  DevicePtr upload(const void *data, size_t bytes) {
    DevicePtr p = check(cuda.allocate(std::max<size_t>(bytes, 4)), "allocate");
    check(cuda.copyToDevice(p, data, bytes), "copy H2D");
    return p;
  }

  void release(Buffers &s) {
    for (DevicePtr p : {s.da, s.db, s.dout, s.dsa, s.dsb, s.dbias, s.damax})
      if (p)
        check(cuda.free(p), "free");
  }

  Buffers prepare(const Problem &p, ModuleHandle module, bool promote,
                  bool tmaStore = false) {
    Buffers s;
    s.p = p;
    s.config = configFor(p, promote, tmaStore);
    s.kernel = check(cuda.getFunction(module, s.config.name()),
                     "kernel lookup (is it in hopper-gemm.mlir?)");
    extras.allowSharedMemory(s.kernel, s.config.sharedBytes());
    // TMA needs 16-byte row pitches: pad K with zeros (never read: the
    // tensor map says K).
    s.pitch = (p.k + 15) / 16 * 16;
    int64_t batchB = p.rhsBatched ? p.batch : 1;
    auto fill = [&](std::vector<uint8_t> &v, int64_t rows, gabi::Elem e) {
      v.assign(rows * s.pitch, 0);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t kk = 0; kk < p.k; ++kk) {
          float x = (uniform() * 2 - 1) * 4;
          v[r * s.pitch + kk] =
              num::fromF32(x, formatOf(e), num::Overflow::SatFinite);
        }
    };
    fill(s.a, p.batch * p.m, p.a);
    fill(s.b, batchB * p.n, p.b);
    s.da = upload(s.a.data(), s.a.size());
    s.db = upload(s.b.data(), s.b.size());
    if (p.scaling != Scaling::Tensor) {
      // Scales over 2^-4 .. 2^5, not powers of two: their products round.
      auto scales = [&](std::vector<float> &v, int64_t count) {
        v.resize(count);
        for (float &x : v)
          x = std::ldexp(1.0f + uniform(), int(uniform() * 9) - 4);
      };
      int64_t kBlocks = (p.k + gabi::kBlockK - 1) / gabi::kBlockK;
      if (p.scaling == Scaling::MX) {
        // Codes 2^-6 .. 2^6 around 1, and one block of 2^-127 (code 0).
        auto codes = [&](std::vector<uint8_t> &v, int64_t count) {
          v.resize(count);
          for (uint8_t &x : v)
            x = uint8_t(121 + int(uniform() * 13));
          v[0] = 0;
        };
        int64_t k32 = (p.k + 31) / 32;
        codes(s.mxSa, p.batch * p.m * k32);
        codes(s.mxSb, batchB * p.n * k32);
      } else if (p.scaling == Scaling::Rows) {
        scales(s.blockSa, p.batch * p.m);
        scales(s.blockSb, batchB * p.n);
      } else {
        scales(s.blockSa, p.batch * p.m * kBlocks);
        int64_t rhsRows =
            p.scaling == Scaling::Blocks1d1d ? p.n : (p.n + 127) / 128;
        scales(s.blockSb, batchB * rhsRows * kBlocks);
      }
      if (p.scaling == Scaling::MX) {
        s.dsa = upload(s.mxSa.data(), s.mxSa.size());
        s.dsb = upload(s.mxSb.data(), s.mxSb.size());
      } else {
        s.dsa = upload(s.blockSa.data(), s.blockSa.size() * 4);
        s.dsb = upload(s.blockSb.data(), s.blockSb.size() * 4);
      }
    } else {
      s.dsa = upload(&s.sa, 4);
      s.dsb = upload(&s.sb, 4);
    }
    // Poisoned: all-ones bytes are NaN in f32, bf16 and f16, so an element
    // the kernel does not write fails the check.
    size_t outWords = (p.batch * p.m * p.n * gabi::bytes(p.out) + 3) / 4;
    s.dout = check(cuda.allocate(outWords * 4), "allocate");
    check(cuda.memsetD32(s.dout, 0xffffffffu, outWords), "poison output");
    if (p.bias != gabi::Elem::None) {
      s.bias.resize(p.n);
      s.biasBytes.resize(p.n * gabi::bytes(p.bias));
      for (int64_t j = 0; j < p.n; ++j) {
        float v = (uniform() * 2 - 1) * 8;
        if (p.bias == gabi::Elem::F32) {
          std::memcpy(&s.biasBytes[4 * j], &v, 4);
        } else {
          // Round through the stored type so the reference sees its value.
          uint8_t q =
              num::fromF32(v, num::Format::E4M3FN, num::Overflow::SatFinite);
          uint16_t h = p.bias == gabi::Elem::BF16
                           ? num::toBF16Bits(q, num::Format::E4M3FN)
                           : num::toF16Bits(q, num::Format::E4M3FN);
          std::memcpy(&s.biasBytes[2 * j], &h, 2);
          v = toFloat(&s.biasBytes[2 * j], p.bias);
        }
        s.bias[j] = v;
      }
      s.dbias = upload(s.biasBytes.data(), s.biasBytes.size());
    }
    if (p.amax)
      s.damax = check(cuda.allocate(4), "allocate");
    s.mapA = extras.encode(s.da, p.k, p.m, p.batch, s.pitch, gabi::kBlockK,
                           s.config.blockM, 1);
    s.mapB = extras.encode(s.db, p.k, p.n, batchB, s.pitch, gabi::kBlockK,
                           s.config.blockN, 1);
    if (s.config.tmaStore)
      s.mapOut =
          extras.encode(s.dout, p.n, p.m, p.batch, p.n * gabi::bytes(p.out),
                        gabi::stagedColumns(p.out), 64, gabi::bytes(p.out));
    return s;
  }

  void launch(Buffers &s) {
    const Problem &p = s.p;
    if (s.damax)
      check(cuda.memsetD32(s.damax, 0, 1), "memset");
    KernelArgs args;
    args.add(s.mapA).add(s.mapB).add(s.dout).add(s.dsa).add(s.dsb);
    args.add(s.dbias).add(s.damax);
    args.add(int32_t(p.m)).add(int32_t(p.n)).add(int32_t(p.k));
    args.add(int32_t(p.batch)).add(int32_t(p.rhsBatched ? 1 : 0));
    args.add(s.mapOut);
    unsigned grid =
        unsigned(gabi::persistentGridSize(s.config, p.batch, p.m, p.n, sms));
    check(cuda.launch(s.kernel, Dim3{grid}, Dim3{unsigned(s.config.threads())},
                      s.config.sharedBytes(), args),
          "launch");
  }

  /// Compares every `rowStep`-th row and the last one with the CPU
  /// reference; returns the number of bad elements.
  size_t verify(Buffers &s, int64_t rowStep) {
    const Problem &p = s.p;
    check(cuda.synchronize(), p.name);
    int ob = gabi::bytes(p.out);
    std::vector<uint8_t> out(p.batch * p.m * p.n * ob);
    check(cuda.copyToHost(out.data(), s.dout, out.size()), "copy D2H");
    std::vector<float> a(s.a.size()), b(s.b.size());
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = num::toF32(s.a[i], formatOf(p.a));
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = num::toF32(s.b[i], formatOf(p.b));
    size_t bad = 0, checked = 0;
    double maxRel = 0;
    float amaxRef = 0;
    for (int64_t bt = 0; bt < p.batch; ++bt)
      for (int64_t i = 0; i < p.m; ++i) {
        bool sampled = (i % rowStep) == 0 || i == p.m - 1;
        for (int64_t j = 0; j < p.n; ++j) {
          float got = toFloat(&out[((bt * p.m + i) * p.n + j) * ob], p.out);
          amaxRef = std::max(amaxRef, std::fabs(got));
          if (!sampled)
            continue;
          const float *x = &a[(bt * p.m + i) * s.pitch];
          const float *w = &b[((p.rhsBatched ? bt : 0) * p.n + j) * s.pitch];
          // Per K block (128 deep, 32 for MX): its partial sum times its
          // scale factor (f32(lhs * rhs) for block scales, the per-tensor
          // product otherwise).
          double acc = 0, mag = 0;
          int64_t depth = p.scaling == Scaling::MX ? 32 : gabi::kBlockK;
          int64_t kBlocks = (p.k + depth - 1) / depth;
          for (int64_t kb = 0; kb < kBlocks; ++kb) {
            double partial = 0, partialMag = 0;
            for (int64_t kk = kb * depth;
                 kk < std::min<int64_t>(p.k, (kb + 1) * depth); ++kk) {
              partial += double(x[kk]) * w[kk];
              partialMag += std::fabs(double(x[kk]) * w[kk]);
            }
            double factor = double(s.sa) * s.sb;
            int64_t bB = p.rhsBatched ? bt : 0;
            if (p.scaling == Scaling::Blocks) {
              int64_t nBlocks = (p.n + 127) / 128;
              factor = s.blockSa[(bt * p.m + i) * kBlocks + kb] *
                       s.blockSb[(bB * nBlocks + j / 128) * kBlocks + kb];
            } else if (p.scaling == Scaling::Blocks1d1d) {
              factor = s.blockSa[(bt * p.m + i) * kBlocks + kb] *
                       s.blockSb[(bB * p.n + j) * kBlocks + kb];
            } else if (p.scaling == Scaling::Rows) {
              factor = s.blockSa[bt * p.m + i] * s.blockSb[bB * p.n + j];
            } else if (p.scaling == Scaling::MX) {
              factor = num::e8m0ToF32(s.mxSa[(bt * p.m + i) * kBlocks + kb]) *
                       num::e8m0ToF32(s.mxSb[(bB * p.n + j) * kBlocks + kb]);
            }
            acc += partial * factor;
            mag += partialMag * std::fabs(factor);
          }
          double want = acc + (s.bias.empty() ? 0.0 : s.bias[j]);
          // f32 accumulation in the tensor cores (about 2^-13 relative per
          // K block on the magnitude), then the output rounding.
          double tol =
              0x1p-10 * mag + outputEpsilon(p.out) * std::fabs(want) + 1e-6;
          // NaN (an unwritten, poisoned element) fails: !(err <= tol).
          double err = std::fabs(got - want);
          // A sum past the output type's range rounds to an infinity of its
          // sign, as the CPU lowering's truncf does: right when the exact
          // value, within the tolerance, may reach the threshold.
          if (std::isinf(got) && (got > 0) == (want > 0) &&
              std::fabs(want) + tol >= overflowThreshold(p.out))
            err = 0;
          maxRel = std::isnan(err) ? INFINITY : std::max(maxRel, err / tol);
          ++checked;
          if (!(err <= tol) && bad++ < 5)
            std::fprintf(stderr,
                         "  %s: [%lld, %lld, %lld] got %g want %g (tol %g)\n",
                         p.name, (long long)bt, (long long)i, (long long)j, got,
                         want, tol);
        }
      }
    if (p.amax) {
      float amax;
      check(cuda.copyToHost(&amax, s.damax, 4), "copy D2H");
      if (!(amax == amaxRef)) {
        ++bad;
        std::fprintf(stderr, "  %s: amax %g, max |out| %g\n", p.name, amax,
                     amaxRef);
      }
    }
    std::printf(
        "check %-28s %-48s %zu elements, worst error %.3f of tolerance: %s\n",
        p.name, s.config.name().c_str(), checked, maxRel,
        bad ? "MISMATCH" : "ok");
    std::printf("CHECK|%s|%s|%.4f|%s\n", p.name, s.config.name().c_str(),
                maxRel, bad ? "MISMATCH" : "ok");
    return bad;
  }
};
} // namespace

int main(int argc, char **argv) {
  bench::toolName = "hopper-gemm";
  bench::Options options(argc, argv, kUsage);
  bench::probeIfAsked(options);
  bool listKernels = options.flag("list-kernels");
  std::string ptxPath =
      listKernels ? options.text("ptx", "") : options.required("ptx");
  std::string promotePtxPath = options.text("ptx-promote", "");
  std::string tmaStorePtxPath = options.text("ptx-tmastore", "");
  unsigned iterations = options.number("iterations", 20);
  bool skipTiming = options.flag("skip-timing");
  // Launch each check once and verify nothing: the kit's test over the
  // fake driver, which runs no kernel, checks the launches' parameters.
  bool launchOnly = options.flag("launch-only");
  options.finish();
  using E = gabi::Elem;
  std::vector<Problem> checks = {
      {"edges e4m3xe5m2 f32 bias amax", E::E4M3, E::E5M2, E::F32, E::F32, true,
       1, 333, 200, 208, false},
      {"small-M K=40 f16 bias", E::E5M2, E::E4M3, E::F16, E::F16, false, 1, 48,
       520, 40, false},
      {"batched shared weight", E::E4M3, E::E4M3, E::BF16, E::None, false, 3,
       100, 256, 128, false},
      {"batched rhs", E::E4M3, E::E4M3, E::BF16, E::None, false, 2, 128, 256,
       256, true},
      {"4096^3 bf16", E::E4M3, E::E4M3, E::BF16, E::None, false, 1, 4096, 4096,
       4096, false},
      // Llama-3-8B's down projection depth: where the plain kernel's
      // tensor-core accumulation and promote's f32 sums part ways (compare
      // "worst error" of the two lines).
      {"K=14336 bf16", E::E4M3, E::E4M3, E::BF16, E::None, false, 1, 256, 512,
       14336, false},
  };
  // Per-block scales (DeepGEMM's 1d2d: 1x128 activations, 128x128 weights):
  // a partial last K block, partial N blocks, a batch with a shared weight,
  // bias, and a large square one (sampled rows).
  // Row-wise scales (torchao's rowwise) in the epilogue likewise.
  std::vector<Problem> blockChecks = {
      {"blocks edges bias", E::E4M3, E::E4M3, E::BF16, E::BF16, false, 1, 333,
       200, 1000, false, Scaling::Blocks},
      {"blocks batched", E::E4M3, E::E4M3, E::F32, E::None, false, 2, 100, 384,
       512, false, Scaling::Blocks},
      {"blocks 4096^3", E::E4M3, E::E4M3, E::BF16, E::None, false, 1, 4096,
       4096, 4096, false, Scaling::Blocks},
      {"blocks small-M batched rhs", E::E4M3, E::E4M3, E::BF16, E::None, false,
       2, 48, 256, 384, true, Scaling::Blocks},
      {"rows edges amax", E::E4M3, E::E4M3, E::F16, E::None, true, 1, 333, 200,
       1000, false, Scaling::Rows},
      {"rows 4096^3", E::E4M3, E::E4M3, E::BF16, E::None, false, 1, 4096, 4096,
       4096, false, Scaling::Rows},
      {"blocks 1d1d wgrad e5m2", E::E5M2, E::E4M3, E::BF16, E::None, false, 1,
       300, 200, 1000, false, Scaling::Blocks1d1d},
      {"mx edges K=200", E::E4M3, E::E4M3, E::F32, E::None, false, 1, 300, 256,
       200, false, Scaling::MX},
      {"mx 4096^3", E::E4M3, E::E4M3, E::BF16, E::None, false, 1, 4096, 4096,
       4096, false, Scaling::MX},
  };
  struct Shape {
    const char *name;
    int64_t m, n, k;
  };
  std::vector<Shape> shapes = {
      {"4096^3", 4096, 4096, 4096},
      {"8192^3", 8192, 8192, 8192},
      {"llama3-8b qkv (4096x6144x4096)", 4096, 6144, 4096},
      {"llama3-8b o (4096x4096x4096)", 4096, 4096, 4096},
      {"llama3-8b gate/up (4096x14336x4096)", 4096, 14336, 4096},
      {"llama3-8b down (4096x4096x14336)", 4096, 4096, 14336},
  };
  auto timedProblem = [](const Shape &sh, Scaling scaling) {
    Problem p{sh.name,
              gabi::Elem::E4M3,
              gabi::Elem::E4M3,
              gabi::Elem::BF16,
              gabi::Elem::None,
              false,
              1,
              sh.m,
              sh.n,
              sh.k,
              false,
              scaling};
    return p;
  };
  if (listKernels) {
    // Every kernel a run looks up, by the PTX it comes from: what the kit's
    // test checks against the kit's PTX, so that no lent GPU minute is lost
    // to a missing kernel.
    auto list = [](const char *ptx, const gabi::GemmConfig &c) {
      std::printf("%s %s\n", ptx, c.name().c_str());
    };
    for (const Problem &p : checks) {
      list("plain", configFor(p, false, false));
      list("promote", configFor(p, true, false));
      list("tmastore", configFor(p, false, true));
    }
    for (const Problem &p : blockChecks) {
      bool promote = p.scaling != Scaling::Tensor && p.scaling != Scaling::Rows;
      list("plain", configFor(p, promote, false));
      list("tmastore", configFor(p, promote, true));
    }
    for (const Shape &sh : shapes) {
      list("plain", configFor(timedProblem(sh, Scaling::Tensor), false, false));
      list("promote",
           configFor(timedProblem(sh, Scaling::Tensor), true, false));
      list("tmastore",
           configFor(timedProblem(sh, Scaling::Tensor), false, true));
      list("plain", configFor(timedProblem(sh, Scaling::Blocks), true, false));
      list("plain", configFor(timedProblem(sh, Scaling::Rows), false, false));
      list("plain", configFor(timedProblem(sh, Scaling::MX), true, false));
    }
    return 0;
  }
  std::unique_ptr<CudaRuntime> device = bench::openDevice();
  CudaRuntime &cuda = *device;
  if (cuda.getComputeCapability() != 90)
    fail("the kernels need sm_90a (H100/H200)");
  DriverExtras extras{cuda};
  auto loadPtx = [&](const std::string &path) {
    return bench::loadPtx(cuda, path);
  };
  ModuleHandle module = loadPtx(ptxPath);
  std::optional<ModuleHandle> promoteModule, tmaStoreModule;
  if (!promotePtxPath.empty())
    promoteModule = loadPtx(promotePtxPath);
  if (!tmaStorePtxPath.empty())
    tmaStoreModule = loadPtx(tmaStorePtxPath);

  Gemm gemm{cuda, extras, cuda.getMultiprocessorCount()};
  size_t bad = 0;
  for (int variant = 0; variant < 3; ++variant) {
    bool promote = variant == 1, tmaStore = variant == 2;
    std::optional<ModuleHandle> m = promote    ? promoteModule
                                    : tmaStore ? tmaStoreModule
                                               : module;
    if (!m)
      continue;
    for (const Problem &p : checks) {
      auto s = gemm.prepare(p, *m, promote, tmaStore);
      gemm.launch(s);
      if (!launchOnly)
        bad += gemm.verify(s, p.m > 1024 ? 61 : 1);
      gemm.release(s);
    }
  }

  for (const Problem &p : blockChecks)
    for (int variant = 0; variant < 2; ++variant) {
      std::optional<ModuleHandle> m = variant == 1 ? tmaStoreModule : module;
      if (!m)
        continue;
      bool promote = p.scaling != Scaling::Tensor && p.scaling != Scaling::Rows;
      auto s = gemm.prepare(p, *m, promote, variant == 1);
      gemm.launch(s);
      if (!launchOnly)
        bad += gemm.verify(s, p.m > 1024 ? 61 : 1);
      gemm.release(s);
    }

  auto lt = CublasLt::load();
  if (!lt)
    std::printf("cuBLASLt: not found; skipping its comparison and timings\n");
  auto unloadModules = [&] {
    for (std::optional<ModuleHandle> m :
         {std::optional(module), promoteModule, tmaStoreModule})
      if (m)
        check(cuda.unloadModule(*m), "unload PTX");
  };
  if (skipTiming || launchOnly) {
    unloadModules();
    return bad ? 1 : 0;
  }

  bench::Timer time(cuda, /*warmups=*/5, iterations);
  size_t workspaceBytes = 64 << 20;
  DevicePtr workspace = check(cuda.allocate(workspaceBytes), "allocate");
  std::printf("\n%-38s %9s %9s %9s %9s %9s %9s %8s %8s\n", "shape (MxNxK)",
              "ours", "ours+prm", "ours+tma", "cuLt-fp8", "cuLt-fast",
              "cuLt-bf16", "/fp8", "/bf16");
  for (const Shape &sh : shapes) {
    Problem p = timedProblem(sh, Scaling::Tensor);
    double flops = 2.0 * sh.m * sh.n * sh.k;
    auto tflops = [&](float ms) { return flops / (ms * 1e-3) / 1e12; };
    // Consecutive launches read different buffers, together larger than
    // L2 (50 MiB on H100/H200), so no launch finds its inputs cached.
    double setBytes = double(sh.k) * (sh.m + sh.n) + 2.0 * sh.m * sh.n;
    size_t copies =
        std::min<size_t>(8, size_t(std::ceil(kRotateBytes / setBytes)));
    auto timeRotating = [&](ModuleHandle m, bool promote, bool tmaStore) {
      std::vector<Gemm::Buffers> sets;
      for (size_t i = 0; i < copies; ++i)
        sets.push_back(gemm.prepare(p, m, promote, tmaStore));
      double result =
          tflops(time([&](unsigned i) { gemm.launch(sets[i % copies]); }));
      for (Gemm::Buffers &set : sets)
        gemm.release(set);
      return result;
    };
    auto s = gemm.prepare(p, module, false);
    double ours = timeRotating(module, false, false);
    double oursPromote = 0, oursTma = 0;
    if (promoteModule)
      oursPromote = timeRotating(*promoteModule, true, false);
    if (tmaStoreModule)
      oursTma = timeRotating(*tmaStoreModule, false, true);
    // The block recipe's forward GEMM on the same shape.
    // The block recipe's forward GEMM and the row-wise one on the same
    // shape.
    auto timeScaled = [&](Scaling scaling) {
      Problem scaled = timedProblem(sh, scaling);
      std::vector<Gemm::Buffers> sets;
      for (size_t i = 0; i < copies; ++i)
        sets.push_back(
            gemm.prepare(scaled, module,
                         scaling == Scaling::Blocks || scaling == Scaling::MX));
      double result =
          tflops(time([&](unsigned i) { gemm.launch(sets[i % copies]); }));
      for (Gemm::Buffers &set : sets)
        gemm.release(set);
      return result;
    };
    double oursBlocks = timeScaled(Scaling::Blocks);
    double oursRows = timeScaled(Scaling::Rows);
    double oursMX = timeScaled(Scaling::MX);
    double fp8 = 0, fast = 0, bf16 = 0;
    if (lt) {
      for (bool fastAccum : {false, true}) {
        auto plan = lt->plan(true, fastAccum, sh.m, sh.n, sh.k, s.da, s.db,
                             s.dout, s.dsa, s.dsb, workspace, workspaceBytes);
        if (!plan)
          continue;
        // cuBLASLt on the same rotation of buffers.
        std::vector<Gemm::Buffers> sets;
        std::vector<std::unique_ptr<CublasLt::Plan>> plans;
        for (size_t i = 0; i < copies; ++i) {
          sets.push_back(gemm.prepare(p, module, false));
          Gemm::Buffers &set = sets.back();
          plans.push_back(lt->plan(true, fastAccum, sh.m, sh.n, sh.k, set.da,
                                   set.db, set.dout, set.dsa, set.dsb,
                                   workspace, workspaceBytes));
        }
        (fastAccum ? fast : fp8) = tflops(time([&](unsigned i) {
          CublasLt::Plan *rotated = plans[i % copies].get();
          (rotated ? rotated : plan.get())->run();
        }));
        for (Gemm::Buffers &set : sets)
          gemm.release(set);
        if (!fastAccum && sh.m == 4096 && sh.n == 4096 && sh.k == 4096) {
          // Same bytes, same scales: our result against cuBLASLt's.
          int ob = 2;
          std::vector<uint8_t> theirs(sh.m * sh.n * ob), ours16(theirs.size());
          plan->run();
          check(cuda.synchronize(), "cuBLASLt");
          check(cuda.copyToHost(theirs.data(), s.dout, theirs.size()), "D2H");
          gemm.launch(s);
          check(cuda.synchronize(), "ours");
          check(cuda.copyToHost(ours16.data(), s.dout, ours16.size()), "D2H");
          double num2 = 0, den2 = 0, maxDiff = 0;
          for (int64_t i = 0; i < sh.m * sh.n; ++i) {
            double x = toFloat(&ours16[i * ob], E::BF16);
            double y = toFloat(&theirs[i * ob], E::BF16);
            num2 += (x - y) * (x - y);
            den2 += y * y;
            maxDiff = std::max(maxDiff, std::fabs(x - y));
          }
          double rel = std::sqrt(num2 / std::max(den2, 1e-30));
          bool ok = rel < 1e-2;
          bad += ok ? 0 : 1;
          std::printf(
              "check against cuBLASLt FP8 4096^3: relative L2 %.2e, max |diff| "
              "%g: %s\n",
              rel, maxDiff, ok ? "ok" : "MISMATCH");
          std::printf("CHECK|vs cuBLASLt FP8 4096^3|relative L2|%.2e|%s\n", rel,
                      ok ? "ok" : "MISMATCH");
        }
      }
      // BF16: the same values widened (exact), same layout.
      std::vector<uint16_t> a16(s.a.size()), b16(s.b.size());
      for (size_t i = 0; i < a16.size(); ++i)
        a16[i] = num::toBF16Bits(s.a[i], num::Format::E4M3FN);
      for (size_t i = 0; i < b16.size(); ++i)
        b16[i] = num::toBF16Bits(s.b[i], num::Format::E4M3FN);
      DevicePtr da16 = gemm.upload(a16.data(), a16.size() * 2);
      DevicePtr db16 = gemm.upload(b16.data(), b16.size() * 2);
      if (auto plan = lt->plan(false, false, sh.m, sh.n, sh.k, da16, db16,
                               s.dout, 0, 0, workspace, workspaceBytes))
        bf16 = tflops(time([&](unsigned) { plan->run(); }));
      check(cuda.free(da16), "free");
      check(cuda.free(db16), "free");
    }
    double bestFp8 = std::max(fp8, fast);
    // For the GPU kit's summary (bench/gpu/kit/summarize.py).
    std::printf("GEMM|%s|%lld|%lld|%lld|%.1f|%.1f|%.1f|%.1f|%.1f|%.1f\n",
                sh.name, (long long)sh.m, (long long)sh.n, (long long)sh.k,
                ours, oursPromote, oursTma, fp8, fast, bf16);
    std::printf("BLOCKGEMM|%s|%lld|%lld|%lld|%.1f|%.1f|%.1f|%.1f|%.1f|%.1f\n",
                sh.name, (long long)sh.m, (long long)sh.n, (long long)sh.k,
                oursBlocks, oursRows, oursMX, ours, oursPromote,
                std::max(fp8, fast));
    std::printf("%-38s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %8.2f %8.2f\n",
                sh.name, ours, oursPromote, oursTma, fp8, fast, bf16,
                bestFp8 > 0 ? std::max(ours, oursTma) / bestFp8 : 0.0,
                bf16 > 0 ? std::max(ours, oursTma) / bf16 : 0.0);
    gemm.release(s);
  }
  check(cuda.free(workspace), "free");
  unloadModules();
  std::printf("TFLOP/s, median of %u launches over rotating buffers; /fp8 = "
              "best of ours (plain, tma store) / best cuBLASLt FP8 (what "
              "torch._scaled_mm runs; target >= 1.0, goal 1.1), /bf16 = the "
              "same / cuBLASLt BF16 (target >= 1.5); BLOCKGEMM rows: the "
              "1x128 x 128x128 block-scaled kernel, the row-wise one, MX "
              "(emulated: a promotion per k32 step), the per-tensor plain "
              "and promote kernels and the best cuBLASLt "
              "FP8 (per-tensor)\n",
              iterations);
  return bad ? 1 : 0;
}
