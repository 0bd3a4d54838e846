#!/usr/bin/env bash
# Device call 13 (session 4): rows/CPY/norm kernels with select-based conversions and
# register-held norm rows: ct-ops test and test_opencl_rows on the NVIDIA device, perf of the
# memory-bound cases, then the driver's PTX of the kernel library through ptxas (registers,
# spills) and the SASS of the row, norm and mat-vec kernels.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  CT_TEST_OPENCL_DEVICE=$dev timeout 120 $b/tests/test_opencl_rows | tail -1; echo "test_opencl_rows rc=$?"
  timeout 150 $x test -b $dev | tail -2; echo "ct-ops test rc=$?"; } > $out/test.txt 2>&1
cat $out/test.txt; echo "$(( $(date +%s) - t0 )) s"
timeout 150 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY,RMS_NORM,NORM,L2_NORM,SUM_ROWS,MEAN --json --min-time 0.1 \
    > $out/perf.json 2> $out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
python3 - $out/perf.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or d['bytes_per_run']<4e6: continue
    c=d['case'].replace('permute_','p').replace('type_','')
    print('%-60s %8.1f %6.0f %4.2f'%(c[:60],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
# the NVIDIA program binary is PTX text after the cache file's 32-byte header
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
for f in $CT_OPENCL_CACHE_DIR/*; do
    if head -c 200 "$f" | tail -c +33 | grep -q "NVIDIA\|\.version"; then tail -c +33 "$f" | tr -d '\000' > $out/lib.ptx; fi
done
if [ -s $out/lib.ptx ] && [ -n "$ptxas" ]; then
    $ptxas -arch=sm_90 -v $out/lib.ptx -o /tmp/lib.cubin > $out/ptxas.txt 2>&1; echo "ptxas rc=$?"
    cuobjdump=$(dirname $ptxas)/cuobjdump
    $cuobjdump -sass /tmp/lib.cubin > /tmp/lib.sass 2>&1
    awk '/Function : /{keep = /rows4_(f16|q4_0|q8_0|q4_K)|quant_rows_q4_0|norm_f32|mul_mvq_(q4_0|q8_0)_f32|cpy_contig/} keep' /tmp/lib.sass | gzip > $out/sass.txt.gz
    grep -c "" /tmp/lib.sass
else
    echo "no PTX ($(ls $CT_OPENCL_CACHE_DIR | head -3)) or no ptxas ($ptxas)"
fi
gzip -c $out/lib.ptx > $out/lib.ptx.gz 2>/dev/null; rm -f $out/lib.ptx
echo "done $(( $(date +%s) - t0 )) s"
