#!/usr/bin/env bash
# Device call 47 (session 10): the cp.async probe and stages with 16-byte aligned targets
# (call 46: local arguments are 8-byte aligned; a misaligned 16-byte cp.async faulted and
# poisoned the process). The probe's verdict; tests on the new tree; mat-vec n = 1 with
# cp.async (3 stages, 2 stages), register staging, the one-row kernel for every type
# (one), and session 8's kernels (old); n = 2-8 with cp.async.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
tree() { rm -rf /tmp/$1 && mkdir -p /tmp/$1 && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/$1; }
tree new; tree one; tree old && rm -rf /tmp/old/src && cp -r .ab-old/src /tmp/old/
sed -i 's/^        MM_QCASE8(\(Q[0-9]_0\))/        MM_QCASE(\1)/' /tmp/one/src/opencl/ops_mul_mat.c
echo "one: $(grep -c '^        MM_QCASE(' /tmp/one/src/opencl/ops_mul_mat.c) types with the one-row kernel"
for t in new one old; do
  (cmake -S /tmp/$t -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build /tmp/ct-$t -j5 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
done
wait
gcc -Iinclude docs/perf/h200-caps.c /tmp/ct-new/libctensor.a -lm -lpthread -ldl -o /tmp/caps
echo "builds $(( $(date +%s) - t0 )) s"
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-47-new
timeout 60 /tmp/caps $dev 2>&1 | grep -o "NVIDIA H200.*PTX cp.async [01]\|building.*failed.*" | cut -c1-300
show() {
python3 - "$1" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6 and not any('type_a=%s,'%t in d['case'] for t in ('f32','f16','bf16')):
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status')!='ok' and d.get('status')!='not supported': print(d.get('case'), d.get('status'), d.get('error','')[:300])
PY
}
{ timeout 100 $x test -b $dev > /tmp/t.txt 2>&1; rc=$?; grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-47-one timeout 60 /tmp/ct-one/tools/ct-ops test -b $dev -o MUL_MAT > /tmp/t1.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t1.txt | head -3; tail -1 /tmp/t1.txt; echo "one: ct-ops test -o MUL_MAT rc=$rc"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|NMSE|cases" /tmp/m.txt | tail -6; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for run in new s2 reg one old; do
  t=new; opts=""
  case $run in s2) opts="-DMVQ_STAGES=2";; reg) opts="-DCT_MVQ_ASYNC=0";; one|old) t=$run;; esac
  export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-47-$run CT_OPENCL_BUILD_OPTIONS="$opts"
  timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-mv-$run.json 2>> /tmp/perf.err
  echo "== $run"; show $out/perf-mv-$run.json; echo "$(( $(date +%s) - t0 )) s"
done
unset CT_OPENCL_BUILD_OPTIONS
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-47-new
left=$(( 570 - ($(date +%s) - t0) ))
for n in 2 4 8; do
  [ $left -gt 60 ] && timeout 50 $x perf -b "$dev" -o MUL_MAT -p "n=$n," --json --min-time 0.1
  left=$(( 570 - ($(date +%s) - t0) ))
done > $out/perf-mvn-new.json 2>> /tmp/perf.err
echo "== n = 2-8 new"; show $out/perf-mvn-new.json
tail -4 /tmp/perf.err | cut -c1-300
echo "total $(( $(date +%s) - t0 )) s"
