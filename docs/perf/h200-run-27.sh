#!/usr/bin/env bash
# Device call 27 (session 6): where the 1000-node graph's 7.7 us a node of host time goes (call 26).
# The launch-shape probe (h200-probe-launch-shape.c: 1-D vs 3-D, a __local argument or a fixed __local
# array), and a copy of the tree patched to print, per compute, the encoders' time, the hand-over's
# (clSetKernelArg + clEnqueueNDRangeKernel for every node) and the wait.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
gcc -O2 docs/perf/h200-probe-launch-shape.c -o /tmp/probe-shape -lOpenCL 2>/dev/null
/tmp/probe-shape | tee $out/probe-launch-shape.txt
rm -rf /tmp/ct-timed && mkdir /tmp/ct-timed &&
  tar --exclude=./build --exclude=./.git --exclude=./.devsrc -cf - . | tar -xf - -C /tmp/ct-timed
python3 - /tmp/ct-timed/src/opencl/backend.c <<'PY'
import sys
p=sys.argv[1]; s=open(p).read()
s=s.replace('#include <string.h>','#include <string.h>\n#include <time.h>\nstatic double ct_now_us(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}',1)
s=s.replace('    be->graph = graph;\n','    be->graph = graph;\n    const double T0 = ct_now_us();\n    double Te = 0;\n',1)
s=s.replace('    if (st == CT_OK && !per_node) st = ct_ocl_trace_submit(be, graph, true);','    Te = ct_now_us();\n    if (st == CT_OK && !per_node) st = ct_ocl_trace_submit(be, graph, true);',1)
s=s.replace('    be->graph = NULL;\n    return finish(be, graph, st);','    be->graph = NULL;\n    const double T1 = ct_now_us();\n    st = finish(be, graph, st);\n    if (getenv("CT_TIME_COMPUTE")) fprintf(stderr, "encode %.1f submit %.1f wait %.1f\\n", Te - T0, T1 - Te, ct_now_us() - T1);\n    return st;',1)
open(p,'w').write(s)
PY
grep -c CT_TIME_COMPUTE /tmp/ct-timed/src/opencl/backend.c
cmake -S /tmp/ct-timed -B /tmp/ct-timed/b -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-timed/b -j16 --target ct-ops >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-timed/b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
for r in 1 2; do
  CT_TIME_COMPUTE=1 timeout 40 $x perf -b "$dev" -o CHAIN --min-time 0.3 2> $out/chain-split-$r.txt | tail -1
  python3 - $out/chain-split-$r.txt <<'PY'
import sys,statistics
rows=[l.split() for l in open(sys.argv[1]) if l.startswith('encode ')]
rows=[r for r in rows if float(r[1])+float(r[3])>2000][-30:]   # the 1000-node computes
for i,name in ((1,'encode'),(3,'submit'),(5,'wait')):
    v=statistics.median(float(r[i]) for r in rows)
    print('  %-7s median %7.0f us = %.2f us/node (%d computes)'%(name,v,v/1000,len(rows)))
PY
done
echo "total $(( $(date +%s) - t0 )) s"
