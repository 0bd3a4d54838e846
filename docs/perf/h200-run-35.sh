#!/usr/bin/env bash
# Device call 35 (session 7): 16-byte loads for F16/BF16 rows (ct_rows8w) against 8-byte ones (ct_rows8,
# by the temporary switch CT_TRY_NO_WIDE=1, removed after the call), interleaved twice; tests; the PTX
# of the library (stack frames and registers checked off the device with ptxas -v). Outcome: wide lost
# (GET_ROWS F16 56-57% against 71-72%); ct_rows8w was removed after the call.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-cache-35
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
PY
}
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  for v in wide narrow; do
    if [ $v = narrow ]; then export CT_TRY_NO_WIDE=1; else unset CT_TRY_NO_WIDE; fi
    { timeout 60 $x perf -b "$dev" -o GET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $x perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-$v-$rep.json 2>> /tmp/perf.err
    echo "== $v, run $rep"; show $out/perf-$v-$rep.json | grep -E "f16|bf16|copy"; echo "$(( $(date +%s) - t0 )) s"
  done
done
unset CT_TRY_NO_WIDE
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
