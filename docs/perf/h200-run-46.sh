#!/usr/bin/env bash
# Device call 46 (session 10): the cp.async probe faults (calls 43-44: after it every
# kernel build in the process fails with CL_UNKNOWN_ERROR); by hand all builds succeed
# (call 45). Here: what a local pointer cast to an integer is (no cp.async: cannot fault),
# and each form of the probe in a process of its own; then the library with the probe's
# answer forced (reg: no cp.async; plain; cvta), each in its own process, against old.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
tree() { rm -rf /tmp/$1 && mkdir -p /tmp/$1 && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/$1; }
tree old && rm -rf /tmp/old/src && cp -r .ab-old/src /tmp/old/
for t in reg plain cvta; do
  tree $t
  case $t in reg) p=false c=false;; plain) p=true c=false;; cvta) p=false c=true;; esac
  sed -i "s/const bool plain = probe_nv_async(d, false);/const bool plain = $p;/; s/d->nv_shared_cvta = !plain \&\& probe_nv_async(d, true);/d->nv_shared_cvta = $c;/" /tmp/$t/src/opencl/device.c
  grep -c "plain = $p;" /tmp/$t/src/opencl/device.c > /dev/null || echo "sed failed in $t"
done
for t in old reg plain cvta; do
  (cmake -S /tmp/$t -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build /tmp/ct-$t -j4 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
done
gcc -O1 docs/perf/h200-probe-run.c -lOpenCL -o /tmp/probe-run
gcc -O1 docs/perf/h200-build-log.c -lOpenCL -o /tmp/build-log
sed -n '/static const char \*const kernel =/,/";$/p' src/opencl/device.c | sed '1d' | sed 's/^ *"//; s/\\n"$//; s/\\n";$//; s/\\"/"/g' > /tmp/probe.body
mkdir -p /tmp/v; cp docs/perf/h200-addr.cl /tmp/v/addr.cl
{ echo "#define CVTA 0"; cat /tmp/probe.body; } > /tmp/v/probe0.cl
{ echo "#define CVTA 1"; cat /tmp/probe.body; } > /tmp/v/probe1.cl
grep -v "cp.async.cg" /tmp/v/probe0.cl | grep -v '"l"(in + n + 4 \* i)' > /tmp/v/probe0-4.cl
grep -v "cp.async.ca" /tmp/v/probe0.cl > /tmp/v/probe0-16.cl
{ for v in addr probe0 probe1 probe0-4 probe0-16; do
    echo "=== $v"; timeout 60 /tmp/probe-run /tmp/v/$v.cl 2>&1
  done
  timeout 60 /tmp/build-log /tmp/v/probe0.cl "" /tmp/v/probe0.ptx > /dev/null 2>&1
  echo "=== probe0's PTX"; grep -v "^\s*//\|^$" /tmp/v/probe0.ptx | sed -n '/\.entry/,$p' | head -60
} > $out/probe.txt 2>&1
cat $out/probe.txt | grep -v "^\s" | head -60
wait
echo "builds $(( $(date +%s) - t0 )) s"
x=/tmp/ct-old/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
show() {
python3 - "$1" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6 and not any('type_a=%s,'%t in d['case'] for t in ('f32','f16','bf16')):
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status')!='ok' and d.get('status')!='not supported': print(d.get('case'), d.get('status'), d.get('error','')[:300])
PY
}
for t in reg old plain cvta; do
  export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-46-$t
  timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-mv-$t.json 2>> /tmp/perf.err
  echo "== $t"; show $out/perf-mv-$t.json; echo "$(( $(date +%s) - t0 )) s"
done
tail -4 /tmp/perf.err | cut -c1-300
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-46-reg
{ timeout 100 /tmp/ct-reg/tools/ct-ops test -b $dev > /tmp/t.txt 2>&1; rc=$?; grep -i "fail" /tmp/t.txt | head -5; tail -2 /tmp/t.txt; echo "ct-ops test rc=$rc"
  left=$(( 560 - ($(date +%s) - t0) ))
  if [ $left -gt 30 ]; then
    CT_TEST_OPENCL_DEVICE=$dev timeout $left /tmp/ct-reg/tests/test_opencl_math > /tmp/m.txt 2>&1; rc=$?
    grep -E "CHECK failed|NMSE|cases" /tmp/m.txt | tail -6; echo "test_opencl_math rc=$rc (limit $left s)"
  fi
} > $out/tests.txt 2>&1
cat $out/tests.txt
echo "total $(( $(date +%s) - t0 )) s"
