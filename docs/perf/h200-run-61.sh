#!/usr/bin/env bash
# Device call 61 (session 12): call 60's probe on whatever card comes (call 60 got an H100),
# at two sizes (1 GiB and 256 MiB, each with its sixteenth), so the fixed cost of a launch
# shows beside the rate; the final tree's large GET_ROWS and CPY; ct-ops test of the row ops
# (NVIDIA keeps its half conversion, device.c). Session 13 put the tests before perf, for what device
# time was left; it never ran: the device time ran out (NOTES-h200.md, session 13).
set -uo pipefail
out=$1
. docs/perf/h200-lib.sh
ct_build . /tmp/ct-new 16 &
gcc -O2 -o /tmp/probe-rows docs/perf/h200-probe-rows.c -lOpenCL -lm &&
  { /tmp/probe-rows 1024; /tmp/probe-rows 256; } > $out/probe.txt 2>&1
cat $out/probe.txt; echo "probe $(ct_since) s"
wait
x=/tmp/ct-new/tools/ct-ops
dev=$(ct_nv_device $x)
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-61
# tests before perf: the device time left for this call (session 13) may not cover both
timeout 90 $x test -b $dev -o GET_ROWS,SET_ROWS,CPY > /tmp/t.txt 2>&1; rc=$?
grep -i fail /tmp/t.txt | head -3; tail -1 /tmp/t.txt | tee $out/tests.txt; echo "ct-ops test rc=$rc" | tee -a $out/tests.txt
echo "tests $(ct_since) s"
timeout 40 $x perf -b $dev -o GET_ROWS -p "n=4096,m=32768,r=16384" --json --min-time 0.1 > $out/perf-getrows.json 2>> /tmp/perf.err
ct_show $out/perf-getrows.json
timeout 40 $x perf -b $dev -o CPY -p "ne=[4096,4096" --json --min-time 0.1 > $out/perf-cpy.json 2>> /tmp/perf.err
ct_show $out/perf-cpy.json; echo "total $(ct_since) s"
