#!/usr/bin/env bash
# Device call 21 (session 5): the final tree (the one-src1-row mat-vec only for the types it
# is faster for; 16-byte units for F16/BF16 rows, ct_rows8; the device's fp16 conversions only
# where CL_DEVICE_HALF_FP_CONFIG has denormals and round to nearest): ct-ops test,
# test_opencl_rows and test_opencl_math on the NVIDIA device, rows and mat-vec n = 1 perf,
# the 1000-node graph.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-new -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-new/tools/ct-ops
# what the devices say of their half type (the library converts fp16 by the device's
# instructions only with denormals and round to nearest)
cat > /tmp/hfp.c <<'C'
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
int main(void) {
    cl_platform_id p[4]; cl_uint np = 0; clGetPlatformIDs(4, p, &np);
    for (cl_uint i = 0; i < np; i++) {
        cl_device_id d; char name[128]; cl_device_fp_config c = 0;
        if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS) continue;
        clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL);
        clGetDeviceInfo(d, CL_DEVICE_HALF_FP_CONFIG, sizeof c, &c, NULL);
        printf("%s: CL_DEVICE_HALF_FP_CONFIG 0x%llx (denorm %d, round to nearest %d)\n", name,
               (unsigned long long)c, !!(c & CL_FP_DENORM), !!(c & CL_FP_ROUND_TO_NEAREST));
    }
    return 0;
}
C
gcc /tmp/hfp.c -o /tmp/hfp -lOpenCL && /tmp/hfp | tee $out/half-fp-config.txt
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ timeout 60 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  for t in test_opencl_rows test_opencl_math; do
    CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/$t > /tmp/$t.txt 2>&1; rc=$?
    grep -E "CHECK failed|checks" /tmp/$t.txt | tail -4; echo "$t rc=$rc"
  done
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 70 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-mm.json 2> $out/perf.err
timeout 50 $x perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 >> $out/perf-mm.json 2>> $out/perf.err
timeout 30 $x perf -b "$dev" -o CHAIN --min-time 0.3 | tail -1
python3 - $out/perf-mm.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6:
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
PY
