//===- GpuFunction.h - Run an FP8 function on a CUDA GPU --------*- C++ -*-===//
//
// fp8-run --device=cuda: the FP8 module is lowered with fp8-lower-to-nvvm
// (format=isa: PTX, which the CUDA driver JIT-compiles, so no toolkit is
// needed), and its host function -- straight-line gpu.alloc / memset /
// memcpy / launch_func on memrefs (docs/hopper-lowering.md, "Host ABI") -- is
// interpreted over runtime::CudaRuntime. Everything that can be rejected is
// rejected by compile(), before any CUDA call: an op without a GPU lowering
// (named, with its location), or a host op the interpreter does not know.
//
// Then the GPU's outputs are checked against the CPU JIT's run of the same
// FP8 module: FP8 tensors and f32 scalars (amax, scales) bit for bit, wide
// tensors (dequantized values, GEMM outputs) within a tolerance.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_RUNNER_GPUFUNCTION_H
#define FP8_RUNNER_GPUFUNCTION_H

#include "fp8/Runner/Runner.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::fp8::runtime {
class CudaRuntime;
} // namespace mlir::fp8::runtime

namespace mlir::fp8::runner {

/// A function of an FP8 module, lowered for the GPU and run there.
class GpuFunction {
public:
  ~GpuFunction();

  /// Lowers a clone of `module` with fp8-lower-to-nvvm (format=isa) and
  /// prepares function `name`'s host program. Makes no CUDA call: returns
  /// null with `error` set when anything in the function cannot run on the
  /// GPU (the first unsupported op and its location).
  static std::unique_ptr<GpuFunction>
  compile(ModuleOp module, StringRef name, std::string &error);

  /// Creates the CUDA runtime on `device` and loads the kernels (the driver
  /// JIT-compiles the PTX). Without a driver or a GPU, fails with
  /// CudaRuntime::create's "no CUDA driver: ..." / "no GPU: ..." message.
  LogicalResult connect(std::string &error, int device = 0);
  /// The GPU's name (after connect()).
  std::string getDeviceName() const;

  /// The function's original (tensor) signature.
  FunctionType getSignature() const { return signature; }
  /// The kernel images (PTX text), by gpu.binary name.
  const llvm::StringMap<std::string> &getImages() const { return images; }

  /// Runs the function on the GPU: inputs are copied to device buffers,
  /// results come back as host tensors. Connects first if needed.
  FailureOr<SmallVector<HostTensor>> call(ArrayRef<HostTensor> inputs,
                                          std::string &error);

private:
  GpuFunction();

  std::string name;
  FunctionType signature;
  OwningOpRef<ModuleOp> original; // the function before lowering (shapes)
  OwningOpRef<ModuleOp> lowered;  // the host function after lowering
  llvm::StringMap<std::string> images;
  std::unique_ptr<runtime::CudaRuntime> cuda;
  llvm::StringMap<void *> modules;   // runtime::ModuleHandle by binary name
  llvm::StringMap<void *> functions; // runtime::FunctionHandle by
                                     // "binary::kernel"
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
