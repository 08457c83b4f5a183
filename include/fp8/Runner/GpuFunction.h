//===- GpuFunction.h - Run an FP8 function on a CUDA GPU --------*- C++ -*-===//
//
// fp8-run --device=cuda: the FP8 module compiled as one GPU program
// (fp8-lower-to-gpu: the project's Hopper kernels for the fp8 ops, the
// wgmma GEMMs among them, upstream's route for everything else), its host
// JIT-compiled on libfp8_gpu_runtime.so (MLIR's GPU runtime ABI over the
// CUDA driver, loaded with dlopen), the kernels PTX that the driver
// JIT-compiles: no CUDA toolkit is needed. What cannot be lowered fails in
// compile(), with its location, before any CUDA call.
//
// Then the GPU's outputs are checked against the CPU JIT's run of the same
// FP8 module: FP8 tensors and f32 scalars (amax, scales) bit for bit, wide
// tensors (dequantized values, GEMM outputs) within a tolerance.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_GPUFUNCTION_H
#define FP8_RUNNER_GPUFUNCTION_H

#include "fp8/Runner/Runner.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::fp8::runner {

/// A function of an FP8 module, compiled for the GPU and run there.
class GpuFunction {
public:
  ~GpuFunction();

  /// Lowers a clone of `module` with fp8-lower-to-gpu and JIT-compiles its
  /// host (`options`' optimization level). Makes no CUDA call: returns null
  /// with `error` set ("cannot run @name on the GPU: ...") when the module
  /// does not lower.
  static std::unique_ptr<GpuFunction>
  compile(ModuleOp module, StringRef name, std::string &error,
          CompileOptions options = {});

  /// Checks for a driver and a GPU on `device` and names it. Without them,
  /// fails with CudaRuntime::create's "no CUDA driver: ..." / "no GPU: ..."
  /// message.
  LogicalResult connect(std::string &error, int device = 0);
  /// "<name> (sm_<cc>)", after connect().
  const std::string &getDeviceName() const { return deviceName; }

  /// The function's original (tensor) signature.
  FunctionType getSignature() const { return compiled->getSignature(); }

  /// Runs the function on the GPU (connecting first): inputs are staged in
  /// managed memory by the program, results come back as host tensors. A
  /// driver error during the run fails the call with its message.
  FailureOr<SmallVector<HostTensor>> call(ArrayRef<HostTensor> inputs,
                                          std::string &error);

  /// The program's tensor globals (weights, scaling state), as
  /// CompiledFunction's.
  FailureOr<HostTensor> readGlobal(StringRef global, RankedTensorType type,
                                   std::string &error) const {
    return compiled->readGlobal(global, type, error);
  }
  LogicalResult writeGlobal(StringRef global, const HostTensor &value,
                            std::string &error) {
    return compiled->writeGlobal(global, value, error);
  }

private:
  GpuFunction();

  std::unique_ptr<CompiledFunction> compiled;
  std::string deviceName;
};

/// How one output of the GPU run compares with the CPU run.
struct GpuOutputCheck {
  unsigned output = 0;
  std::string type;
  /// "bits" (FP8 tensors, f32 scalars) or "tolerance" (wide tensors).
  std::string mode;
  /// Elements whose bits differ (NaN matches NaN in tolerance mode).
  int64_t mismatches = 0;
  int64_t elements = 0;
  double maxAbsError = 0;
  /// Tolerance mode: max |gpu - cpu| / max |cpu|.
  double maxNormalizedError = 0;
  bool ok = true;
  std::string note;
};

/// Compares each GPU output with the CPU's: FP8 and f32-scalar outputs must
/// be bit-identical; other outputs pass when max |gpu - cpu| <= tolerance *
/// max |cpu| and their NaNs sit at the same positions.
SmallVector<GpuOutputCheck> checkGpuOutputs(ArrayRef<HostTensor> cpu,
                                            ArrayRef<HostTensor> gpu,
                                            double tolerance = 1e-2);
/// {"device", "ok", "outputs": [{output, type, mode, mismatches, elements,
/// max_abs_error, max_normalized_error, ok[, note]}]}.
llvm::json::Object gpuChecksToJSON(StringRef device,
                                   ArrayRef<GpuOutputCheck> checks);
/// The table form of gpuChecksToJSON's object.
void printGpuChecks(const llvm::json::Object &record, llvm::raw_ostream &os);

} // namespace mlir::fp8::runner

#endif // FP8_RUNNER_GPUFUNCTION_H
