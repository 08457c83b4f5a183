//===- Runner.h - JIT-run functions on host data ----------------*- C++ -*-===//
//
// What fp8-run is built from: host tensors with seeded generators and .npy
// input, a JIT-compiled function (lowered with fp8-lower-to-cpu) called on
// them, and the accuracy metrics that compare two runs.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_RUNNER_H
#define FP8_RUNNER_RUNNER_H

#include "fp8/Pipelines/Accumulation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::fp8::runner {

/// A dense row-major tensor (or scalar: rank 0) in host memory, stored in its
/// element type's bytes.
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(Type elementType, ArrayRef<int64_t> shape);

  Type getElementType() const { return elementType; }
  ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getNumElements() const;
  unsigned getElementBytes() const;
  char *data() { return bytes.data(); }
  const char *data() const { return bytes.data(); }

  /// Element `i` converted to / from double (floats widen exactly).
  double get(int64_t i) const;
  void set(int64_t i, double value);

private:
  Type elementType;
  SmallVector<int64_t> shape;
  std::vector<char> bytes;
};

enum class Distribution { Normal, Uniform, Outliers, Zeros };
std::optional<Distribution> parseDistribution(StringRef name);

/// Fills `tensor` from `rng`: N(0, scale^2); U(-scale, scale); normal with
/// 0.1% of the elements (at least one) multiplied by 100; or zeros. Integer
/// tensors get uniform values in [0, integerRange).
void fill(HostTensor &tensor, Distribution distribution, double scale,
          int64_t integerRange, std::mt19937_64 &rng);

/// Reads a .npy file (little-endian f4 / f8 / f2 / i4 / i8, C order) and
/// converts it to `elementType`. Only regular files of at most `maxBytes`
/// (file and converted tensor) are read.
FailureOr<HostTensor> readNpy(StringRef path, Type elementType,
                              std::string &error,
                              uint64_t maxBytes = UINT64_MAX);

/// Parses the bytes of a .npy file as readNpy does (`name` says which in
/// messages): the header's shape and dtype are untrusted, and nothing larger
/// than `maxBytes` (the converted tensor) is allocated.
FailureOr<HostTensor> parseNpy(StringRef bytes, StringRef name,
                               Type elementType, std::string &error,
                               uint64_t maxBytes = UINT64_MAX);

/// Writes `tensor` as a .npy file (f4 / f8 for f32 / f64, i8 / i4 / i1 for
/// integers; bf16 and f16 widened to f4, exactly), for checkpoints that
/// readNpy and numpy read back.
LogicalResult writeNpy(StringRef path, const HostTensor &tensor,
                       std::string &error);

/// The memory a run may use unless told otherwise: the machine's physical
/// memory, or the process's address-space / data limit when lower.
uint64_t getDefaultMemoryBudget();

/// The bytes of a value of `type` (a ranked tensor or scalar) in host
/// memory, with `dynamicSize` for every dynamic dimension; nullopt when that
/// overflows 64 bits.
std::optional<uint64_t> getStorageBytes(Type type, int64_t dynamicSize);

/// The type of the value `op` holds when it is a global (ml_program or
/// memref), else null.
Type getGlobalType(Operation *op);

/// "512M", "8G", "1000000": a positive byte count with an optional K, M, G
/// or T suffix (2^10 steps), as --memory-budget takes it; nullopt otherwise.
std::optional<uint64_t> parseByteSize(StringRef text);

/// "1.5 GiB": a byte count for messages.
std::string formatBytes(uint64_t bytes);

/// The dialects a runner's input may hold (upstream ones of fp8-opt's
/// inputs and lowerings, and fp8), with the external models
/// fp8-lower-to-cpu needs: what fp8-run and fp8-train parse with.
void registerRunnerDialects(DialectRegistry &registry);

/// Reads `path` ("-": standard input) into `sourceMgr` and parses it in
/// `context`. The caller keeps both, and a SourceMgrDiagnosticHandler on
/// them, so that parse errors and later diagnostics point into the file.
/// Null with `error` set ("cannot read 'X': why", "cannot parse 'X'").
OwningOpRef<ModuleOp> parseModuleFile(StringRef path, llvm::SourceMgr &sourceMgr,
                                      MLIRContext &context, std::string &error);

/// Gives every external function without results that has no definition
/// in the module or the process (buddy-mlir's record_timing, say) an empty
/// body, so that the graph runs with it as a no-op; returns their names.
SmallVector<std::string> stubUnresolvedExternals(ModuleOp module);

/// Fails, with an error at the reading op and a note at the tensor, when
/// `entry` or a function it calls reads the contents of a `tensor.empty`
/// (or of a `bufferization.alloc_tensor` without a copy), through views:
/// they are undefined, and so is everything computed from them. The reads
/// seen are a linalg op's operands that its payload uses (a reduction's or
/// matmul's init included) and `tensor.extract`, where the result is used.
LogicalResult checkNoUndefinedReads(func::FuncOp entry);

/// How a CompiledFunction is compiled.
struct CompileOptions {
  /// fp8-lower-to-cpu tiles, vectorizes and threads; off: plain scalar loops
  /// on one thread.
  bool vectorize = true;
  /// LLVM's optimization and code generation level, 0-3 (mlir-runner's
  /// -O0..-O3). The lowering emits no fast-math or contraction flags, so the
  /// level changes the time, never a bit of the results; -O0 compiles about
  /// three times faster, which is what tests of small graphs want.
  unsigned optLevel = 3;
  /// Where the function runs: the CPU (fp8-lower-to-cpu), or a CUDA GPU
  /// (fp8-lower-to-gpu: kernels as PTX that the driver JIT-compiles, the
  /// host JIT-compiled on libfp8_gpu_runtime.so, MLIR's GPU runtime ABI).
  enum class Target { CPU, CUDA } target = Target::CPU;
  /// Verify the module after every pass of the lowering, as fp8-opt does,
  /// instead of once at its end: about half the lowering time of a whole
  /// model (LLVM dialect modules of a million ops), for debugging a pass.
  bool verifyEachPass = false;
  /// How bf16 / f16 contractions accumulate (the lowerings'
  /// `accumulation`): in f32, as GPUs compute them, or as linalg writes
  /// them.
  Accumulation accumulation = Accumulation::F32;
};

/// A function of a module lowered to LLVM and compiled in-process.
class CompiledFunction {
public:
  ~CompiledFunction();

  /// `module` holds the function `name` with tensor/scalar signature
  /// `signature` (taken before lowering); it is lowered with
  /// fp8-lower-to-cpu and JIT-compiled as `options` say.
  static std::unique_ptr<CompiledFunction>
  compile(ModuleOp module, StringRef name, std::string &error,
          const CompileOptions &options = {});

  /// The function's original signature.
  FunctionType getSignature() const { return signature; }

  /// Calls the function. Inputs must match the signature (dynamic sizes are
  /// taken from the inputs); results come back as host tensors. A failed
  /// `cf.assert` in the compiled code (an index out of bounds, say) cannot
  /// be unwound: it ends the process with status 1 after printing
  /// "error: @<name>: an assertion failed in the compiled code: <message>"
  /// on stderr.
  FailureOr<SmallVector<HostTensor>> call(ArrayRef<HostTensor> inputs,
                                          std::string &error);

  /// Reads a tensor global (e.g. fp8 scaling state) of the given type; fails
  /// when the global has another size.
  FailureOr<HostTensor> readGlobal(StringRef name, RankedTensorType type,
                                   std::string &error) const;

  /// Overwrites a tensor global (e.g. a weight) with `value`, whose element
  /// type and static shape are the global's; fails when `value` has another
  /// size than the global.
  LogicalResult writeGlobal(StringRef name, const HostTensor &value,
                            std::string &error);

  /// A copy of tensor globals (the FP8 scaling state), by name.
  using GlobalSnapshot = SmallVector<std::pair<std::string, HostTensor>>;
  /// readGlobal of each of `globals`.
  FailureOr<GlobalSnapshot>
  readGlobals(const llvm::StringMap<RankedTensorType> &globals,
              std::string &error) const;
  /// writeGlobal of each global of `snapshot`.
  LogicalResult writeGlobals(const GlobalSnapshot &snapshot,
                             std::string &error);

private:
  CompiledFunction() = default;

  std::unique_ptr<ExecutionEngine> engine;
  std::string name;
  FunctionType signature;
  /// The bytes of each tensor global of static shape, by name: what
  /// readGlobal and writeGlobal may copy.
  llvm::StringMap<uint64_t> globalBytes;
  /// How returned buffers are freed (GPU programs: managed memory).
  void (*freeBuffer)(void *) = nullptr;
  /// GPU programs: the runtime library's sticky error and its reset.
  const char *(*runtimeError)() = nullptr;
  void (*clearRuntimeError)() = nullptr;
};

/// Accuracy of `out` against `ref`.
struct Comparison {
  /// 20 log10(||ref|| / ||ref - out||); +inf when equal; NaN when the
  /// reference has non-finite elements.
  double sqnrDb = 0;
  double maxAbsError = 0;
  /// max |ref - out| / |ref| over elements with |ref| > 1e-6 * max |ref|.
  double maxRelError = 0;
  /// Non-finite elements in `out` where `ref` is finite.
  int64_t nonFinite = 0;
  /// Non-finite elements in `ref`. When there are any, the reference itself
  /// is broken and the SQNR is not comparable (NaN); the errors are taken
  /// over the finite elements.
  int64_t referenceNonFinite = 0;
  /// The SQNR of the worst and the median row (every dimension but the last
  /// indexes rows: tokens, for activations); equal to sqnrDb for rank < 2. A
  /// global figure can hide a bad median token.
  double worstRowSqnrDb = 0, medianRowSqnrDb = 0;
  bool isComparable() const { return referenceNonFinite == 0; }
};
Comparison compare(const HostTensor &ref, const HostTensor &out);

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_RUNNER_H
