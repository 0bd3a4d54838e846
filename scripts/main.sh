#!/usr/bin/env bash
# Builds ctensor and runs the main job: list the devices and run the format
# self-check, then the backend comparison on every device (CPU against the
# scalar reference when there is no GPU). Then ctensor inside llama.cpp
# (ggml/README.md): builds the pinned llama.cpp (cached) and the plugin, fetches
# Gemma 3 270M Q4_K_M and runs a prompt on the best ctensor device (the first
# OpenCL GPU, else the first OpenCL device, else ctensor's CPU backend), printing
# the answer, tokens/s and whether the tokens match ggml-cpu's.
set -euo pipefail
cd "$(dirname "$0")/.."
ggml_dirs=$(scripts/ggml/build-ggml.sh | tail -1) # an assignment, so a failed build stops the script
eval "$ggml_dirs"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
  -DCT_GGML_SOURCE_DIR="$CT_GGML_SOURCE_DIR" -DCT_GGML_BUILD_DIR="$CT_GGML_BUILD_DIR" >/dev/null
cmake --build build -j"$(nproc)"
cmake --build build -j"$(nproc)" --target ct-llama-greedy
./build/tools/ct-ops devices
./build/tools/ct-ops selfcheck
./build/tools/ct-ops test

echo
echo "==== ctensor inside llama.cpp ===="
scripts/ggml/run-prompt.sh build
