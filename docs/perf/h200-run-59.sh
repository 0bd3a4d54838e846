#!/usr/bin/env bash
# Device call 59 (session 11): test_opencl on the NVIDIA device (it now honours
# CT_TEST_OPENCL_DEVICE; before, it took device 0, PoCL there): the program cache, the
# build failure hook and the mat-vec kernels' register-capped program.
set -uo pipefail
out=$1
. docs/perf/h200-lib.sh
ct_build . /tmp/ct 16
dev=$(ct_nv_device /tmp/ct/tools/ct-ops)
echo "device $dev; build $(ct_since) s"
CT_TEST_OPENCL_DEVICE=$dev timeout 220 /tmp/ct/tests/test_opencl > $out/test_opencl.txt 2>&1
echo "test_opencl rc=$? $(ct_since) s"
grep -E "CHECK|checks|mat-vec|device |FAIL" $out/test_opencl.txt | head -20
