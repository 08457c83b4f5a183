//===- fp8-compile.cpp - Ahead-of-time compiler ---------------------------===//
//
// Compiles a module (before or after fp8-pipeline) into a shared library (or
// object file) and a C header, for programs that call the graph without
// MLIR or LLVM:
//
//   fp8-compile examples/llama-ffn-block.mlir --fp8-pipeline="history=16" \
//       -o libffn.so                 # and libffn.h
//
// Every public function is exported through MLIR's C interface
// (`_mlir_ciface_<name>`, memref descriptors), the state (delayed-scaling
// histories and scales: the module's ml_program globals) through accessors
// `_mlir_ciface_<prefix>state_get_<global>` / `..._set_...`. The code is
// what fp8-run's JIT runs: fp8-lower-to-cpu, then LLVM at -O3 for this
// machine's CPU (--mcpu). At run time the library needs libc, libm and,
// when threaded, LLVM's libomp. With --target=cuda the module becomes one
// GPU program (fp8-lower-to-gpu: kernels embedded as PTX for --chip, a host
// on MLIR's GPU runtime ABI), linked with libfp8_gpu_runtime.so, which
// loads the NVIDIA driver at run time.
//
//===----------------------------------------------------------------------===//

#include "fp8/AOT/CInterface.h"
#include "fp8/AOT/InputDialects.h"
#include "fp8/AOT/ObjectEmitter.h"
#include "fp8/Conversion/FP8ToNVVM/FP8ToNVVM.h"
#include "fp8/InitAllFP8.h"
#include "fp8/Pipelines/LowerToCPU.h"
#include "fp8/Pipelines/LowerToGPU.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("fp8-compile options");

enum class Emit { Shared, Object, LLVM };

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                cl::value_desc("file"), cl::Required,
                                cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"),
    cl::values(clEnumValN(Emit::Shared, "shared", "a shared library"),
               clEnumValN(Emit::Object, "object",
                          "a relocatable object file (link it yourself)"),
               clEnumValN(Emit::LLVM, "llvm", "optimized LLVM IR")),
    cl::init(Emit::Shared), cl::cat(category));
cl::opt<std::string> headerFile(
    "header",
    cl::desc("C header to write (default: the output's name with .h)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> target("target",
                            cl::desc("Where the code runs: cpu, or cuda (one "
                                     "GPU program, fp8-lower-to-gpu)"),
                            cl::init("cpu"), cl::cat(category));
cl::opt<std::string> chip("chip",
                          cl::desc("--target=cuda: the GPU (NVVM chip)"),
                          cl::init("sm_90a"), cl::cat(category));
cl::opt<std::string> pipelineOptions(
    "fp8-pipeline", cl::ValueOptional,
    cl::desc("Run fp8-pipeline first, with these options (as in fp8-opt, "
             "e.g. \"granularity=block\"); without it the module is "
             "compiled as it is"),
    cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::Prefix, cl::init(3), cl::cat(category));
cl::opt<std::string> mcpu("mcpu",
                          cl::desc("CPU to generate code for (\"host\": this "
                                   "machine; e.g. x86-64-v3 to run on others)"),
                          cl::init("host"), cl::cat(category));
cl::opt<std::string> mattr("mattr",
                           cl::desc("Extra target features, e.g. +avx2"),
                           cl::cat(category));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the lowering, as fp8-opt "
             "does (slower; by default once, at the end)"),
    cl::cat(category));
cl::opt<bool> scalarLoops(
    "scalar-loops",
    cl::desc("Scalar loops on one thread (fp8-lower-to-cpu{vectorize=false "
             "threads=false})"),
    cl::cat(category));
cl::opt<bool> threads("openmp",
                      cl::desc("Run the outer tiles on every core (links "
                               "LLVM's libomp)"),
                      cl::init(true), cl::cat(category));
cl::opt<fp8::Accumulation> accumulation(
    "accumulation",
    cl::desc("How bf16/f16 GEMMs left in high precision accumulate"),
    cl::init(fp8::Accumulation::F32), fp8::accumulationValues(),
    cl::cat(category));
cl::opt<std::string> prefix(
    "prefix",
    cl::desc("Prefix of the state accessors (default: the output's name, "
             "without lib and extension, and _)"),
    cl::cat(category));
cl::opt<std::string> linker(
    "cc", cl::desc("C compiler that links the shared library (default: $CC, "
                   "or cc)"),
    cl::cat(category));

int fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "fp8-compile") << message << "\n";
  return 1;
}

/// `text` made a C identifier (a leading digit gets an 'm' before it).
std::string toIdentifier(StringRef text) {
  std::string name = fp8::aot::toCIdentifier(text);
  if (!fp8::aot::isCIdentifier(name))
    name.insert(0, "m");
  return name;
}

/// The output's name without directory, "lib" and extension.
std::string getStem() {
  StringRef stem = llvm::sys::path::stem(outputFile);
  stem.consume_front("lib");
  return stem.str();
}

/// Closes `file`'s stream and reports a write error (a full disk), which
/// the stream would otherwise turn into an abort; the file is then removed
/// when `file` goes, as on every other failure.
bool closeOutput(llvm::ToolOutputFile &file) {
  file.os().close();
  if (!file.os().has_error())
    return true;
  fail("cannot write '" + file.getFilename() +
       "': " + file.os().error().message());
  file.os().clear_error();
  return false;
}

/// `contents` in a new `path`, kept only once the caller keep()s it.
std::unique_ptr<llvm::ToolOutputFile> writeFile(StringRef path,
                                                StringRef contents) {
  std::string error;
  auto file = openOutputFile(path, &error);
  if (!file) {
    fail(error);
    return nullptr;
  }
  file->os() << contents;
  if (!closeOutput(*file))
    return nullptr;
  return file;
}

/// Links `object` into the shared library `output` with the C compiler.
int linkSharedLibrary(StringRef object) {
  std::string compiler = linker;
  if (compiler.empty())
    if (const char *cc = std::getenv("CC"); cc && *cc)
      compiler = cc;
  if (compiler.empty())
    compiler = "cc";
  auto program = llvm::sys::findProgramByName(compiler);
  if (!program)
    return fail("no C compiler '" + compiler +
                "' to link the shared library (--cc, $CC; or --emit=object)");
  SmallVector<std::string> args = {*program, "-shared", "-o", outputFile,
                                   object.str(), "-lm"};
  if (target == "cuda") {
    // libfp8_gpu_runtime.so, next to the tool's libraries (build tree and
    // installation alike).
    std::string runtime = fp8::aot::getGpuRuntimeLibraryPath();
    if (!llvm::sys::fs::exists(runtime))
      return fail("no GPU runtime library at '" + runtime +
                  "' to link the --target=cuda library with");
    args.push_back(runtime);
    args.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(runtime)).str());
  }
#ifdef FP8_OPENMP_RUNTIME
  if (target == "cpu" && threads && !scalarLoops) {
    StringRef omp = FP8_OPENMP_RUNTIME;
    args.push_back(omp.str());
    args.push_back(("-Wl,-rpath," + llvm::sys::path::parent_path(omp)).str());
  }
#endif
  SmallString<128> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fp8-compile-link", "log", log))
    return fail("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeLog(log);
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(),
                                          log.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*program, argRefs, std::nullopt,
                                     redirects, 0, 0, &error);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    return fail("linking failed (" + llvm::join(args, " ") + ")" +
                (error.empty() ? "" : ": " + error) + "\n" +
                (text ? (*text)->getBuffer() : ""));
  }
  return 0;
}

int compile(MLIRContext &context, ModuleOp module) {
  if (failed(fp8::aot::checkNoElidedResources(module)))
    return 1;
  if (pipelineOptions.getNumOccurrences()) {
    auto options = fp8::FP8PipelineOptions::createFromString(pipelineOptions);
    if (!options)
      return fail("bad --fp8-pipeline options '" + pipelineOptions + "'");
    PassManager pm(&context);
    fp8::buildFP8Pipeline(pm, *options);
    if (failed(pm.run(module)))
      return 1;
  }
  FailureOr<SmallVector<func::FuncOp>> functions =
      fp8::aot::getExportedFunctions(module);
  if (failed(functions))
    return 1;
  if (functions->empty())
    return fail("'" + inputFile +
                "' has no public function with a body to export");
  std::string statePrefix = prefix.getNumOccurrences()
                                ? prefix.getValue()
                                : toIdentifier(getStem()) + "_";
  if (!statePrefix.empty() && !fp8::aot::isCIdentifier(statePrefix))
    return fail("--prefix '" + statePrefix + "' is not a C identifier");
  SmallVector<fp8::aot::StateAccessor> state;
  if (failed(fp8::aot::addStateAccessors(module, statePrefix, state)))
    return 1;
  for (func::FuncOp func : *functions)
    fp8::aot::prepareForCInterface(func);
  for (const fp8::aot::StateAccessor &accessor : state)
    for (StringRef name : {accessor.getName, accessor.setName})
      fp8::aot::prepareForCInterface(module.lookupSymbol<func::FuncOp>(name));

  std::string header;
  if (emit != Emit::LLVM) {
    std::string guard = StringRef(toIdentifier(getStem())).upper() + "_H";
    header = fp8::aot::emitCHeader(*functions, state, statePrefix, guard,
                                   llvm::sys::path::filename(outputFile),
                                   /*gpu=*/target == "cuda");
  }

  PassManager pm(&context);
  pm.enableVerifier(verifyEach);
  if (target == "cuda") {
    fp8::LowerToGPUOptions lowering;
    lowering.chip = chip;
    lowering.accumulation = accumulation;
    fp8::buildLowerToGPUPipeline(pm, lowering);
  } else {
    fp8::LowerToCPUOptions lowering;
    lowering.vectorize = !scalarLoops;
    lowering.threads = !scalarLoops && threads;
    lowering.accumulation = accumulation;
    fp8::buildLowerToCPUPipeline(pm, lowering);
  }
  if (target == "cpu" && failed(fp8::aot::renameFunctionsForLowering(module)))
    return 1;
  if (failed(pm.run(module)) || failed(verify(module)) ||
      failed(fp8::aot::renameInternalFunctions(module)))
    return 1;

  auto machine = fp8::aot::createTargetMachine(mcpu, mattr, optLevel);
  if (!machine)
    return fail(llvm::toString(machine.takeError()));
  llvm::LLVMContext llvmContext;
  auto llvmModule =
      fp8::aot::translateToLLVMIR(module, llvmContext, **machine, optLevel);
  if (!llvmModule)
    return fail(llvm::toString(llvmModule.takeError()));

  if (emit == Emit::LLVM) {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*llvmModule)->print(os, nullptr);
    std::unique_ptr<llvm::ToolOutputFile> output = writeFile(outputFile, text);
    if (!output)
      return 1;
    output->keep();
    return 0;
  }

  // The header first: every output is removed again if a later one fails.
  std::string headerPath = headerFile;
  if (headerPath.empty()) {
    SmallString<128> path(outputFile);
    llvm::sys::path::replace_extension(path, "h");
    headerPath = path.str().str();
  }
  std::unique_ptr<llvm::ToolOutputFile> headerOutput =
      writeFile(headerPath, header);
  if (!headerOutput)
    return 1;

  // A shared library's object is temporary: removed with `object`, never
  // kept.
  SmallString<128> objectPath(outputFile);
  if (emit == Emit::Shared)
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "fp8-compile", "o", objectPath))
      return fail("cannot create a temporary file: " + ec.message());
  std::error_code ec;
  llvm::ToolOutputFile object(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write '" + objectPath + "': " + ec.message());
  if (llvm::Error error =
          fp8::aot::emitObject(**llvmModule, **machine, object.os())) {
    object.os().clear_error();
    return fail(llvm::toString(std::move(error)));
  }
  if (!closeOutput(object))
    return 1;
  if (emit == Emit::Shared) {
    if (int rc = linkSharedLibrary(objectPath))
      return rc;
  } else {
    object.keep();
  }
  headerOutput->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp8-compile: a module as a shared library with a C interface\n");
  if (target != "cpu" && target != "cuda")
    return fail("unknown --target '" + target + "' (cpu or cuda)");
  if (std::optional<std::string> error =
          fp8::checkNVVMTarget(chip, "+ptx80", /*needsWgmma=*/false);
      target == "cuda" && error)
    return fail(*error);
  if (optLevel > 3)
    return fail("-O" + std::to_string(optLevel) + " is not one of 0-3");

  DialectRegistry registry;
  fp8::aot::registerInputDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  return compile(context, *module);
}
