#!/usr/bin/env bash
# Regenerates docs/generated/ (dialect, pass and conversion references) from
# the ODS definitions. test/docs/generated-docs.test fails when they are stale.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" mlir-doc
mkdir -p "$root/docs/generated"
cp "$build"/docs/FP8/*.md "$root/docs/generated/"
