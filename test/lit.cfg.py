# -*- Python -*-
# lit configuration for fp8-mlir.

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FP8"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fp8_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs", "downstream", "Unit"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%fp8_src_root", config.fp8_src_root))
config.substitutions.append(("%fp8_obj_root", config.fp8_obj_root))
config.substitutions.append(("%cmake_command", config.cmake_command))
config.substitutions.append(("%mlir_dir", config.mlir_dir))
config.substitutions.append(("%cxx_compiler", config.cxx_compiler))
# Python checkers of fp8-run reports (test/Integration/Inputs).
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(
    ("%graphs", os.path.join(config.test_source_root, "Inputs", "graphs")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not`, `count` and `split-file` at the start of a RUN line are found on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.fp8_tools_dir, config.llvm_tools_dir]
tools = ["fp8-compile", "fp8-gen", "fp8-opt", "fp8-run", "fp8-train", "fp8-tune", "mlir-opt", "mlir-runner",
         ToolSubst("FP8NumericsTests", unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The runtime libraries that CPU runs (fp8-lower-to-cpu | mlir-runner) print
# with, next to the LLVM tools, and the OpenMP runtime its threads call.
mlir_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(
    ("%mlir_runner_libs",
     ",".join(os.path.join(mlir_lib_dir, lib) for lib in
              ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so",
               "libomp.so"])))
# The same without the OpenMP runtime: what a program lowered with
# threads=false needs.
config.substitutions.append(
    ("%mlir_runner_utils",
     ",".join(os.path.join(mlir_lib_dir, lib) for lib in
              ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so"])))

# fp8-train --ranks runs data-parallel steps under OpenMPI's mpirun
# (Debian: openmpi-bin and libopenmpi-dev, scripts/setup.sh).
if shutil.which("mpirun"):
    config.available_features.add("mpi")

# The ASan+UBSan suite (scripts/sanitize.sh, scripts/sanitizer-env.sh).
if os.environ.get("FP8_SANITIZER"):
    config.available_features.add("sanitizer")
    config.environment["FP8_SANITIZER"] = "1"

# A C compiler for the programs that call fp8-compile's libraries.
c_compiler = shutil.which("cc") or shutil.which("clang-22")
if c_compiler:
    config.available_features.add("c-compiler")
    config.substitutions.append(("%c_compiler", c_compiler))

# MLIR's GPU runtime ABI (lib/Runtime/MgpuRuntime.cpp) and the fake CUDA
# driver that runs it on machines without a GPU.
config.substitutions.append(
    ("%fp8_gpu_runtime",
     os.path.join(config.fp8_obj_root, "lib", "libfp8_gpu_runtime.so")))
config.substitutions.append(
    ("%fake_cuda_driver",
     os.path.join(config.fp8_obj_root, "unittests", "Runner",
                  "libFP8FakeCudaDriver.so")))

# libFP8Plugin.so (tools/fp8-plugin) loads into the installed mlir-opt when
# both share libMLIR.so; an instrumented plugin cannot load into the
# uninstrumented mlir-opt.
fp8_plugin = os.path.join(config.fp8_obj_root, "lib", "libFP8Plugin.so")
if (config.link_mlir_dylib and not os.environ.get("FP8_SANITIZER")
        and os.path.exists(fp8_plugin)):
    config.available_features.add("mlir-plugin")
    config.substitutions.append(("%fp8_plugin", fp8_plugin))

# gnuplot draws fp8-train's plots (Debian: gnuplot-nox, scripts/setup.sh).
if shutil.which("gnuplot"):
    config.available_features.add("gnuplot")

# The CUDA toolkit is optional: tests that need ptxas say REQUIRES: ptxas.
cuda_bin = os.environ.get("CUDA_BIN", "/usr/local/cuda/bin")
ptxas = shutil.which("ptxas") or (
    os.path.join(cuda_bin, "ptxas")
    if os.access(os.path.join(cuda_bin, "ptxas"), os.X_OK) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(
        ("%cuda_toolkit", os.path.dirname(os.path.dirname(ptxas))))

# A GPU to run on (fp8-run --device=cuda): `nvidia-smi -L` lists one. Tests
# that need it say REQUIRES: cuda-gpu; the no-GPU ones UNSUPPORTED: cuda-gpu.
import subprocess
nvidia_smi = shutil.which("nvidia-smi")
if nvidia_smi:
    try:
        listed = subprocess.run([nvidia_smi, "-L"], capture_output=True,
                                text=True, timeout=60).stdout
        if "GPU" in listed:
            config.available_features.add("cuda-gpu")
    except (OSError, subprocess.SubprocessError):
        pass

# The toolkit's stub libcuda.so (cuInit fails with CUDA_ERROR_STUB_LIBRARY).
if ptxas:
    cuda_stub = os.path.join(os.path.dirname(os.path.dirname(ptxas)),
                             "lib64", "stubs", "libcuda.so")
    if os.path.exists(cuda_stub):
        config.available_features.add("cuda-stub")
        config.substitutions.append(("%cuda_stub", cuda_stub))
