#!/usr/bin/env bash
# Device call 32 (session 7): the session's kernels (new) against the session's start (old: commit
# 8dfa3ce's kernel sources, kept in .ab-old/ for the call, over a copy of the tree): rows perf new / old / new (the last with the small sizes too), tests on the
# new tree, and the new library's PTX (stack frames checked off the device with ptxas -v).
# .ab-old/ (not kept in the repository) was made before the call with
#   mkdir .ab-old && for f in common.cl get_rows.cl mul_mvq.cl; do git show 8dfa3ce:src/opencl/kernels/$f > .ab-old/$f; done
# (call 31 lacked mul_mvq.cl there, so its old tree did not build and its "old" run is empty).
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-cache-32
rm -rf $CT_OPENCL_CACHE_DIR
t0=$(date +%s)
rm -rf /tmp/old && mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C /tmp/old &&
  cp .ab-old/*.cl /tmp/old/src/opencl/kernels/
for t in new old; do
    src=.; [ $t = old ] && src=/tmp/old
    cmake -S $src -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build /tmp/ct-$t -j16 >/tmp/build-$t.txt 2>&1 || { tail -20 /tmp/build-$t.txt; exit 1; }
done
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
    y=/tmp/ct-${run%[12]}/tools/ct-ops
    opts=(-p r=16384); [ $run = new2 ] && opts=()   # the last run has every size, for the tables
    { timeout 60 $y perf -b "$dev" -o GET_ROWS "${opts[@]}" --json --min-time 0.1
      timeout 60 $y perf -b "$dev" -o CPY $([ $run = new2 ] || echo "-p ne=[4096,4096") --json --min-time 0.1
      timeout 60 $y perf -b "$dev" -o SET_ROWS "${opts[@]}" --json --min-time 0.1; } > $out/perf-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-$run.json; echo "$(( $(date +%s) - t0 )) s"
done
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
f=$(ls -t $CT_OPENCL_CACHE_DIR | tail -1)   # the first library built: the new tree's
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/new.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
