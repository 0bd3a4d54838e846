#!/usr/bin/env bash
# Device call 37 (session 8): team quantizers by warp shuffles (no work-group barrier, per-slice
# staging) against session 7's kernels (old: commit c59595e's set_rows.cl, common.cl,
# ops_set_rows.c, ops_rows.h, kept in .ab-old/ over a copy of the tree): the quantizing SET_ROWS
# and CPY new / old / new, tests on the new tree, and the new library's PTX (ptxas -v off the device).
# .ab-old/ (not kept in the repository) was made before the call with
#   for f in src/opencl/kernels/set_rows.cl src/opencl/kernels/common.cl src/opencl/ops_set_rows.c \
#            src/opencl/ops_rows.h; do mkdir -p .ab-old/$(dirname $f); git show c59595e:$f > .ab-old/$f; done
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
rm -rf /tmp/old && mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/old &&
  cp -r .ab-old/src /tmp/old/
for t in new old; do
    src=.; [ $t = old ] && src=/tmp/old
    (cmake -S $src -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build /tmp/ct-$t -j8 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
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
for run in new1 old new2; do
    t=${run%[12]}
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-37-$t
    y=/tmp/ct-$t/tools/ct-ops
    { timeout 60 $y perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $y perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-$run.json; echo "$(( $(date +%s) - t0 )) s"
done
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-37-new
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib-new.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
