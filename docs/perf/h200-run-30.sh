#!/usr/bin/env bash
# Device call 30 (session 7): A/B of two kernel variants selected by build options, on the
# unchanged default: CT_TRY_HALF_PTX (fp16 <-> fp32 by inline PTX cvt instead of vload_half /
# vstore_half_rte through a private address) and CT_TRY_UNIT_NAN (dequantized units decoded with
# plain operations, again with the x86 NaN rule only when a lane is NaN). Rows perf for each,
# tests for the combined one, and the driver's PTX of the default and combined libraries (SASS is
# made from it off the device).
# Ran on commit 8dfa3ce plus the two switches in common.cl (not committed as switches: after the
# call CT_TRY_UNIT_NAN's variant became the code, in 5f4dca3, and CT_TRY_HALF_PTX was dropped).
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
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
snap() { ls -t $CT_OPENCL_CACHE_DIR | head -1; }
i=0
for opt in "" "-DCT_TRY_HALF_PTX" "-DCT_TRY_UNIT_NAN" "-DCT_TRY_HALF_PTX -DCT_TRY_UNIT_NAN" ""; do
    echo "== options '$opt'"
    export CT_OPENCL_BUILD_OPTIONS="$opt"
    { timeout 60 $x perf -b "$dev" -o GET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $x perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-$i.json 2>> $out/perf.err
    [ $i = 0 ] && timeout 60 $x perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1 > $out/perf-set.json 2>> $out/perf.err
    show $out/perf-$i.json; [ $i = 0 ] && show $out/perf-set.json
    echo "cache file: $(snap)"; echo "$(snap) '$opt'" >> $out/cache-files.txt
    echo "$(( $(date +%s) - t0 )) s"; i=$((i+1))
done
export CT_OPENCL_BUILD_OPTIONS="-DCT_TRY_HALF_PTX -DCT_TRY_UNIT_NAN"
{ timeout 90 $x test -b $dev -o GET_ROWS,CPY,SET_ROWS,DUP,CONT | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for f in $(awk '{print $1}' $out/cache-files.txt | sort -u); do
    tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/$f.ptx.gz
done
ls -la $out; echo "total $(( $(date +%s) - t0 )) s"
