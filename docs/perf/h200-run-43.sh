#!/usr/bin/env bash
# Device call 43 (session 9): the 8-bit mat-vec with teams as warps (warp barriers, shuffle
# reduction, a team past the last row leaves), a y block at a time (8 value words live per
# row, not 16), and its chunks staged by cp.async MVQ_STAGES - 1 ahead without registers;
# against session 8's kernels (old: .ab-old/). Tests on the new tree (ct-ops test,
# test_opencl_math), mat-vec n = 1 new / stages 2 / register staging / old / new, n = 2-8
# new and old, the library's PTX.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
rm -rf /tmp/old && mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/src && cp -r .ab-old/src /tmp/old/
for t in new old; do
    src=/tmp/$t; [ $t = new ] && src=.
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
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-43-new
{ timeout 120 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks|NMSE" /tmp/m.txt | tail -6; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib-new.ptx.gz
echo "cp.async in the PTX: $(zcat $out/lib-new.ptx.gz | grep -c cp.async)"
for run in new1 s2 reg old new2; do
    t=new; opts=""
    case $run in s2) opts="-DMVQ_STAGES=2";; reg) opts="-DCT_MVQ_ASYNC=0";; old) t=old;; esac
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-43-$run CT_OPENCL_BUILD_OPTIONS="$opts"
    timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-mv-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-mv-$run.json | grep -v "f32\|f16"; echo "$(( $(date +%s) - t0 )) s"
done
unset CT_OPENCL_BUILD_OPTIONS
for t in new old; do
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-43-$t
    [ $t = old ] && export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-43-old
    [ $t = new ] && export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-43-new1
    for n in 2 4 8; do
        timeout 60 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," --json --min-time 0.1
    done > $out/perf-mvn-$t.json 2>> /tmp/perf.err
    echo "== n = 2-8 $t"; show $out/perf-mvn-$t.json | grep -v "f32\|f16"; echo "$(( $(date +%s) - t0 )) s"
done
tail -5 /tmp/perf.err
echo "total $(( $(date +%s) - t0 )) s"
