#!/usr/bin/env bash
# Device call 57 (session 11): call 56's tree with Q6_K staged by words only where its
# row and chunk are 4-byte aligned (a team-uniform choice; by halves otherwise), against
# session 10's final tree (commit 7cd65d2 as a git worktree at $OLD, default .ab-old-tree,
# carried by the device call): tests on new, mat-vec n = 1, 2, 4, 8. And the new library
# built with -cl-nv-maxrregcount=128 (CT_OPENCL_BUILD_OPTIONS), n = 1, 2, 8: at 4096 rows
# 512 groups of 128 make one wave only at 4 groups an SM, i.e. at most 128 registers.
set -uo pipefail
out=$1
old=${OLD:-.ab-old-tree}
. docs/perf/h200-lib.sh
ct_build . /tmp/ct-new 8 & ct_build $old /tmp/ct-old 8 & wait
x=/tmp/ct-new/tools/ct-ops
dev=$(ct_nv_device $x)
export CT_TEST_OPENCL_DEVICE=$dev
echo "device $dev; builds $(ct_since) s"
{ CT_OPENCL_CACHE_DIR=/tmp/ct-cache-57-new timeout 100 $x test -b $dev -o MUL_MAT > /tmp/t.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test -o MUL_MAT rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-57-new timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|NMSE|checks" /tmp/m.txt | tail -5; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(ct_since) s"
for n in 1 2 4 8; do
  for t in new old; do
    CT_OPENCL_CACHE_DIR=/tmp/ct-cache-57-$t timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," \
      --json --min-time 0.1 >> $out/perf-$t.json 2>> /tmp/perf.err
  done
  if [ $n != 4 ]; then
    CT_OPENCL_CACHE_DIR=/tmp/ct-cache-57-cap CT_OPENCL_BUILD_OPTIONS=-cl-nv-maxrregcount=128 timeout 100 $x perf -b "$dev" \
      -o MUL_MAT -p "n=$n," --json --min-time 0.1 >> $out/perf-cap.json 2>> /tmp/perf.err
  fi
  echo "n = $n: $(ct_since) s"
done
for t in new old cap; do echo "== $t"; ct_show $out/perf-$t.json | grep -v "a=f32\|a=bf"; done
ct_ptx /tmp/ct-cache-57-new $out/lib.ptx.gz
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
