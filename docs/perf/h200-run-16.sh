#!/usr/bin/env bash
# Device call 16 (session 4): as call 15, with the int8 src1 laid out in the order the mat-vec reads it
# (coalesced activation loads) and IQ4_NL decoded by shuffle(); the staged mat-vec and the
# session's row/norm kernels: OpenCL tests and ct-ops test on the NVIDIA device, the full
# perf list, registers of the mat-vec kernels.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 60 $x test -b $dev | tail -2; echo "ct-ops test rc=$?"
  for t in test_opencl_math test_opencl_rows test_opencl; do
      CT_TEST_OPENCL_DEVICE=$dev timeout 200 $b/tests/$t | tail -1; echo "$t rc=$?"; done
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "$(( $(date +%s) - t0 )) s"
timeout 300 $x perf -b "$dev" --json --min-time 0.1 > $out/perf.json 2> $out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
python3 - $out/perf.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or d['bytes_per_run']<4e6 and 'CHAIN' not in d['case']: continue
    c=d['case'].replace('permute_','p').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','')
    print('%-56s %8.1f %6.0f %4.2f'%(c[:56],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
f=$(ls -tr $CT_OPENCL_CACHE_DIR/* | head -1); tail -c +33 "$f" | tr -d '\000' > /tmp/lib.ptx
$ptxas -arch=sm_90 -v /tmp/lib.ptx -o /tmp/lib.cubin 2>&1 | grep -A3 "mul_mvq" | grep -E "entry|Used|stack" > $out/ptxas-mvq.txt
cat $out/ptxas-mvq.txt | paste - - - | sed 's/ptxas info    ://g' | awk '{print $4, $9, $10, $11, $12, $13, $14, $15, $16, $17}'
echo "done $(( $(date +%s) - t0 )) s"
