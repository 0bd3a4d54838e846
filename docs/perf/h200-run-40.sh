#!/usr/bin/env bash
# Device call 40 (session 8): the final team quantizers (shuffles; one word a statistic where one
# carries it; IQ4_NL's index by a 256-word table and its sums at an odd stride; 4 blocks a team for
# jobs of 2^20 work-items) against session 7's kernels (old: .ab-old/, as call 37 made it): rows
# perf at every size (new, for the tables), the large ones old / new again, tests, PTX.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
rm -rf /tmp/old && mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/old &&
  cp -r .ab-old/src /tmp/old/
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
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-40-new
timeout 150 $x perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json --min-time 0.1 > $out/perf-rows-new.json 2>> /tmp/perf.err
echo "== new, every size"; show $out/perf-rows-new.json; echo "$(( $(date +%s) - t0 )) s"
for run in old new2; do
    t=${run%[12]}
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-40-$t
    y=/tmp/ct-$t/tools/ct-ops
    { timeout 60 $y perf -b "$dev" -o SET_ROWS -p r=16384 --json --min-time 0.1
      timeout 60 $y perf -b "$dev" -o CPY -p "ne=[4096,4096" --json --min-time 0.1; } > $out/perf-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-$run.json | grep -E "q[0-9]|iq4"; echo "$(( $(date +%s) - t0 )) s"
done
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-40-new
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
f=$(ls $CT_OPENCL_CACHE_DIR | head -1)
tail -c +33 $CT_OPENCL_CACHE_DIR/$f | tr -d '\000' | gzip > $out/lib-new.ptx.gz
echo "total $(( $(date +%s) - t0 )) s"
