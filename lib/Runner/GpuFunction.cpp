//===- GpuFunction.cpp - Run an FP8 function on a CUDA GPU ----------------===//
//
// fp8-run --device=cuda: the module is compiled as the GPU program
// fp8-lower-to-gpu makes (the project's kernels for the fp8 ops, upstream's
// for the rest, a host on MLIR's GPU runtime ABI) and JIT-compiled on
// libfp8_gpu_runtime.so (CompiledFunction, Target::CUDA); then its outputs
// are checked against the CPU run of the same FP8 module.
//
//===----------------------------------------------------------------------===//

#include "fp8/Runner/GpuFunction.h"
#include "fp8/Runner/JSON.h"
#include "fp8/Runtime/CudaRuntime.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::runner;

GpuFunction::GpuFunction() = default;
GpuFunction::~GpuFunction() = default;

std::unique_ptr<GpuFunction> GpuFunction::compile(ModuleOp module,
                                                  StringRef name,
                                                  std::string &error,
                                                  CompileOptions options) {
  options.target = CompileOptions::Target::CUDA;
  std::unique_ptr<GpuFunction> gpu(new GpuFunction());
  gpu->compiled = CompiledFunction::compile(module, name, error, options);
  if (!gpu->compiled) {
    error = ("cannot run @" + name + " on the GPU: " + error).str();
    return nullptr;
  }
  return gpu;
}

LogicalResult GpuFunction::connect(std::string &error, int device) {
  if (!deviceName.empty())
    return success();
  // The program's runtime library finds the driver the same way; asking
  // here first gives one clear message before any call.
  runtime::Result<std::unique_ptr<runtime::CudaRuntime>> created =
      runtime::CudaRuntime::create(device);
  if (!created) {
    error = "--device=cuda: " + created.takeStatus().message();
    return failure();
  }
  runtime::CudaRuntime &cuda = **created;
  deviceName = llvm::formatv("{0} (sm_{1})", cuda.getDeviceName(),
                             cuda.getComputeCapability())
                   .str();
  return success();
}

FailureOr<SmallVector<HostTensor>>
GpuFunction::call(ArrayRef<HostTensor> inputs, std::string &error) {
  if (failed(connect(error)))
    return failure();
  return compiled->call(inputs, error);
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

SmallVector<GpuOutputCheck>
runner::checkGpuOutputs(ArrayRef<HostTensor> cpu, ArrayRef<HostTensor> gpu,
                        double tolerance) {
  SmallVector<GpuOutputCheck> checks;
  for (unsigned i = 0, e = std::max(cpu.size(), gpu.size()); i < e; ++i) {
    GpuOutputCheck check;
    check.output = i;
    if (i >= cpu.size() || i >= gpu.size()) {
      check.ok = false;
      check.note = "missing output";
      checks.push_back(check);
      continue;
    }
    const HostTensor &ref = cpu[i], &out = gpu[i];
    Type element = ref.getElementType();
    {
      llvm::raw_string_ostream os(check.type);
      if (ref.getShape().empty()) {
        os << element;
      } else {
        os << "tensor<";
        for (int64_t size : ref.getShape())
          os << size << "x";
        os << element << ">";
      }
    }
    bool wide = isa<FloatType>(element) && !ref.getShape().empty() &&
                !isa<Float8E4M3FNType, Float8E5M2Type>(element);
    check.mode = wide ? "tolerance" : "bits";
    check.elements = ref.getNumElements();
    if (out.getElementType() != element || out.getShape() != ref.getShape()) {
      check.ok = false;
      check.note = "type or shape differs";
      checks.push_back(check);
      continue;
    }
    unsigned bytes = ref.getElementBytes();
    double refMax = 0;
    int64_t nanMismatches = 0;
    for (int64_t j = 0; j < check.elements; ++j) {
      bool sameBits =
          std::memcmp(ref.data() + j * bytes, out.data() + j * bytes, bytes) ==
          0;
      double r = ref.get(j), o = out.get(j);
      bool bothNaN = std::isnan(r) && std::isnan(o);
      if (!sameBits && !(wide && bothNaN))
        ++check.mismatches;
      if (std::isnan(r) != std::isnan(o) ||
          (std::isinf(r) || std::isinf(o) ? r != o && !bothNaN : false))
        ++nanMismatches;
      if (std::isfinite(r)) {
        refMax = std::max(refMax, std::fabs(r));
        if (std::isfinite(o))
          check.maxAbsError = std::max(check.maxAbsError, std::fabs(r - o));
      }
    }
    check.maxNormalizedError =
        refMax > 0 ? check.maxAbsError / refMax
                   : (check.maxAbsError > 0 ? INFINITY : 0.0);
    if (!wide) {
      check.ok = check.mismatches == 0;
    } else {
      check.ok = nanMismatches == 0 && check.maxNormalizedError <= tolerance;
      if (nanMismatches)
        check.note = std::to_string(nanMismatches) +
                     " non-finite elements differ";
    }
    checks.push_back(check);
  }
  return checks;
}

llvm::json::Object runner::gpuChecksToJSON(StringRef device,
                                           ArrayRef<GpuOutputCheck> checks) {
  llvm::json::Array outputs;
  bool ok = true;
  for (const GpuOutputCheck &c : checks) {
    ok &= c.ok;
    llvm::json::Object record{
        {"output", static_cast<int64_t>(c.output)},
        {"type", c.type},
        {"mode", c.mode},
        {"mismatches", c.mismatches},
        {"elements", c.elements},
        {"max_abs_error", jsonNumber(c.maxAbsError)},
        {"max_normalized_error", jsonNumber(c.maxNormalizedError)},
        {"ok", c.ok}};
    if (!c.note.empty())
      record["note"] = c.note;
    outputs.push_back(std::move(record));
  }
  return llvm::json::Object{
      {"device", device.str()}, {"ok", ok}, {"outputs", std::move(outputs)}};
}

void runner::printGpuChecks(const llvm::json::Object &record,
                            llvm::raw_ostream &os) {
  std::optional<bool> ok = record.getBoolean("ok");
  os << "  GPU " << record.getString("device").value_or("") << " vs CPU, "
     << "same FP8 module: " << (ok && *ok ? "match" : "MISMATCH") << "\n";
  os << llvm::formatv("  {0,-8} {1,-28} {2,-10} {3,13} {4,13} {5,6}\n",
                      "output", "type", "check", "mismatches",
                      "max abs err", "");
  const llvm::json::Array *outputs = record.getArray("outputs");
  if (!outputs)
    return;
  for (const llvm::json::Value &value : *outputs) {
    const llvm::json::Object &o = *value.getAsObject();
    std::string counts =
        llvm::formatv("{0}/{1}", o.getInteger("mismatches").value_or(0),
                      o.getInteger("elements").value_or(0))
            .str();
    bool passed = o.getBoolean("ok").value_or(false);
    os << llvm::formatv("  {0,-8} {1,-28} {2,-10} {3,13} {4,13:e3} {5,6}",
                        o.getInteger("output").value_or(0),
                        o.getString("type").value_or(""),
                        o.getString("mode") == "bits" ? "bit-exact"
                                                      : "tolerance",
                        counts,
                        o.getNumber("max_abs_error").value_or(INFINITY),
                        passed ? "ok" : "FAIL");
    if (std::optional<StringRef> note = o.getString("note"))
      os << "  (" << *note << ")";
    os << "\n";
  }
}
