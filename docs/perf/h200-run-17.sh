#!/usr/bin/env bash
# Device call 17 (session 4): the final tree (call 16 with IQ4_NL's local table back): ct-ops test
# and test_opencl_math, then the mat-vec at n = 1 under NVIDIA's register cap option
# (-cl-nv-maxrregcount, through CT_OPENCL_BUILD_OPTIONS), with ct-ops test -o MUL_MAT under each.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ timeout 60 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 $b/tests/test_opencl_math | tail -1; echo "test_opencl_math rc=$?"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "$(( $(date +%s) - t0 )) s"
i=0
for opt in "" "-cl-nv-maxrregcount=128" "-cl-nv-maxrregcount=96"; do
    echo "== options '$opt'"
    CT_OPENCL_BUILD_OPTIONS="$opt" timeout 60 $x test -b $dev -o MUL_MAT | tail -1
    CT_OPENCL_BUILD_OPTIONS="$opt" timeout 60 $x perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 \
        > $out/perf-mv-$i.json 2>> $out/perf.err; echo "rc=$? $(( $(date +%s) - t0 )) s"
    python3 - $out/perf-mv-$i.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or d['bytes_per_run']<4e6: continue
    c=d['case'].replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','')
    print('%-50s %8.1f %6.0f %4.2f'%(c[:50],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
    i=$((i+1))
done
echo "done $(( $(date +%s) - t0 )) s"
