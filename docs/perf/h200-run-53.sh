#!/usr/bin/env bash
# Device call 53 (session 11): the tree session 10 ended on, which has not run on the H200
# (its unstaged mat-vec kernels went back to session 8's local layout after call 52): the
# tests, mat-vec n = 1 and 2 (call 52 saw q6_K n = 2 at 27% against 45% before); whether
# Nsight Compute sees the OpenCL driver's kernels (never tried here); the mat-vec kernels'
# registers (ptxas -v on the driver's PTX, run here afterwards).
set -uo pipefail
out=$1
. docs/perf/h200-lib.sh
ct_build . /tmp/ct 16
x=/tmp/ct/tools/ct-ops
dev=$(ct_nv_device $x)
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-53 CT_TEST_OPENCL_DEVICE=$dev
echo "device $dev; build $(ct_since) s"
{ timeout 100 $x test -b $dev > /tmp/t.txt 2>&1; rc=$?; grep -i "fail" /tmp/t.txt | head -5; tail -1 /tmp/t.txt
  echo "ct-ops test rc=$rc $(ct_since) s"
  for t in test_opencl_math test_opencl_rows; do
    timeout 200 /tmp/ct/tests/$t > /tmp/$t.txt 2>&1; rc=$?
    grep -E "CHECK failed|NMSE|checks|cases" /tmp/$t.txt | tail -4; echo "$t rc=$rc $(ct_since) s"
  done
} > $out/tests.txt 2>&1
cat $out/tests.txt
for n in 1 2; do
  timeout 100 $x perf -b "$dev" -o MUL_MAT -p "n=$n," --json --min-time 0.1 >> $out/perf-mv.json 2>> /tmp/perf.err
done
echo "== mat-vec n = 1, 2 ($(ct_since) s)"; ct_show $out/perf-mv.json
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
echo "ncu: ${ncu:-none}"
if [ -n "$ncu" ]; then
  timeout 150 $ncu --clock-control none --target-processes all -k regex:mvq --launch-skip 4 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats \
    $x perf -b "$dev" -o MUL_MAT -p "type_a=q4_0,type_b=f32,m=16384,n=1," --min-time 0.01 > $out/ncu.txt 2>&1
  echo "ncu rc=$? ($(ct_since) s)"; grep -v "^ *$" $out/ncu.txt | head -150
fi
ct_ptx $CT_OPENCL_CACHE_DIR $out/lib.ptx.gz
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
