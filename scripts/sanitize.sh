#!/usr/bin/env bash
# The ASan+UBSan build and the whole test suite under it (CI runs this after
# scripts/test.sh). Configures build-asan/ once with clang-22 and
# cmake/caches/sanitize.cmake (instrumented project, uninstrumented
# libMLIR.so, libFuzzer coverage for tools/fp8-fuzz), builds it and runs
# check-fp8 (lit, GoogleTests, the downstream package built with the same
# flags) with the options of scripts/sanitizer-env.sh: any sanitizer report
# fails its test. With arguments, only builds those ninja targets
# (bench/fuzz.sh). ASAN_BUILD_DIR overrides build-asan/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ASAN_BUILD_DIR:-$root/build-asan}"

export BUILD_DIR="$build"
export FP8_CMAKE_ARGS="-C $root/cmake/caches/sanitize.cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo"
if [ $# -gt 0 ]; then
  exec "$root/scripts/build.sh" "$@"
fi
"$root/scripts/build.sh"

source "$root/scripts/sanitizer-env.sh"
ninja -C "$build" check-fp8
