#!/usr/bin/env bash
# Configures (once) and builds fp8-mlir in $BUILD_DIR (default: build/).
# Extra arguments are passed to ninja (targets). FP8_BUILD_LOCK=/path
# serializes cmake and ninja with flock (shared build trees). FP8_CMAKE_ARGS
# adds whitespace-separated arguments to the first configure, after the
# defaults (so they win), e.g. "-C cmake/caches/sanitize.cmake".
# The compiler is clang-22 (setup.sh installs it): it builds this project a
# third faster than GCC 12 (README.md, "Testing"); CC/CXX choose another.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"

locked() {
  if [ -n "${FP8_BUILD_LOCK:-}" ]; then flock "$FP8_BUILD_LOCK" "$@"; else "$@"; fi
}

read -r -a extra_cmake_args <<< "${FP8_CMAKE_ARGS:-}"

if [ ! -f "$build/build.ninja" ]; then
  CC="${CC:-clang-22}" CXX="${CXX:-clang++-22}" \
    locked cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DMLIR_LINK_MLIR_DYLIB="${FP8_LINK_MLIR_DYLIB:-ON}" \
    -DCMAKE_INSTALL_PREFIX="$build/install" \
    ${extra_cmake_args[@]+"${extra_cmake_args[@]}"}
fi
locked ninja -C "$build" "$@"
