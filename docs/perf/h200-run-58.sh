#!/usr/bin/env bash
# Device call 58 (session 11): the 8-bit mat-vec kernels from a program of their own,
# built with -cl-nv-maxrregcount=128 where the device lists cl_nv_compiler_options
# (library.c), on call 57's kernels. Tests (ct-ops test, test_opencl_math, test_opencl
# with its new check of the second program); mat-vec n = 1, 2, 4, 8 against session
# 10's final tree (commit 7cd65d2 as a git worktree at $OLD, default .ab-old-tree,
# carried by the device call); registers of both programs (their PTX, ptxas -v here).
set -uo pipefail
out=$1
old=${OLD:-.ab-old-tree}
. docs/perf/h200-lib.sh
ct_build . /tmp/ct-new 8 & ct_build $old /tmp/ct-old 8 & wait
x=/tmp/ct-new/tools/ct-ops
dev=$(ct_nv_device $x)
export CT_TEST_OPENCL_DEVICE=$dev
echo "device $dev; builds $(ct_since) s"
{ CT_OPENCL_CACHE_DIR=/tmp/ct-cache-58-new timeout 100 $x test -b $dev > /tmp/t.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-58-new timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|NMSE|checks" /tmp/m.txt | tail -5; echo "test_opencl_math rc=$rc"
  timeout 150 /tmp/ct-new/tests/test_opencl > /tmp/o.txt 2>&1; rc=$?
  grep -E "CHECK|checks|mat-vec|FAIL" /tmp/o.txt | head -12; echo "test_opencl rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(ct_since) s"; ls /tmp/ct-cache-58-new
for n in 1 2 4 8; do
  for t in new old; do
    CT_OPENCL_CACHE_DIR=/tmp/ct-cache-58-$t timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," \
      --json --min-time 0.1 >> $out/perf-$t.json 2>> /tmp/perf.err
  done
  echo "n = $n: $(ct_since) s"
done
for t in new old; do echo "== $t"; ct_show $out/perf-$t.json | grep -v "a=f32\|a=bf"; done
for f in /tmp/ct-cache-58-new/*; do
  tag=$(basename $f | grep -o -- '-lib-\|-mvq-' | tr -d -); tail -c +33 $f | tr -d '\000' | gzip > $out/$tag.ptx.gz
done
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
