#!/usr/bin/env bash
# Device call 56 (session 11), after call 55's breakdown: IQ4_NL's lookup 8 indices a
# word (7 byte permutes), Q4_K/Q5_K scales by words without a branch, Q6_K staged by
# aligned words, and, for one src1 row, the lane's y loaded a chunk ahead (with the
# one-row kernels now for every type). Trees: `new` (all of it), `noahead` (new without
# the y loaded ahead), `old` (session 10's final tree, commit 7cd65d2, as a git worktree
# at $OLD, default .ab-old-tree, carried by the device call). Tests on new; mat-vec n = 1
# on all three, n = 2 and 8 on new and old.
set -uo pipefail
out=$1
old=${OLD:-.ab-old-tree}
. docs/perf/h200-lib.sh
ct_tree noahead
f=src/opencl/kernels/mul_mvq.cl
sed -i 's|    const int yahead = nr1max == 1 \&\& !ys;|    const int yahead = 0;|' /tmp/noahead/$f
grep -c "const int yahead = 0;" /tmp/noahead/$f
ct_build . /tmp/ct-new 5 & ct_build /tmp/noahead /tmp/ct-noahead 5 & ct_build $old /tmp/ct-old 5 & wait
x=/tmp/ct-new/tools/ct-ops
dev=$(ct_nv_device $x)
export CT_TEST_OPENCL_DEVICE=$dev
echo "device $dev; builds $(ct_since) s"
{ CT_OPENCL_CACHE_DIR=/tmp/ct-cache-56-new timeout 100 $x test -b $dev -o MUL_MAT > /tmp/t.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test -o MUL_MAT rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-56-new timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|NMSE|checks" /tmp/m.txt | tail -5; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(ct_since) s"
for t in new noahead old; do
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-56-$t timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," \
    --json --min-time 0.1 >> $out/perf-$t.json 2>> /tmp/perf.err
done
echo "n = 1: $(ct_since) s"
for n in 2 8; do
  for t in new old; do
    CT_OPENCL_CACHE_DIR=/tmp/ct-cache-56-$t timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," \
      --json --min-time 0.1 >> $out/perf-$t.json 2>> /tmp/perf.err
  done
  echo "n = $n: $(ct_since) s"
done
for t in new noahead old; do echo "== $t"; ct_show $out/perf-$t.json | grep -v "a=f\|a=bf"; done
ct_ptx /tmp/ct-cache-56-new $out/lib.ptx.gz
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
