#!/usr/bin/env bash
# Device call 26 (session 6): does NVIDIA's driver give the cl_khr_command_buffer entry points at all
# (call 25's probe found none through clGetExtensionFunctionAddressForPlatform), and where the 1000-node
# graph's time goes: a copy of the tree patched to print, per compute, the host's time to encode and hand
# over the graph and the time then spent waiting for the device.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
gcc -O2 docs/perf/h200-probe-cmdbuf.c -o /tmp/probe-cmdbuf -lOpenCL 2>/dev/null
/tmp/probe-cmdbuf | tee $out/probe-cmdbuf.txt
rm -rf /tmp/ct-timed && mkdir /tmp/ct-timed &&
  tar --exclude=./build --exclude=./.git --exclude=./.devsrc -cf - . | tar -xf - -C /tmp/ct-timed
python3 - /tmp/ct-timed/src/opencl/backend.c <<'PY'
import sys
p=sys.argv[1]; s=open(p).read()
s=s.replace('#include <string.h>','#include <string.h>\n#include <time.h>\nstatic double ct_now_us(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}',1)
s=s.replace('    be->graph = graph;\n','    be->graph = graph;\n    const double T0 = ct_now_us();\n',1)
s=s.replace('    be->graph = NULL;\n    return finish(be, graph, st);','    be->graph = NULL;\n    const double T1 = ct_now_us();\n    st = finish(be, graph, st);\n    if (getenv("CT_TIME_COMPUTE")) fprintf(stderr, "host %.1f wait %.1f us\\n", T1 - T0, ct_now_us() - T1);\n    return st;',1)
open(p,'w').write(s)
PY
grep -c CT_TIME_COMPUTE /tmp/ct-timed/src/opencl/backend.c
cmake -S /tmp/ct-timed -B /tmp/ct-timed/b -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-timed/b -j16 --target ct-ops >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-timed/b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
for r in 1 2; do
  CT_TIME_COMPUTE=1 timeout 40 $x perf -b "$dev" -o CHAIN --min-time 0.3 2> $out/chain-times-$r.txt | tail -1
  python3 - $out/chain-times-$r.txt <<'PY'
import sys,statistics
h=[];w=[]
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)>=4 and p[0]=='host': h.append(float(p[1])); w.append(float(p[3]))
h=h[2:];w=w[2:]
print('computes %d: host (encode + hand over) median %.0f us = %.2f us/node, wait median %.0f us = %.2f us/node'%(len(h),statistics.median(h),statistics.median(h)/1000,statistics.median(w),statistics.median(w)/1000))
PY
done
echo "total $(( $(date +%s) - t0 )) s"
