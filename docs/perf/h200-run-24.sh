#!/usr/bin/env bash
# Device call 24 (session 6): graph replay through cl_khr_command_buffer. The tests on the NVIDIA device
# (ct-ops test, test_opencl with its replay test, test_stress computing graphs repeatedly, test_opencl_rows),
# then the 1000-node graph and the launch-bound small cases with replay on and off (CT_OPENCL_GRAPH_REPLAY=0).
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-new -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "NVIDIA device: $dev"
{ timeout 60 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  timeout 120 /tmp/ct-new/tests/test_opencl > /tmp/o.txt 2>&1; rc=$?
  grep -E "OpenCL[0-9]:|graph replay|CHECK failed|checks" /tmp/o.txt | tail -8; echo "test_opencl rc=$rc"
  timeout 120 /tmp/ct-new/tests/test_stress > /tmp/s.txt 2>&1; rc=$?
  grep -E "stressed|CHECK failed|checks" /tmp/s.txt | tail -8; echo "test_stress rc=$rc"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for mode in 1 0 1 0; do
  echo "== CT_OPENCL_GRAPH_REPLAY=$mode"
  CT_OPENCL_GRAPH_REPLAY=$mode timeout 40 $x perf -b "$dev" -o CHAIN --min-time 0.3 | tail -1
done
for mode in 1 0; do
  CT_OPENCL_GRAPH_REPLAY=$mode timeout 120 $x perf -b "$dev" -o RMS_NORM,SUM_ROWS,GET_ROWS --json \
    --min-time 0.05 > $out/perf-replay$mode.json 2> $out/perf$mode.err
done
python3 - $out/perf-replay1.json $out/perf-replay0.json <<'PY'
import json,sys
def load(p):
    r={}
    for l in open(p):
        d=json.loads(l)
        if d.get('status')=='ok': r[d['case']]=d
    return r
on,off=load(sys.argv[1]),load(sys.argv[2])
print('%-70s %10s %10s'%('case (us per op: replay on / off)','on','off'))
for c in on:
    if c in off:
        print('%-70s %10.2f %10.2f'%(c.replace('type_','')[:70],on[c]['us_per_run'],off[c]['us_per_run']))
PY
echo "total $(( $(date +%s) - t0 )) s"
