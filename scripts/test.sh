#!/usr/bin/env bash
# Builds ctensor with warnings as errors and runs the whole test suite, then the
# reliability job: the suite under ASan+UBSan, the threading tests under TSan,
# and a short run of each fuzz target (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCT_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
ctest --test-dir build-test --output-on-failure -j"$jobs"
scripts/sanitize.sh
