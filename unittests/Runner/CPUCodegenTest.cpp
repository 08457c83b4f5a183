//===- CPUCodegenTest.cpp - Tiled, vectorized, threaded CPU code, bit for bit //
//
// fp8-lower-to-cpu tiles, vectorizes and threads what it lowers
// (fp8-tile-and-vectorize-for-cpu, OpenMP). Not one FP8 bit may change: every
// fp8 op, JIT-compiled that way, must give the bytes, scales and GEMM outputs
// of the plain scalar loops (`vectorize` off), on odd sizes that leave
// partial tiles in every dimension, every layout and both FP8 formats.
// FP8 operands and results cross the function boundary as i8 (bitcasts).
//
//===----------------------------------------------------------------------===//

#include "fp8/InitAllFP8.h"
#include "fp8/Numerics/Float8.h"
#include "fp8/Numerics/Scaling.h"
#include "fp8/Runner/Runner.h"

#include "mlir/Parser/Parser.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::fp8::runner;

namespace {

class CPUCodegenTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  CPUCodegenTest() {
    DialectRegistry registry;
    registerRunnerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Compiles @f of `text` both ways, calls both on `inputs` and expects
  /// every result byte to agree (a NaN agrees with any NaN).
  void expectSameBits(const std::string &text, ArrayRef<HostTensor> inputs) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << text;
    std::string error;
    auto vectorized = CompiledFunction::compile(*module, "f", error);
    ASSERT_TRUE(vectorized) << error << "\n" << text;
    auto loops = CompiledFunction::compile(*module, "f", error,
                                             {/*vectorize=*/false});
    ASSERT_TRUE(loops) << error << "\n" << text;
    auto fast = vectorized->call(inputs, error);
    ASSERT_TRUE(succeeded(fast)) << error;
    auto slow = loops->call(inputs, error);
    ASSERT_TRUE(succeeded(slow)) << error;
    ASSERT_EQ(fast->size(), slow->size());
    for (auto [index, pair] : llvm::enumerate(llvm::zip(*fast, *slow))) {
      const HostTensor &a = std::get<0>(pair), &b = std::get<1>(pair);
      ASSERT_EQ(a.getNumElements(), b.getNumElements());
      unsigned bytes = a.getElementBytes();
      int64_t mismatches = 0, first = -1;
      for (int64_t i = 0; i < a.getNumElements(); ++i) {
        if (std::memcmp(a.data() + i * bytes, b.data() + i * bytes, bytes) == 0)
          continue;
        // Two NaNs: LLVM does not promise which NaN an operation returns.
        if (isa<FloatType>(a.getElementType()) && std::isnan(a.get(i)) &&
            std::isnan(b.get(i)))
          continue;
        if (first < 0)
          first = i;
        ++mismatches;
      }
      EXPECT_EQ(mismatches, 0)
          << "result " << index << ": " << mismatches << " of "
          << a.getNumElements() << " elements differ, first at " << first
          << " (" << (first >= 0 ? a.get(first) : 0) << " vectorized, "
          << (first >= 0 ? b.get(first) : 0) << " loops)\n"
          << text;
    }
  }

  /// Random FP8 codes (as i8); NaN and infinity codes only with `special`.
  HostTensor fp8Codes(ArrayRef<int64_t> shape, bool e5m2, bool special) {
    HostTensor tensor(IntegerType::get(&context, 8), shape);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int64_t i = 0; i < tensor.getNumElements(); ++i) {
      int code = byte(rng);
      int magnitude = code & 0x7F;
      bool nonFinite = e5m2 ? magnitude >= 0x7C : magnitude == 0x7F;
      if (nonFinite && !special)
        code &= 0xBB; // a finite code of the same sign
      tensor.data()[i] = static_cast<char>(code);
    }
    return tensor;
  }

  /// N(0, scale^2) with zeros, subnormals, huge values and (with `special`)
  /// infinities and NaNs sprinkled in.
  HostTensor floats(Type element, ArrayRef<int64_t> shape, double scale,
                    bool special) {
    HostTensor tensor(element, shape);
    std::normal_distribution<double> normal(0, scale);
    std::uniform_int_distribution<int> pick(0, 99);
    for (int64_t i = 0; i < tensor.getNumElements(); ++i) {
      double value = normal(rng);
      switch (pick(rng)) {
      case 0: value = 0; break;
      case 1: value = -0.0; break;
      case 2: value = 1e-40; break;
      case 3: value = 3e4; break;
      case 4: if (special) value = INFINITY; break;
      case 5: if (special) value = NAN; break;
      default: break;
      }
      tensor.set(i, value);
    }
    return tensor;
  }

  MLIRContext context;
  std::mt19937_64 rng{20261201};
};

/// `dynamic`: every size `?` (the values' shapes come at run time).
std::string shapeText(ArrayRef<int64_t> shape, StringRef element,
                      bool dynamic = false) {
  std::string text = "tensor<";
  for (int64_t size : shape)
    text += (dynamic ? std::string("?") : std::to_string(size)) + "x";
  return text + element.str() + ">";
}

/// The operand and result shapes of a GEMM in fp8.scaled_matmul's layouts
/// (the rhs shared by every batch), and its transpose attributes.
struct GemmLayout {
  SmallVector<int64_t> lhs, rhs, result;
  std::string attrs;

  GemmLayout(ArrayRef<int64_t> batch, int64_t m, int64_t k, int64_t n,
             bool transposeLhs, bool transposeRhs)
      : lhs(batch), result(batch) {
    lhs.append(transposeLhs ? SmallVector<int64_t>{k, m}
                            : SmallVector<int64_t>{m, k});
    rhs = transposeRhs ? SmallVector<int64_t>{n, k}
                       : SmallVector<int64_t>{k, n};
    result.append({m, n});
    if (transposeLhs || transposeRhs)
      attrs = std::string(" {") + (transposeLhs ? "transpose_lhs" : "") +
              (transposeLhs && transposeRhs ? ", " : "") +
              (transposeRhs ? "transpose_rhs" : "") + "}";
  }
};

struct GemmCase {
  SmallVector<int64_t> batch;
  int64_t m, k, n;
  bool transposeLhs, transposeRhs;
  bool lhsE5M2, rhsE5M2;
  StringRef result; // f32 | bf16 | f16
  bool bias;
  bool special;
  bool dynamic = false; ///< compiled with every size dynamic
};

class ScaledMatmulBits : public CPUCodegenTest,
                         public ::testing::WithParamInterface<GemmCase> {};

TEST_P(ScaledMatmulBits, VectorizedEqualsLoops) {
  const GemmCase &c = GetParam();
  GemmLayout layout(c.batch, c.m, c.k, c.n, c.transposeLhs, c.transposeRhs);
  SmallVector<int64_t> &lhsShape = layout.lhs, &rhsShape = layout.rhs,
                       &resultShape = layout.result;
  StringRef lhsFormat = c.lhsE5M2 ? "f8E5M2" : "f8E4M3FN";
  StringRef rhsFormat = c.rhsE5M2 ? "f8E5M2" : "f8E4M3FN";
  const std::string &attrs = layout.attrs;
  std::string biasArg, biasUse;
  std::string biasType = shapeText({c.n}, c.result, c.dynamic);
  if (c.bias) {
    biasArg = llvm::formatv(", %bias: {0}", biasType).str();
    biasUse = llvm::formatv(" bias %bias : {0}", biasType).str();
  }
  std::string text = llvm::formatv(
      R"(func.func @f(%a: {0}, %b: {1}{2}) -> {3} {
  %af = arith.bitcast %a : {0} to {4}
  %bf = arith.bitcast %b : {1} to {5}
  %sa = arith.constant 0.375 : f32
  %sb = arith.constant 3.0e-3 : f32
  %r = fp8.scaled_matmul %af, %bf scales %sa, %sb{6}{7} : {4}, {5} -> {3}
  return %r : {3}
})",
      shapeText(lhsShape, "i8", c.dynamic),
      shapeText(rhsShape, "i8", c.dynamic), biasArg,
      shapeText(resultShape, c.result, c.dynamic),
      shapeText(lhsShape, lhsFormat, c.dynamic),
      shapeText(rhsShape, rhsFormat, c.dynamic), biasUse, attrs);
  SmallVector<HostTensor> inputs = {fp8Codes(lhsShape, c.lhsE5M2, c.special),
                                    fp8Codes(rhsShape, c.rhsE5M2, c.special)};
  if (c.bias) {
    Type element = c.result == "bf16"  ? Type(BFloat16Type::get(&context))
                   : c.result == "f16" ? Type(Float16Type::get(&context))
                                       : Type(Float32Type::get(&context));
    inputs.push_back(floats(element, {c.n}, 4.0, false));
  }
  expectSameBits(text, inputs);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ScaledMatmulBits,
    ::testing::Values(
        // Partial register, cache and thread tiles in M, N and K.
        GemmCase{{}, 37, 61, 45, false, false, false, false, "f32", false,
                 false},
        GemmCase{{}, 130, 300, 257, false, false, false, true, "f32", true,
                 false},
        GemmCase{{}, 1, 1, 1, false, false, false, false, "f32", false, false},
        GemmCase{{}, 64, 128, 96, false, true, true, false, "bf16", true,
                 false},
        GemmCase{{}, 70, 33, 129, true, false, false, false, "f16", false,
                 false},
        GemmCase{{3}, 17, 33, 19, false, false, false, false, "f32", false,
                 false},
        // Infinities and NaNs among the operands.
        GemmCase{{}, 40, 70, 50, false, false, true, true, "f32", false,
                 true},
        // Every size dynamic: peeled register loops, full tiles vectorized,
        // remainders of dynamic size as scalar loops.
        GemmCase{{}, 37, 61, 45, false, false, false, false, "f32", false,
                 false, true},
        GemmCase{{2}, 130, 300, 257, false, true, false, true, "bf16", true,
                 false, true},
        GemmCase{{}, 70, 33, 129, true, false, false, false, "f16", false,
                 false, true},
        // Several decoded panels of B in every dimension, with a bias and a
        // bf16 result; E5M2 with infinities and NaNs.
        GemmCase{{}, 600, 530, 300, false, false, false, false, "bf16", true,
                 false},
        GemmCase{{}, 520, 290, 270, false, false, true, true, "f32", false,
                 true, true}));

/// fp8.scaled_matmul's definition, written out in C++ from the FP8 codes
/// (lib/Numerics' decode): per output the f32 sum of the exact products in
/// K order from zero, one rounding per step, times sa * sb. Sizes that span
/// several decoded panels of B (fp8-pack-contractions-for-cpu decodes K x N
/// panels of 256 x 256 per block of 512 rows), with partial blocks and
/// panels in M, N and K.
class ScaledMatmulDefinition : public CPUCodegenTest,
                               public ::testing::WithParamInterface<GemmCase> {
};

TEST_P(ScaledMatmulDefinition, MatchesDefinition) {
  const GemmCase &c = GetParam();
  ASSERT_EQ(c.result, "f32");
  ASSERT_FALSE(c.bias);
  GemmLayout layout(c.batch, c.m, c.k, c.n, c.transposeLhs, c.transposeRhs);
  SmallVector<int64_t> &lhsShape = layout.lhs, &rhsShape = layout.rhs,
                       &resultShape = layout.result;
  namespace num = mlir::fp8::numerics;
  num::Format lhsFormat = c.lhsE5M2 ? num::Format::E5M2 : num::Format::E4M3FN;
  num::Format rhsFormat = c.rhsE5M2 ? num::Format::E5M2 : num::Format::E4M3FN;
  const float sa = 0.375f, sb = 3.0e-3f;
  std::string text = llvm::formatv(
      R"(func.func @f(%a: {0}, %b: {1}) -> {2} {
  %af = arith.bitcast %a : {0} to {3}
  %bf = arith.bitcast %b : {1} to {4}
  %sa = arith.constant 0.375 : f32
  %sb = arith.constant 3.0e-3 : f32
  %r = fp8.scaled_matmul %af, %bf scales %sa, %sb{5} : {3}, {4} -> {2}
  return %r : {2}
})",
      shapeText(lhsShape, "i8", c.dynamic), shapeText(rhsShape, "i8", c.dynamic),
      shapeText(resultShape, "f32", c.dynamic),
      shapeText(lhsShape, c.lhsE5M2 ? "f8E5M2" : "f8E4M3FN", c.dynamic),
      shapeText(rhsShape, c.rhsE5M2 ? "f8E5M2" : "f8E4M3FN", c.dynamic),
      layout.attrs);
  SmallVector<HostTensor> inputs = {fp8Codes(lhsShape, c.lhsE5M2, c.special),
                                    fp8Codes(rhsShape, c.rhsE5M2, c.special)};
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module) << text;
  std::string error;
  auto compiled = CompiledFunction::compile(*module, "f", error);
  ASSERT_TRUE(compiled) << error;
  auto results = compiled->call(inputs, error);
  ASSERT_TRUE(succeeded(results)) << error;
  const HostTensor &result = (*results)[0];

  auto at = [](ArrayRef<int64_t> shape, ArrayRef<int64_t> index) {
    int64_t linear = 0;
    for (auto [size, i] : llvm::zip(shape, index))
      linear = linear * size + i;
    return linear;
  };
  auto decode = [](const HostTensor &t, int64_t i, num::Format format) {
    return num::toF32(static_cast<uint8_t>(t.data()[i]), format);
  };
  int64_t batches = c.batch.empty() ? 1 : c.batch.front();
  int64_t mismatches = 0;
  for (int64_t b = 0; b < batches; ++b) {
    auto withBatch = [&](SmallVector<int64_t> index) {
      if (!c.batch.empty())
        index.insert(index.begin(), b);
      return index;
    };
    for (int64_t m = 0; m < c.m; ++m) {
      for (int64_t n = 0; n < c.n; ++n) {
        float acc = 0.0f;
        for (int64_t k = 0; k < c.k; ++k) {
          float x = decode(inputs[0],
                           at(lhsShape, withBatch(c.transposeLhs
                                                      ? SmallVector<int64_t>{k, m}
                                                      : SmallVector<int64_t>{m, k})),
                           lhsFormat);
          float w = decode(inputs[1],
                           at(rhsShape, c.transposeRhs
                                            ? SmallVector<int64_t>{n, k}
                                            : SmallVector<int64_t>{k, n}),
                           rhsFormat);
          // The product of two FP8 values is exact in f32: one rounding.
          float product = x * w;
          acc = acc + product;
        }
        float expected = acc * (sa * sb);
        float got =
            static_cast<float>(result.get(at(resultShape, withBatch({m, n}))));
        bool same = std::memcmp(&got, &expected, 4) == 0 ||
                    (std::isnan(got) && std::isnan(expected));
        if (!same && ++mismatches <= 3)
          ADD_FAILURE() << "[" << b << ", " << m << ", " << n << "]: got "
                        << got << ", the definition gives " << expected;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Panels, ScaledMatmulDefinition,
    ::testing::Values(
        // Two row blocks (one partial), three K panels (one partial), two
        // N blocks (one partial).
        GemmCase{{}, 600, 530, 300, false, false, false, false, "f32", false,
                 false},
        // E5M2 weight with infinities and NaNs; every size dynamic.
        GemmCase{{}, 130, 600, 520, false, false, true, true, "f32", false,
                 true, true},
        // Batched lhs over a shared weight; a transposed lhs.
        GemmCase{{2}, 70, 300, 257, true, false, false, false, "f32", false,
                 false},
        // Weights [N, K]: decoded whole into the packed copy.
        GemmCase{{}, 40, 300, 270, false, true, false, false, "f32", false,
                 false}));

/// An f32 GEMM large enough that fp8-pack-contractions-for-cpu copies its
/// B panel by panel: each output is the chain of fused multiply-adds in K
/// order from zero that the register tiles compute (one FMA per K step),
/// written out in C++ with std::fma. Partial blocks and panels in M, N and
/// K, all in whole 8 x 32 x 8 register tiles (a remainder tile's scalar
/// loop rounds the product and the sum apart).
TEST_F(CPUCodegenTest, F32GemmInCopiedPanelsIsTheFmaChain) {
  const int64_t m = 600, k = 536, n = 480;
  std::string text = R"(func.func @f(%a: tensor<600x536xf32>, %b: tensor<536x480xf32>) -> tensor<600x480xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<600x480xf32>
  %c = linalg.fill ins(%z : f32) outs(%e : tensor<600x480xf32>) -> tensor<600x480xf32>
  %r = linalg.matmul ins(%a, %b : tensor<600x536xf32>, tensor<536x480xf32>) outs(%c : tensor<600x480xf32>) -> tensor<600x480xf32>
  return %r : tensor<600x480xf32>
})";
  Type f32 = Float32Type::get(&context);
  SmallVector<HostTensor> inputs = {floats(f32, {m, k}, 1.0, false),
                                    floats(f32, {k, n}, 1.0, false)};
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  std::string error;
  auto compiled = CompiledFunction::compile(*module, "f", error);
  ASSERT_TRUE(compiled) << error;
  auto results = compiled->call(inputs, error);
  ASSERT_TRUE(succeeded(results)) << error;
  const HostTensor &result = (*results)[0];
  std::vector<float> a(m * k), b(k * n);
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = static_cast<float>(inputs[0].get(i));
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = static_cast<float>(inputs[1].get(i));
  int64_t mismatches = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        acc = std::fma(a[i * k + p], b[p * n + j], acc);
      float got = static_cast<float>(result.get(i * n + j));
      if (std::memcmp(&got, &acc, 4) != 0 && ++mismatches <= 3)
        ADD_FAILURE() << "[" << i << ", " << j << "]: got " << got
                      << ", the FMA chain gives " << acc;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST_F(CPUCodegenTest, QuantizeCastTransposeAndAmax) {
  for (StringRef format : {"f8E4M3FN", "f8E5M2"}) {
    std::string text = llvm::formatv(
        R"(func.func @f(%x: tensor<37x131xf32>, %y: tensor<3x1000xbf16>)
    -> (tensor<37x131xi8>, f32, tensor<37x131xi8>, tensor<131x37xi8>, f32, tensor<37x131xf32>) {
  %s = arith.constant 7.5 : f32
  %q, %qa = fp8.quantize %x, %s : tensor<37x131xf32> -> tensor<37x131x{0}>, f32
  %qi = arith.bitcast %q : tensor<37x131x{0}> to tensor<37x131xi8>
  %c, %t = fp8.cast_transpose %x, %s : tensor<37x131xf32> -> tensor<37x131x{0}>, tensor<131x37x{0}>
  %ci = arith.bitcast %c : tensor<37x131x{0}> to tensor<37x131xi8>
  %ti = arith.bitcast %t : tensor<131x37x{0}> to tensor<131x37xi8>
  %ya = fp8.amax %y : tensor<3x1000xbf16>
  %inv = arith.constant 0.125 : f32
  %d = fp8.dequantize %q, %inv : tensor<37x131x{0}> -> tensor<37x131xf32>
  return %qi, %qa, %ci, %ti, %ya, %d : tensor<37x131xi8>, f32, tensor<37x131xi8>, tensor<131x37xi8>, f32, tensor<37x131xf32>
})",
        format);
    Type f32 = Float32Type::get(&context);
    Type bf16 = BFloat16Type::get(&context);
    for (bool special : {false, true})
      expectSameBits(text, {floats(f32, {37, 131}, 20.0, special),
                            floats(bf16, {3, 1000}, 2.0, special)});
  }
}

/// A block-scaled GEMM: shapes, layouts and blocks in each operand's own
/// layout (the fp8 dialect's convention), scale_invs f32 or E8M0.
struct BlockGemmCase {
  int64_t batch; // 0: none
  int64_t m, k, n;
  bool transposeLhs, transposeRhs;
  SmallVector<int64_t> lhsBlock, rhsBlock;
  bool mx;
};

class BlockScaledMatmul : public CPUCodegenTest,
                          public ::testing::WithParamInterface<BlockGemmCase> {
protected:
  /// Per-block scale_invs: E8M0 codes around 2^0, or f32 values that are
  /// not powers of two (so that sa * sb rounds).
  HostTensor scales(ArrayRef<int64_t> shape, bool mx) {
    if (mx) {
      HostTensor tensor(IntegerType::get(&context, 8), shape);
      std::uniform_int_distribution<int> code(117, 137);
      for (int64_t i = 0; i < tensor.getNumElements(); ++i)
        tensor.data()[i] = static_cast<char>(code(rng));
      return tensor;
    }
    HostTensor tensor(Float32Type::get(&context), shape);
    std::uniform_real_distribution<double> value(0.01, 3.0);
    for (int64_t i = 0; i < tensor.getNumElements(); ++i)
      tensor.set(i, static_cast<float>(value(rng)));
    return tensor;
  }
};

SmallVector<int64_t> blockShape(ArrayRef<int64_t> shape,
                                ArrayRef<int64_t> block) {
  SmallVector<int64_t> result;
  for (auto [size, extent] : llvm::zip(shape, block))
    result.push_back((size + extent - 1) / extent);
  return result;
}

std::string arrayText(ArrayRef<int64_t> values) {
  std::string text = "[";
  for (auto [i, v] : llvm::enumerate(values))
    text += (i ? ", " : "") + std::to_string(v);
  return text + "]";
}

/// The dialect's definition of the block-scaled GEMM, written out in C++:
/// per K block the f32 partial sum from zero in K order, then
/// acc = fma(partial, sa * sb, acc) over the K blocks in order.
TEST_P(BlockScaledMatmul, MatchesDefinition) {
  const BlockGemmCase &c = GetParam();
  SmallVector<int64_t> batch;
  if (c.batch)
    batch.push_back(c.batch);
  GemmLayout layout(batch, c.m, c.k, c.n, c.transposeLhs, c.transposeRhs);
  SmallVector<int64_t> &lhsShape = layout.lhs, &rhsShape = layout.rhs,
                       &resultShape = layout.result;
  SmallVector<int64_t> lhsScaleShape = blockShape(lhsShape, c.lhsBlock);
  SmallVector<int64_t> rhsScaleShape = blockShape(rhsShape, c.rhsBlock);
  StringRef scaleElement = c.mx ? "f8E8M0FNU" : "f32";
  const std::string &attrs = layout.attrs;
  std::string scaleArgs, scaleCasts;
  for (auto [name, shape] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"sa", lhsScaleShape},
        {"sb", rhsScaleShape}}) {
    if (!c.mx) {
      scaleArgs += llvm::formatv(", %{0}: {1}", name, shapeText(shape, "f32"));
      continue;
    }
    // E8M0 codes travel as i8, like the FP8 operands.
    scaleArgs += llvm::formatv(", %{0}_raw: {1}", name, shapeText(shape, "i8"));
    scaleCasts += llvm::formatv("  %{0} = arith.bitcast %{0}_raw : {1} to "
                                "{2}\n",
                                name, shapeText(shape, "i8"),
                                shapeText(shape, scaleElement));
  }
  std::string text = llvm::formatv(
      R"(func.func @f(%a: {0}, %b: {1}{2}) -> {3} {
  %af = arith.bitcast %a : {0} to {4}
  %bf = arith.bitcast %b : {1} to {5}
{6}  %r = fp8.scaled_matmul %af, %bf scales %sa, %sb blocks {7}, {8}{9} : {4}, {5} scales {10}, {11} -> {3}
  return %r : {3}
})",
      shapeText(lhsShape, "i8"), shapeText(rhsShape, "i8"), scaleArgs,
      shapeText(resultShape, "f32"), shapeText(lhsShape, "f8E4M3FN"),
      shapeText(rhsShape, "f8E4M3FN"), scaleCasts, arrayText(c.lhsBlock),
      arrayText(c.rhsBlock), attrs, shapeText(lhsScaleShape, scaleElement),
      shapeText(rhsScaleShape, scaleElement));
  SmallVector<HostTensor> inputs = {fp8Codes(lhsShape, false, false),
                                    fp8Codes(rhsShape, false, false),
                                    scales(lhsScaleShape, c.mx),
                                    scales(rhsScaleShape, c.mx)};
  expectSameBits(text, inputs);

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  std::string error;
  auto compiled = CompiledFunction::compile(*module, "f", error);
  ASSERT_TRUE(compiled) << error;
  auto results = compiled->call(inputs, error);
  ASSERT_TRUE(succeeded(results)) << error;
  const HostTensor &result = (*results)[0];

  namespace num = mlir::fp8::numerics;
  auto at = [](ArrayRef<int64_t> shape, ArrayRef<int64_t> index) {
    int64_t linear = 0;
    for (auto [size, i] : llvm::zip(shape, index))
      linear = linear * size + i;
    return linear;
  };
  auto code = [](const HostTensor &t, int64_t i) {
    return num::toF32(static_cast<uint8_t>(t.data()[i]),
                      num::Format::E4M3FN);
  };
  auto scale = [&](const HostTensor &t, int64_t i) -> float {
    if (c.mx)
      return num::e8m0ToF32(static_cast<uint8_t>(t.data()[i]));
    float value;
    std::memcpy(&value, t.data() + 4 * i, 4);
    return value;
  };
  int64_t bk = c.lhsBlock[c.lhsBlock.size() - (c.transposeLhs ? 2 : 1)];
  int64_t bm = c.lhsBlock[c.lhsBlock.size() - (c.transposeLhs ? 1 : 2)];
  int64_t bn = c.rhsBlock[c.transposeRhs ? 0 : 1];
  int64_t mismatches = 0;
  for (int64_t b = 0; b < std::max<int64_t>(c.batch, 1); ++b) {
    auto withBatch = [&](SmallVector<int64_t> index) {
      if (c.batch)
        index.insert(index.begin(), b);
      return index;
    };
    for (int64_t m = 0; m < c.m; ++m) {
      for (int64_t n = 0; n < c.n; ++n) {
        float acc = 0.0f;
        for (int64_t kb = 0; kb * bk < c.k; ++kb) {
          float partial = 0.0f;
          for (int64_t k = kb * bk; k < std::min(c.k, (kb + 1) * bk); ++k) {
            float a = code(inputs[0],
                           at(lhsShape, withBatch(c.transposeLhs
                                                      ? SmallVector<int64_t>{k, m}
                                                      : SmallVector<int64_t>{m, k})));
            float w = code(inputs[1],
                           at(rhsShape, c.transposeRhs
                                            ? SmallVector<int64_t>{n, k}
                                            : SmallVector<int64_t>{k, n}));
            partial = partial + a * w; // exact product, one rounding
          }
          float sa = scale(inputs[2],
                           at(lhsScaleShape,
                              withBatch(c.transposeLhs
                                            ? SmallVector<int64_t>{kb, m / bm}
                                            : SmallVector<int64_t>{m / bm, kb})));
          float sb = scale(inputs[3],
                           at(rhsScaleShape, c.transposeRhs
                                                 ? SmallVector<int64_t>{n / bn, kb}
                                                 : SmallVector<int64_t>{kb, n / bn}));
          acc = std::fma(partial, sa * sb, acc);
        }
        float got;
        std::memcpy(&got,
                    result.data() +
                        4 * at(resultShape, withBatch({m, n})),
                    4);
        if (std::memcmp(&got, &acc, 4) != 0 && ++mismatches <= 3)
          ADD_FAILURE() << "[" << b << ", " << m << ", " << n << "]: got "
                        << got << ", the definition gives " << acc;
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Recipes, BlockScaledMatmul,
    ::testing::Values(
        // DeepSeek-V3: 1x128 activation tiles, 128x128 weight blocks, K and
        // N not multiples of 128 (partial last blocks).
        BlockGemmCase{0, 70, 300, 130, false, true, {1, 128}, {128, 128},
                      false},
        // Rows along K (one K block).
        BlockGemmCase{0, 33, 96, 40, false, true, {1, 96}, {1, 96}, false},
        // MX: 32-element blocks along K, E8M0 scale_invs, rhs [K, N].
        BlockGemmCase{0, 20, 100, 48, false, false, {1, 32}, {32, 1}, true},
        // Batched lhs over a shared weight; transposed lhs (a weight
        // gradient's activation^T).
        BlockGemmCase{3, 16, 256, 24, false, true, {1, 1, 128}, {128, 128},
                      false},
        BlockGemmCase{0, 40, 200, 64, true, false, {128, 1}, {128, 1},
                      false}));

} // namespace
