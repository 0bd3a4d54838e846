#!/usr/bin/env bash
# Device call 10 (session 3): the unrolled 8-bit mat-vec: MUL_MAT tests and perf,
# with MVQ_NR0 = 2 (as committed) and 4 (a sed'ed copy).
# NVIDIA device; MUL_MAT perf with MVQ_NR0 = 2 (as committed) and 4 (a sed'ed copy).
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
b=/tmp/ct-build
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ CT_TEST_OPENCL_DEVICE=$dev timeout 240 $b/tests/test_opencl_math | tail -2; echo "test_opencl_math rc=$?"
  timeout 120 $x test -b $dev -o MUL_MAT | tail -1; echo "ct-ops test MUL_MAT rc=$?"; } > $out/test.txt 2>&1
cat $out/test.txt; echo "$(( $(date +%s) - t0 )) s"
timeout 200 $x perf -b "$dev" -o MUL_MAT --json --min-time 0.1 > $out/perf-nr2.json 2> $out/perf-nr2.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
# variant: 4 src0 rows per local row
rm -rf /tmp/v4 && mkdir /tmp/v4 && cp -r . /tmp/v4/ 2>/dev/null
sed -i 's/^#define MVQ_NR0 2/#define MVQ_NR0 4/' /tmp/v4/src/opencl/kernels/mul_mvq.cl
sed -i 's/MVQ_NR0 = 2,/MVQ_NR0 = 4,/' /tmp/v4/src/opencl/ops_mul_mat.c
cmake -S /tmp/v4 -B /tmp/v4b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/v4b -j16 >/tmp/build4.txt 2>&1 || tail -5 /tmp/build4.txt
CT_TEST_OPENCL_DEVICE=$dev timeout 60 /tmp/v4b/tests/test_opencl_math | tail -1
timeout 150 /tmp/v4b/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-nr4.json 2>/dev/null; echo "perf4 rc=$? $(( $(date +%s) - t0 )) s"
for f in $out/perf-nr2.json $out/perf-nr4.json; do echo "== $f"; python3 - $f <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or d['bytes_per_run']<4e6: continue
    c=d['case'].replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','').replace('MUL_MAT(','')
    print('%-44s %8.1f %6.0f %4.2f'%(c[:44],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
done
