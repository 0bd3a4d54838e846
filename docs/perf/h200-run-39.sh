#!/usr/bin/env bash
# Device call 39 (session 8): the shuffle team quantizers with IQ4_NL's sum terms at an odd stride
# (call 38: its lanes 0 read one bank 8 at a time), at 2 blocks a team (new) and at 4 (nper4: a copy
# of the tree with CT_QT_NPER and CT_OCL_QT_NPER set to 4), against session 7's kernels (old: .ab-old/,
# as call 37 made it): quantizing SET_ROWS and CPY new / nper4 / old / new, tests on the new tree, PTX.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
for t in old nper4; do
    rm -rf /tmp/$t && mkdir -p /tmp/$t && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/$t
done
cp -r .ab-old/src /tmp/old/
sed -i 's/^#define CT_QT_NPER 2 /#define CT_QT_NPER 4 /' /tmp/nper4/src/opencl/kernels/set_rows.cl
sed -i 's/CT_OCL_QT_NPER = 2 }/CT_OCL_QT_NPER = 4 }/' /tmp/nper4/src/opencl/ops_rows.h
grep -c "CT_QT_NPER 4 \|CT_OCL_QT_NPER = 4" /tmp/nper4/src/opencl/kernels/set_rows.cl /tmp/nper4/src/opencl/ops_rows.h
for t in new old nper4; do
    src=/tmp/$t; [ $t = new ] && src=.
    (cmake -S $src -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build /tmp/ct-$t -j5 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
done
wait
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "NVIDIA device: $dev; builds $(( $(date +%s) - t0 )) s"
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
for run in new1 nper4 old new2; do
    t=${run%[12]}
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-39-$t
    y=/tmp/ct-$t/tools/ct-ops
    { timeout 60 $y perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $y perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-$run.json | grep -E "q[0-9]|iq4"; echo "$(( $(date +%s) - t0 )) s"
done
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-39-new
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib-new.ptx.gz
f=$(ls /tmp/ct-cache-39-nper4 | head -1)
tail -c +33 /tmp/ct-cache-39-nper4/$f | tr -d '\000' | gzip > $out/lib-nper4.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
