//===- hopper-casts.cpp - FP8 cast kernels on a GPU: exactness and speed --===//
//
// Loads the PTX that fp8-lower-to-nvvm made from bench/gpu/hopper-casts.mlir
// and checks the per-block casts (1x128 power-of-two, 128x128, MX 1x32:
// bytes, amaxes, scales and scale_invs per block against lib/Numerics on odd
// shapes with zero, NaN and Inf blocks); then, for f32 tensors of 1 MiB to
// 1 GiB:
//  * checks the GPU's bytes against the CPU numerics library
//    (numerics::fromF32(x * scale, SatFinite)) and its amax and scale
//    against computeAmax / computeCurrentScale, bit for bit;
//  * times quantize-with-fused-amax, cast+transpose and the block casts
//    against a plain device-to-device copy of the same bytes
//    (cuMemcpyDtoD), with events.
// With --transpose-ptx (the kernels fp8-lower-to-gpu made from
// bench/gpu/hopper-block-transpose.mlir), the same for the transposing
// block casts (block_cast_transpose).
// Every kernel is a gpu.func on memrefs: each memref is passed as its
// descriptor (pointers, offset, sizes, strides), and the runtime checks each
// launch's parameters against the kernel's. Launch geometry and parameters
// follow KernelABI.h, as the host launcher that the pass generates does. Exit
// status: 0 all exact, 1 a mismatch, 2 no GPU (or another runtime error).
//
//===----------------------------------------------------------------------===//

#include "BenchSupport.h"

#include "fp8/Conversion/FP8ToNVVM/KernelABI.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"
#include "fp8/Runtime/CudaRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

using namespace mlir::fp8;
using bench::check;
using runtime::CudaRuntime;
using runtime::DevicePtr;
using runtime::Dim3;
using runtime::FunctionHandle;
using runtime::KernelArgs;
namespace abi = mlir::fp8::nvvm_abi;
namespace num = mlir::fp8::numerics;

static const char *const kUsage =
    "usage: fp8-hopper-casts --ptx=KERNELS.ptx [--transpose-ptx=KERNELS.ptx]"
    " [--sizes-mib=1,4,16,64,256,1024] [--check-mib=256] [--iterations=20]"
    " [--probe]\n"
    "FP8 cast kernels: bit-exactness against lib/Numerics and bandwidth "
    "against a device-to-device copy.";

namespace {
/// Deterministic inputs that exercise every rounding case: a wide range of
/// magnitudes, ties, subnormals, overflow, +-Inf and NaN.
std::vector<float> makeInput(size_t n, uint64_t seed) {
  std::vector<float> x(n);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t r = static_cast<uint32_t>(state >> 32);
    switch (r % 64) {
    case 0:
      x[i] = std::numeric_limits<float>::quiet_NaN();
      break;
    case 1:
      x[i] = (r & 64) ? std::numeric_limits<float>::infinity()
                      : -std::numeric_limits<float>::infinity();
      break;
    case 2: // any bit pattern, NaNs with payloads included
      std::memcpy(&x[i], &r, 4);
      break;
    default: {
      float mantissa = static_cast<float>((r >> 8) & 0xFFFF) / 65536.0f;
      int exponent = static_cast<int>((r >> 24) % 40) - 24;
      x[i] = std::ldexp(1.0f + mantissa, exponent) * ((r & 128) ? -1 : 1);
    }
    }
  }
  return x;
}

struct Device {
  CudaRuntime &cuda;
  DevicePtr allocate(size_t bytes) {
    return check(cuda.allocate(std::max<size_t>(bytes, 4)), "allocate");
  }
  template <typename T> std::vector<T> read(DevicePtr src, size_t count) {
    std::vector<T> out(count);
    check(cuda.copyToHost(out.data(), src, count * sizeof(T)), "copy D2H");
    return out;
  }
  float readScalar(DevicePtr src) { return read<float>(src, 1)[0]; }
  void writeScalar(DevicePtr dst, float value) {
    check(cuda.copyToDevice(dst, &value, 4), "copy H2D");
  }
};

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// Number of bytes of `got` that differ from the reference conversion.
size_t compareQuantized(const std::vector<float> &x, float scale,
                        num::Format format, const std::vector<uint8_t> &got,
                        const char *what) {
  size_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    uint8_t want = num::fromF32(x[i] * scale, format, num::Overflow::SatFinite);
    if (got[i] != want && bad++ < 5)
      std::fprintf(stderr,
                   "  %s: element %zu x=%a scale=%a: got "
                   "0x%02x want 0x%02x\n",
                   what, i, x[i], scale, got[i], want);
  }
  return bad;
}

double bandwidth(double bytes, float ms) { return bytes / (ms * 1e-3) / 1e9; }

/// A rows x cols f32 matrix for the block casts: magnitudes that change from
/// row to row (so that every block gets its own scale), one all-zero block,
/// one block holding a NaN and one an Inf.
std::vector<float> makeBlockInput(size_t rows, size_t cols, uint64_t seed) {
  std::vector<float> x(rows * cols);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 7;
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      uint32_t u = static_cast<uint32_t>(state >> 32);
      float mantissa = static_cast<float>(u & 0xFFFFFF) / 16777216.0f;
      int exponent = int((r * 7 + c / 32) % 48) - 30 + int((u >> 24) % 4);
      x[r * cols + c] =
          std::ldexp(1.0f + mantissa, exponent) * ((u >> 28) & 1 ? -1 : 1);
    }
  // The first 128x128 block all zero (and with it 1x128 and 1x32 blocks).
  for (size_t r = 0; r < std::min<size_t>(rows, 128); ++r)
    for (size_t c = 0; c < std::min<size_t>(cols, 128); ++c)
      x[r * cols + c] = 0.0f;
  if (rows > 130 && cols > 200) {
    x[1 * cols + 130] = std::numeric_limits<float>::quiet_NaN();
    x[130 * cols + 2] = -std::numeric_limits<float>::infinity();
  }
  return x;
}

/// What lib/Numerics says one block's amax, scale and scale_inv (an f32, or
/// for MX the E8M0 code) are.
struct BlockReference {
  float amax, scale, inv = 0;
  uint8_t code = 0;

  BlockReference(const std::vector<float> &values, bool mx, bool powerOfTwo)
      : amax(num::computeAmax(values.data(), values.size())) {
    if (mx) {
      code = num::computeMXScaleInvCode(amax, 448.0f);
      scale = num::mxScaleFromCode(code);
    } else {
      scale = num::computeBlockScale(amax, 448.0f, powerOfTwo, 0.0f);
      inv = 1.0f / scale;
    }
  }
};

/// Reads back a block cast's outputs: `data` bytes of q, and each block's
/// amax, scale and scale_inv (4 bytes each; MX codes in the first bytes).
struct QuantizedBytes {
  DevicePtr ptr;
  size_t count;
};
struct BlockScalars {
  DevicePtr amax, scale, inv;
  size_t blocks;
};
void readBlockOutputs(Device &dev, QuantizedBytes data, BlockScalars scalars,
                      std::vector<uint8_t> &q, std::vector<float> &amax,
                      std::vector<float> &scale,
                      std::vector<uint8_t> &invBytes) {
  q = dev.read<uint8_t>(data.ptr, data.count);
  amax = dev.read<float>(scalars.amax, scalars.blocks);
  scale = dev.read<float>(scalars.scale, scalars.blocks);
  invBytes = dev.read<uint8_t>(scalars.inv, scalars.blocks * 4);
}

/// One block recipe of the block_cast kernels (KernelABI.h).
struct BlockRecipe {
  const char *kernel;
  int64_t br, bc;
  bool mx, powerOfTwo;
  /// bf16 input (its 8-byte vector path) instead of f32.
  bool bf16 = false;
};

/// f32 -> bf16 bits, rounded to nearest even (NaN stays NaN).
uint16_t toBF16(float f) {
  uint32_t b = bits(f);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u)
    return uint16_t((b >> 16) | 0x40);
  return uint16_t((b + 0x7FFFu + ((b >> 16) & 1)) >> 16);
}

// The kernels are gpu.funcs on memrefs: each memref is passed as the
// descriptor convert-gpu-to-nvvm expands it into (allocated and aligned
// pointers, offset, sizes, strides; identity layouts, offset 0 here).

/// memref<?x?xT>.
void addMatrix(KernelArgs &args, DevicePtr ptr, int64_t rows, int64_t cols) {
  args.add(ptr)
      .add(ptr)
      .add(int64_t(0))
      .add(rows)
      .add(cols)
      .add(cols)
      .add(int64_t(1));
}

/// memref<?xT> and memref<T>.
void addVector(KernelArgs &args, DevicePtr ptr, int64_t size) {
  args.add(ptr).add(ptr).add(int64_t(0)).add(size).add(int64_t(1));
}
void addScalar(KernelArgs &args, DevicePtr ptr) {
  args.add(ptr).add(ptr).add(int64_t(0));
}

/// A block kernel's parameters: x and q (`elements` each), the three
/// per-block tensors (`blocks` each), batch, rows, cols.
void addBlockArgs(KernelArgs &args, DevicePtr x, DevicePtr q, DevicePtr amax,
                  DevicePtr scale, DevicePtr inv, int64_t batch, int64_t rows,
                  int64_t cols, int64_t blocks) {
  addVector(args, x, batch * rows * cols);
  addVector(args, q, batch * rows * cols);
  for (DevicePtr p : {amax, scale, inv})
    addVector(args, p, blocks);
  args.add(batch).add(rows).add(cols);
}

/// An elementwise cast's parameters: in and out (`n` each), the scale.
KernelArgs castArgs(DevicePtr in, DevicePtr out, int64_t n, DevicePtr scale) {
  KernelArgs args;
  addVector(args, in, n);
  addVector(args, out, n);
  addScalar(args, scale);
  return args;
}

/// cast_transpose's parameters: x, q and qt (rows x cols each), the scale,
/// the amax, rows, cols.
KernelArgs castTransposeArgs(DevicePtr x, DevicePtr q, DevicePtr qt,
                             DevicePtr scale, DevicePtr amax, size_t rows,
                             size_t cols) {
  KernelArgs args;
  for (DevicePtr p : {x, q, qt})
    addVector(args, p, int64_t(rows * cols));
  addScalar(args, scale);
  addScalar(args, amax);
  args.add(int64_t(rows)).add(int64_t(cols));
  return args;
}

/// Mismatches of a finished cast_transpose of `x` (rows x cols) at
/// `scale`: every byte of q against lib/Numerics, qt against q transposed,
/// and the amax.
size_t checkCastTranspose(Device &dev, const std::vector<float> &x, float scale,
                          DevicePtr dq, DevicePtr dqt, DevicePtr damax,
                          size_t rows, size_t cols) {
  size_t count = rows * cols;
  std::vector<uint8_t> q = dev.read<uint8_t>(dq, count);
  std::vector<uint8_t> qt = dev.read<uint8_t>(dqt, count);
  size_t bad =
      compareQuantized(x, scale, num::Format::E4M3FN, q, "cast_transpose");
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      if (qt[c * rows + r] != q[r * cols + c] && bad++ < 5)
        std::fprintf(stderr, "  transpose (%zu,%zu) differs\n", r, c);
  float amax = dev.readScalar(damax);
  float want = num::computeAmax(x.data(), count);
  if (bits(amax) != bits(want)) {
    ++bad;
    std::fprintf(stderr, "  cast_transpose amax %a, want %a\n", amax, want);
  }
  return bad;
}

/// Runs `recipe`'s block_cast on `input` ([batch, rows, cols]) and compares
/// q, amax, scale and scale_inv with lib/Numerics block by block. Returns
/// the number of mismatches.
size_t checkBlockCast(CudaRuntime &cuda, FunctionHandle f,
                      const BlockRecipe &recipe,
                      const std::vector<float> &input, size_t batch,
                      size_t rows, size_t cols) {
  Device dev{cuda};
  size_t blockRows = (rows + recipe.br - 1) / recipe.br;
  size_t blockCols = (cols + recipe.bc - 1) / recipe.bc;
  size_t blocks = batch * blockRows * blockCols;
  size_t qWords = (input.size() + 3) / 4;
  // The reference sees the values the kernel reads (bf16-rounded).
  std::vector<float> x = input;
  std::vector<uint16_t> x16;
  if (recipe.bf16)
    for (float &v : x) {
      x16.push_back(toBF16(v));
      uint32_t widened = uint32_t(x16.back()) << 16;
      std::memcpy(&v, &widened, 4);
    }
  DevicePtr dx = dev.allocate(x.size() * 4), dq = dev.allocate(qWords * 4);
  DevicePtr damax = dev.allocate(blocks * 4), dscale = dev.allocate(blocks * 4);
  DevicePtr dinv = dev.allocate(blocks * 4);
  if (recipe.bf16)
    check(cuda.copyToDevice(dx, x16.data(), x16.size() * 2), "copy H2D");
  else
    check(cuda.copyToDevice(dx, x.data(), x.size() * 4), "copy H2D");
  // Poison (a NaN pattern): every output must be written.
  for (auto [ptr, words] : {std::pair{dq, qWords}, std::pair{damax, blocks},
                            std::pair{dscale, blocks}, std::pair{dinv, blocks}})
    check(cuda.memsetD32(ptr, 0xFFA5A5A5u, words), "memset");
  KernelArgs args;
  addBlockArgs(args, dx, dq, damax, dscale, dinv, int64_t(batch), int64_t(rows),
               int64_t(cols), int64_t(blocks));
  int64_t group = abi::blockGroupSize(recipe.br, recipe.bc);
  check(cuda.launch(f, Dim3{unsigned(abi::blockKernelGridSize(blocks, group))},
                    Dim3{unsigned(abi::kBlockSize)}, 0, args),
        "launch");
  check(cuda.synchronize(), recipe.kernel);
  std::vector<uint8_t> q, invBytes;
  std::vector<float> amax, scale;
  readBlockOutputs(dev, {dq, x.size()}, {damax, dscale, dinv, blocks}, q, amax,
                   scale, invBytes);
  size_t bad = 0;
  auto report = [&](const char *what, size_t block, double got, double want) {
    if (bad++ < 5)
      std::fprintf(stderr, "  %s: block %zu %s %a, want %a\n", recipe.kernel,
                   block, what, got, want);
  };
  auto invGot = [&](size_t block) -> double {
    if (recipe.mx)
      return invBytes[block];
    float f;
    std::memcpy(&f, &invBytes[4 * block], 4);
    return f;
  };
  std::vector<float> values;
  for (size_t b = 0; b < batch; ++b)
    for (size_t bi = 0; bi < blockRows; ++bi)
      for (size_t bj = 0; bj < blockCols; ++bj) {
        size_t block = (b * blockRows + bi) * blockCols + bj;
        size_t base = b * rows * cols;
        size_t r1 = std::min(rows, (bi + 1) * recipe.br);
        size_t c1 = std::min(cols, (bj + 1) * recipe.bc);
        values.clear();
        for (size_t r = bi * recipe.br; r < r1; ++r)
          for (size_t c = bj * recipe.bc; c < c1; ++c)
            values.push_back(x[base + r * cols + c]);
        BlockReference ref(values, recipe.mx, recipe.powerOfTwo);
        float amaxRef = ref.amax, scaleRef = ref.scale, invRef = ref.inv;
        uint8_t codeRef = ref.code;
        if (bits(amax[block]) != bits(amaxRef))
          report("amax", block, amax[block], amaxRef);
        if (bits(scale[block]) != bits(scaleRef))
          report("scale", block, scale[block], scaleRef);
        if (recipe.mx ? invBytes[block] != codeRef
                      : std::memcmp(&invBytes[4 * block], &invRef, 4) != 0)
          report("scale_inv", block, invGot(block),
                 recipe.mx ? codeRef : invRef);
        for (size_t r = bi * recipe.br; r < r1; ++r)
          for (size_t c = bj * recipe.bc; c < c1; ++c) {
            uint8_t want =
                num::fromF32(x[base + r * cols + c] * scaleRef,
                             num::Format::E4M3FN, num::Overflow::SatFinite);
            if (q[base + r * cols + c] != want)
              report("byte", block, q[base + r * cols + c], want);
          }
      }
  for (DevicePtr p : {dx, dq, damax, dscale, dinv})
    check(cuda.free(p), "free");
  return bad;
}
/// A transposing block cast (KernelABI.h): x [rows, cols] in bc x 1
/// blocks, written as q [cols, rows] with scales [cols, ceil(rows / bc)].
struct TransposeRecipe {
  const char *kernel;
  int64_t bc;
  bool mx, powerOfTwo;
};

/// Launches `recipe`'s block_cast_transpose over x (f32, device) of
/// rows x cols into q and the three scale tensors.
void launchBlockCastTranspose(CudaRuntime &cuda, FunctionHandle f,
                              const TransposeRecipe &recipe, DevicePtr x,
                              DevicePtr q, DevicePtr amax, DevicePtr scale,
                              DevicePtr inv, int64_t rows, int64_t cols) {
  int64_t blockRows = (rows + recipe.bc - 1) / recipe.bc;
  KernelArgs args;
  addMatrix(args, x, rows, cols);
  addMatrix(args, q, cols, rows);
  for (DevicePtr p : {amax, scale, inv})
    addMatrix(args, p, cols, blockRows);
  int64_t tiles =
      (cols + abi::kTransposeCastColumns - 1) / abi::kTransposeCastColumns;
  check(cuda.launch(f, Dim3{unsigned(tiles), unsigned(blockRows)},
                    Dim3{unsigned(abi::kBlockSize)}, 0, args),
        "launch");
}

/// Runs `recipe` on `x` (rows x cols) and compares the transposed bytes,
/// amaxes, scales and scale_invs with lib/Numerics block by block. Returns
/// the number of mismatches.
size_t checkBlockCastTranspose(CudaRuntime &cuda, FunctionHandle f,
                               const TransposeRecipe &recipe,
                               const std::vector<float> &x, size_t rows,
                               size_t cols) {
  Device dev{cuda};
  size_t blockRows = (rows + recipe.bc - 1) / recipe.bc;
  size_t blocks = cols * blockRows;
  size_t qWords = (x.size() + 3) / 4;
  DevicePtr dx = dev.allocate(x.size() * 4), dq = dev.allocate(qWords * 4);
  DevicePtr damax = dev.allocate(blocks * 4), dscale = dev.allocate(blocks * 4);
  DevicePtr dinv = dev.allocate(blocks * 4);
  check(cuda.copyToDevice(dx, x.data(), x.size() * 4), "copy H2D");
  for (auto [ptr, words] : {std::pair{dq, qWords}, std::pair{damax, blocks},
                            std::pair{dscale, blocks}, std::pair{dinv, blocks}})
    check(cuda.memsetD32(ptr, 0xFFA5A5A5u, words), "memset");
  launchBlockCastTranspose(cuda, f, recipe, dx, dq, damax, dscale, dinv,
                           int64_t(rows), int64_t(cols));
  check(cuda.synchronize(), recipe.kernel);
  std::vector<uint8_t> q, invBytes;
  std::vector<float> amax, scale;
  readBlockOutputs(dev, {dq, x.size()}, {damax, dscale, dinv, blocks}, q, amax,
                   scale, invBytes);
  size_t bad = 0;
  auto report = [&](const char *what, size_t col, size_t bi, double got,
                    double want) {
    if (bad++ < 5)
      std::fprintf(stderr, "  %s: column %zu block %zu %s %a, want %a\n",
                   recipe.kernel, col, bi, what, got, want);
  };
  std::vector<float> values;
  for (size_t c = 0; c < cols; ++c)
    for (size_t bi = 0; bi < blockRows; ++bi) {
      size_t block = c * blockRows + bi; // [cols, blockRows], row-major
      size_t r1 = std::min(rows, (bi + 1) * recipe.bc);
      values.clear();
      for (size_t r = bi * recipe.bc; r < r1; ++r)
        values.push_back(x[r * cols + c]);
      BlockReference ref(values, recipe.mx, recipe.powerOfTwo);
      float amaxRef = ref.amax, scaleRef = ref.scale, invRef = ref.inv;
      uint8_t codeRef = ref.code;
      if (bits(amax[block]) != bits(amaxRef))
        report("amax", c, bi, amax[block], amaxRef);
      if (bits(scale[block]) != bits(scaleRef))
        report("scale", c, bi, scale[block], scaleRef);
      float invGot;
      std::memcpy(&invGot, &invBytes[4 * block], 4);
      if (recipe.mx ? invBytes[block] != codeRef : bits(invGot) != bits(invRef))
        report("scale_inv", c, bi, recipe.mx ? invBytes[block] : invGot,
               recipe.mx ? codeRef : invRef);
      for (size_t r = bi * recipe.bc; r < r1; ++r) {
        uint8_t want =
            num::fromF32(x[r * cols + c] * scaleRef, num::Format::E4M3FN,
                         num::Overflow::SatFinite);
        if (q[c * rows + r] != want)
          report("byte", c, bi, q[c * rows + r], want);
      }
    }
  for (DevicePtr p : {dx, dq, damax, dscale, dinv})
    check(cuda.free(p), "free");
  return bad;
}

} // namespace

int main(int argc, char **argv) {
  bench::toolName = "hopper-casts";
  bench::Options options(argc, argv, kUsage);
  bench::probeIfAsked(options);
  std::string ptxPath = options.required("ptx");
  std::string transposePtxPath = options.text("transpose-ptx", "");
  std::vector<unsigned> sizes =
      options.numbers("sizes-mib", {1, 4, 16, 64, 256, 1024});
  unsigned iterations = options.number("iterations", 20);
  // Every byte is compared on sizes up to this; larger ones are timed only
  // (the same kernels on the same input patterns: the single-threaded
  // reference over 2 GiB took longer than the kit's time for the part).
  unsigned checkMib = options.number("check-mib", 256);
  options.finish();
  std::unique_ptr<CudaRuntime> device = bench::openDevice();
  CudaRuntime &cuda = *device;
  if (cuda.getComputeCapability() < 90)
    std::fprintf(stderr, "hopper-casts: warning: the kernels target sm_90a\n");

  runtime::ModuleHandle module = bench::loadPtx(cuda, ptxPath);
  auto kernel = [&](const char *name) {
    return check(cuda.getFunction(module, name), name);
  };
  FunctionHandle quantizeAmaxE4M3 = kernel("quantize_amax_f32_e4m3");
  FunctionHandle quantizeAmaxE5M2 = kernel("quantize_amax_f32_e5m2");
  FunctionHandle quantizeE4M3 = kernel("quantize_f32_e4m3");
  FunctionHandle amaxF32 = kernel("amax_f32");
  FunctionHandle computeScale = kernel("compute_scale");
  FunctionHandle castTranspose = kernel("cast_transpose_f32_e4m3_amax");
  FunctionHandle dequantize = kernel("dequantize_e4m3_f32");
  // The timed recipes (f32 input), then a bf16 one checked on a batch.
  const BlockRecipe blockRecipes[] = {
      {"block_cast_f32_e4m3_1x128_pow2", 1, 128, false, true},
      {"block_cast_f32_e4m3_128x128", 128, 128, false, false},
      {"block_cast_f32_e4m3_1x32_mx", 1, 32, true, false},
      {"block_cast_bf16_e4m3_1x128_pow2", 1, 128, false, true, true}};
  constexpr size_t kTimedRecipes = 3;
  std::vector<FunctionHandle> blockCasts;
  for (const BlockRecipe &recipe : blockRecipes)
    blockCasts.push_back(kernel(recipe.kernel));
  // The transposing block casts, when their PTX is given; the first is
  // timed.
  const TransposeRecipe transposeRecipes[] = {
      {"block_cast_transpose_f32_e4m3_128x1_pow2", 128, false, true},
      {"block_cast_transpose_f32_e4m3_32x1_mx", 32, true, false}};
  std::optional<runtime::ModuleHandle> transposeModule;
  std::vector<FunctionHandle> transposeCasts;
  if (!transposePtxPath.empty()) {
    transposeModule = bench::loadPtx(cuda, transposePtxPath);
    for (const TransposeRecipe &recipe : transposeRecipes)
      transposeCasts.push_back(check(
          cuda.getFunction(*transposeModule, recipe.kernel), recipe.kernel));
  }

  // 0 MiB has no matrix side to divide by.
  if (sizes.empty() || std::count(sizes.begin(), sizes.end(), 0u))
    bench::fail("--sizes-mib: sizes must be positive");
  Device dev{cuda};
  size_t mismatches = 0;
  bench::Timer time(cuda, /*warmups=*/1, iterations);
  auto elementwise = [&](FunctionHandle f, size_t n, KernelArgs &args) {
    check(cuda.launch(f, Dim3{unsigned(abi::elementwiseGridSize(n))},
                      Dim3{unsigned(abi::kBlockSize)}, 0, args),
          "launch");
  };

  // Per-block casts: exactness on odd shapes (partial blocks, a row length
  // that is not a multiple of 4: the element-by-element path), all-zero,
  // NaN and Inf blocks.
  for (auto [rowsB, colsB] : {std::pair<size_t, size_t>{1000, 1000},
                              std::pair<size_t, size_t>{130, 301}}) {
    for (size_t i = 0; i < std::size(blockRecipes); ++i) {
      // The bf16 recipe on a batch of two (the batch offset).
      size_t batch = blockRecipes[i].bf16 ? 2 : 1;
      std::vector<float> xb = makeBlockInput(batch * rowsB, colsB, rowsB);
      size_t bad = checkBlockCast(cuda, blockCasts[i], blockRecipes[i], xb,
                                  batch, rowsB, colsB);
      std::printf("%s on %zux%zux%zu: %s\n", blockRecipes[i].kernel, batch,
                  rowsB, colsB, bad ? "MISMATCH" : "exact");
      mismatches += bad;
    }
    for (size_t i = 0; i < transposeCasts.size(); ++i) {
      std::vector<float> xb = makeBlockInput(rowsB, colsB, rowsB + 1);
      size_t bad = checkBlockCastTranspose(
          cuda, transposeCasts[i], transposeRecipes[i], xb, rowsB, colsB);
      std::printf("%s on %zux%zu: %s\n", transposeRecipes[i].kernel, rowsB,
                  colsB, bad ? "MISMATCH" : "exact");
      mismatches += bad;
    }
  }

  // cast+transpose on shapes that take its element path (a side not a
  // multiple of 16, edge tiles), every byte of q and qt and the amax.
  for (auto [rowsT, colsT] : {std::pair<size_t, size_t>{1000, 1000},
                              std::pair<size_t, size_t>{130, 301},
                              std::pair<size_t, size_t>{64, 4099}}) {
    size_t count = rowsT * colsT;
    std::vector<float> m = makeInput(count, rowsT + colsT);
    DevicePtr dx = dev.allocate(count * 4), dq = dev.allocate(count),
              dqt = dev.allocate(count), dscale = dev.allocate(4),
              damax = dev.allocate(4);
    check(cuda.copyToDevice(dx, m.data(), count * 4), "copy H2D");
    check(cuda.memsetD32(damax, 0, 1), "memset");
    const float scale = 0.75f;
    dev.writeScalar(dscale, scale);
    KernelArgs args =
        castTransposeArgs(dx, dq, dqt, dscale, damax, rowsT, colsT);
    check(cuda.launch(castTranspose,
                      Dim3{unsigned(abi::castTransposeGridSize(rowsT, colsT))},
                      Dim3{unsigned(abi::kBlockSize)}, 0, args),
          "launch");
    check(cuda.synchronize(), "cast_transpose");
    size_t bad =
        checkCastTranspose(dev, m, scale, dq, dqt, damax, rowsT, colsT);
    std::printf("cast_transpose_f32_e4m3_amax on %zux%zu: %s\n", rowsT, colsT,
                bad ? "MISMATCH" : "exact");
    mismatches += bad;
    for (DevicePtr p : {dx, dq, dqt, dscale, damax})
      check(cuda.free(p), "free");
  }

  struct Row {
    unsigned mib;
    double copy, quant, ct, block[3];
    double blockTranspose = 0; // 128x1 pow2, transposed (--transpose-ptx)
  };
  std::vector<Row> rows;
  for (unsigned mib : sizes) {
    size_t bytes = size_t(mib) << 20;
    // An odd element count for the 1-D kernels exercises the scalar tail;
    // the matrix is as square as the size allows.
    size_t n = bytes / 4 + (mib == sizes.front() ? 7 : 0);
    size_t side = static_cast<size_t>(std::sqrt(double(bytes / 4)));
    size_t rowsM = side, colsM = (bytes / 4) / side;
    std::vector<float> x = makeInput(std::max(n, rowsM * colsM), mib);
    std::printf("%6u MiB: n=%zu, matrix %zux%zu%s\n", mib, n, rowsM, colsM,
                mib <= checkMib ? "" : " (timed only)");

    DevicePtr dx = dev.allocate(x.size() * 4);
    check(cuda.copyToDevice(dx, x.data(), x.size() * 4), "copy H2D");
    DevicePtr dq = dev.allocate(x.size()), dqt = dev.allocate(x.size());
    DevicePtr dscale = dev.allocate(4), damax = dev.allocate(4);
    DevicePtr dcopy = dev.allocate(bytes), dy = dev.allocate(n * 4);
    const float scale = 3.25f;
    if (mib <= checkMib) {
      std::vector<float> head(x.begin(), x.begin() + n);
      float amaxRef = num::computeAmax(head.data(), n);

      // Delayed scaling: quantize with a known scale, amax fused.
      dev.writeScalar(dscale, scale);
      for (auto [f, format, name] :
           {std::tuple{quantizeAmaxE4M3, num::Format::E4M3FN, "quantize e4m3"},
            std::tuple{quantizeAmaxE5M2, num::Format::E5M2, "quantize e5m2"}}) {
        check(cuda.memsetD32(damax, 0, 1), "memset");
        KernelArgs args = castArgs(dx, dq, n, dscale);
        addScalar(args, damax);
        elementwise(f, n, args);
        check(cuda.synchronize(), name);
        mismatches += compareQuantized(head, scale, format,
                                       dev.read<uint8_t>(dq, n), name);
        float amax = dev.readScalar(damax);
        if (bits(amax) != bits(amaxRef)) {
          ++mismatches;
          std::fprintf(stderr, "  %s: amax %a, want %a\n", name, amax, amaxRef);
        }
      }

      // Current scaling: amax, then the scale, then the cast.
      {
        check(cuda.memsetD32(damax, 0, 1), "memset");
        KernelArgs amaxArgs;
        addVector(amaxArgs, dx, n);
        addScalar(amaxArgs, damax);
        elementwise(amaxF32, n, amaxArgs);
        // compute_scale (a gpu.func): the amax as a history of one; current
        // scaling never reads `previous`, the scale stands in.
        KernelArgs scaleArgs;
        float scaledMax = num::scaledMax(448.0f, 0);
        addVector(scaleArgs, damax, 1);
        addScalar(scaleArgs, dscale);
        addScalar(scaleArgs, dscale);
        scaleArgs.add(scaledMax).add(0.0f).add(int32_t(abi::kScaleMostRecent));
        check(cuda.launch(computeScale, Dim3{1}, Dim3{unsigned(abi::kWarpSize)},
                          0, scaleArgs),
              "launch");
        KernelArgs quantArgs = castArgs(dx, dq, n, dscale);
        elementwise(quantizeE4M3, n, quantArgs);
        check(cuda.synchronize(), "current scaling");
        float scaleRef = num::computeCurrentScale(amaxRef, 448.0f, 0, false, 0);
        float got = dev.readScalar(dscale);
        if (bits(got) != bits(scaleRef)) {
          ++mismatches;
          std::fprintf(stderr, "  current scale %a, want %a\n", got, scaleRef);
        }
        mismatches += compareQuantized(head, scaleRef, num::Format::E4M3FN,
                                       dev.read<uint8_t>(dq, n),
                                       "current-scaling quantize");

        // Dequantize back: exact f32 products of the FP8 values.
        KernelArgs deqArgs = castArgs(dq, dy, n, dscale);
        elementwise(dequantize, n, deqArgs);
        std::vector<uint8_t> q = dev.read<uint8_t>(dq, n);
        std::vector<float> y = dev.read<float>(dy, n);
        size_t bad = 0;
        for (size_t i = 0; i < n; ++i) {
          float want = num::toF32(q[i], num::Format::E4M3FN) * scaleRef;
          if (bits(y[i]) != bits(want) &&
              !(std::isnan(y[i]) && std::isnan(want)) && bad++ < 5)
            std::fprintf(stderr, "  dequantize %zu: got %a want %a\n", i, y[i],
                         want);
        }
        mismatches += bad;
      }
    }

    // cast+transpose with amax.
    {
      check(cuda.memsetD32(damax, 0, 1), "memset");
      dev.writeScalar(dscale, scale);
      size_t count = rowsM * colsM;
      KernelArgs args =
          castTransposeArgs(dx, dq, dqt, dscale, damax, rowsM, colsM);
      unsigned grid = unsigned(abi::castTransposeGridSize(rowsM, colsM));
      auto launchCT = [&] {
        check(cuda.launch(castTranspose, Dim3{grid},
                          Dim3{unsigned(abi::kBlockSize)}, 0, args),
              "launch");
      };
      launchCT();
      check(cuda.synchronize(), "cast_transpose");
      if (mib <= checkMib) {
        std::vector<float> m(x.begin(), x.begin() + count);
        mismatches +=
            checkCastTranspose(dev, m, scale, dq, dqt, damax, rowsM, colsM);
      }

      // Speed, on the same bytes.
      KernelArgs qArgs = castArgs(dx, dq, int64_t(bytes / 4), dscale);
      addScalar(qArgs, damax);
      float copyMs = time([&](unsigned) {
        check(cuda.copyOnDevice(dcopy, dx, bytes), "copy D2D");
      });
      float quantMs = time(
          [&](unsigned) { elementwise(quantizeAmaxE4M3, bytes / 4, qArgs); });
      float ctMs = time([&](unsigned) { launchCT(); });
      Row row{mib,
              bandwidth(2.0 * bytes, copyMs),
              bandwidth(1.25 * bytes, quantMs),
              bandwidth(1.5 * bytes, ctMs),
              {}};
      // Block casts over the matrix: scales are 1/128 .. 1/16384 of it.
      // The most blocks of any recipe (1x32 when colsM is not a multiple
      // of 32 rounds up), 4 bytes each.
      // (The transposing 128x1 cast has fewer than the 1x32 recipe.)
      size_t mostBlocks = 0;
      for (const BlockRecipe &recipe : blockRecipes)
        mostBlocks = std::max<size_t>(
            mostBlocks, ((rowsM + recipe.br - 1) / recipe.br) *
                            ((colsM + recipe.bc - 1) / recipe.bc));
      DevicePtr blockScales = dev.allocate(mostBlocks * 4);
      for (size_t i = 0; i < kTimedRecipes; ++i) {
        const BlockRecipe &recipe = blockRecipes[i];
        size_t blocks = ((rowsM + recipe.br - 1) / recipe.br) *
                        ((colsM + recipe.bc - 1) / recipe.bc);
        KernelArgs bArgs;
        addBlockArgs(bArgs, dx, dq, blockScales, blockScales, blockScales, 1,
                     int64_t(rowsM), int64_t(colsM), int64_t(blocks));
        unsigned grid = unsigned(abi::blockKernelGridSize(
            blocks, abi::blockGroupSize(recipe.br, recipe.bc)));
        float ms = time([&](unsigned) {
          check(cuda.launch(blockCasts[i], Dim3{grid},
                            Dim3{unsigned(abi::kBlockSize)}, 0, bArgs),
                "launch");
        });
        row.block[i] = bandwidth(1.25 * count * 4, ms);
      }
      if (!transposeCasts.empty()) {
        const TransposeRecipe &recipe = transposeRecipes[0];
        float ms = time([&](unsigned) {
          launchBlockCastTranspose(cuda, transposeCasts[0], recipe, dx, dq,
                                   blockScales, blockScales, blockScales,
                                   int64_t(rowsM), int64_t(colsM));
        });
        row.blockTranspose = bandwidth(1.25 * count * 4, ms);
      }
      check(cuda.free(blockScales), "free");
      rows.push_back(row);
    }
    for (DevicePtr p : {dx, dq, dqt, dscale, damax, dcopy, dy})
      check(cuda.free(p), "free");
  }

  check(cuda.unloadModule(module), "unload PTX");
  if (transposeModule)
    check(cuda.unloadModule(*transposeModule), "unload PTX");

  std::printf("\nBandwidth (GB/s, bytes read + written; copy moves 2x the "
              "input, quantize 1.25x, cast+transpose 1.5x)\n");
  std::printf("   MiB |  D2D copy | quant+amax |  %% copy | cast+transp |  "
              "%% copy\n");
  bool targetsMet = true;
  for (const Row &r : rows) {
    double qPct = 100.0 * r.quant / r.copy, ctPct = 100.0 * r.ct / r.copy;
    std::printf("%6u | %9.1f | %10.1f | %6.1f%% | %11.1f | %6.1f%%\n", r.mib,
                r.copy, r.quant, qPct, r.ct, ctPct);
    std::printf("CASTS|%u|%.1f|%.1f|%.1f\n", r.mib, r.copy, r.quant, r.ct);
    if (r.mib >= 256 && (qPct < 90.0 || ctPct < 80.0))
      targetsMet = false;
  }
  std::printf("\nBlock casts (GB/s, 1.25x the input; amax, scale and cast "
              "in one pass)\n");
  std::printf("   MiB |  1x128 pow2 |  %% copy |    128x128 |  %% copy |  "
              "MX 1x32 |  %% copy\n");
  for (const Row &r : rows) {
    std::printf("%6u | %11.1f | %6.1f%% | %10.1f | %6.1f%% | %8.1f | %6.1f%%\n",
                r.mib, r.block[0], 100.0 * r.block[0] / r.copy, r.block[1],
                100.0 * r.block[1] / r.copy, r.block[2],
                100.0 * r.block[2] / r.copy);
    std::printf("BLOCKCASTS|%u|%.1f|%.1f|%.1f|%.1f\n", r.mib, r.copy,
                r.block[0], r.block[1], r.block[2]);
  }
  if (!transposeCasts.empty()) {
    std::printf("\nTransposing block cast 128x1 pow2 (GB/s, 1.25x the "
                "input; amax, scale, cast and transpose in one pass)\n");
    std::printf("   MiB | 128x1 -> 1x128 |  %% copy\n");
    for (const Row &r : rows) {
      std::printf("%6u | %14.1f | %6.1f%%\n", r.mib, r.blockTranspose,
                  100.0 * r.blockTranspose / r.copy);
      std::printf("BLOCKCASTT|%u|%.1f|%.1f\n", r.mib, r.copy, r.blockTranspose);
    }
  }
  std::printf("targets (>= 256 MiB): quantize+amax >= 90%% of copy, "
              "cast+transpose >= 80%%: %s\n",
              targetsMet ? "met" : "NOT met");
  std::printf("EXACT|%zu\n", mismatches);
  std::printf("bit-exactness vs lib/Numerics: %s (%zu mismatches)\n",
              mismatches ? "FAILED" : "all bytes, amaxes and scales equal",
              mismatches);
  return mismatches ? 1 : 0;
}
