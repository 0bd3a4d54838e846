#!/usr/bin/env bash
# Device call 20 (session 5), against the tree before the session's kernel changes (.devsrc,
# commit 9f0bb66) again: call 19's changes plus fp16 conversions by the device's own
# instructions (NaN fixed up by a select); all OpenCL tests on the NVIDIA device (among them
# the exhaustive half-conversion check of test_opencl_rows, both conversion paths); whether the
# driver has cl_khr_command_buffer.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
for v in new old; do
  srcdir=.; [ $v = old ] && srcdir=.devsrc
  cmake -S $srcdir -B /tmp/ct-$v -DCMAKE_BUILD_TYPE=Release -DCT_BUILD_TESTS=$([ $v = new ] && echo ON || echo OFF) >/dev/null &&
    cmake --build /tmp/ct-$v -j16 >/tmp/build-$v.txt 2>&1 || { tail -20 /tmp/build-$v.txt; exit 1; }
done
echo "built $(( $(date +%s) - t0 )) s"
# does the driver record command buffers (a graph replayed without one enqueue per node)?
gcc -O2 docs/perf/h200-probe-intdot.c -o /tmp/probe-intdot -lOpenCL && timeout 30 /tmp/probe-intdot 2>/dev/null |
  grep -o "NVIDIA H200\|cl_khr_command_buffer[a-z_]*" | sort -u > $out/command-buffer.txt
echo "command buffers:"; cat $out/command-buffer.txt
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ timeout 60 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  for t in test_opencl_rows test_opencl_math test_opencl; do
    CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/$t > /tmp/$t.txt 2>&1; rc=$?
    grep -E "CHECK failed|checks" /tmp/$t.txt | tail -4; echo "$t rc=$rc"
  done
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for v in new old; do
  timeout 70 /tmp/ct-$v/tools/ct-ops perf -b "$dev" -o SET_ROWS,GET_ROWS,CPY --json \
    --min-time 0.1 > $out/perf-$v.json 2> $out/perf-$v.err
  timeout 50 /tmp/ct-$v/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json \
    --min-time 0.1 >> $out/perf-$v.json 2>> $out/perf-$v.err
  echo "perf $v rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - $out/perf-old.json $out/perf-new.json <<'PY'
import json,sys
def load(f):
    r={}; cp=0
    for l in open(f):
        d=json.loads(l)
        if d.get('type')=='device': cp=d['copy_gbps']; continue
        if d.get('status')=='ok' and d['bytes_per_run']>=4e6: r[d['case']]=d
    return r,cp
o,co=load(sys.argv[1]); n,cn=load(sys.argv[2])
print('copy old %.0f new %.0f GB/s'%(co,cn))
for c in n:
    if c in o: print('%-62s %8.1f %8.1f us  %4.2f -> %4.2f'%(c.replace('type_','')[:62],o[c]['us_per_run'],n[c]['us_per_run'],o[c]['bw_frac'],n[c]['bw_frac']))
PY
