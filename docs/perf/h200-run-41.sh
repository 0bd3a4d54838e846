#!/usr/bin/env bash
# Device call 41 (session 8): lane k of a team finalizes block k (scales side by side instead of one
# after another on lane 0) and IQ4_NL at 2 blocks a team in groups of at most 128 (exp: the files in
# .ab-new/ over a copy of the tree) against the tree itself (base, call 40's kernels): quantizing
# SET_ROWS and CPY base / exp / base / exp, tests and rows at every size on exp.
# .ab-new/ (not kept in the repository) held that session's set_rows.cl, ops_set_rows.c, ops_rows.h.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
rm -rf /tmp/exp && mkdir -p /tmp/exp && tar --exclude=./build --exclude=./.git --exclude=./.ab-new -cf - . | tar -xf - -C /tmp/exp &&
  cp -r .ab-new/src /tmp/exp/
for t in base exp; do
    src=/tmp/exp; [ $t = base ] && src=.
    (cmake -S $src -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build /tmp/ct-$t -j8 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
done
wait
x=/tmp/ct-exp/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "NVIDIA device: $dev; builds $(( $(date +%s) - t0 )) s"
show() {
python3 - "$1" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6:
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status')!='ok': print(d.get('case'), d.get('status'), d.get('error',''))
PY
}
for run in base1 exp1 base2 exp2; do
    t=${run%[12]}
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-41-$t
    y=/tmp/ct-$t/tools/ct-ops
    { timeout 60 $y perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $y perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-$run.json | grep -E "q[0-9]|iq4"; echo "$(( $(date +%s) - t0 )) s"
done
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-41-exp
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-exp/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 150 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows-exp.json 2>> /tmp/perf.err
echo "== exp, every size"; show $out/perf-rows-exp.json; echo "$(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib-exp.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
