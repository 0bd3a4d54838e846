#!/usr/bin/env bash
# Device call 34 (session 7): the final rows kernels (ct_rows8 for float rows of large jobs, block
# rows at 8 units through local memory): tests, rows perf at every size, the large rows twice more,
# mat-vec n = 1 (IQ4_NL's table lookups changed), and ptxas -v of the library.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-cache-34
rm -rf $CT_OPENCL_CACHE_DIR
t0=$(date +%s)
cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-new -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "NVIDIA device: $dev; build $(( $(date +%s) - t0 )) s"
show() {
python3 - "$1" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6:
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status')!='ok': print(d.get('case'), d.get('status'), d.get('error',''))
PY
}
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 120 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows.json 2>> /tmp/perf.err
echo "== rows, every size"; show $out/perf-rows.json; echo "$(( $(date +%s) - t0 )) s"
for rep in 2 3; do
    { timeout 60 $x perf -b "$dev" -o GET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $x perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1
      timeout 60 $x perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1; } > $out/perf-rows-$rep.json 2>> /tmp/perf.err
    echo "== large rows, run $rep"; show $out/perf-rows-$rep.json; echo "$(( $(date +%s) - t0 )) s"
done
timeout 100 $x perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-mv.json 2>> /tmp/perf.err
echo "== mat-vec n = 1"; show $out/perf-mv.json
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' > /tmp/lib.ptx
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
[ -n "$ptxas" ] && $ptxas -arch=sm_90 -v /tmp/lib.ptx -o /tmp/lib.cubin > /tmp/ptxas.txt 2>&1
# (call 34 also pulled the rows kernels out of that report into ptxas-rows.txt with a grep that
# mangled the lines; the stack check of this session was made off the device from calls 30-32 PTX)
echo "total $(( $(date +%s) - t0 )) s"
