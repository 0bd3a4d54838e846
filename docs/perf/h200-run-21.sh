#!/usr/bin/env bash
# Device call 21 (session 5): the final tree (the one-src1-row mat-vec only for the types it
# is faster for): ct-ops test and test_opencl_math on the NVIDIA device, mat-vec n = 1, the
# 1000-node graph.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-new -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ timeout 60 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/m.txt | tail -4; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 50 $x perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-mm.json 2> $out/perf.err
timeout 30 $x perf -b "$dev" -o CHAIN --min-time 0.3 | tail -1
python3 - $out/perf-mm.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6:
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
PY
