#!/usr/bin/env bash
# Device call 11 (session 3): sub-group reduction in the 8-bit mat-vec: ct-ops test and
# test_opencl_math on the NVIDIA device, MUL_MAT and CHAIN perf.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ CT_TEST_OPENCL_DEVICE=$dev timeout 200 $b/tests/test_opencl_math | tail -1; echo "test_opencl_math rc=$?"
  timeout 150 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"; } > $out/test.txt 2>&1
cat $out/test.txt; echo "$(( $(date +%s) - t0 )) s"
timeout 150 $x perf -b "$dev" -o MUL_MAT,CHAIN --json --min-time 0.1 > $out/perf.json 2> $out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
python3 - $out/perf.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or 'n=512' in d['case'] or d['bytes_per_run']<4e6 and 'CHAIN' not in d['case']: continue
    c=d['case'].replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','').replace('MUL_MAT(','')
    print('%-44s %8.1f %6.0f %4.2f'%(c[:44],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
