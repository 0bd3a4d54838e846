#!/usr/bin/env bash
# Device call 4 (session 2, first call): the new perf harness (many ops per compute over
# rotating input sets; copy reference = faster of our CPY kernel and clEnqueueCopyBuffer)
# on the kernels as they were; the 1000-node graph for several flush intervals.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
b=/tmp/ct-build; t0=$(date +%s)
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
x=$b/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "build $(( $(date +%s) - t0 )) s, device $dev"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  CT_TEST_OPENCL_DEVICE=$dev timeout 60 $b/tests/test_opencl | tail -1; echo "test_opencl rc=$?"; } > $out/test.txt 2>&1
cat $out/test.txt
for f in 0 1 4 16 64; do
  echo "flush_every=$f: $(CT_OPENCL_FLUSH_EVERY=$f timeout 30 $x perf -b $dev -o CHAIN --min-time 0.3 | grep -o '[0-9.]* us/node')"
done | tee $out/chain.txt
timeout 400 $x perf -b "$dev" --json --min-time 0.1 > $out/perf.json 2> $out/perf.err; echo "perf rc=$? $(( $(date +%s) - t0 )) s"
tail -3 $out/perf.err
python3 - $out/perf.json <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: d=json.loads(l)
    except Exception: continue
    if d.get('type')=='device': print('copy kernel %.0f driver %.0f'%(d.get('copy_kernel_gbps'),d.get('copy_driver_gbps'))); continue
    if d.get('status')!='ok': continue
    c=d['case'].replace('permute_','p').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0','').replace('type_','')
    if d['bytes_per_run']<4e6: continue
    print('%-60s %8.1f %6.0f %4.2f %d/%d'%(c[:60],d['us_per_run'],d['gbps'],d['bw_frac'],d['ops_per_compute'],d['input_sets']))
PY
