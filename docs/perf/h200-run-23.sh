#!/usr/bin/env bash
# Device call 23 (session 5): the final tree. As call 22, with the fp16 probe testing the core vload_half /
# vstore_half_rte where the device has no cl_khr_fp16 (NVIDIA: call 22 found the probe off). Was: F16/BF16 rows back on 8-byte units (call 21's
# 16-byte units ran GET_ROWS F16 at 47%), the device's fp16 conversions where a probe at
# device init finds them exact (NVIDIA reports CL_DEVICE_HALF_FP_CONFIG 0, call 21): ct-ops
# test and test_opencl_rows on the NVIDIA device, rows perf, the 1000-node graph.
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
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 70 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows.json 2> $out/perf.err
timeout 30 $x perf -b "$dev" -o CHAIN --min-time 0.3 | tail -1
python3 - $out/perf-rows.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6:
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
PY
