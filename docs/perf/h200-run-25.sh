#!/usr/bin/env bash
# Device call 25 (session 6): why replay saves little on this driver. The command-buffer probe
# (h200-probe-cmdbuf.c: enqueue vs a replayed command buffer with and without sync points, and
# whether the recorded order holds without them), the launch probe of call 19, and the library's
# 1000-node graph built twice: as committed (each recorded launch waits on the one before through a
# sync point) and with the sync points dropped (sed on a copy of the tree), replay on and off.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
gcc -O2 docs/perf/h200-probe-cmdbuf.c -o /tmp/probe-cmdbuf -lOpenCL 2>/dev/null &&
  gcc -O2 docs/perf/h200-probe-launch.c -o /tmp/probe-launch -lOpenCL 2>/dev/null
/tmp/probe-cmdbuf | tee $out/probe-cmdbuf.txt
/tmp/probe-launch | tee $out/probe-launch.txt
rm -rf /tmp/ct-nosync && mkdir /tmp/ct-nosync && cp -r CMakeLists.txt cmake src include tools tests fuzz /tmp/ct-nosync/
sed -i 's/have_last ? 1 : 0,/0,/; s/have_last ? &last : NULL, &last, NULL);/NULL, NULL, NULL);/' \
  /tmp/ct-nosync/src/opencl/graph_replay.c
grep -n "ndrange(cb" -A1 /tmp/ct-nosync/src/opencl/graph_replay.c
for t in new nosync; do
  srcdir=.; [ $t = nosync ] && srcdir=/tmp/ct-nosync
  cmake -S $srcdir -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build /tmp/ct-$t -j16 --target ct-ops >/tmp/build-$t.txt 2>&1 || { tail -20 /tmp/build-$t.txt; exit 1; }
done
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
for r in 1 2; do for t in new nosync; do for mode in 1 0; do
  printf '%-7s replay=%s ' $t $mode
  CT_OPENCL_GRAPH_REPLAY=$mode timeout 40 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o CHAIN --min-time 0.3 | tail -1
done; done; done
echo "total $(( $(date +%s) - t0 )) s"
