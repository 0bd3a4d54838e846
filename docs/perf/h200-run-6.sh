#!/usr/bin/env bash
# Device call 6: mat-vec with quant values as exact floats from the bits (no int-to-float
# conversions) and one scale multiply per 8-group; the 128x128-tile matrix kernel.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
timeout 120 $x test -b $dev -o MUL_MAT > $out/test.txt 2>&1; echo "test rc=$? $(tail -1 $out/test.txt) $(( $(date +%s) - t0 )) s"
grep FAIL $out/test.txt | head -5
timeout 300 $x perf -b $dev --json -o MUL_MAT --min-time 0.1 > $out/perf.json 2>$out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
python3 - $out/perf.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok': continue
    c=d['case'].replace('MUL_MAT(type_a=','').replace(',type_b=f32','').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0)','')
    extra=' %.1f TFLOP/s'%(d['gflops']/1e3) if 'gflops' in d and ',n=512' in c else ''
    print('%-34s %8.1f %6.0f %4.2f%s'%(c[:34],d['us_per_run'],d['gbps'],d['bw_frac'],extra))
PY
