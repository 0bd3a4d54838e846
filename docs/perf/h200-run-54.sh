#!/usr/bin/env bash
# Device call 54 (session 11): a spare word after each even-sized unit (Q4_1, Q5_1) or
# super-block (Q4_K, Q5_K) in the mat-vec's weight stage, so the decode's local loads
# hit 32 banks (they had 2- and 4-way conflicts). Tests on the new tree; mat-vec n = 1,
# 2, 4, 8 new against old (session 10's final tree, commit 7cd65d2, as a git worktree at
# $OLD, default .ab-old-tree: `git worktree add .ab-old-tree 7cd65d2 && echo /.ab-old-tree/
# >> .git/info/exclude`, and the device call carries .ab-old-tree).
set -uo pipefail
out=$1
old=${OLD:-.ab-old-tree}
. docs/perf/h200-lib.sh
ct_build . /tmp/ct-new & ct_build $old /tmp/ct-old & wait
x=/tmp/ct-new/tools/ct-ops
dev=$(ct_nv_device $x)
export CT_TEST_OPENCL_DEVICE=$dev
echo "device $dev; builds $(ct_since) s"
{ CT_OPENCL_CACHE_DIR=/tmp/ct-cache-54-new timeout 100 $x test -b $dev -o MUL_MAT > /tmp/t.txt 2>&1; rc=$?
  grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt; echo "ct-ops test -o MUL_MAT rc=$rc"
  CT_OPENCL_CACHE_DIR=/tmp/ct-cache-54-new timeout 150 /tmp/ct-new/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
  grep -E "CHECK failed|NMSE|checks" /tmp/m.txt | tail -5; echo "test_opencl_math rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt; echo "tests $(ct_since) s"
for n in 1 2 4 8; do
  for t in new old; do
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-54-$t
    timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," --json --min-time 0.1 >> $out/perf-$t.json 2>> /tmp/perf.err
  done
  echo "n = $n: $(ct_since) s"
done
for t in new old; do echo "== $t"; ct_show $out/perf-$t.json | grep -v "a=f\|a=bf"; done
ct_ptx /tmp/ct-cache-54-new $out/lib.ptx.gz
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
