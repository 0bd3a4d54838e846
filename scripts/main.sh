#!/usr/bin/env bash
# Builds ctensor and runs the main job: list the devices and run the format
# self-check, then the backend comparison on every device (CPU against the
# scalar reference when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
./build/tools/ct-ops devices
./build/tools/ct-ops selfcheck
./build/tools/ct-ops test
