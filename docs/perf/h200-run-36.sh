#!/usr/bin/env bash
# Device call 36 (session 7): the final tree's row tests on the H200, now with special fp16 block
# scales (inf, NaN with sign and payload, zeros, a subnormal) in one block of 8 of test_opencl_rows'
# edge data, which sends the kernels' exact NaN-rule decode through NVIDIA's own NaNs.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-cache-36
t0=$(date +%s)
cmake -S . -B /tmp/ct-new -DCMAKE_BUILD_TYPE=Release >/dev/null &&
  cmake --build /tmp/ct-new -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
{ echo "NVIDIA device: $dev"
  for seed in 1 2; do
    CT_TEST_OPENCL_DEVICE=$dev timeout 100 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
    grep -E "CHECK failed|checks" /tmp/r.txt | cut -c1-220 | tail -12; echo "test_opencl_rows rc=$rc"
  done
  timeout 60 $x test -b $dev -o GET_ROWS,CPY,SET_ROWS | tail -1; echo "ct-ops test rc=$?"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "total $(( $(date +%s) - t0 )) s"
