#!/usr/bin/env bash
# Device call 52 (session 10): call 51's staged y only where it was faster: from 4 src1
# rows, in the kernels for q8_0, q4_1, q5_0, q5_1, q5_K, q6_K (ct_mul_mvqy_*); the other
# kernels as before but for their stages' 16-byte aligned start. Tests on the new tree;
# mat-vec n = 2, 4, 8 new against old (the parent commit, git worktree at $OLD, default
# .ab-old-tree: `git worktree add .ab-old-tree 3afe2c2 && echo /.ab-old-tree/ >> .git/info/exclude`,
# and the device call carries .ab-old-tree).
set -uo pipefail
out=$1
old=${OLD:-.ab-old-tree}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
(cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/ct-new -j8 >/tmp/build-new.txt 2>&1 || tail -20 /tmp/build-new.txt) &
(cmake -S $old -B /tmp/ct-old -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/ct-old -j8 >/tmp/build-old.txt 2>&1 || tail -20 /tmp/build-old.txt) &
wait
echo "builds $(( $(date +%s) - t0 )) s"
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
export CT_TEST_OPENCL_DEVICE=$dev
{ CT_OPENCL_CACHE_DIR=/tmp/ct-cache-52-new timeout 100 $x test -b $dev > /tmp/t.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-52-new timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
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
for n in 2 4 8; do
  for t in new old; do
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-52-$t
    timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," --json --min-time 0.1 >> $out/perf-$t.json 2>> /tmp/perf.err
  done
  echo "n = $n: $(( $(date +%s) - t0 )) s"
done
for t in new old; do echo "== $t"; show $out/perf-$t.json; done
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(( $(date +%s) - t0 )) s"
