#!/usr/bin/env bash
# Device call 38 (session 8): where the quantizing row kernels' time goes. The shuffle team
# quantizers (shuffles now on: call 37's probe lacked them) with temporary diagnostic switches
# of set_rows.cl (wrong bits, timing only): no team exchange, no scale arithmetic, no quant
# output, all three; SET_ROWS of 16384 rows each; then the row tests and the PTX. The switches were
# never committed (removed after the call): NOXCHG ran the exchange loop zero times, NOSCALE set
# s = (c.x, c.y, c.x, 0) without division, NOOUT=1 skipped ct_qt_out_<t> (lane 0 still wrote scales).
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
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
i=0
for v in "" "-DCT_QT_TRY_NOXCHG" "-DCT_QT_TRY_NOSCALE" "-DCT_QT_TRY_NOOUT=1" \
         "-DCT_QT_TRY_NOXCHG -DCT_QT_TRY_NOSCALE -DCT_QT_TRY_NOOUT=1"; do
    i=$((i + 1))
    export CT_OPENCL_BUILD_OPTIONS="$v" CT_OPENCL_CACHE_DIR=/tmp/ct-cache-38-$i
    timeout 90 $x perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1 > $out/perf-v$i.json 2>> /tmp/perf.err
    echo "== variant $i: '$v'"; show $out/perf-v$i.json | grep -v -E "type=(f32|f16|bf16)"; echo "$(( $(date +%s) - t0 )) s"
done
unset CT_OPENCL_BUILD_OPTIONS
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-38-1
{ CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib-new.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
