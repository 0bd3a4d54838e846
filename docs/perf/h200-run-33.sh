#!/usr/bin/env bash
# Device call 33 (session 7): units a work-item of ct_rows4 / ct_rows_staged takes, by the temporary
# switch CT_TRY_ROWS_NPER=<F32 max>,<other max> (ops_get_rows.c; removed after the call): 4,4 (as
# before this call), 4,8, 8,8; all with the flag and index loaded together (this call's prologue).
# Rows perf at the large size for each, twice interleaved; tests for the default (4,8).
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-cache-33
rm -rf $CT_OPENCL_CACHE_DIR
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
    if d.get('type')=='device': continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6:
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status')!='ok': print(d.get('case'), d.get('status'), d.get('error',''))
PY
}
for rep in 1 2; do
  for v in 4,4 4,8 8,8; do
    export CT_TRY_ROWS_NPER=$v
    { timeout 60 $x perf -b "$dev" -o GET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $x perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1
      timeout 60 $x perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1; } > $out/perf-$v-$rep.json 2>> /tmp/perf.err
    echo "== nper $v, run $rep"; show $out/perf-$v-$rep.json | grep -v "q[4-8]_[01],ne=\[4096,65536\|iq4_nl,ne\|dst=q"
    echo "$(( $(date +%s) - t0 )) s"
  done
done
unset CT_TRY_ROWS_NPER
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "total $(( $(date +%s) - t0 )) s"
