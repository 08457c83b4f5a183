#!/usr/bin/env bash
# Installs what fp8-mlir needs to build and test, and nothing when it is all
# there: LLVM/MLIR 22 (Debian packages), CMake, Ninja, a C++ compiler,
# GoogleTest and Python 3 (for lit), and clang-22 with its sanitizer and
# libFuzzer runtimes (scripts/sanitize.sh, bench/fuzz.sh), LLVM's OpenMP
# runtime (the CPU path's threads), numpy on OpenBLAS (bench/cpu-gemm.sh's
# baseline; without libopenblas numpy uses the reference BLAS) and gnuplot
# (fp8-train --plot).
set -euo pipefail

packages=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  cmake ninja-build g++ googletest libgtest-dev python3
  clang-22 libclang-rt-22-dev libomp-22-dev python3-numpy
  libopenblas0-pthread gnuplot-nox libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
