#!/usr/bin/env bash
# Quick start, command 2: set up, build everything and run every test
# (GoogleTest numerics, lit regression tests, the downstream-package test).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/build.sh"
# check-fp8 builds what the tests need, installs the package for the
# downstream test, and ends with lit's summary.
ninja -C "$build" check-fp8
