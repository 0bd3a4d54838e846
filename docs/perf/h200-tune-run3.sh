#!/usr/bin/env bash
# Device call 3 (final) of the OpenCL bandwidth tuning: build, check the changed ops and the
# OpenCL test programs on the NVIDIA device, time the changed ops; at most 4 files in OUT.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s); ops=CPY,GET_ROWS,MUL_MAT,DUP,CONT,NORM,RMS_NORM,L2_NORM
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "build $(( $(date +%s) - t0 )) s, device $dev"
{ timeout 60 $x test -b "$dev" -o $ops; echo "ct-ops test rc=$?"
  for t in test_opencl_rows test_opencl_math; do CT_TEST_OPENCL_DEVICE=$dev timeout 30 $b/tests/$t; echo "$t rc=$?"; done; } > $out/test.txt 2>&1
grep -E "passed|rc=|checks" $out/test.txt | tail -8; grep FAIL $out/test.txt | head -8
timeout 130 $x perf -b "$dev" --json -o $ops --min-time 0.2 > $out/perf.json 2> $out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
f=$(ls -S /tmp/ct-opencl-cache/* 2>/dev/null | head -1); [ -n "$f" ] && tr -d '\000' < "$f" | sed -n '/^\.version/,$p' > $out/lib.ptx
python3 - $out/perf.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: d=json.loads(l)
    except Exception: continue
    if d.get('type')=='device': print('copy', d.get('copy_gbps')); continue
    if d.get('status')!='ok': continue
    c=d['case'].replace('permute_','p').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','')
    print('%-58s %8.1f %6.0f'%(c[:58],d['us_per_run'],d['gbps']))
PY
