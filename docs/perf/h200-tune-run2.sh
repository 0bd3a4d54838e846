#!/usr/bin/env bash
# Device call 2 of the OpenCL bandwidth tuning: variants of the flat copy (CT_TUNE_CPY) and
# of the mat-vec (CT_TUNE_MV), ptxas resource report of the cached program, full perf.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s); ops=CPY,GET_ROWS,MUL_MAT,DUP,CONT
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >$out/build.txt 2>&1 || { tail -20 $out/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "build $(( $(date +%s) - t0 )) s, device $dev"
timeout 60 $x test -b "$dev" -o $ops > $out/test.txt 2>&1; echo "test rc=$? $(tail -1 $out/test.txt)"
for v in 24 14; do CT_TUNE_MV=$v timeout 40 $x test -b "$dev" -o MUL_MAT > $out/test_mv$v.txt 2>&1; echo "test mv$v rc=$? $(tail -1 $out/test_mv$v.txt)"; done
grep -h FAIL $out/test*.txt | head -5
for c in 1 2 4 8; do for r in 1 2; do CT_TUNE_CPY=$c $x perf -b "$dev" --json -o SUM_ROWS -p "ne=[4096,1,1,1]" --min-time 0.05 2>/dev/null | head -1 | sed "s/^/cpy$c: /" | grep -o 'cpy[0-9]: .*copy_gbps":[0-9.]*'; done; done
for v in base 24 14; do for n in 1 4 8; do
  CT_TUNE_MV=$v timeout 30 $x perf -b "$dev" --json -o MUL_MAT -p "m=4096,n=$n,k=14336" --min-time 0.1 > $out/mv_${v}_n$n.json 2>/dev/null
done; done
echo "variants done $(( $(date +%s) - t0 )) s"
pt=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
f=$(ls -S /tmp/ct-opencl-cache/* 2>/dev/null | head -1); echo "cache $f ptxas $pt"
if [ -n "$f" ] && [ -n "$pt" ]; then sed -n '/^\.version/,$p' "$f" > /tmp/lib.ptx; cp /tmp/lib.ptx $out/lib.ptx
  $pt -arch=sm_90 -v /tmp/lib.ptx -o /tmp/lib.cubin > $out/ptxas.txt 2>&1; echo "ptxas rc=$?"; fi
timeout 120 $x perf -b "$dev" --json -o $ops --min-time 0.2 > $out/perf.json 2> $out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
python3 - $out <<'PY'
import json,sys,glob,os
o=sys.argv[1]
for f in sorted(glob.glob(o+'/mv_*.json')):
    for l in open(f):
        d=json.loads(l)
        if d.get('status')=='ok': print(os.path.basename(f)[3:-5], d['case'][15:40], '%.1f'%d['us_per_run'])
PY
grep -A1 -E "Function properties for ct_(mul_mv_(q4_0|f32|q4_K)_f32(_v24|_v14)?|cpy_flat)$" $out/ptxas.txt | head -30
grep -E "Compiling entry function 'ct_(mul_mv_(q4_0|f32)_f32(_v24|_v14)?|cpy_flat)'" -A3 $out/ptxas.txt | grep -E "entry|registers" | head -20
