#!/usr/bin/env bash
# Sourced by scripts/sanitize.sh and bench/fuzz.sh: the run-time options of
# the ASan+UBSan build. Any report aborts the process (abort_on_error), so the
# lit test (or fuzz input) that caused it fails, also under `not`, which
# accepts an exit code but not a crash.
# - allow_user_poisoning=0: libMLIR.so is not instrumented but its headers
#   are, and MLIR's allocators poison memory through the ASan interface; the
#   mix gives false use-after-poison reports.
# - detect_leaks=1 with sanitizer-leaks.supp: leaks must be in libMLIR or
#   libLLVM to be ignored (see that file).
set -euo pipefail
sanitizer_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:allow_user_poisoning=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$sanitizer_root/scripts/sanitizer-leaks.supp:print_suppressions=0"
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
# Tells lit the suite runs sanitized (test/lit.cfg.py: feature "sanitizer").
export FP8_SANITIZER=1
