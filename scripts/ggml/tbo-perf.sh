#!/usr/bin/env bash
# A ctensor device (through the plugin) against one of ggml's own backends, both driven by
# ggml's `test-backend-ops perf` in one binary (docs/PERF.md): by default ctensor's CPU
# backend (CTCPU) against ggml-cpu with the same thread count ("CPU against ggml-cpu"), or
# with CT_PERF_PAIR="CUDA0 CTOpenCL1" an NVIDIA card's OpenCL device against ggml-cuda.
# test-backend-ops gives a CPU backend hardware_concurrency()/2 threads; the LD_PRELOAD
# library ggml/tools/ct-hw-threads.c sets that count, so both run N threads.
# The cases: the perf list's MUL_MAT at m = 4096, k = 14336 for CT_PERF_N's n (set
# `matvec`), the small ops of one decode step from ggml/tools/ct-tbo-cases.c through
# --test-file (set `small`) and its prompt-sized 16384 x 16384 x 512 products (set `prefill`),
# and with CT_PERF_MODEL_OPS=FILE the ops of a real model's prompt and decode graphs (set
# `model`: FILE as the pinned tree's test-export-graph-ops writes it, docs/PERF.md).
# Per case the two backends alternate, the first of a round switching each round, and the
# summary gives per case the median of the rounds, the spread (min-max), the ratio of the
# medians and the highest 1-minute load average seen before one of the case's runs.
#
# usage: tbo-perf.sh PLUGIN TEST_BACKEND_OPS [ROUNDS]   (ROUNDS: default 3)
#   env: CT_PERF_PAIR (default "CPU CTCPU": ggml's backend, then ctensor's),
#        CT_PERF_THREADS (default "1 2"), CT_PERF_SETS (default "matvec small"),
#        CT_PERF_TYPES (default "f16 bf16 q4_0 q8_0 q4_K q5_K q6_K"), CT_PERF_N (default "1 2 4 8"),
#        CT_PERF_MODEL_OPS (a test-export-graph-ops file: the set `model`),
#        CT_PERF_DIR (default: a temporary folder; raw.tsv and summary.md are left there),
#        CT_GGML_SOURCE_DIR and CT_GGML_BUILD_DIR as printed by scripts/ggml/build-ggml.sh.
set -euo pipefail

plugin=$(readlink -f "${1:?usage: $0 PLUGIN TEST_BACKEND_OPS [ROUNDS]}")
tbo=$(readlink -f "${2:?usage: $0 PLUGIN TEST_BACKEND_OPS [ROUNDS]}")
rounds=${3:-3}
: "${CT_GGML_SOURCE_DIR:?set it from scripts/ggml/build-ggml.sh}" "${CT_GGML_BUILD_DIR:?set it from scripts/ggml/build-ggml.sh}"
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=${CT_PERF_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cc=${CC:-cc}

"$cc" -O2 -shared -fPIC -o "$dir/libct-hw-threads.so" "$here/ggml/tools/ct-hw-threads.c"
"$cc" -O2 -Wall -Wextra -I"$CT_GGML_SOURCE_DIR/ggml/include" "$here/ggml/tools/ct-tbo-cases.c" \
  -L"$CT_GGML_BUILD_DIR/bin" -lggml-base -Wl,-rpath,"$CT_GGML_BUILD_DIR/bin" -o "$dir/ct-tbo-cases"
read -r base ct <<<"${CT_PERF_PAIR:-CPU CTCPU}"

# One test-backend-ops run per case and backend, so that the two runs of a pair are
# seconds apart: the load of a shared machine drifts over minutes.
cases=()
for ty in ${CT_PERF_TYPES:-f16 bf16 q4_0 q8_0 q4_K q5_K q6_K}; do
  for n in ${CT_PERF_N:-1 2 4 8}; do cases+=("matvec:type_a=$ty,type_b=f32,m=4096,n=$n,k=14336,"); done
done
sets=(small prefill)
[ -n "${CT_PERF_MODEL_OPS:-}" ] && sets+=(model)
for set in "${sets[@]}"; do
  while read -r line; do
    name=${line##* }
    printf '%s\n' "$line" >"$dir/case-$name.txt"
    cases+=("$set:$name")
  done < <("$dir/ct-tbo-cases" "$set" ${CT_PERF_MODEL_OPS:+"$CT_PERF_MODEL_OPS"})
done

raw="$dir/raw.tsv"
: >"$raw"
for t in ${CT_PERF_THREADS:-1 2}; do
  for c in "${cases[@]}"; do
    set=${c%%:*} arg=${c#*:}
    case " ${CT_PERF_SETS:-matvec small} " in *" $set "*) ;; *) continue ;; esac
    if [ "$set" = matvec ]; then args=(-o MUL_MAT -p "$arg"); else args=(--test-file "$dir/case-$arg.txt"); fi
    for r in $(seq 1 "$rounds"); do
      if (( r % 2 )); then order=("$base" "$ct"); else order=("$ct" "$base"); fi
      for b in "${order[@]}"; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        echo "+ threads=$t $arg round=$r $b (load $load)" >&2
        # test-backend-ops prints "  OP(params):   N runs -   T us/run - ..." per case.
        GGML_BACKEND_PATH="$plugin" CT_HW_THREADS=$((2 * t)) LD_PRELOAD="$dir/libct-hw-threads.so" \
          "$tbo" perf -b "$b" "${args[@]}" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' |
          sed -nE 's/^  ([A-Z_0-9]+\(.*\)): +[0-9]+ runs - +([0-9.]+) us\/run.*/\1\t\2/p' |
          while IFS=$'\t' read -r name us; do printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$r" "$b" "$load" "$name" "$us"; done >>"$raw"
      done
    done
  done
done

python3 - "$raw" "$base" "$ct" >"$dir/summary.md" <<'EOF'
import re, statistics, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
base, ct = sys.argv[2], sys.argv[3]
data, load = {}, {}
for t, r, b, ld, name, us in rows:
    m = re.search(r'name=([^,]+)', name)
    if m:
        case = m.group(1)
    else:
        m = re.search(r'type_a=(\w+),type_b=f32,m=(\d+),n=(\d+),k=(\d+)', name)
        case = f'mul_mat_{m.group(1)}_{m.group(2)}x{m.group(4)}_n{m.group(3)}' if m else name
    key = (int(t), case)
    data.setdefault(key, {}).setdefault(b, []).append(float(us))
    load[key] = max(load.get(key, 0.0), float(ld))
def fmt(v):
    return f'{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})'
for t in sorted({k[0] for k in data}):
    print(f'\n{t} thread(s)\n')
    print(f'| case | {base} µs (min-max) | {ct} µs (min-max) | ratio | load |')
    print('|---|---:|---:|---:|---:|')
    for (tt, case), v in data.items():
        if tt != t or base not in v or ct not in v:
            continue
        ratio = statistics.median(v[ct]) / statistics.median(v[base])
        print(f'| {case} | {fmt(v[base])} | {fmt(v[ct])} | {ratio:.2f} | {load[(tt, case)]:.1f} |')
EOF
cat "$dir/summary.md"
echo "raw: $raw" >&2
