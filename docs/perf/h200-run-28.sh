#!/usr/bin/env bash
# Device call 28 (session 6): the final tree on the H200: ct-ops test, test_opencl, test_stress,
# test_opencl_rows on the NVIDIA device, and the 1000-node graph twice.
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
{ timeout 90 $x test -b $dev | tail -1; echo "ct-ops test rc=$?"
  timeout 120 /tmp/ct-new/tests/test_opencl > /tmp/o.txt 2>&1; rc=$?
  grep -E "OpenCL[0-9]:|graph replay|CHECK failed|checks" /tmp/o.txt | tail -8; echo "test_opencl rc=$rc"
  timeout 120 /tmp/ct-new/tests/test_stress > /tmp/s.txt 2>&1; rc=$?
  grep -E "stressed|CHECK failed|checks" /tmp/s.txt | tail -8; echo "test_stress rc=$rc"
  CT_TEST_OPENCL_DEVICE=$dev timeout 150 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for r in 1 2; do timeout 40 $x perf -b "$dev" -o CHAIN --min-time 0.3 | tail -1; done
echo "total $(( $(date +%s) - t0 )) s"
