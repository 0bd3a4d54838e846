#!/usr/bin/env bash
# Device call 49 (session 10): the tests on the session's final tree (session 8's mat-vec,
# the warp shuffle and barrier moved from set_rows.cl to common.cl): ct-ops test,
# test_opencl_rows and test_opencl_math on the NVIDIA device.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
cmake -S . -B /tmp/ct -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/ct -j16 >/tmp/build.txt 2>&1 || tail -20 /tmp/build.txt
dev=$(/tmp/ct/tools/ct-ops devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-49 CT_TEST_OPENCL_DEVICE=$dev
{ echo "device $dev; build $(( $(date +%s) - t0 )) s"
  timeout 100 /tmp/ct/tools/ct-ops test -b $dev > /tmp/t.txt 2>&1; rc=$?; grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test rc=$rc"
  for t in test_opencl_rows test_opencl_math; do
    timeout 200 /tmp/ct/tests/$t > /tmp/$t.txt 2>&1; rc=$?
    grep -E "CHECK failed|NMSE|checks|cases" /tmp/$t.txt | tail -4; echo "$t rc=$rc $(( $(date +%s) - t0 )) s"
  done
} > $out/tests.txt 2>&1
cat $out/tests.txt
