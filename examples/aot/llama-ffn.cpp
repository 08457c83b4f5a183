//===- llama-ffn.cpp - Calling an ahead-of-time compiled FP8 block --------===//
//
// examples/llama-ffn-block.mlir (RMSNorm, SwiGLU FFN, residual; bf16),
// rewritten to FP8 with delayed scaling and compiled into libffn.so by
// fp8-compile, called from plain C++: no MLIR, no LLVM.
//
//   build/bin/fp8-compile examples/llama-ffn-block.mlir
//       --fp8-pipeline="history=16" -o /tmp/aot/libffn.so   (and libffn.h)
//   c++ -O2 -I/tmp/aot examples/aot/llama-ffn.cpp -L/tmp/aot -lffn
//       -Wl,-rpath,/tmp/aot -o /tmp/aot/llama-ffn
//   /tmp/aot/llama-ffn 4
//
// Each step feeds new tokens and checks the output against the block
// evaluated in double precision on the same bf16 inputs (SQNR). Between
// steps it reads the delayed-scaling state through the generated accessors
// (the weights' scales must be Transformer Engine's 448 / amax), and it
// saves the state, runs a step, restores the state and runs the step again:
// the two outputs must be the same bits. Exit status 1 on any failure.
//
// The same program calls the block compiled for a GPU (fp8-compile
// --target=cuda; link libfp8_gpu_runtime.so too): the header then defines
// FP8_GPU_PROGRAM, results are freed with fp8GpuFree and every call is
// followed by a look at fp8GpuRuntimeError().
//
//===----------------------------------------------------------------------===//

#include "libffn.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {
constexpr int64_t kTokens = 16, kHidden = 64, kFfn = 128;

/// Frees a buffer the library returned.
void release(void *allocated) {
#ifdef FP8_GPU_PROGRAM
  fp8GpuFree(allocated);
#else
  std::free(allocated);
#endif
}

/// Whether the last call failed (on a GPU: a CUDA error, printed).
bool failed() {
#ifdef FP8_GPU_PROGRAM
  if (const char *error = fp8GpuRuntimeError()) {
    std::printf("GPU error: %s\n", error);
    return true;
  }
#endif
  return false;
}

uint16_t toBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return 0x7FC0;
  bits += 0x7FFF + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

float fromBF16(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

/// A row-major bf16 tensor and the descriptor that lends it to the library.
struct Tensor {
  std::vector<uint16_t> data;
  std::vector<int64_t> shape;

  Tensor(std::vector<int64_t> shape, std::mt19937 &rng, double mean,
         double stddev)
      : shape(shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::normal_distribution<double> normal(mean, stddev);
    for (int64_t i = 0; i < n; ++i)
      data.push_back(toBF16(static_cast<float>(normal(rng))));
  }
  double at(int64_t i) const { return fromBF16(data[i]); }

  fp8_memref_bf16_1d view1d() {
    return {data.data(), data.data(), 0, {shape[0]}, {1}};
  }
  fp8_memref_bf16_2d view2d() {
    return {data.data(), data.data(), 0, {shape[0], shape[1]}, {shape[1], 1}};
  }
};

/// The block in double precision: what the graph means.
std::vector<double> reference(const Tensor &x, const Tensor &g,
                              const Tensor &wGate, const Tensor &wUp,
                              const Tensor &wDown) {
  std::vector<double> out(kTokens * kHidden);
  std::vector<double> normed(kHidden), act(kFfn);
  for (int64_t t = 0; t < kTokens; ++t) {
    double ss = 0;
    for (int64_t h = 0; h < kHidden; ++h)
      ss += x.at(t * kHidden + h) * x.at(t * kHidden + h);
    double r = 1.0 / std::sqrt(ss / kHidden + 1e-5);
    for (int64_t h = 0; h < kHidden; ++h)
      normed[h] = x.at(t * kHidden + h) * r * g.at(h);
    for (int64_t f = 0; f < kFfn; ++f) {
      double gate = 0, up = 0;
      for (int64_t h = 0; h < kHidden; ++h) {
        gate += normed[h] * wGate.at(f * kHidden + h);
        up += normed[h] * wUp.at(f * kHidden + h);
      }
      act[f] = gate / (1 + std::exp(-gate)) * up;
    }
    for (int64_t h = 0; h < kHidden; ++h) {
      double down = 0;
      for (int64_t f = 0; f < kFfn; ++f)
        down += act[f] * wDown.at(h * kFfn + f);
      out[t * kHidden + h] = x.at(t * kHidden + h) + down;
    }
  }
  return out;
}

double sqnrDb(const std::vector<double> &ref, const uint16_t *out) {
  double signal = 0, noise = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double e = fromBF16(out[i]) - ref[i];
    signal += ref[i] * ref[i];
    noise += e * e;
  }
  return 10 * std::log10(signal / noise);
}

double amaxOf(const Tensor &t) {
  double amax = 0;
  for (size_t i = 0; i < t.data.size(); ++i)
    amax = std::fmax(amax, std::fabs(t.at(i)));
  return amax;
}

/// The state as host copies, for a checkpoint.
struct Checkpoint {
  std::vector<std::vector<float>> buffers;
};

template <typename Descriptor> int64_t numElements(const Descriptor &d) {
  int64_t n = 1;
  for (int64_t size : d.sizes)
    n *= size;
  return n;
}
int64_t numElements(const fp8_memref_f32_0d &) { return 1; }

Checkpoint save() {
  Checkpoint checkpoint;
#define SAVE(get, set, name, Descriptor)                                      \
  {                                                                           \
    Descriptor d;                                                             \
    get(&d);                                                                  \
    checkpoint.buffers.emplace_back(d.aligned + d.offset,                     \
                                    d.aligned + d.offset + numElements(d));   \
    release(d.allocated);                                                     \
  }
  FFN_FOR_EACH_STATE(SAVE)
#undef SAVE
  return checkpoint;
}

template <typename Descriptor> Descriptor viewOf(std::vector<float> &data) {
  Descriptor d{};
  d.allocated = d.aligned = data.data();
  if constexpr (sizeof(Descriptor) > sizeof(fp8_memref_f32_0d)) {
    d.sizes[0] = static_cast<int64_t>(data.size());
    d.strides[0] = 1;
  }
  return d;
}

void restore(Checkpoint &checkpoint) {
  size_t i = 0;
#define RESTORE(get, set, name, Descriptor)                                   \
  {                                                                           \
    Descriptor d = viewOf<Descriptor>(checkpoint.buffers[i++]);              \
    set(&d);                                                                  \
  }
  FFN_FOR_EACH_STATE(RESTORE)
#undef RESTORE
}

float readScale(void (*get)(fp8_memref_f32_0d *)) {
  fp8_memref_f32_0d d;
  get(&d);
  float value = d.aligned[d.offset];
  release(d.allocated);
  return value;
}
} // namespace

int main(int argc, char **argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 4;
  std::mt19937 rng(2026);
  Tensor g({kHidden}, rng, 1.0, 0.1);
  Tensor wGate({kFfn, kHidden}, rng, 0, 0.125);
  Tensor wUp({kFfn, kHidden}, rng, 0, 0.125);
  Tensor wDown({kHidden, kFfn}, rng, 0, 0.088);
  fp8_memref_bf16_1d gView = g.view1d();
  fp8_memref_bf16_2d wGateView = wGate.view2d(), wUpView = wUp.view2d(),
                     wDownView = wDown.view2d();
  int failures = 0;
  Checkpoint checkpoint;
  std::vector<uint16_t> lastOutput;
  for (int step = 0; step < steps; ++step) {
    Tensor x({kTokens, kHidden}, rng, 0, 1);
    fp8_memref_bf16_2d xView = x.view2d(), out;
    if (step == steps - 1)
      checkpoint = save();
    auto start = std::chrono::steady_clock::now();
    _mlir_ciface_llama_ffn(&out, &xView, &gView, &wGateView, &wUpView,
                           &wDownView);
    double us = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (failed())
      return 1;
    double sqnr = sqnrDb(reference(x, g, wGate, wUp, wDown),
                         out.aligned + out.offset);
    std::printf("step %d: output SQNR %.1f dB vs float64, %.0f us\n", step,
                sqnr, us);
    failures += sqnr < 20;
    if (step == steps - 1) {
      lastOutput.assign(out.aligned + out.offset,
                        out.aligned + out.offset + kTokens * kHidden);
      // Back to the checkpoint: the same step gives the same bits.
      restore(checkpoint);
      fp8_memref_bf16_2d again;
      _mlir_ciface_llama_ffn(&again, &xView, &gView, &wGateView, &wUpView,
                             &wDownView);
      bool same = std::memcmp(lastOutput.data(), again.aligned + again.offset,
                              lastOutput.size() * 2) == 0;
      std::printf("state restored from the checkpoint: step %d %s\n", step,
                  same ? "reproduced bit for bit" : "DIFFERS");
      failures += !same;
      release(again.allocated);
    }
    release(out.allocated);
  }

  // Delayed scaling: after a step each weight's scale is 448 / amax of the
  // history, which holds the (constant) weight's amax.
  struct {
    const char *name;
    const Tensor &weight;
    void (*get)(fp8_memref_f32_0d *);
  } weights[] = {
      {"w_gate", wGate, _mlir_ciface_ffn_state_get_fp8_llama_ffn_arg2_scale},
      {"w_up", wUp, _mlir_ciface_ffn_state_get_fp8_llama_ffn_arg3_scale},
      {"w_down", wDown, _mlir_ciface_ffn_state_get_fp8_llama_ffn_arg4_scale}};
  for (const auto &w : weights) {
    float expected = 448.0f / static_cast<float>(amaxOf(w.weight));
    float scale = readScale(w.get);
    std::printf("%s scale %.9g, 448 / amax = %.9g: %s\n", w.name, scale,
                expected, scale == expected ? "ok" : "MISMATCH");
    failures += scale != expected;
  }
  return failures ? 1 : 0;
}
