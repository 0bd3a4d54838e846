#!/usr/bin/env bash
# ctensor's CPU backend (CTCPU, through the plugin) against ggml-cpu, both driven by ggml's
# own `test-backend-ops perf`, with the same thread count (docs/PERF.md, "CPU against
# ggml-cpu"). test-backend-ops gives every backend hardware_concurrency()/2 threads; the
# LD_PRELOAD library ggml/tools/ct-hw-threads.c sets that count, so both run N threads.
# The cases: the perf list's mat-vecs at m = 4096, k = 14336 (set `matvec`) and the small
# ops of one decode step from ggml/tools/ct-tbo-cases.c through --test-file (set `small`).
# Per case the two backends alternate, the first of a round switching each round, and the
# summary gives per case the median of the rounds, the spread (min-max), the ratio of the
# medians and the highest 1-minute load average seen before one of the case's runs.
#
# usage: cpu-perf.sh PLUGIN TEST_BACKEND_OPS [ROUNDS]   (ROUNDS: default 3)
#   env: CT_PERF_THREADS (default "1 2"), CT_PERF_SETS (default "matvec small"),
#        CT_PERF_TYPES (default "f16 bf16 q4_0 q8_0 q4_K q5_K q6_K"), CT_PERF_N (default "1 2 4 8"),
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
"$dir/ct-tbo-cases" >"$dir/cases.txt"

# One test-backend-ops run per case and backend, so that the two runs of a pair are
# seconds apart: the load of a shared machine drifts over minutes.
cases=()
for ty in ${CT_PERF_TYPES:-f16 bf16 q4_0 q8_0 q4_K q5_K q6_K}; do
  for n in ${CT_PERF_N:-1 2 4 8}; do cases+=("matvec:type_a=$ty,type_b=f32,m=4096,n=$n,k=14336,"); done
done
while read -r line; do
  name=${line##* }
  printf '%s\n' "$line" >"$dir/case-$name.txt"
  cases+=("small:$name")
done <"$dir/cases.txt"

raw="$dir/raw.tsv"
: >"$raw"
for t in ${CT_PERF_THREADS:-1 2}; do
  for c in "${cases[@]}"; do
    set=${c%%:*} arg=${c#*:}
    case " ${CT_PERF_SETS:-matvec small} " in *" $set "*) ;; *) continue ;; esac
    if [ "$set" = matvec ]; then args=(-o MUL_MAT -p "$arg"); else args=(--test-file "$dir/case-$arg.txt"); fi
    for r in $(seq 1 "$rounds"); do
      if (( r % 2 )); then order=(CPU CTCPU); else order=(CTCPU CPU); fi
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

python3 - "$raw" >"$dir/summary.md" <<'EOF'
import re, statistics, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
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
    print('| case | ggml-cpu µs (min-max) | ctensor µs (min-max) | ratio | load |')
    print('|---|---:|---:|---:|---:|')
    for (tt, case), v in data.items():
        if tt != t or 'CPU' not in v or 'CTCPU' not in v:
            continue
        ratio = statistics.median(v['CTCPU']) / statistics.median(v['CPU'])
        print(f'| {case} | {fmt(v["CPU"])} | {fmt(v["CTCPU"])} | {ratio:.2f} | {load[(tt, case)]:.1f} |')
EOF
cat "$dir/summary.md"
echo "raw: $raw" >&2
