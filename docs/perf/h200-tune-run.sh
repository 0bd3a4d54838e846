#!/usr/bin/env bash
# One device call of the OpenCL bandwidth tuning (docs/perf/NOTES-h200.md): builds, checks
# the changed ops against the CPU backend on the NVIDIA OpenCL device, then times them.
#   docs/perf/h200-tune-run.sh OUT OPS [perf seconds budget]
set -uo pipefail
out=$1; ops_list=$2; pbudget=${3:-120}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >$out/build.txt 2>&1 || { tail -20 $out/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
dev=$($b/tools/ct-ops devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "device $dev"
timeout 60 $b/tools/ct-ops test -b "$dev" -o "$ops_list" > $out/test.txt 2>&1; echo "test rc=$? $(tail -1 $out/test.txt)"
grep FAIL $out/test.txt | head -5
echo "test done $(( $(date +%s) - t0 )) s"
timeout "$pbudget" $b/tools/ct-ops perf -b "$dev" --json -o "$ops_list" --min-time 0.2 > $out/perf.json 2> $out/perf.err; echo "perf rc=$?"
echo "perf done $(( $(date +%s) - t0 )) s"
python3 - "$out/perf.json" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: d=json.loads(l)
    except Exception: continue
    if d.get('type')=='device': print('copy', d.get('copy_gbps')); continue
    if d.get('status')!='ok': continue
    c=d['case'].replace('permute_','p').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','')
    print('%-70s %9.1f us %7.0f GB/s %.3f'%(c[:70],d['us_per_run'],d['gbps'],d['bw_frac']))
PY
