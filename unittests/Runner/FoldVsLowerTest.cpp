//===- FoldVsLowerTest.cpp - fp8 folders against the CPU lowering ---------===//
//
// The two implementations of fp8.quantize, fp8.dequantize, fp8.amax,
// fp8.compute_scale, fp8.block_amax and fp8.compute_block_scales (per-tensor
// and per-block forms) must agree bit for bit: the folders (--canonicalize on
// constant operands) and fp8-lower-to-cpu, JIT-compiled with the operands as
// function arguments. The operands are special values of f32, bf16 and f16
// (zeros, infinities, NaNs, subnormals, extreme normals), every FP8 value and
// the rounding boundaries between neighbours, huge and tiny scales, seeded
// random bit patterns, and the constants that fp8 ops take in the fuzz
// corpus (tools/fp8-fuzz/corpus, plus the directories in FP8_DIFF_CORPUS,
// ':'-separated, e.g. a grown corpus of bench/fuzz.sh).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8Ops.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Runner/Runner.h"
#include "fp8/Support/UpstreamParserBugs.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>

using namespace mlir;
using namespace mlir::fp8::runner;
using llvm::APFloat;
using llvm::APInt;

namespace {

using Bits = SmallVector<uint64_t>;

/// A scalar or 1-D tensor type of the probes, by its element type's name.
struct ProbeType {
  std::string element;
  int64_t count = -1; // -1: a scalar
  std::string str() const {
    return count < 0 ? element
                     : "tensor<" + std::to_string(count) + "x" + element + ">";
  }
};

const llvm::fltSemantics &getSemantics(StringRef element) {
  if (element == "f32")
    return APFloat::IEEEsingle();
  if (element == "bf16")
    return APFloat::BFloat();
  if (element == "f16")
    return APFloat::IEEEhalf();
  if (element == "f8E4M3FN")
    return APFloat::Float8E4M3FN();
  if (element == "f8E8M0FNU")
    return APFloat::Float8E8M0FNU();
  assert(element == "f8E5M2" && "unknown probe element type");
  return APFloat::Float8E5M2();
}

unsigned getBitWidth(StringRef element) {
  return APFloat::getSizeInBits(getSemantics(element));
}

uint64_t toBits(const APFloat &value) {
  return value.bitcastToAPInt().getZExtValue();
}

std::string hexLiteral(uint64_t bits, StringRef element) {
  std::string digits = llvm::utohexstr(bits, /*LowerCase=*/false,
                                       getBitWidth(element) / 4);
  return "0x" + digits;
}

std::string constantText(const Bits &bits, const ProbeType &type) {
  if (type.count < 0)
    return hexLiteral(bits.front(), type.element);
  std::string text = "dense<[";
  for (auto [i, b] : llvm::enumerate(bits))
    text += (i ? ", " : "") + hexLiteral(b, type.element);
  return text + "]>";
}

/// Special values of a wide (IEEE-like) format, both signs.
Bits getSpecials(StringRef element) {
  const llvm::fltSemantics &sem = getSemantics(element);
  SmallVector<APFloat> values;
  for (bool negative : {false, true}) {
    values.push_back(APFloat::getZero(sem, negative));
    values.push_back(APFloat::getSmallest(sem, negative));
    APFloat largestSubnormal = APFloat::getSmallestNormalized(sem, negative);
    largestSubnormal.next(/*nextDown=*/!negative);
    values.push_back(largestSubnormal);
    values.push_back(APFloat::getSmallestNormalized(sem, negative));
    values.push_back(APFloat::getLargest(sem, negative));
    APFloat one(sem, 1);
    if (negative)
      one.changeSign();
    values.push_back(one);
    values.push_back(APFloat::getInf(sem, negative));
    values.push_back(APFloat::getQNaN(sem, negative));
    values.push_back(APFloat::getSNaN(sem, negative));
    APInt payload(64, 0x15);
    values.push_back(APFloat::getQNaN(sem, negative, &payload));
  }
  Bits bits;
  for (const APFloat &value : values)
    bits.push_back(toBits(value));
  return bits;
}

/// `value` (exact in double) rounded to `element`, and its neighbours.
void addWithNeighbours(double value, StringRef element, Bits &out) {
  APFloat rounded(value);
  bool lost;
  rounded.convert(getSemantics(element), APFloat::rmNearestTiesToEven, &lost);
  out.push_back(toBits(rounded));
  APFloat up = rounded, down = rounded;
  up.next(/*nextDown=*/false);
  down.next(/*nextDown=*/true);
  out.push_back(toBits(up));
  out.push_back(toBits(down));
}

/// Every finite FP8 value and the midpoint between each pair of neighbours
/// (the round-to-nearest-even boundary), with their neighbours in `element`.
void addFP8Boundaries(StringRef element, Bits &out) {
  for (StringRef fp8 : {"f8E4M3FN", "f8E5M2"}) {
    const llvm::fltSemantics &sem = getSemantics(fp8);
    SmallVector<double> positives;
    for (unsigned code = 0; code < 0x80; ++code) {
      APFloat value(sem, APInt(8, code));
      if (value.isFinite())
        positives.push_back(value.convertToDouble());
    }
    for (auto [i, v] : llvm::enumerate(positives)) {
      for (double sign : {1.0, -1.0}) {
        addWithNeighbours(sign * v, element, out);
        double next = i + 1 < positives.size() ? positives[i + 1]
                                               : 2 * v - positives[i - 1];
        addWithNeighbours(sign * (v + next) / 2, element, out);
      }
    }
  }
}

Bits getRandom(StringRef element, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  uint64_t mask = getBitWidth(element) == 64
                      ? ~uint64_t(0)
                      : (uint64_t(1) << getBitWidth(element)) - 1;
  Bits bits;
  for (size_t i = 0; i < count; ++i)
    bits.push_back(rng() & mask);
  return bits;
}

Bits unique(Bits bits) {
  std::set<uint64_t> seen;
  Bits out;
  for (uint64_t b : bits)
    if (seen.insert(b).second)
      out.push_back(b);
  return out;
}

/// What the corpus may add: enough for any seed, bounded for a grown corpus.
constexpr size_t kMaxCorpusValues = 4096;
constexpr size_t kMaxCorpusScales = 256;

/// Constants that fp8 ops take in the fuzz corpus, by element type.
struct CorpusValues {
  llvm::StringMap<Bits> wide;
  Bits scales;
};

void harvestFile(MLIRContext &context, StringRef path, CorpusValues &values) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  // The grown corpus holds what the fuzzer skipped: text that crashes
  // upstream's parser.
  if (!buffer || (*buffer)->getBufferSize() > (64 << 10) ||
      fp8::hitsLinalgParserCrash((*buffer)->getBuffer()))
    return;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>((*buffer)->getBuffer(), &context);
  if (!module)
    return;
  module->walk([&](Operation *op) {
    if (!isa<fp8::QuantizeOp, fp8::DequantizeOp, fp8::AmaxOp,
             fp8::ComputeScaleOp>(op))
      return;
    for (Value operand : op->getOperands()) {
      auto constant = operand.getDefiningOp<arith::ConstantOp>();
      if (!constant)
        continue;
      if (auto scalar = dyn_cast<FloatAttr>(constant.getValue())) {
        if (scalar.getType().isF32() && values.scales.size() < kMaxCorpusScales)
          values.scales.push_back(toBits(scalar.getValue()));
        continue;
      }
      auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
      if (!dense || dense.getNumElements() > 4096)
        continue;
      std::string element;
      llvm::raw_string_ostream os(element);
      os << dense.getElementType();
      if (element != "f32" && element != "bf16" && element != "f16")
        continue;
      Bits &pool = values.wide[element];
      for (const APFloat &value : dense.getValues<APFloat>())
        if (pool.size() < kMaxCorpusValues)
          pool.push_back(toBits(value));
    }
  });
}

CorpusValues harvestCorpus(MLIRContext &context) {
  SmallVector<std::string> dirs = {FP8_FUZZ_CORPUS};
  if (const char *extra = std::getenv("FP8_DIFF_CORPUS")) {
    SmallVector<StringRef> parts;
    StringRef(extra).split(parts, ':', -1, /*KeepEmpty=*/false);
    for (StringRef part : parts)
      dirs.push_back(part.str());
  }
  ScopedDiagnosticHandler silence(&context,
                                  [](Diagnostic &) { return success(); });
  CorpusValues values;
  for (const std::string &dir : dirs) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      harvestFile(context, it->path(), values);
  }
  return values;
}

/// One op on operands `%a0 ... %aN`, run both ways on many operand sets.
struct Probe {
  std::string op; // "fp8.amax %a0 : tensor<4xf32>"
  SmallVector<ProbeType> operands;
  SmallVector<ProbeType> results;
  /// Per operand, how many result elements share one of its elements (a
  /// block's scale); 1 when absent.
  SmallVector<int64_t> blockExtents = {};

  /// The element of operand `i` that result element `k` is computed from.
  uint64_t operandBits(ArrayRef<Bits> operands, size_t i, size_t k) const {
    if (operands[i].size() == 1)
      return operands[i][0];
    return operands[i][k / (i < blockExtents.size() ? blockExtents[i] : 1)];
  }
};

class FoldVsLowerTest : public ::testing::Test {
protected:
  FoldVsLowerTest() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, func::FuncDialect,
                    tensor::TensorDialect>();
    fp8::registerAllFP8Dialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  const CorpusValues &getCorpus() {
    static CorpusValues values = harvestCorpus(context);
    return values;
  }

  /// Wide operand values for `element`: specials, FP8 boundaries, random bit
  /// patterns and the corpus's constants.
  Bits getWideValues(StringRef element) {
    Bits bits = getSpecials(element);
    addFP8Boundaries(element, bits);
    Bits random = getRandom(element, 512, /*seed=*/getBitWidth(element));
    bits.append(random.begin(), random.end());
    auto it = getCorpus().wide.find(element);
    if (it != getCorpus().wide.end())
      bits.append(it->second.begin(), it->second.end());
    return unique(std::move(bits));
  }

  /// f32 scales: exact powers of two over the whole range, extremes,
  /// non-finite and non-positive values, ordinary ones, random bit patterns
  /// and the corpus's scale operands.
  Bits getScales() {
    SmallVector<float> scales = {1.0f,    0.5f,     2.0f,   0x1p-20f, 0x1p20f,
                                 0x1p126f, 0x1p-126f, 0x1p-149f, 3.0f, 0.1f,
                                 448.0f / 3.7f, 57344.0f / 1e-3f, 0.0f,
                                 -0.0f,   -1.0f,     1e-38f, 3.4028235e38f};
    Bits bits;
    for (float s : scales)
      bits.push_back(toBits(APFloat(s)));
    bits.push_back(toBits(APFloat::getInf(APFloat::IEEEsingle())));
    bits.push_back(toBits(APFloat::getQNaN(APFloat::IEEEsingle())));
    Bits random = getRandom("f32", 8, /*seed=*/7);
    bits.append(random.begin(), random.end());
    bits.append(getCorpus().scales.begin(), getCorpus().scales.end());
    return unique(std::move(bits));
  }

  /// Amaxes for the scale computations: the scales' values, the f32
  /// specials and `extra`.
  Bits getAmaxes(ArrayRef<float> extra) {
    Bits amaxes = getScales();
    Bits specials = getSpecials("f32");
    amaxes.append(specials.begin(), specials.end());
    for (float v : extra)
      amaxes.push_back(toBits(APFloat(v)));
    return amaxes;
  }

  /// Folds `probe` on each operand set and runs it through the JIT on each;
  /// every result must agree bit for bit. Returns the elements compared.
  int64_t check(const Probe &probe, ArrayRef<SmallVector<Bits>> operandSets);

  MLIRContext context;
  int64_t compared = 0;

  void TearDown() override {
    std::printf("%lld elements compared bit for bit\n",
                static_cast<long long>(compared));
  }
};

std::string signature(ArrayRef<ProbeType> types) {
  std::string text;
  for (auto [i, type] : llvm::enumerate(types))
    text += (i ? ", " : "") + type.str();
  return text;
}

std::string resultList(size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i)
    text += (i ? ", %r#" : "%r#") + std::to_string(i);
  return text;
}

Bits readResult(const HostTensor &tensor) {
  Bits bits;
  unsigned bytes = tensor.getElementBytes();
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    uint64_t b = 0;
    std::memcpy(&b, tensor.data() + i * bytes, bytes);
    bits.push_back(b);
  }
  return bits;
}

Bits readConstant(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return {};
  if (auto scalar = dyn_cast<FloatAttr>(constant.getValue()))
    return {toBits(scalar.getValue())};
  Bits bits;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue()))
    for (const APFloat &v : dense.getValues<APFloat>())
      bits.push_back(toBits(v));
  return bits;
}

bool isNaN(uint64_t bits, StringRef element) {
  const llvm::fltSemantics &sem = getSemantics(element);
  return APFloat(sem, APInt(APFloat::getSizeInBits(sem), bits)).isNaN();
}

/// An op whose operands are both NaN may return either (LLVM's NaN
/// semantics; x86 returns the first operand of the multiply, after
/// reordering): any NaN result is right.
template <typename OperandBits>
bool isNaNFromTwoNaNs(const Probe &probe, OperandBits operandBits,
                      uint64_t folded, uint64_t lowered, StringRef element) {
  if (!isNaN(folded, element) || !isNaN(lowered, element))
    return false;
  int nanOperands = 0;
  for (auto [i, type] : llvm::enumerate(probe.operands))
    if (isNaN(operandBits(i), type.element))
      ++nanOperands;
  return nanOperands >= 2;
}

int64_t FoldVsLowerTest::check(const Probe &probe,
                               ArrayRef<SmallVector<Bits>> operandSets) {
  std::string results = signature(probe.results);
  std::string opLine = "  %r:" + std::to_string(probe.results.size()) +
                       " = " + probe.op + "\n  return " +
                       resultList(probe.results.size()) + " : " + results +
                       "\n}\n";

  // The lowering: operands are arguments, nothing to fold.
  std::string args;
  for (auto [i, type] : llvm::enumerate(probe.operands))
    args += (i ? ", %a" : "%a") + std::to_string(i) + ": " + type.str();
  std::string jitText =
      "func.func @probe(" + args + ") -> (" + results + ") {\n" + opLine;
  OwningOpRef<ModuleOp> jitModule =
      parseSourceString<ModuleOp>(jitText, &context);
  if (!jitModule) {
    ADD_FAILURE() << "does not parse:\n" << jitText;
    return 0;
  }
  std::string error;
  auto compiled = CompiledFunction::compile(*jitModule, "probe", error);
  if (!compiled) {
    ADD_FAILURE() << error << "\n" << jitText;
    return 0;
  }

  // The folders: one function per operand set, operands as constants.
  std::string foldText;
  for (auto [set, operands] : llvm::enumerate(operandSets)) {
    foldText += "func.func @probe" + std::to_string(set) + "() -> (" +
                results + ") {\n";
    for (auto [i, type] : llvm::enumerate(probe.operands))
      foldText += "  %a" + std::to_string(i) + " = arith.constant " +
                  constantText(operands[i], type) + " : " + type.str() + "\n";
    foldText += opLine;
  }
  OwningOpRef<ModuleOp> foldModule =
      parseSourceString<ModuleOp>(foldText, &context);
  if (!foldModule) {
    ADD_FAILURE() << "does not parse: " << probe.op;
    return 0;
  }
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*foldModule))) {
    ADD_FAILURE() << "canonicalize failed on " << probe.op;
    return 0;
  }

  int64_t compared = 0;
  for (auto [set, operandSet] : llvm::enumerate(operandSets)) {
    const SmallVector<Bits> &operands = operandSet;
    SmallVector<HostTensor> inputs;
    for (auto [i, type] : llvm::enumerate(probe.operands)) {
      Type element = parseType(type.element, &context);
      HostTensor input(element, type.count < 0
                                    ? ArrayRef<int64_t>()
                                    : ArrayRef<int64_t>(type.count));
      unsigned bytes = input.getElementBytes();
      for (auto [k, b] : llvm::enumerate(operands[i]))
        std::memcpy(input.data() + k * bytes, &b, bytes);
      inputs.push_back(std::move(input));
    }
    auto lowered = compiled->call(inputs, error);
    if (failed(lowered)) {
      ADD_FAILURE() << error;
      return compared;
    }
    auto func = foldModule->lookupSymbol<func::FuncOp>("probe" +
                                                       std::to_string(set));
    Operation *ret = func.getBody().front().getTerminator();
    for (auto [r, type] : llvm::enumerate(probe.results)) {
      Bits folded = readConstant(ret->getOperand(r));
      Bits jit = readResult((*lowered)[r]);
      if (folded.empty()) {
        ADD_FAILURE() << probe.op << ": result " << r << " of operand set "
                      << set << " did not fold";
        continue;
      }
      if (folded.size() != jit.size()) {
        ADD_FAILURE() << probe.op << ": " << folded.size() << " folded vs "
                      << jit.size() << " lowered elements";
        continue;
      }
      for (size_t k = 0; k < jit.size(); ++k) {
        ++compared;
        if (folded[k] == jit[k])
          continue;
        auto operandBits = [&](size_t i) {
          return probe.operandBits(operands, i, k);
        };
        if (isNaNFromTwoNaNs(probe, operandBits, folded[k], jit[k],
                             type.element))
          continue;
        std::string where;
        for (size_t i = 0; i < operands.size(); ++i)
          where += " a" + std::to_string(i) + "=" +
                   hexLiteral(operandBits(i), probe.operands[i].element);
        ADD_FAILURE() << probe.op << ", element " << k << ":" << where
                      << ": folded " << hexLiteral(folded[k], type.element)
                      << ", lowered " << hexLiteral(jit[k], type.element);
      }
    }
  }
  this->compared += compared;
  return compared;
}

constexpr StringLiteral kWide[] = {"f32", "bf16", "f16"};
constexpr StringLiteral kFP8[] = {"f8E4M3FN", "f8E5M2"};

TEST_F(FoldVsLowerTest, Quantize) {
  Bits scales = getScales();
  int64_t compared = 0;
  for (StringRef wide : kWide) {
    Bits values = getWideValues(wide);
    ProbeType input{wide.str(), static_cast<int64_t>(values.size())};
    for (StringRef fp8 : kFP8) {
      ProbeType output{fp8.str(), input.count};
      Probe probe{"fp8.quantize %a0, %a1 : " + input.str() + " -> " +
                      output.str() + ", f32",
                  {input, {"f32"}},
                  {output, {"f32"}}};
      SmallVector<SmallVector<Bits>> sets;
      for (uint64_t scale : scales)
        sets.push_back({values, {scale}});
      compared += check(probe, sets);
    }
  }
  EXPECT_GT(compared, 100000);
}

TEST_F(FoldVsLowerTest, Dequantize) {
  Bits scales = getScales();
  int64_t compared = 0;
  Bits codes;
  for (uint64_t code = 0; code < 256; ++code)
    codes.push_back(code);
  for (StringRef fp8 : kFP8) {
    ProbeType input{fp8.str(), 256};
    for (StringRef wide : kWide) {
      ProbeType output{wide.str(), 256};
      Probe probe{"fp8.dequantize %a0, %a1 : " + input.str() + " -> " +
                      output.str(),
                  {input, {"f32"}},
                  {output}};
      SmallVector<SmallVector<Bits>> sets;
      for (uint64_t scale : scales)
        sets.push_back({codes, {scale}});
      compared += check(probe, sets);
    }
  }
  EXPECT_GT(compared, 30000);
}

TEST_F(FoldVsLowerTest, Amax) {
  int64_t compared = 0;
  for (StringRef wide : kWide) {
    // Every value alone, then all finite values, then everything at once.
    Bits values = getWideValues(wide);
    ProbeType one{wide.str(), 1};
    SmallVector<SmallVector<Bits>> singles;
    for (uint64_t v : values)
      singles.push_back({{v}});
    compared += check({"fp8.amax %a0 : " + one.str(), {one}, {{"f32"}}},
                      singles);

    Bits finite;
    for (uint64_t v : values)
      if (APFloat(getSemantics(wide), APInt(getBitWidth(wide), v)).isFinite())
        finite.push_back(v);
    for (const Bits &set : {finite, values}) {
      ProbeType input{wide.str(), static_cast<int64_t>(set.size())};
      SmallVector<SmallVector<Bits>> all = {{set}};
      compared += check({"fp8.amax %a0 : " + input.str(), {input}, {{"f32"}}},
                        all);
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST_F(FoldVsLowerTest, ComputeScale) {
  Bits amaxes =
      unique(getAmaxes({448.0f, 57344.0f, 240.0f, 1e-30f, 1e30f, 3.7f}));
  Bits previous;
  for (float v : {1.0f, 0.5f, 0.0f, 3.4028235e38f, 1e-40f})
    previous.push_back(toBits(APFloat(v)));
  previous.push_back(toBits(APFloat::getQNaN(APFloat::IEEEsingle())));
  previous.push_back(toBits(APFloat::getInf(APFloat::IEEEsingle())));

  int64_t compared = 0;
  ProbeType f32{"f32"};
  for (StringRef fp8 : kFP8) {
    for (StringRef attrs :
         {"", " {margin = 2 : i32}", " {margin = 127 : i32}",
          " {power_of_two}", " {power_of_two, margin = 1 : i32}"}) {
      SmallVector<SmallVector<Bits>> delayed, current;
      for (uint64_t amax : amaxes) {
        current.push_back({{amax}});
        for (uint64_t prev : previous)
          delayed.push_back({{amax}, {prev}});
      }
      compared += check({"fp8.compute_scale %a0, %a1 for " + fp8.str() +
                             attrs.str() + " : f32",
                         {f32, f32},
                         {f32}},
                        delayed);
      compared += check({"fp8.compute_scale %a0 for " + fp8.str() +
                             attrs.str() + " : f32",
                         {f32},
                         {f32}},
                        current);
    }
    SmallVector<SmallVector<Bits>> current;
    for (uint64_t amax : amaxes)
      current.push_back({{amax}});
    compared += check({"fp8.compute_scale %a0 for " + fp8.str() +
                           " {epsilon = 1.0e-12 : f32} : f32",
                       {f32},
                       {f32}},
                      current);

    // Amax histories: windows over the amax values, both reductions.
    ProbeType history{"f32", 4};
    SmallVector<SmallVector<Bits>> histories;
    for (size_t i = 0; i + 4 <= amaxes.size(); ++i)
      histories.push_back({Bits(amaxes.begin() + i, amaxes.begin() + i + 4),
                           {previous[i % previous.size()]}});
    for (StringRef algo : {"max", "most_recent"})
      compared += check({"fp8.compute_scale %a0, %a1 for " + fp8.str() +
                             " {algo = #fp8.amax_algo<" + algo.str() +
                             ">} : " + history.str(),
                         {history, f32},
                         {f32}},
                        histories);
  }
  EXPECT_GT(compared, 1000);
}

//===----------------------------------------------------------------------===//
// Per-block forms, over 1-D tensors whose last block is partial
//===----------------------------------------------------------------------===//

int64_t numBlocks(int64_t count, int64_t extent) {
  return (count + extent - 1) / extent;
}

/// `pool` repeated (from `offset`) to `count` elements.
Bits cycle(const Bits &pool, int64_t count, size_t offset) {
  Bits bits;
  for (int64_t i = 0; i < count; ++i)
    bits.push_back(pool[(offset + i) % pool.size()]);
  return bits;
}

TEST_F(FoldVsLowerTest, BlockAmax) {
  int64_t compared = 0;
  for (StringRef wide : kWide) {
    Bits values = getWideValues(wide);
    ProbeType input{wide.str(), static_cast<int64_t>(values.size())};
    for (int64_t extent : {1, 3, 32, 128}) {
      ProbeType output{"f32", numBlocks(input.count, extent)};
      SmallVector<SmallVector<Bits>> sets = {{values}};
      compared += check({"fp8.block_amax %a0 block [" +
                             std::to_string(extent) + "] : " + input.str() +
                             " -> " + output.str(),
                         {input},
                         {output}},
                        sets);
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST_F(FoldVsLowerTest, ComputeBlockScales) {
  Bits amaxes = getAmaxes({448.0f, 449.0f, 57344.0f, 1e-12f, 1e-30f, 1e30f,
                           0x1p-127f, 0x1.8p-127f, 0x1p-126f});
  Bits random = getRandom("f32", 2000, /*seed=*/11);
  amaxes.append(random.begin(), random.end());
  amaxes = unique(std::move(amaxes));
  ProbeType f32s{"f32", static_cast<int64_t>(amaxes.size())};
  ProbeType e8m0s{"f8E8M0FNU", f32s.count};
  SmallVector<SmallVector<Bits>> sets = {{amaxes}};
  int64_t compared = 0;
  for (StringRef fp8 : kFP8) {
    for (StringRef attrs :
         {"", " {power_of_two}", " {epsilon = 1.0e-12 : f32}"})
      compared += check({"fp8.compute_block_scales %a0 for " + fp8.str() +
                             attrs.str() + " : " + f32s.str() + " -> " +
                             f32s.str() + ", " + f32s.str(),
                         {f32s},
                         {f32s, f32s}},
                        sets);
    compared += check({"fp8.compute_block_scales %a0 for " + fp8.str() +
                           " : " + f32s.str() + " -> " + f32s.str() + ", " +
                           e8m0s.str(),
                       {f32s},
                       {f32s, e8m0s}},
                      sets);
  }
  EXPECT_GT(compared, 10000);
}

TEST_F(FoldVsLowerTest, BlockQuantize) {
  Bits scales = getScales();
  int64_t compared = 0;
  for (StringRef wide : kWide) {
    Bits values = getWideValues(wide);
    ProbeType input{wide.str(), static_cast<int64_t>(values.size())};
    for (int64_t extent : {1, 32}) {
      ProbeType scaleType{"f32", numBlocks(input.count, extent)};
      for (StringRef fp8 : kFP8) {
        ProbeType output{fp8.str(), input.count};
        SmallVector<SmallVector<Bits>> sets;
        for (size_t offset = 0; offset < 4; ++offset)
          sets.push_back({values, cycle(scales, scaleType.count, offset * 7)});
        compared += check({"fp8.quantize %a0, %a1 block [" +
                               std::to_string(extent) + "] : " + input.str() +
                               " scales " + scaleType.str() + " -> " +
                               output.str(),
                           {input, scaleType},
                           {output},
                           {1, extent}},
                          sets);
      }
    }
  }
  EXPECT_GT(compared, 100000);
}

TEST_F(FoldVsLowerTest, BlockDequantize) {
  Bits codes;
  for (uint64_t code = 0; code < 256; ++code)
    codes.push_back(code);
  Bits scales = getScales();
  int64_t compared = 0;
  for (StringRef fp8 : kFP8) {
    ProbeType input{fp8.str(), 256};
    for (StringRef wide : kWide) {
      ProbeType output{wide.str(), 256};
      // f32 scale_invs in blocks of 3; every E8M0 code against every FP8
      // code (one element per block, rotated).
      ProbeType f32Scales{"f32", numBlocks(256, 3)};
      SmallVector<SmallVector<Bits>> f32Sets, e8m0Sets;
      for (size_t offset = 0; offset < 8; ++offset)
        f32Sets.push_back({codes, cycle(scales, f32Scales.count, offset * 5)});
      for (size_t offset = 0; offset < 256; offset += 15)
        e8m0Sets.push_back({codes, cycle(codes, 256, offset)});
      ProbeType e8m0Scales{"f8E8M0FNU", 256};
      compared += check({"fp8.dequantize %a0, %a1 block [3] : " + input.str() +
                             " scales " + f32Scales.str() + " -> " +
                             output.str(),
                         {input, f32Scales},
                         {output},
                         {1, 3}},
                        f32Sets);
      compared += check({"fp8.dequantize %a0, %a1 block [1] : " + input.str() +
                             " scales " + e8m0Scales.str() + " -> " +
                             output.str(),
                         {input, e8m0Scales},
                         {output}},
                        e8m0Sets);
    }
  }
  EXPECT_GT(compared, 30000);
}

} // namespace
