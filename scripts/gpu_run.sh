#!/usr/bin/env bash
# On a machine with an NVIDIA GPU whose OpenCL driver is installed but not
# registered with the ICD loader: builds ctensor, then runs the OpenCL tests,
# `ct-ops test` and `ct-ops perf --json` on the NVIDIA device. Results go to
# the folder given as $1 (default ./gpu-results).
#   scripts/gpu_run.sh OUT_DIR [perf options...]
set -uo pipefail
out=${1:-gpu-results}; shift || true
mkdir -p "$out"
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
export CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
build=/tmp/ct-build
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build "$build" -j"$(nproc)" >/dev/null || exit 1
ops=$build/tools/ct-ops
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; } | tee "$out/machine.txt"
"$ops" devices | tee "$out/devices.txt"
dev=$("$ops" devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
[ -n "$dev" ] || { echo "no NVIDIA OpenCL device"; exit 1; }
echo "NVIDIA device: $dev"
for t in test_opencl test_opencl_rows test_opencl_math; do
  CT_TEST_OPENCL_DEVICE=$dev "$build/tests/$t" > "$out/$t.txt" 2>&1; echo "$t: exit $? ($(tail -1 "$out/$t.txt"))"
done
"$ops" test -b "$dev" > "$out/ct-ops-test.txt" 2>&1; echo "ct-ops test: exit $?"; tail -2 "$out/ct-ops-test.txt"
grep -E 'FAIL' "$out/ct-ops-test.txt" | head -20
"$ops" perf -b "$dev" --json "$@" > "$out/perf.json" 2> "$out/perf.err"; echo "ct-ops perf: exit $?"
tail -3 "$out/perf.err"
