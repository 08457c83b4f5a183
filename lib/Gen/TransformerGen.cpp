//===- TransformerGen.cpp - Transformer graph generator -------------------===//
//
// The model is built on 2-D activations [tokens, features] (tokens = batch *
// sequence), the way exporters flatten `nn.Linear` inputs; attention reshapes
// to [batch * heads, seq, head_dim] for its batch matmuls. Every elementwise op,
// norm, softmax and loss is a linalg.generic computing in f32 (f64 for the f64
// element type) between extf/truncf, as exported bf16 graphs do.
//
//===----------------------------------------------------------------------===//

#include "fp8/Gen/TransformerGen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::fp8::gen;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

TransformerOptions mlir::fp8::gen::resolveDefaults(const TransformerOptions &in) {
  TransformerOptions o = in;
  if (o.kvHeads == 0)
    o.kvHeads = o.heads;
  if (o.ffn == 0) {
    if (o.arch == Arch::GPT2) {
      o.ffn = 4 * o.hidden;
    } else {
      int64_t f = (2 * 4 * o.hidden) / 3;
      o.ffn = (f + 31) / 32 * 32;
    }
  }
  if (o.maxPositions == 0)
    o.maxPositions = ShapedType::isDynamic(o.seq) ? 1024 : o.seq;
  return o;
}

/// The product of `sizes`, a dynamic size counting as 1; nothing on overflow.
static std::optional<int64_t> checkedProduct(ArrayRef<int64_t> sizes) {
  std::optional<int64_t> product = 1;
  for (int64_t s : sizes)
    if (!ShapedType::isDynamic(s) && product)
      product = llvm::checkedMul(*product, s);
  return product;
}

static std::optional<int64_t>
checkedSum(ArrayRef<std::optional<int64_t>> terms) {
  std::optional<int64_t> sum = 0;
  for (std::optional<int64_t> t : terms)
    sum = sum && t ? llvm::checkedAdd(*sum, *t) : std::nullopt;
  return sum;
}

/// Weight elements of resolved options; nothing when they overflow int64_t.
static std::optional<int64_t>
checkedWeightElements(const TransformerOptions &o) {
  bool gpt2 = o.arch == Arch::GPT2;
  int64_t h = o.hidden, hd = o.hidden / std::max<int64_t>(o.heads, 1);
  int64_t kv = o.kvHeads * hd;
  std::optional<int64_t> perLayer = checkedSum(
      {checkedProduct({gpt2 ? 4 : 2, h}), checkedProduct({2, h, h}),
       checkedProduct({2, h, kv}), checkedProduct({gpt2 ? 2 : 3, h, o.ffn})});
  std::optional<int64_t> total =
      perLayer ? checkedProduct({o.layers, *perLayer}) : std::nullopt;
  if (o.vocab == 0)
    return total;
  return checkedSum({total, checkedProduct({2, o.vocab, h}),
                     checkedProduct({gpt2 ? 2 : 1, h}),
                     gpt2 ? checkedProduct({o.maxPositions, h}) : 0});
}

int64_t mlir::fp8::gen::countWeightElements(const TransformerOptions &in) {
  return checkedWeightElements(resolveDefaults(in))
      .value_or(std::numeric_limits<int64_t>::max());
}

llvm::Error mlir::fp8::gen::validateOptions(const TransformerOptions &in) {
  auto fail = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  struct Size {
    const char *flag;
    int64_t value;
  };
  for (Size s : {Size{"--layers", in.layers}, Size{"--hidden", in.hidden},
                 Size{"--heads", in.heads}})
    if (s.value <= 0)
      return fail(llvm::Twine(s.flag) + " must be positive, got " +
                  llvm::Twine(s.value));
  for (Size s : {Size{"--kv-heads", in.kvHeads}, Size{"--ffn", in.ffn},
                 Size{"--vocab", in.vocab},
                 Size{"--max-positions", in.maxPositions}})
    if (s.value < 0)
      return fail(llvm::Twine(s.flag) + " must not be negative, got " +
                  llvm::Twine(s.value));
  for (Size s : {Size{"--seq", in.seq}, Size{"--batch", in.batch}})
    if (!ShapedType::isDynamic(s.value) && s.value <= 0)
      return fail(llvm::Twine(s.flag) + " must be positive or '?', got " +
                  llvm::Twine(s.value));
  if (in.hidden % in.heads != 0)
    return fail(llvm::formatv("--heads={0} does not divide --hidden={1}",
                              in.heads, in.hidden));
  TransformerOptions o = resolveDefaults(in);
  if (o.heads % o.kvHeads != 0)
    return fail(llvm::formatv("--kv-heads={0} does not divide --heads={1}",
                              o.kvHeads, o.heads));
  if (o.arch == Arch::GPT2 && o.kvHeads != o.heads)
    return fail(llvm::formatv(
        "--kv-heads={0}: --arch=gpt2 uses multi-head attention (kv-heads = "
        "heads = {1}); grouped-query attention is --arch=llama",
        o.kvHeads, o.heads));
  if (o.arch == Arch::Llama && (o.hidden / o.heads) % 2 != 0)
    return fail(llvm::formatv("--hidden={0} / --heads={1}: RoPE needs an even "
                              "head dimension, got {2}",
                              o.hidden, o.heads, o.hidden / o.heads));
  if (o.arch == Arch::GPT2 && o.vocab > 0 && !ShapedType::isDynamic(o.seq) &&
      o.seq > o.maxPositions)
    return fail(llvm::formatv("--seq={0} exceeds --max-positions={1}", o.seq,
                              o.maxPositions));
  // Shapes and element counts are int64_t: products that overflow would build
  // wrong types or allocate without bound.
  if (!checkedWeightElements(o))
    return fail(llvm::formatv(
        "--hidden={0} --ffn={1} --vocab={2} --layers={3}: the weights have "
        "more elements than int64_t counts",
        o.hidden, o.ffn, o.vocab, o.layers));
  int64_t widest = std::max({o.hidden, o.ffn, o.vocab});
  if (!checkedProduct({o.batch, o.seq, widest}) ||
      !checkedProduct({o.batch, o.heads, o.seq, o.seq}))
    return fail("--batch and --seq: the activations have more elements than "
                "int64_t counts");
  if (o.form == Form::Tosa && o.dtype == DType::F64)
    return fail("--dtype=f64 has no TOSA matmul: use --form=named or generic");
  if (o.dataParallel < 0)
    return fail(llvm::formatv("--data-parallel must not be negative, got {0}",
                              o.dataParallel));
  if (o.dataParallel == 1 && o.mode != Mode::Train)
    return fail("--data-parallel=1 is the single-rank reference of a "
                "data-parallel training step: it needs --mode=train");
  if (o.dataParallel > 1) {
    if (o.mode != Mode::Train)
      return fail("--data-parallel splits the batch of a training step: it "
                  "needs --mode=train");
    if (ShapedType::isDynamic(o.batch) || o.batch % o.dataParallel != 0)
      return fail(llvm::formatv("--data-parallel={0} must divide --batch={1}",
                                o.dataParallel,
                                ShapedType::isDynamic(o.batch)
                                    ? std::string("?")
                                    : std::to_string(o.batch)));
  }
  if (o.mode == Mode::Train && o.weights == Weights::Constants)
    return fail("--weights=constants cannot be trained: use --weights=args or "
                "globals with --mode=train");
  if (o.weights == Weights::Constants) {
    int64_t n = countWeightElements(o);
    if (n > kMaxConstantWeightElements)
      return fail(llvm::formatv(
          "--weights=constants is for small models: {0} weight elements "
          "exceed the limit of {1}; use --weights=args or globals",
          n, kMaxConstantWeightElements));
  }
  return llvm::Error::success();
}

void mlir::fp8::gen::registerGeneratorDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  ml_program::MLProgramDialect, shard::ShardDialect,
                  tensor::TensorDialect, tosa::TosaDialect>();
}

//===----------------------------------------------------------------------===//
// Generator
//===----------------------------------------------------------------------===//

namespace {

/// Sentinels for constant results in affine map helpers.
constexpr int64_t kZero = -1;
constexpr int64_t kOne = -2;

struct Operand {
  Value value;
  AffineMap map;
};

enum class Combine { None, Add, Max };

/// The body of a generic: its float operands already converted to the compute
/// type; `ivs` are the loop indices when asked for.
using BodyFn = llvm::function_ref<Value(OpBuilder &, Location,
                                        ArrayRef<Value> args,
                                        ArrayRef<Value> ivs)>;

struct Param {
  std::string name;
  SmallVector<int64_t> shape;
  enum Init { Random, One, Zero } init = Random;
  bool decay = true;
  /// The master (train) or the weight (forward) as the function sees it.
  Value value;
  /// The element-type copy the forward computes with.
  Value compute;
  Value grad;
  Value m, v;
};

struct LayerParams {
  int norm1 = -1, norm1Bias = -1, wq = -1, wk = -1, wv = -1, wo = -1;
  int norm2 = -1, norm2Bias = -1, w1 = -1, w3 = -1, w2 = -1;
};

struct NormOut {
  Value y, mu, r;
};

/// What the backward of one layer reads.
struct LayerSaved {
  Value x;
  NormOut n1, n2;
  Value qh, kh, vh, p, attn, h1;
  Value f1, f3, act;
};

class Generator {
public:
  Generator(MLIRContext &context, const TransformerOptions &options)
      : ctx(&context), o(resolveDefaults(options)), b(&context),
        loc(UnknownLoc::get(&context)) {
    et = elementType(o.dtype);
    // The step is written per rank: it sees its slice of the batch.
    globalBatch = o.batch;
    if (o.dataParallel > 1)
      o.batch /= o.dataParallel;
    ct = o.dtype == DType::F64 ? Type(b.getF64Type()) : Type(b.getF32Type());
    headDim = o.hidden / o.heads;
    group = o.heads / o.kvHeads;
    rng = o.seed * 6364136223846793005ULL + 1442695040888963407ULL;
  }

  OwningOpRef<ModuleOp> run();

private:
  Type elementType(DType d) {
    switch (d) {
    case DType::F32:
      return b.getF32Type();
    case DType::BF16:
      return b.getBF16Type();
    case DType::F16:
      return b.getF16Type();
    case DType::F64:
      return b.getF64Type();
    }
    llvm_unreachable("dtype");
  }
  bool train() const { return o.mode == Mode::Train; }
  bool llama() const { return o.arch == Arch::Llama; }

  // Shapes and small helpers.
  OpFoldResult I(int64_t v) { return b.getIndexAttr(v); }
  RankedTensorType tensorType(ArrayRef<OpFoldResult> shape, Type e);
  Value empty(ArrayRef<OpFoldResult> shape, Type e) {
    return tensor::EmptyOp::create(b, loc, shape, e);
  }
  Value constant(Type t, double v) {
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getFloatAttr(t, v)));
  }
  Value fill(ArrayRef<OpFoldResult> shape, Type e, double v) {
    // Named, in order: as call arguments, the creation order (and so the
    // printed IR) would depend on the compiler.
    Value init = empty(shape, e);
    Value value = constant(e, v);
    return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{init})
        .getResult(0);
  }
  static Value convert(OpBuilder &bb, Location l, Value v, Type to);
  AffineMap map(unsigned n, ArrayRef<int64_t> dims);
  OpFoldResult mul(OpFoldResult a, int64_t c);
  OpFoldResult mul(OpFoldResult a, OpFoldResult c);
  Value expand(Value v, ArrayRef<OpFoldResult> shape,
               ArrayRef<ReassociationIndices> re) {
    return tensor::ExpandShapeOp::create(b, loc, tensorType(shape, getElementTypeOrSelf(v)),
                                         v, re, shape);
  }
  Value collapse(Value v, ArrayRef<ReassociationIndices> re) {
    return tensor::CollapseShapeOp::create(b, loc, v, re);
  }

  // Generics.
  Value generic(ArrayRef<utils::IteratorType> iters, ArrayRef<Operand> ins,
                Value init, AffineMap outMap, Combine combine, BodyFn fn,
                bool wantIvs);
  Value pointwise(ArrayRef<OpFoldResult> shape, Type outEt,
                  ArrayRef<Operand> ins, BodyFn fn, bool wantIvs = false);
  Value reduce(ArrayRef<bool> reduced, ArrayRef<OpFoldResult> outShape,
               ArrayRef<Operand> ins, Combine combine, BodyFn fn,
               bool wantIvs = false);
  Value copy(ArrayRef<OpFoldResult> shape, Operand in);

  // Model pieces.
  Value matmul(Value a, Value w, bool ta, bool tb, Type outEt = Type());
  /// dW = dY^T X: in the element type, or in f32 in a data-parallel step,
  /// which averages it over the ranks before rounding it (TE's fp32
  /// main_grad).
  Value weightGrad(Value dy, Value x) {
    return matmul(dy, x, true, false, o.dataParallel > 0 ? ct : Type());
  }
  Value add(Value x, Value y);
  NormOut norm(Value x, int g, int bias);
  std::tuple<Value, Value, Value> normBackward(Value dy, Value x,
                                               const NormOut &n, int g);
  Value rope(Value x, int64_t nHeads, double sign);
  Value toHeads(Value x, bool kv);
  Value fromHeads(Value x);
  Value fromHeadsKV(Value x);
  Value softmax(Value scores);
  Value softmaxBackward(Value p, Value dp);
  Value layerForward(Value x, const LayerParams &lp, LayerSaved &saved);
  Value layerBackward(Value dh, const LayerParams &lp, const LayerSaved &s);
  Value silu(OpBuilder &bb, Location l, Value g);
  Value adamw(Param &p, Value bc1, Value bc2);
  Value meanOverRanks(Value v);

  // Parameters.
  int addParam(std::string name, ArrayRef<int64_t> shape, Param::Init init,
               bool decay = true);
  void declareParams();
  Attribute randomInit(const Param &p, RankedTensorType type);
  Value &grad(int i) { return params[i].grad; }
  Value w(int i) { return params[i].compute; }

  MLIRContext *ctx;
  TransformerOptions o;
  OpBuilder b;
  Location loc;
  Type et, ct;
  int64_t headDim, group;
  uint64_t rng;
  int64_t globalBatch;

  std::vector<Param> params;
  std::vector<LayerParams> layers;
  int embed = -1, posEmbed = -1, finalNorm = -1, finalNormBias = -1,
      lmHead = -1;

  OpFoldResult B, S, T, BH;
  Value sIndex;
};

} // namespace

RankedTensorType Generator::tensorType(ArrayRef<OpFoldResult> shape, Type e) {
  SmallVector<int64_t> dims;
  for (OpFoldResult d : shape)
    dims.push_back(getConstantIntValue(d).value_or(ShapedType::kDynamic));
  return RankedTensorType::get(dims, e);
}

Value Generator::convert(OpBuilder &bb, Location l, Value v, Type to) {
  Type from = v.getType();
  if (from == to || !isa<FloatType>(from))
    return v;
  if (cast<FloatType>(from).getWidth() < cast<FloatType>(to).getWidth())
    return arith::ExtFOp::create(bb, l, to, v);
  return arith::TruncFOp::create(bb, l, to, v);
}

AffineMap Generator::map(unsigned n, ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(d >= 0 ? getAffineDimExpr(d, ctx)
                           : getAffineConstantExpr(d == kZero ? 0 : 1, ctx));
  return AffineMap::get(n, 0, exprs, ctx);
}

OpFoldResult Generator::mul(OpFoldResult a, int64_t c) { return mul(a, I(c)); }

OpFoldResult Generator::mul(OpFoldResult a, OpFoldResult c) {
  auto x = getConstantIntValue(a), y = getConstantIntValue(c);
  if (x && y)
    return I(*x * *y);
  return arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, a),
                               getValueOrCreateConstantIndexOp(b, loc, c))
      .getResult();
}

Value Generator::generic(ArrayRef<utils::IteratorType> iters,
                         ArrayRef<Operand> ins, Value init, AffineMap outMap,
                         Combine combine, BodyFn fn, bool wantIvs) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (const Operand &in : ins) {
    inputs.push_back(in.value);
    maps.push_back(in.map);
  }
  maps.push_back(outMap);
  Type outEt = getElementTypeOrSelf(init);
  Type computeType = ct;
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange blockArgs) {
        SmallVector<Value> args;
        for (Value a : blockArgs.drop_back())
          args.push_back(convert(bb, l, a, computeType));
        SmallVector<Value> ivs;
        if (wantIvs)
          for (unsigned d = 0; d < iters.size(); ++d)
            ivs.push_back(linalg::IndexOp::create(bb, l, d));
        Value v = fn(bb, l, args, ivs);
        Value acc = blockArgs.back();
        if (combine == Combine::Add)
          v = arith::AddFOp::create(bb, l, convert(bb, l, acc, computeType), v);
        else if (combine == Combine::Max)
          v = arith::MaximumFOp::create(bb, l, convert(bb, l, acc, computeType),
                                        v);
        linalg::YieldOp::create(bb, l, convert(bb, l, v, outEt));
      });
  return op.getResult(0);
}

Value Generator::pointwise(ArrayRef<OpFoldResult> shape, Type outEt,
                           ArrayRef<Operand> ins, BodyFn fn, bool wantIvs) {
  unsigned n = shape.size();
  SmallVector<utils::IteratorType> iters(n, utils::IteratorType::parallel);
  return generic(iters, ins, empty(shape, outEt),
                 AffineMap::getMultiDimIdentityMap(n, ctx), Combine::None, fn,
                 wantIvs);
}

Value Generator::reduce(ArrayRef<bool> reduced, ArrayRef<OpFoldResult> outShape,
                        ArrayRef<Operand> ins, Combine combine, BodyFn fn,
                        bool wantIvs) {
  SmallVector<utils::IteratorType> iters;
  SmallVector<int64_t> kept;
  for (auto [d, r] : llvm::enumerate(reduced)) {
    iters.push_back(r ? utils::IteratorType::reduction
                      : utils::IteratorType::parallel);
    if (!r)
      kept.push_back(d);
  }
  double init = combine == Combine::Max
                    ? -std::numeric_limits<double>::infinity()
                    : 0.0;
  return generic(iters, ins, fill(outShape, ct, init),
                 map(reduced.size(), kept), combine, fn, wantIvs);
}

Value Generator::copy(ArrayRef<OpFoldResult> shape, Operand in) {
  unsigned n = shape.size();
  Type e = getElementTypeOrSelf(in.value);
  SmallVector<utils::IteratorType> iters(n, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{tensorType(shape, e)}, ValueRange{in.value},
             ValueRange{empty(shape, e)},
             ArrayRef<AffineMap>{in.map,
                                 AffineMap::getMultiDimIdentityMap(n, ctx)},
             iters,
             [&](OpBuilder &bb, Location l, ValueRange args) {
               linalg::YieldOp::create(bb, l, args[0]);
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// GEMMs, in the requested spelling
//===----------------------------------------------------------------------===//

/// op(a) x op(w): a is [.., M, K] ([.., K, M] if ta), w is [.., K, N]
/// ([.., N, K] if tb); 2-D or 3-D (batched). The result has the element type,
/// or `outEt` when given.
Value Generator::matmul(Value a, Value w, bool ta, bool tb, Type outEt) {
  Type et = outEt ? outEt : this->et;
  auto aType = cast<RankedTensorType>(a.getType());
  unsigned r = aType.getRank();
  bool batched = r == 3;
  OpFoldResult m = tensor::getMixedSize(b, loc, a, ta ? r - 1 : r - 2);
  OpFoldResult n = tensor::getMixedSize(b, loc, w, tb ? r - 2 : r - 1);
  SmallVector<OpFoldResult> outShape;
  if (batched)
    outShape.push_back(tensor::getMixedSize(b, loc, a, 0));
  outShape.append({m, n});
  RankedTensorType outType = tensorType(outShape, et);

  // Loops: [batch,] m, n, k.
  unsigned nl = batched ? 4 : 3;
  int64_t bd = 0, md = nl - 3, nd = nl - 2, kd = nl - 1;
  auto withBatch = [&](std::initializer_list<int64_t> dims) {
    SmallVector<int64_t> all;
    if (batched)
      all.push_back(bd);
    all.append(dims);
    return map(nl, all);
  };
  AffineMap lhsMap = ta ? withBatch({kd, md}) : withBatch({md, kd});
  AffineMap rhsMap = tb ? withBatch({nd, kd}) : withBatch({kd, nd});
  AffineMap outMap = withBatch({md, nd});

  switch (o.form) {
  case Form::Named: {
    Value init = fill(outShape, et, 0.0);
    Operation *op;
    if (batched)
      op = linalg::BatchMatmulOp::create(b, loc, TypeRange{outType},
                                         ValueRange{a, w}, ValueRange{init});
    else
      op = linalg::MatmulOp::create(b, loc, TypeRange{outType},
                                    ValueRange{a, w}, ValueRange{init});
    if (ta || tb)
      op->setAttr("indexing_maps",
                  b.getAffineMapArrayAttr({lhsMap, rhsMap, outMap}));
    return op->getResult(0);
  }
  case Form::Generic: {
    // f32 accumulation; extf on narrow operands comes with the body.
    SmallVector<bool> reduced(nl, false);
    reduced.back() = true;
    Value acc = reduce(
        reduced, outShape, {{a, lhsMap}, {w, rhsMap}}, Combine::Add,
        [](OpBuilder &bb, Location l, ArrayRef<Value> x, ArrayRef<Value>) {
          return arith::MulFOp::create(bb, l, x[0], x[1]).getResult();
        });
    if (ct == et)
      return acc;
    return pointwise(outShape, et, {{acc, AffineMap::getMultiDimIdentityMap(
                                              outShape.size(), ctx)}},
                     [](OpBuilder &, Location, ArrayRef<Value> x,
                        ArrayRef<Value>) { return x[0]; });
  }
  case Form::Tosa: {
    auto swap = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(t.getShape());
      std::swap(shape[r - 1], shape[r - 2]);
      SmallVector<int32_t> perms =
          batched ? SmallVector<int32_t>{0, 2, 1} : SmallVector<int32_t>{1, 0};
      return tosa::TransposeOp::create(
                 b, loc, RankedTensorType::get(shape, t.getElementType()), v,
                 b.getDenseI32ArrayAttr(perms))
          .getResult();
    };
    auto to3d = [&](Value v) {
      if (batched)
        return v;
      return expand(v,
                    {I(1), tensor::getMixedSize(b, loc, v, 0),
                     tensor::getMixedSize(b, loc, v, 1)},
                    {{0, 1}, {2}});
    };
    Value lhs = to3d(ta ? swap(a) : a);
    Value rhs = to3d(tb ? swap(w) : w);
    Type accType = b.getF32Type();
    auto zpType = RankedTensorType::get({1}, et);
    Value zp = tosa::ConstOp::create(
        b, loc, zpType, cast<ElementsAttr>(b.getZeroAttr(zpType)));
    SmallVector<OpFoldResult> shape3 = outShape;
    if (!batched)
      shape3.insert(shape3.begin(), I(1));
    Value c = tosa::MatMulOp::create(b, loc, tensorType(shape3, accType), lhs,
                                     rhs, zp, zp);
    if (accType != et)
      c = tosa::CastOp::create(b, loc, tensorType(shape3, et), c);
    return batched ? c : collapse(c, {{0, 1}, {2}});
  }
  }
  llvm_unreachable("form");
}

Value Generator::add(Value x, Value y) {
  if (o.form == Form::Tosa)
    return tosa::AddOp::create(b, loc, x.getType(), x, y);
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> shape;
  for (unsigned d = 0; d < t.getRank(); ++d)
    shape.push_back(tensor::getMixedSize(b, loc, x, d));
  AffineMap id = AffineMap::getMultiDimIdentityMap(t.getRank(), ctx);
  return pointwise(shape, t.getElementType(), {{x, id}, {y, id}},
                   [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                      ArrayRef<Value>) {
                     return arith::AddFOp::create(bb, l, v[0], v[1]).getResult();
                   });
}

//===----------------------------------------------------------------------===//
// Norms
//===----------------------------------------------------------------------===//

NormOut Generator::norm(Value x, int g, int bias) {
  double invH = 1.0 / o.hidden;
  Value invHv = constant(ct, invH), eps = constant(ct, 1e-5);
  AffineMap rows = map(2, {0, 1}), row = map(2, {0}), col = map(2, {1});
  NormOut out;
  auto rsqrtMean = [&](Value sum) {
    return pointwise({T}, ct, {{sum, map(1, {0})}},
                     [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                         ArrayRef<Value>) {
                       Value mean = arith::MulFOp::create(bb, l, v[0], invHv);
                       Value e = arith::AddFOp::create(bb, l, mean, eps);
                       return math::RsqrtOp::create(bb, l, e).getResult();
                     });
  };
  if (llama()) {
    Value ss = reduce({false, true}, {T}, {{x, rows}}, Combine::Add,
                      [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                         ArrayRef<Value>) {
                        return arith::MulFOp::create(bb, l, v[0], v[0])
                            .getResult();
                      });
    out.r = rsqrtMean(ss);
    out.y = pointwise({T, I(o.hidden)}, et,
                      {{x, rows}, {out.r, row}, {w(g), col}},
                      [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                         ArrayRef<Value>) {
                        Value y = arith::MulFOp::create(bb, l, v[0], v[1]);
                        return arith::MulFOp::create(bb, l, y, v[2]).getResult();
                      });
    return out;
  }
  Value sum = reduce({false, true}, {T}, {{x, rows}}, Combine::Add,
                     [](OpBuilder &, Location, ArrayRef<Value> v,
                        ArrayRef<Value>) { return v[0]; });
  out.mu = pointwise({T}, ct, {{sum, map(1, {0})}},
                     [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                         ArrayRef<Value>) {
                       return arith::MulFOp::create(bb, l, v[0], invHv)
                           .getResult();
                     });
  Value var = reduce({false, true}, {T}, {{x, rows}, {out.mu, row}},
                     Combine::Add,
                     [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                        ArrayRef<Value>) {
                       Value d = arith::SubFOp::create(bb, l, v[0], v[1]);
                       return arith::MulFOp::create(bb, l, d, d).getResult();
                     });
  out.r = rsqrtMean(var);
  out.y = pointwise({T, I(o.hidden)}, et,
                    {{x, rows}, {out.mu, row}, {out.r, row}, {w(g), col},
                     {w(bias), col}},
                    [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                       ArrayRef<Value>) {
                      Value d = arith::SubFOp::create(bb, l, v[0], v[1]);
                      Value xhat = arith::MulFOp::create(bb, l, d, v[2]);
                      Value y = arith::MulFOp::create(bb, l, xhat, v[3]);
                      return arith::AddFOp::create(bb, l, y, v[4]).getResult();
                    });
  return out;
}

/// dx (element type), dgamma, dbeta (compute type; dbeta null for RMSNorm).
std::tuple<Value, Value, Value>
Generator::normBackward(Value dy, Value x, const NormOut &n, int g) {
  Value invHv = constant(ct, 1.0 / o.hidden);
  AffineMap rows = map(2, {0, 1}), row = map(2, {0}), col = map(2, {1});
  OpFoldResult H = I(o.hidden);
  if (llama()) {
    // y = x r g, r = (mean(x^2) + eps)^-1/2:
    // dx = r dy g - x r^3 mean(dy g x), dg = sum_t dy x r.
    Value c = reduce({false, true}, {T}, {{dy, rows}, {w(g), col}, {x, rows}},
                     Combine::Add,
                     [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                        ArrayRef<Value>) {
                       Value p = arith::MulFOp::create(bb, l, v[0], v[1]);
                       return arith::MulFOp::create(bb, l, p, v[2]).getResult();
                     });
    Value dx = pointwise(
        {T, H}, et,
        {{dy, rows}, {w(g), col}, {x, rows}, {n.r, row}, {c, row}},
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
          Value dxhat = arith::MulFOp::create(bb, l, v[0], v[1]);
          Value a = arith::MulFOp::create(bb, l, dxhat, v[3]);
          Value r2 = arith::MulFOp::create(bb, l, v[3], v[3]);
          Value r3 = arith::MulFOp::create(bb, l, r2, v[3]);
          Value cm = arith::MulFOp::create(bb, l, v[4], invHv);
          Value t = arith::MulFOp::create(bb, l, v[2], r3);
          t = arith::MulFOp::create(bb, l, t, cm);
          return arith::SubFOp::create(bb, l, a, t).getResult();
        });
    Value dg = reduce({true, false}, {H}, {{dy, rows}, {x, rows}, {n.r, row}},
                      Combine::Add,
                      [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                         ArrayRef<Value>) {
                        Value p = arith::MulFOp::create(bb, l, v[0], v[1]);
                        return arith::MulFOp::create(bb, l, p, v[2]).getResult();
                      });
    return {dx, dg, Value()};
  }
  // xhat = (x - mu) r, y = xhat g + b:
  // dx = r (dy g - mean(dy g) - xhat mean(dy g xhat)).
  auto xhat = [](OpBuilder &bb, Location l, Value x, Value mu, Value r) {
    Value d = arith::SubFOp::create(bb, l, x, mu);
    return arith::MulFOp::create(bb, l, d, r).getResult();
  };
  Value c1 = reduce({false, true}, {T}, {{dy, rows}, {w(g), col}}, Combine::Add,
                    [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                       ArrayRef<Value>) {
                      return arith::MulFOp::create(bb, l, v[0], v[1]).getResult();
                    });
  Value c2 = reduce(
      {false, true}, {T},
      {{dy, rows}, {w(g), col}, {x, rows}, {n.mu, row}, {n.r, row}},
      Combine::Add,
      [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
        Value p = arith::MulFOp::create(bb, l, v[0], v[1]);
        return arith::MulFOp::create(bb, l, p, xhat(bb, l, v[2], v[3], v[4]))
            .getResult();
      });
  Value dx = pointwise(
      {T, H}, et,
      {{dy, rows}, {w(g), col}, {x, rows}, {n.mu, row}, {n.r, row}, {c1, row},
       {c2, row}},
      [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
        Value xh = xhat(bb, l, v[2], v[3], v[4]);
        Value dxhat = arith::MulFOp::create(bb, l, v[0], v[1]);
        Value m1 = arith::MulFOp::create(bb, l, v[5], invHv);
        Value m2 = arith::MulFOp::create(bb, l, v[6], invHv);
        Value t = arith::SubFOp::create(bb, l, dxhat, m1);
        Value u = arith::MulFOp::create(bb, l, xh, m2);
        t = arith::SubFOp::create(bb, l, t, u);
        return arith::MulFOp::create(bb, l, t, v[4]).getResult();
      });
  Value dg = reduce(
      {true, false}, {H}, {{dy, rows}, {x, rows}, {n.mu, row}, {n.r, row}},
      Combine::Add,
      [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
        return arith::MulFOp::create(bb, l, v[0], xhat(bb, l, v[1], v[2], v[3]))
            .getResult();
      });
  Value db = reduce({true, false}, {H}, {{dy, rows}}, Combine::Add,
                    [](OpBuilder &, Location, ArrayRef<Value> v,
                       ArrayRef<Value>) { return v[0]; });
  return {dx, dg, db};
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Rotary embedding on [T, nHeads * headDim] (HF's rotate_half: element j pairs
/// with j + headDim/2). sign = -1 rotates back: the backward.
Value Generator::rope(Value x, int64_t nHeads, double sign) {
  int64_t half = headDim / 2;
  SmallVector<OpFoldResult> shape = {T, I(nHeads), I(2), I(half)};
  Value x4 = expand(x, shape, {{0}, {1, 2, 3}});
  double logTheta = std::log(10000.0);
  Value freqScale = constant(ct, -2.0 * logTheta / headDim);
  Value signV = constant(ct, sign);
  Value seqLen = sIndex;
  Value y = pointwise(
      shape, et, {{x4, map(4, {0, 1, kZero, 3})}, {x4, map(4, {0, 1, kOne, 3})}},
      [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value> iv) {
        Value pos = arith::RemUIOp::create(bb, l, iv[0], seqLen);
        auto toFloat = [&](Value idx) {
          Value i = arith::IndexCastUIOp::create(bb, l, bb.getI64Type(), idx);
          return arith::UIToFPOp::create(bb, l, ct, i).getResult();
        };
        Value j = toFloat(iv[3]);
        Value freq = math::ExpOp::create(
            bb, l, arith::MulFOp::create(bb, l, j, freqScale));
        Value angle = arith::MulFOp::create(bb, l, toFloat(pos), freq);
        Value c = math::CosOp::create(bb, l, angle);
        Value s = arith::MulFOp::create(bb, l, math::SinOp::create(bb, l, angle),
                                        signV);
        // Operands built in named steps: the order of evaluation of call
        // arguments is the compiler's, and the printed IR must not be.
        Value x1s = arith::MulFOp::create(bb, l, v[1], s);
        Value x0c = arith::MulFOp::create(bb, l, v[0], c);
        Value y0 = arith::SubFOp::create(bb, l, x0c, x1s);
        Value x0s = arith::MulFOp::create(bb, l, v[0], s);
        Value x1c = arith::MulFOp::create(bb, l, v[1], c);
        Value y1 = arith::AddFOp::create(bb, l, x1c, x0s);
        Value zero = arith::ConstantIndexOp::create(bb, l, 0);
        Value first = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                            iv[2], zero);
        return arith::SelectOp::create(bb, l, first, y0, y1).getResult();
      },
      /*wantIvs=*/true);
  return collapse(y, {{0}, {1, 2, 3}});
}

/// [T, heads * hd] -> [B * heads, S, hd]. Query heads are laid out
/// [kv_head, group]; kv = true repeats each of the kv heads over its group
/// (Llama's repeat_kv).
Value Generator::toHeads(Value x, bool kv) {
  SmallVector<OpFoldResult> out = {B, I(o.kvHeads), I(group), S, I(headDim)};
  Value src;
  AffineMap m;
  if (kv) {
    src = expand(x, {B, S, I(o.kvHeads), I(headDim)}, {{0, 1}, {2, 3}});
    m = map(5, {0, 3, 1, 4});
  } else {
    src = expand(x, {B, S, I(o.kvHeads), I(group), I(headDim)},
                 {{0, 1}, {2, 3, 4}});
    m = map(5, {0, 3, 1, 2, 4});
  }
  return collapse(copy(out, {src, m}), {{0, 1, 2}, {3}, {4}});
}

/// [B * heads, S, hd] -> [T, heads * hd].
Value Generator::fromHeads(Value x) {
  Value x5 = expand(x, {B, I(o.kvHeads), I(group), S, I(headDim)},
                    {{0, 1, 2}, {3}, {4}});
  Value y = copy({B, S, I(o.kvHeads), I(group), I(headDim)},
                 {x5, map(5, {0, 2, 3, 1, 4})});
  return collapse(y, {{0, 1}, {2, 3, 4}});
}

/// The backward of toHeads(kv = true): [B * heads, S, hd] -> [T, kv_heads * hd],
/// summing each group.
Value Generator::fromHeadsKV(Value x) {
  if (group == 1)
    return fromHeads(x);
  Value x5 = expand(x, {B, I(o.kvHeads), I(group), S, I(headDim)},
                    {{0, 1, 2}, {3}, {4}});
  SmallVector<OpFoldResult> shape = {B, S, I(o.kvHeads), I(headDim)};
  // Loops (b, s, k, d, g).
  Value sum = reduce({false, false, false, false, true}, shape,
                     {{x5, map(5, {0, 2, 4, 1, 3})}}, Combine::Add,
                     [](OpBuilder &, Location, ArrayRef<Value> v,
                        ArrayRef<Value>) { return v[0]; });
  Value y = pointwise(shape, et, {{sum, map(4, {0, 1, 2, 3})}},
                      [](OpBuilder &, Location, ArrayRef<Value> v,
                         ArrayRef<Value>) { return v[0]; });
  return collapse(y, {{0, 1}, {2, 3}});
}

/// Causal softmax of scores / sqrt(hd), in the compute type.
Value Generator::softmax(Value scores) {
  SmallVector<OpFoldResult> shape = {BH, S, S};
  AffineMap all = map(3, {0, 1, 2}), rowMap = map(3, {0, 1});
  Value scale = constant(ct, 1.0 / std::sqrt(double(headDim)));
  Value negInf = constant(ct, -std::numeric_limits<double>::infinity());
  Value z = pointwise(
      shape, ct, {{scores, all}},
      [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value> iv) {
        Value s = arith::MulFOp::create(bb, l, v[0], scale);
        Value future =
            arith::CmpIOp::create(bb, l, arith::CmpIPredicate::ugt, iv[2], iv[1]);
        return arith::SelectOp::create(bb, l, future, negInf, s).getResult();
      },
      /*wantIvs=*/true);
  Value mx = reduce({false, false, true}, {BH, S}, {{z, all}}, Combine::Max,
                    [](OpBuilder &, Location, ArrayRef<Value> v,
                       ArrayRef<Value>) { return v[0]; });
  auto shifted = [](OpBuilder &bb, Location l, Value z, Value m) {
    return math::ExpOp::create(bb, l, arith::SubFOp::create(bb, l, z, m))
        .getResult();
  };
  Value sum = reduce({false, false, true}, {BH, S}, {{z, all}, {mx, rowMap}},
                     Combine::Add,
                     [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                         ArrayRef<Value>) { return shifted(bb, l, v[0], v[1]); });
  return pointwise(shape, et, {{z, all}, {mx, rowMap}, {sum, rowMap}},
                   [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                       ArrayRef<Value>) {
                     return arith::DivFOp::create(bb, l,
                                                  shifted(bb, l, v[0], v[1]),
                                                  v[2])
                         .getResult();
                   });
}

/// d scores = P (dP - rowsum(P dP)) / sqrt(hd); masked entries have P = 0.
Value Generator::softmaxBackward(Value p, Value dp) {
  AffineMap all = map(3, {0, 1, 2}), rowMap = map(3, {0, 1});
  Value scale = constant(ct, 1.0 / std::sqrt(double(headDim)));
  Value c = reduce({false, false, true}, {BH, S}, {{p, all}, {dp, all}},
                   Combine::Add,
                   [](OpBuilder &bb, Location l, ArrayRef<Value> v,
                      ArrayRef<Value>) {
                     return arith::MulFOp::create(bb, l, v[0], v[1]).getResult();
                   });
  return pointwise({BH, S, S}, et, {{p, all}, {dp, all}, {c, rowMap}},
                   [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                       ArrayRef<Value>) {
                     Value d = arith::SubFOp::create(bb, l, v[1], v[2]);
                     Value g = arith::MulFOp::create(bb, l, v[0], d);
                     return arith::MulFOp::create(bb, l, g, scale).getResult();
                   });
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

Value Generator::silu(OpBuilder &bb, Location l, Value g) {
  Value one = arith::ConstantOp::create(bb, l, cast<TypedAttr>(bb.getFloatAttr(ct, 1.0)));
  Value e = math::ExpOp::create(bb, l, arith::NegFOp::create(bb, l, g));
  Value den = arith::AddFOp::create(bb, l, one, e);
  return arith::DivFOp::create(bb, l, g, den);
}

namespace {
// GPT-2's GELU, tanh approximation: 0.5 x (1 + tanh(u)),
// u = sqrt(2/pi) (x + 0.044715 x^3).
constexpr double kGeluC = 0.044715;
constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2 / pi)
} // namespace

Value Generator::layerForward(Value x, const LayerParams &lp, LayerSaved &s) {
  OpFoldResult F = I(o.ffn);
  AffineMap id2 = map(2, {0, 1});
  s.x = x;
  s.n1 = norm(x, lp.norm1, lp.norm1Bias);
  Value q = matmul(s.n1.y, w(lp.wq), false, true);
  Value k = matmul(s.n1.y, w(lp.wk), false, true);
  Value v = matmul(s.n1.y, w(lp.wv), false, true);
  if (llama()) {
    q = rope(q, o.heads, 1.0);
    k = rope(k, o.kvHeads, 1.0);
  }
  s.qh = toHeads(q, /*kv=*/false);
  s.kh = toHeads(k, /*kv=*/true);
  s.vh = toHeads(v, /*kv=*/true);
  Value scores = matmul(s.qh, s.kh, false, true);
  s.p = softmax(scores);
  Value ctxh = matmul(s.p, s.vh, false, false);
  s.attn = fromHeads(ctxh);
  Value out = matmul(s.attn, w(lp.wo), false, true);
  s.h1 = add(x, out);

  s.n2 = norm(s.h1, lp.norm2, lp.norm2Bias);
  s.f1 = matmul(s.n2.y, w(lp.w1), false, true);
  if (llama()) {
    s.f3 = matmul(s.n2.y, w(lp.w3), false, true);
    s.act = pointwise({T, F}, et, {{s.f1, id2}, {s.f3, id2}},
                      [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                          ArrayRef<Value>) {
                        return arith::MulFOp::create(bb, l, silu(bb, l, v[0]),
                                                     v[1])
                            .getResult();
                      });
  } else {
    Value c = constant(ct, kGeluC), k0 = constant(ct, kSqrt2OverPi),
          half = constant(ct, 0.5), one = constant(ct, 1.0);
    s.act = pointwise({T, F}, et, {{s.f1, id2}},
                      [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                          ArrayRef<Value>) {
                        Value x = v[0];
                        Value x3 = arith::MulFOp::create(
                            bb, l, arith::MulFOp::create(bb, l, x, x), x);
                        Value inner = arith::AddFOp::create(
                            bb, l, x, arith::MulFOp::create(bb, l, c, x3));
                        Value t = math::TanhOp::create(
                            bb, l, arith::MulFOp::create(bb, l, k0, inner));
                        Value hx = arith::MulFOp::create(bb, l, half, x);
                        return arith::MulFOp::create(
                                   bb, l, hx, arith::AddFOp::create(bb, l, one, t))
                            .getResult();
                      });
  }
  Value down = matmul(s.act, w(lp.w2), false, true);
  return add(s.h1, down);
}

Value Generator::layerBackward(Value dh, const LayerParams &lp,
                               const LayerSaved &s) {
  OpFoldResult F = I(o.ffn);
  AffineMap id2 = map(2, {0, 1});
  // FFN.
  Value dact = matmul(dh, w(lp.w2), false, false);
  grad(lp.w2) = weightGrad(dh, s.act);
  Value dn2;
  if (llama()) {
    Value one = constant(ct, 1.0);
    Value dgate = pointwise(
        {T, F}, et, {{s.f1, id2}, {s.f3, id2}, {dact, id2}},
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
          // silu'(g) = sig(g) (1 + g (1 - sig(g))).
          Value g = v[0];
          Value e = math::ExpOp::create(bb, l, arith::NegFOp::create(bb, l, g));
          Value sig = arith::DivFOp::create(bb, l, one,
                                            arith::AddFOp::create(bb, l, one, e));
          Value t = arith::MulFOp::create(
              bb, l, g, arith::SubFOp::create(bb, l, one, sig));
          Value d = arith::MulFOp::create(bb, l, sig,
                                          arith::AddFOp::create(bb, l, one, t));
          Value du = arith::MulFOp::create(bb, l, v[2], v[1]);
          return arith::MulFOp::create(bb, l, du, d).getResult();
        });
    Value dup = pointwise({T, F}, et, {{s.f1, id2}, {dact, id2}},
                          [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                              ArrayRef<Value>) {
                            return arith::MulFOp::create(bb, l, v[1],
                                                         silu(bb, l, v[0]))
                                .getResult();
                          });
    Value fromUp = matmul(dup, w(lp.w3), false, false);
    Value fromGate = matmul(dgate, w(lp.w1), false, false);
    dn2 = add(fromGate, fromUp);
    grad(lp.w1) = weightGrad(dgate, s.n2.y);
    grad(lp.w3) = weightGrad(dup, s.n2.y);
  } else {
    Value c = constant(ct, kGeluC), k0 = constant(ct, kSqrt2OverPi),
          half = constant(ct, 0.5), one = constant(ct, 1.0),
          c3 = constant(ct, 3.0 * kGeluC);
    Value df = pointwise(
        {T, F}, et, {{s.f1, id2}, {dact, id2}},
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
          // gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) k0 (1 + 3c x^2).
          Value x = v[0];
          Value x2 = arith::MulFOp::create(bb, l, x, x);
          Value x3 = arith::MulFOp::create(bb, l, x2, x);
          Value inner = arith::AddFOp::create(bb, l, x,
                                              arith::MulFOp::create(bb, l, c, x3));
          Value t = math::TanhOp::create(bb, l,
                                         arith::MulFOp::create(bb, l, k0, inner));
          Value a = arith::MulFOp::create(bb, l, half,
                                          arith::AddFOp::create(bb, l, one, t));
          Value sech2 = arith::SubFOp::create(bb, l, one,
                                              arith::MulFOp::create(bb, l, t, t));
          Value du = arith::MulFOp::create(
              bb, l, k0,
              arith::AddFOp::create(bb, l, one,
                                    arith::MulFOp::create(bb, l, c3, x2)));
          Value sech2du = arith::MulFOp::create(bb, l, sech2, du);
          Value halfX = arith::MulFOp::create(bb, l, half, x);
          Value bterm = arith::MulFOp::create(bb, l, halfX, sech2du);
          Value d = arith::AddFOp::create(bb, l, a, bterm);
          return arith::MulFOp::create(bb, l, v[1], d).getResult();
        });
    dn2 = matmul(df, w(lp.w1), false, false);
    grad(lp.w1) = weightGrad(df, s.n2.y);
  }
  auto [dh1Norm, dg2, db2] = normBackward(dn2, s.h1, s.n2, lp.norm2);
  grad(lp.norm2) = dg2;
  if (lp.norm2Bias >= 0)
    grad(lp.norm2Bias) = db2;
  Value dh1 = add(dh, dh1Norm);

  // Attention.
  Value da = matmul(dh1, w(lp.wo), false, false);
  grad(lp.wo) = weightGrad(dh1, s.attn);
  Value dctx = toHeads(da, /*kv=*/false);
  Value dp = matmul(dctx, s.vh, false, true);
  Value dvh = matmul(s.p, dctx, true, false);
  Value ds = softmaxBackward(s.p, dp);
  Value dqh = matmul(ds, s.kh, false, false);
  Value dkh = matmul(ds, s.qh, true, false);
  Value dq = fromHeads(dqh);
  Value dk = fromHeadsKV(dkh);
  Value dv = fromHeadsKV(dvh);
  if (llama()) {
    dq = rope(dq, o.heads, -1.0);
    dk = rope(dk, o.kvHeads, -1.0);
  }
  Value fromV = matmul(dv, w(lp.wv), false, false);
  Value fromK = matmul(dk, w(lp.wk), false, false);
  Value fromQ = matmul(dq, w(lp.wq), false, false);
  Value dn1 = add(add(fromQ, fromK), fromV);
  grad(lp.wq) = weightGrad(dq, s.n1.y);
  grad(lp.wk) = weightGrad(dk, s.n1.y);
  grad(lp.wv) = weightGrad(dv, s.n1.y);
  auto [dxNorm, dg1, db1] = normBackward(dn1, s.x, s.n1, lp.norm1);
  grad(lp.norm1) = dg1;
  if (lp.norm1Bias >= 0)
    grad(lp.norm1Bias) = db1;
  return add(dh1, dxNorm);
}

//===----------------------------------------------------------------------===//
// Parameters and the optimizer
//===----------------------------------------------------------------------===//

int Generator::addParam(std::string name, ArrayRef<int64_t> shape,
                        Param::Init init, bool decay) {
  Param p;
  p.name = std::move(name);
  p.shape.assign(shape.begin(), shape.end());
  p.init = init;
  p.decay = decay;
  params.push_back(std::move(p));
  return params.size() - 1;
}

void Generator::declareParams() {
  int64_t h = o.hidden, kv = o.kvHeads * headDim;
  if (o.vocab > 0) {
    embed = addParam("embed", {o.vocab, h}, Param::Random);
    if (!llama())
      posEmbed = addParam("pos_embed", {o.maxPositions, h}, Param::Random);
  }
  for (int64_t i = 0; i < o.layers; ++i) {
    std::string p = "layers." + std::to_string(i) + ".";
    LayerParams lp;
    lp.norm1 = addParam(p + "attn_norm", {h}, Param::One, false);
    if (!llama())
      lp.norm1Bias = addParam(p + "attn_norm_bias", {h}, Param::Zero, false);
    lp.wq = addParam(p + "wq", {h, h}, Param::Random);
    lp.wk = addParam(p + "wk", {kv, h}, Param::Random);
    lp.wv = addParam(p + "wv", {kv, h}, Param::Random);
    lp.wo = addParam(p + "wo", {h, h}, Param::Random);
    lp.norm2 = addParam(p + "ffn_norm", {h}, Param::One, false);
    if (!llama())
      lp.norm2Bias = addParam(p + "ffn_norm_bias", {h}, Param::Zero, false);
    if (llama()) {
      lp.w1 = addParam(p + "w_gate", {o.ffn, h}, Param::Random);
      lp.w3 = addParam(p + "w_up", {o.ffn, h}, Param::Random);
    } else {
      lp.w1 = addParam(p + "w_fc", {o.ffn, h}, Param::Random);
    }
    lp.w2 = addParam(p + "w_down", {h, o.ffn}, Param::Random);
    layers.push_back(lp);
  }
  if (o.vocab > 0) {
    finalNorm = addParam("final_norm", {h}, Param::One, false);
    if (!llama())
      finalNormBias = addParam("final_norm_bias", {h}, Param::Zero, false);
    lmHead = addParam("lm_head", {o.vocab, h}, Param::Random);
  }
}

Attribute Generator::randomInit(const Param &p, RankedTensorType type) {
  auto ft = cast<FloatType>(type.getElementType());
  if (p.init != Param::Random)
    return DenseElementsAttr::get(
        type, b.getFloatAttr(ft, p.init == Param::One ? 1.0 : 0.0));
  double bound = p.shape.size() == 2 ? 1.0 / std::sqrt(double(p.shape[1])) : 0.5;
  SmallVector<APFloat> values;
  values.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = double(rng >> 11) / double(1ULL << 53);
    APFloat v((2.0 * u - 1.0) * bound);
    bool lost;
    v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v);
  }
  return DenseElementsAttr::get(type, values);
}

/// AdamW on the f32 (f64) master: returns the new weight; sets p.m, p.v to the
/// new moments.
Value Generator::adamw(Param &p, Value bc1, Value bc2) {
  SmallVector<OpFoldResult> shape;
  for (int64_t d : p.shape)
    shape.push_back(I(d));
  AffineMap id = AffineMap::getMultiDimIdentityMap(shape.size(), ctx);
  Value b1 = constant(ct, o.beta1), b2 = constant(ct, o.beta2),
        nb1 = constant(ct, 1.0 - o.beta1), nb2 = constant(ct, 1.0 - o.beta2),
        lr = constant(ct, o.learningRate), eps = constant(ct, o.adamEps),
        wd = constant(ct, p.decay ? o.weightDecay : 0.0);
  Value m = pointwise(shape, ct, {{p.m, id}, {p.grad, id}},
                      [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                          ArrayRef<Value>) {
                        Value fresh = arith::MulFOp::create(bb, l, nb1, v[1]);
                        Value kept = arith::MulFOp::create(bb, l, b1, v[0]);
                        return arith::AddFOp::create(bb, l, kept, fresh)
                            .getResult();
                      });
  Value v2 = pointwise(shape, ct, {{p.v, id}, {p.grad, id}},
                       [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                           ArrayRef<Value>) {
                         Value g2 = arith::MulFOp::create(bb, l, v[1], v[1]);
                         Value fresh = arith::MulFOp::create(bb, l, nb2, g2);
                         Value kept = arith::MulFOp::create(bb, l, b2, v[0]);
                         return arith::AddFOp::create(bb, l, kept, fresh)
                             .getResult();
                       });
  Value nw = pointwise(
      shape, ct, {{p.value, id}, {m, id}, {v2, id}},
      [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
        Value mhat = arith::DivFOp::create(bb, l, v[1], bc1);
        Value vhat = arith::DivFOp::create(bb, l, v[2], bc2);
        Value den = arith::AddFOp::create(bb, l, math::SqrtOp::create(bb, l, vhat),
                                          eps);
        Value step = arith::DivFOp::create(bb, l, mhat, den);
        step = arith::AddFOp::create(bb, l, step,
                                     arith::MulFOp::create(bb, l, wd, v[0]));
        return arith::SubFOp::create(bb, l, v[0],
                                     arith::MulFOp::create(bb, l, lr, step))
            .getResult();
      });
  p.m = m;
  p.v = v2;
  return nw;
}

/// The mean of `v` over the data-parallel ranks, in the compute type (the
/// collectives of MPI have no bf16).
Value Generator::meanOverRanks(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> shape;
  for (int64_t d : type.getShape())
    shape.push_back(I(d));
  AffineMap id = AffineMap::getMultiDimIdentityMap(shape.size(), ctx);
  auto same = [](OpBuilder &, Location, ArrayRef<Value> v, ArrayRef<Value>) {
    return v[0];
  };
  if (type.getElementType() != ct)
    v = pointwise(shape, ct, {{v, id}}, same);
  Value sum = shard::AllReduceOp::create(b, loc, v, "dp", ArrayRef<int16_t>{0},
                                         shard::ReductionKind::Sum);
  // 1 / ranks: exact for the powers of two, the usual rank counts.
  Value inverse = constant(ct, 1.0 / double(o.dataParallel));
  return pointwise(shape, ct, {{sum, id}},
                   [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                       ArrayRef<Value>) {
                     return arith::MulFOp::create(bb, l, v[0], inverse)
                         .getResult();
                   });
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Generator::run() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  declareParams();

  const char *archName = llama() ? "llama" : "gpt2";
  auto sizeStr = [](int64_t v) {
    return ShapedType::isDynamic(v) ? std::string("?") : std::to_string(v);
  };
  const char *forms[] = {"named", "generic", "tosa"};
  const char *weightModes[] = {"args", "globals", "constants"};
  const char *dtypes[] = {"f32", "bf16", "f16", "f64"};
  (*module)->setAttr(
      "fp8_gen.config",
      b.getStringAttr(llvm::formatv(
          "arch={0} layers={1} hidden={2} heads={3} kv-heads={4} ffn={5} "
          "seq={6} batch={7} vocab={8} dtype={9} form={10} weights={11} "
          "mode={12}{13}",
          archName, o.layers, o.hidden, o.heads, o.kvHeads, o.ffn,
          sizeStr(o.seq), sizeStr(globalBatch), o.vocab, dtypes[int(o.dtype)],
          forms[int(o.form)], weightModes[int(o.weights)],
          train() ? "train" : "forward",
          o.dataParallel > 0
              ? " data-parallel=" + std::to_string(o.dataParallel)
              : std::string())));
  // Data parallelism: one grid axis over the ranks.
  if (o.dataParallel > 1)
    shard::GridOp::create(b, loc, "dp", ArrayRef<int64_t>{o.dataParallel});

  // Weights live in f32 masters when training; the forward sees the element
  // type.
  Type storage = train() ? ct : et;
  auto paramType = [&](const Param &p) {
    return RankedTensorType::get(p.shape, storage);
  };
  auto sym = [&](StringRef name) { return FlatSymbolRefAttr::get(ctx, name); };
  auto i64 = b.getI64Type();

  if (o.weights == Weights::Globals) {
    StringAttr priv = b.getStringAttr("private");
    for (const Param &p : params) {
      RankedTensorType t = paramType(p);
      ml_program::GlobalOp::create(b, loc, p.name, t, train(),
                                   ml_program::ExternAttr::get(ctx, t), priv);
      if (train()) {
        Attribute zeros = DenseElementsAttr::get(t, b.getFloatAttr(ct, 0.0));
        ml_program::GlobalOp::create(b, loc, "adam.m." + p.name, t, true, zeros,
                                     priv);
        ml_program::GlobalOp::create(b, loc, "adam.v." + p.name, t, true, zeros,
                                     priv);
      }
    }
  }

  // Signature.
  SmallVector<Type> argTypes, resultTypes;
  RankedTensorType tokensType = RankedTensorType::get({o.batch, o.seq}, i64);
  RankedTensorType hiddenType =
      RankedTensorType::get({o.batch, o.seq, o.hidden}, et);
  argTypes.push_back(o.vocab > 0 ? tokensType : hiddenType);
  unsigned lossGradArg = 0;
  if (train()) {
    argTypes.push_back(o.vocab > 0 ? tokensType : hiddenType);
    lossGradArg = argTypes.size();
    argTypes.push_back(RankedTensorType::get({}, ct));
    argTypes.push_back(ct);
  }
  unsigned firstParamArg = argTypes.size();
  bool paramArgs = o.weights == Weights::Args;
  if (paramArgs) {
    for (int copy = 0; copy < (train() ? 3 : 1); ++copy)
      for (const Param &p : params)
        argTypes.push_back(paramType(p));
  }
  // A language model's step with its state in arguments follows fp8-train's
  // contract, which also returns the gradient norm.
  bool trainStepContract = train() && paramArgs && o.vocab > 0;
  if (train()) {
    resultTypes.push_back(RankedTensorType::get({}, ct));
    if (paramArgs)
      for (int copy = 0; copy < 3; ++copy)
        for (const Param &p : params)
          resultTypes.push_back(paramType(p));
    if (trainStepContract)
      resultTypes.push_back(RankedTensorType::get({}, ct));
  } else {
    resultTypes.push_back(
        o.vocab > 0 ? RankedTensorType::get({o.batch, o.seq, o.vocab}, et)
                    : hiddenType);
  }
  auto func = func::FuncOp::create(b, loc, train() ? "train_step" : "forward",
                                   b.getFunctionType(argTypes, resultTypes));
  if (train())
    func.setArgAttr(lossGradArg, "fp8.role", b.getStringAttr("grad"));
  // Each rank holds its rows of the inputs and targets.
  if (o.dataParallel > 1)
    for (unsigned arg : {0u, 1u})
      func.setArgAttr(arg, "fp8.sharded", sym("dp"));
  // TOSA spells x W^T as a [1, K, N] batch matmul: say what the argument is
  // rather than leave the rewrite to guess from the operand's rank.
  if (paramArgs)
    for (unsigned i = 0; i < params.size(); ++i)
      func.setArgAttr(firstParamArg + i, "fp8.role", b.getStringAttr("weight"));
  // The training-step contract of fp8-train (docs/fp8-train.md): what each
  // argument and result is, and how to initialize each parameter.
  if (trainStepContract) {
    func->setAttr("fp8.train_step", b.getUnitAttr());
    auto argIs = [&](unsigned arg, StringRef what) {
      func.setArgAttr(arg, "fp8.train", b.getStringAttr(what));
    };
    auto resultIs = [&](unsigned result, StringRef what) {
      func.setResultAttr(result, "fp8.train", b.getStringAttr(what));
    };
    argIs(0, "tokens");
    argIs(1, "targets");
    argIs(lossGradArg, "loss_scale");
    argIs(lossGradArg + 1, "step");
    resultIs(0, "loss");
    unsigned n = params.size();
    for (auto [i, p] : llvm::enumerate(params)) {
      argIs(firstParamArg + i, "parameter");
      argIs(firstParamArg + n + i, "moment1");
      argIs(firstParamArg + 2 * n + i, "moment2");
      resultIs(1 + i, "parameter");
      resultIs(1 + n + i, "moment1");
      resultIs(1 + 2 * n + i, "moment2");
      // GPT-2's initialization: N(0, 0.02) matrices and embeddings, unit
      // norm gains, zero biases.
      Attribute init = p.init == Param::One    ? b.getStringAttr("ones")
                       : p.init == Param::Zero ? b.getStringAttr("zeros")
                                               : Attribute(b.getF64FloatAttr(0.02));
      func.setArgAttr(firstParamArg + i, "fp8.init", init);
    }
    resultIs(1 + 3 * n, "grad_norm");
  }
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // Sizes.
  Value input = entry->getArgument(0);
  B = ShapedType::isDynamic(o.batch)
          ? OpFoldResult(tensor::DimOp::create(b, loc, input, 0).getResult())
          : I(o.batch);
  S = ShapedType::isDynamic(o.seq)
          ? OpFoldResult(tensor::DimOp::create(b, loc, input, 1).getResult())
          : I(o.seq);
  T = mul(B, S);
  BH = mul(B, o.heads);
  sIndex = getValueOrCreateConstantIndexOp(b, loc, S);

  // Weights.
  for (auto [i, p] : llvm::enumerate(params)) {
    RankedTensorType t = paramType(p);
    switch (o.weights) {
    case Weights::Args:
      p.value = entry->getArgument(firstParamArg + i);
      if (train()) {
        p.m = entry->getArgument(firstParamArg + params.size() + i);
        p.v = entry->getArgument(firstParamArg + 2 * params.size() + i);
      }
      break;
    case Weights::Globals:
      if (train()) {
        p.value = ml_program::GlobalLoadOp::create(b, loc, t, sym(p.name));
        p.m = ml_program::GlobalLoadOp::create(b, loc, t, sym("adam.m." + p.name));
        p.v = ml_program::GlobalLoadOp::create(b, loc, t, sym("adam.v." + p.name));
      } else {
        p.value = ml_program::GlobalLoadConstOp::create(b, loc, t, sym(p.name));
      }
      break;
    case Weights::Constants:
      p.value = arith::ConstantOp::create(b, loc,
                                          cast<TypedAttr>(randomInit(p, t)));
      break;
    }
    p.compute = p.value;
    if (storage != et) {
      SmallVector<OpFoldResult> shape;
      for (int64_t d : p.shape)
        shape.push_back(I(d));
      p.compute = pointwise(
          shape, et,
          {{p.value, AffineMap::getMultiDimIdentityMap(shape.size(), ctx)}},
          [](OpBuilder &, Location, ArrayRef<Value> v, ArrayRef<Value>) {
            return v[0];
          });
    }
  }

  // Embedding (gather; GPT-2 adds the learned positions).
  OpFoldResult H = I(o.hidden);
  Value x;
  Value posSlice;
  if (o.vocab > 0) {
    SmallVector<Operand> ins = {{input, map(3, {0, 1})}};
    if (!llama()) {
      posSlice = tensor::ExtractSliceOp::create(
          b, loc, w(posEmbed), ArrayRef<OpFoldResult>{I(0), I(0)},
          ArrayRef<OpFoldResult>{S, H}, ArrayRef<OpFoldResult>{I(1), I(1)});
      ins.push_back({posSlice, map(3, {1, 2})});
    }
    Value table = w(embed);
    Value x3 = pointwise(
        {B, S, H}, et, ins,
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value> iv) {
          Value row = arith::IndexCastOp::create(bb, l, bb.getIndexType(), v[0]);
          Value e = tensor::ExtractOp::create(bb, l, table,
                                              ValueRange{row, iv[2]});
          e = convert(bb, l, e, ct);
          if (v.size() > 1)
            e = arith::AddFOp::create(bb, l, e, v[1]);
          return e;
        },
        /*wantIvs=*/true);
    x = collapse(x3, {{0, 1}, {2}});
  } else {
    x = collapse(input, {{0, 1}, {2}});
  }

  std::vector<LayerSaved> saved(o.layers);
  for (int64_t i = 0; i < o.layers; ++i)
    x = layerForward(x, layers[i], saved[i]);

  NormOut finalOut;
  Value logits;
  if (o.vocab > 0) {
    finalOut = norm(x, finalNorm, finalNormBias);
    logits = matmul(finalOut.y, w(lmHead), false, true);
  }

  if (!train()) {
    Value out =
        o.vocab > 0
            ? expand(logits, {B, S, I(o.vocab)}, {{0, 1}, {2}})
            : expand(x, {B, S, H}, {{0, 1}, {2}});
    func::ReturnOp::create(b, loc, out);
    return module;
  }

  // Loss and its gradient: cross entropy over the LM head, or the mean squared
  // error against the targets without one.
  Value targets = entry->getArgument(1);
  Value lossGrad = entry->getArgument(lossGradArg);
  Value stepArg = entry->getArgument(lossGradArg + 1);
  Value tIndex = getValueOrCreateConstantIndexOp(b, loc, T);
  auto indexToFloat = [&](Value idx) {
    Value i = arith::IndexCastUIOp::create(b, loc, i64, idx);
    return arith::UIToFPOp::create(b, loc, ct, i).getResult();
  };
  Value tFloat = indexToFloat(tIndex);
  Value one = constant(ct, 1.0);
  AffineMap id2 = map(2, {0, 1}), row = map(2, {0}), scalar2 = map(2, {});
  Value loss, dy;
  if (o.vocab > 0) {
    OpFoldResult V = I(o.vocab);
    Value invT = arith::DivFOp::create(b, loc, one, tFloat);
    Value tgt = collapse(targets, {{0, 1}});
    Value mx = reduce({false, true}, {T}, {{logits, id2}}, Combine::Max,
                      [](OpBuilder &, Location, ArrayRef<Value> v,
                         ArrayRef<Value>) { return v[0]; });
    auto shifted = [](OpBuilder &bb, Location l, Value z, Value m) {
      return math::ExpOp::create(bb, l, arith::SubFOp::create(bb, l, z, m))
          .getResult();
    };
    Value se = reduce({false, true}, {T}, {{logits, id2}, {mx, row}},
                      Combine::Add,
                      [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                          ArrayRef<Value>) { return shifted(bb, l, v[0], v[1]); });
    Value zero = constant(ct, 0.0);
    auto isTarget = [](OpBuilder &bb, Location l, Value tgt, Value col) {
      Value c = arith::IndexCastOp::create(bb, l, bb.getI64Type(), col);
      return arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, tgt, c)
          .getResult();
    };
    Value picked = reduce(
        {false, true}, {T}, {{logits, id2}, {tgt, row}}, Combine::Add,
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value> iv) {
          return arith::SelectOp::create(bb, l, isTarget(bb, l, v[1], iv[1]),
                                         v[0], zero)
              .getResult();
        },
        /*wantIvs=*/true);
    loss = reduce({true}, {}, {{mx, map(1, {0})}, {se, map(1, {0})},
                               {picked, map(1, {0})}},
                  Combine::Add,
                  [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                      ArrayRef<Value>) {
                    Value lse = arith::AddFOp::create(
                        bb, l, v[0], math::LogOp::create(bb, l, v[1]));
                    Value nll = arith::SubFOp::create(bb, l, lse, v[2]);
                    return arith::MulFOp::create(bb, l, nll, invT).getResult();
                  });
    Value dlogits = pointwise(
        {T, V}, et,
        {{logits, id2}, {mx, row}, {se, row}, {tgt, row}, {lossGrad, scalar2}},
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value> iv) {
          Value p = arith::DivFOp::create(bb, l, shifted(bb, l, v[0], v[1]), v[2]);
          Value hit = arith::SelectOp::create(bb, l, isTarget(bb, l, v[3], iv[1]),
                                              one, zero);
          Value d = arith::SubFOp::create(bb, l, p, hit);
          d = arith::MulFOp::create(bb, l, d, v[4]);
          return arith::MulFOp::create(bb, l, d, invT).getResult();
        },
        /*wantIvs=*/true);
    Value dxf = matmul(dlogits, w(lmHead), false, false);
    grad(lmHead) = weightGrad(dlogits, finalOut.y);
    auto [dxn, dg, db] = normBackward(dxf, x, finalOut, finalNorm);
    grad(finalNorm) = dg;
    if (finalNormBias >= 0)
      grad(finalNormBias) = db;
    dy = dxn;
  } else {
    Value n = arith::MulFOp::create(b, loc, tFloat, constant(ct, o.hidden));
    Value invN = arith::DivFOp::create(b, loc, one, n);
    Value two = constant(ct, 2.0);
    Value tgt = collapse(targets, {{0, 1}, {2}});
    loss = reduce({true, true}, {}, {{x, id2}, {tgt, id2}}, Combine::Add,
                  [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                      ArrayRef<Value>) {
                    Value d = arith::SubFOp::create(bb, l, v[0], v[1]);
                    Value sq = arith::MulFOp::create(bb, l, d, d);
                    return arith::MulFOp::create(bb, l, sq, invN).getResult();
                  });
    dy = pointwise({T, H}, et, {{x, id2}, {tgt, id2}, {lossGrad, scalar2}},
                   [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                       ArrayRef<Value>) {
                     Value d = arith::SubFOp::create(bb, l, v[0], v[1]);
                     d = arith::MulFOp::create(bb, l, d, two);
                     d = arith::MulFOp::create(bb, l, d, v[2]);
                     return arith::MulFOp::create(bb, l, d, invN).getResult();
                   });
  }

  for (int64_t i = o.layers - 1; i >= 0; --i)
    dy = layerBackward(dy, layers[i], saved[i]);

  if (o.vocab > 0) {
    // Embedding backward: scatter-add of the token rows, as a reduction over
    // the tokens (loops v, h, b, s).
    Value dy3 = expand(dy, {B, S, H}, {{0, 1}, {2}});
    grad(embed) = reduce(
        {false, false, true, true}, {I(o.vocab), H},
        {{input, map(4, {2, 3})}, {dy3, map(4, {2, 3, 1})}}, Combine::Add,
        [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value> iv) {
          Value c = arith::IndexCastOp::create(bb, l, bb.getI64Type(), iv[0]);
          Value hit =
              arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, v[0], c);
          return arith::SelectOp::create(bb, l, hit, v[1], constant(ct, 0.0))
              .getResult();
        },
        /*wantIvs=*/true);
    if (!llama()) {
      // Loops s, h, b.
      Value dpos = reduce({false, false, true}, {S, H},
                          {{dy3, map(3, {2, 0, 1})}}, Combine::Add,
                          [](OpBuilder &, Location, ArrayRef<Value> v,
                             ArrayRef<Value>) { return v[0]; });
      Value zeros = fill({I(o.maxPositions), H}, ct, 0.0);
      grad(posEmbed) = tensor::InsertSliceOp::create(
          b, loc, dpos, zeros, ArrayRef<OpFoldResult>{I(0), I(0)},
          ArrayRef<OpFoldResult>{S, H}, ArrayRef<OpFoldResult>{I(1), I(1)});
    }
  }

  // Data parallelism: every rank takes the mean of the ranks' gradients (each
  // the gradient of its own mean loss) and reports the mean loss.
  if (o.dataParallel > 1) {
    for (Param &p : params)
      p.grad = meanOverRanks(p.grad);
    loss = meanOverRanks(loss);
  }

  // AdamW with bias correction for step `step` (1-based).
  Value bc1 = arith::SubFOp::create(
      b, loc, one, math::PowFOp::create(b, loc, constant(ct, o.beta1), stepArg));
  Value bc2 = arith::SubFOp::create(
      b, loc, one, math::PowFOp::create(b, loc, constant(ct, o.beta2), stepArg));
  // The global gradient norm, for fp8-train's logs: the square root of the
  // sum of every gradient element squared, in f32.
  Value gradNorm;
  if (trainStepContract) {
    AffineMap scalar = AffineMap::get(0, 0, ctx);
    for (Param &p : params) {
      unsigned rank = p.shape.size();
      Value squares = reduce(
          SmallVector<bool>(rank, true), {},
          {{p.grad, AffineMap::getMultiDimIdentityMap(rank, ctx)}},
          Combine::Add,
          [&](OpBuilder &bb, Location l, ArrayRef<Value> v, ArrayRef<Value>) {
            Value g = convert(bb, l, v[0], ct);
            return arith::MulFOp::create(bb, l, g, g).getResult();
          });
      gradNorm = !gradNorm ? squares
                           : pointwise({}, ct, {{gradNorm, scalar}, {squares, scalar}},
                                       [&](OpBuilder &bb, Location l,
                                           ArrayRef<Value> v, ArrayRef<Value>) {
                                         return arith::AddFOp::create(bb, l, v[0], v[1])
                                             .getResult();
                                       });
    }
    gradNorm = pointwise({}, ct, {{gradNorm, scalar}},
                         [&](OpBuilder &bb, Location l, ArrayRef<Value> v,
                             ArrayRef<Value>) {
                           return math::SqrtOp::create(bb, l, v[0]).getResult();
                         });
  }

  SmallVector<Value> results = {loss};
  SmallVector<Value> newW, newM, newV;
  for (Param &p : params) {
    newW.push_back(adamw(p, bc1, bc2));
    newM.push_back(p.m);
    newV.push_back(p.v);
  }
  if (paramArgs) {
    llvm::append_range(results, newW);
    llvm::append_range(results, newM);
    llvm::append_range(results, newV);
    if (gradNorm)
      results.push_back(gradNorm);
  } else {
    for (auto [i, p] : llvm::enumerate(params)) {
      ml_program::GlobalStoreOp::create(b, loc, sym(p.name), newW[i]);
      ml_program::GlobalStoreOp::create(b, loc, sym("adam.m." + p.name), newM[i]);
      ml_program::GlobalStoreOp::create(b, loc, sym("adam.v." + p.name), newV[i]);
    }
  }
  func::ReturnOp::create(b, loc, results);
  return module;
}

OwningOpRef<ModuleOp>
mlir::fp8::gen::buildTransformer(MLIRContext &context,
                                 const TransformerOptions &options) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect,
                      linalg::LinalgDialect, math::MathDialect,
                      ml_program::MLProgramDialect, shard::ShardDialect,
                      tensor::TensorDialect, tosa::TosaDialect>();
  return Generator(context, options).run();
}
