#!/usr/bin/env bash
# Device call 42 (session 8, the final tree): IQ4_NL at 2 blocks a team in groups of at most 128,
# its two blocks finalized by lanes 0 and 1 (picked by selects); tests, rows perf at every size (the
# session 8 table) and the large quantizing cases again; the library's PTX.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-cache-42
t0=$(date +%s)
cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-new -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "NVIDIA device: $dev; build $(( $(date +%s) - t0 )) s"
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
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 150 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows.json 2>> /tmp/perf.err
echo "== rows, every size"; show $out/perf-rows.json; echo "$(( $(date +%s) - t0 )) s"
{ timeout 60 $x perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1
  timeout 60 $x perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-rows-2.json 2>> /tmp/perf.err
echo "== large rows again"; show $out/perf-rows-2.json | grep -E "q[0-9]|iq4"; echo "$(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
