#!/usr/bin/env bash
# Device call 50 (session 10): the fused mat-vec for one src1 row (the work-group quantizes
# the row into local memory itself: one launch a node instead of two; call 48 measured the
# mat-vec alone at 53% / 75% of copy for q4_0 at 4096 x 14336 / 16384^2, against 44% / 69%
# with the quantizing kernel before it). Tests on the new tree, then mat-vec n = 1 fused
# (new) against the two-kernel path of the same tree (two: mvqf_applies returns false),
# twice interleaved.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
tree() { rm -rf /tmp/$1 && mkdir -p /tmp/$1 && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/$1; }
tree new; tree two
sed -i 's|    if (b->ne\[1\] != 1 \|\| k->mvqf == CT_OCL_K_COUNT|    if (1 \|\| b->ne[1] != 1 \|\| k->mvqf == CT_OCL_K_COUNT|' /tmp/two/src/opencl/ops_mul_mat.c
grep -c "if (1 ||" /tmp/two/src/opencl/ops_mul_mat.c
for t in new two; do
  (cmake -S /tmp/$t -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build /tmp/ct-$t -j8 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
done
wait
echo "builds $(( $(date +%s) - t0 )) s"
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
export CT_TEST_OPENCL_DEVICE=$dev
{ CT_OPENCL_CACHE_DIR=/tmp/ct-cache-50-new timeout 100 $x test -b $dev > /tmp/t.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-50-new timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|NMSE|checks" /tmp/m.txt | tail -5; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
show() {
python3 - "$1" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6 and not any('type_a=%s,'%t in d['case'] for t in ('f32','f16','bf16')):
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status') not in ('ok','not supported'): print(d.get('case'), d.get('status'), d.get('error','')[:300])
PY
}
for run in new1 two1 new2 two2; do
  t=${run%?}
  export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-50-$t
  timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-$run.json 2>> /tmp/perf.err
  echo "== $run"; show $out/perf-$run.json; echo "$(( $(date +%s) - t0 )) s"
done
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(( $(date +%s) - t0 )) s"
