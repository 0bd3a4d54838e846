#!/usr/bin/env bash
# Device call 18 (session 4): row kernels with the units' loads split from their decoding, and
# quantizing SET_ROWS loading blocks and indices before testing them: ct-ops test and
# test_opencl_rows on the NVIDIA device, perf of SET_ROWS, GET_ROWS and CPY.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ timeout 40 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 60 $b/tests/test_opencl_rows | tail -1; echo "test_opencl_rows rc=$?"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "$(( $(date +%s) - t0 )) s"
timeout 50 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows.json 2> $out/perf.err
echo "perf rc=$? $(( $(date +%s) - t0 )) s"
python3 - $out/perf-rows.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or d['bytes_per_run']<4e6: continue
    c=d['case'].replace('permute_','p').replace('type_','')
    print('%-60s %8.1f %6.0f %4.2f'%(c[:60],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
