#!/usr/bin/env bash
# Device call 14 (session 4): row kernels with branch-free decoders and unconditional loads
# (tests, perf, SASS), and the 8-bit mat-vec under experiment macros through
# CT_OPENCL_BUILD_OPTIONS: as is, weight loads only, made-up activations, one src1 row per group.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ CT_TEST_OPENCL_DEVICE=$dev timeout 120 $b/tests/test_opencl_rows | tail -1; echo "test_opencl_rows rc=$?"
  timeout 150 $x test -b $dev | tail -2; echo "ct-ops test rc=$?"; } > $out/test.txt 2>&1
cat $out/test.txt; echo "$(( $(date +%s) - t0 )) s"
show() {
python3 - $1 <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d['copy_kernel_gbps'],d['copy_driver_gbps'])); continue
    if d.get('status')!='ok' or d['bytes_per_run']<4e6: continue
    c=d['case'].replace('permute_','p').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','')
    print('%-60s %8.1f %6.0f %4.2f'%(c[:60],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
}
timeout 120 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows.json 2> $out/perf.err
echo "rows perf rc=$? $(( $(date +%s) - t0 )) s"; show $out/perf-rows.json
i=0
for opt in "" "-DMVQ_DIAG_LOAD_ONLY" "-DMVQ_DIAG_NO_Y" "-DMVQ_NR1=1" "-DMVQ_NR1=1 -DMVQ_DIAG_NO_Y"; do
    echo "== mat-vec n=1, options '$opt'"
    CT_OPENCL_BUILD_OPTIONS="$opt" timeout 100 $x perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 \
        > $out/perf-mv-$i.json 2>> $out/perf.err; echo "rc=$? $(( $(date +%s) - t0 )) s"; show $out/perf-mv-$i.json
    i=$((i+1))
done
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
for f in $CT_OPENCL_CACHE_DIR/*; do
    if head -c 200 "$f" | tail -c +33 | grep -q "NVIDIA\|\.version" && ! grep -q "MVQ_DIAG\|mul_mvq" <(head -c 0 "$f"); then
        tail -c +33 "$f" | tr -d '\000' > /tmp/lib-$(basename $f).ptx
    fi
done
# the library built without options is the first one written
first=$(ls -tr /tmp/lib-*.ptx | head -1)
$ptxas -arch=sm_90 -v $first -o /tmp/lib.cubin > $out/ptxas.txt 2>&1; echo "ptxas rc=$?"
$(dirname $ptxas)/cuobjdump -sass /tmp/lib.cubin > /tmp/lib.sass 2>&1
awk '/Function : /{keep = /rows4_(f16|q4_0|q8_0|q4_K)|quant_rows_q4_0|cpy_contig/} keep' /tmp/lib.sass | gzip > $out/sass.txt.gz
echo "done $(( $(date +%s) - t0 )) s"
