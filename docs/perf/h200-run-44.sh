#!/usr/bin/env bash
# Device call 44 (session 10): call 43 again, with the cp.async probe in a context of its own.
# First the probe's verdict and whether the library builds (caps), the library built by hand
# with -cl-nv-verbose (ptxas: registers and spills per kernel, or the error), then the tests
# and mat-vec n = 1 new / stages 2 / register staging / old, n = 2-8 new and old.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
rm -rf /tmp/old && mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git --exclude=./.ab-old -cf - . | tar -xf - -C /tmp/old
rm -rf /tmp/old/src && cp -r .ab-old/src /tmp/old/
for t in new old; do
    src=/tmp/$t; [ $t = new ] && src=.
    (cmake -S $src -B /tmp/ct-$t -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build /tmp/ct-$t -j8 >/tmp/build-$t.txt 2>&1 || tail -20 /tmp/build-$t.txt) &
done
gcc -O1 docs/perf/h200-build-log.c -lOpenCL -o /tmp/build-log &
wait
gcc -Iinclude docs/perf/h200-caps.c /tmp/ct-new/libctensor.a -lm -lpthread -ldl -o /tmp/caps
x=/tmp/ct-new/tools/ct-ops
dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
echo "NVIDIA device: $dev; builds $(( $(date +%s) - t0 )) s"
export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-44-new1
timeout 120 /tmp/caps $dev > $out/caps.txt 2>&1; echo "caps rc=$?"
grep -E "cp.async|error|fail" $out/caps.txt | cut -c1-400 | head -8
probe=$(grep -o "PTX cp.async [01] (cvta [01])" $out/caps.txt | head -1)
async=$(echo "$probe" | awk '{print $3}'); cvta=$(echo "$probe" | awk '{print $5}' | tr -d ')')
{ printf '#pragma OPENCL FP_CONTRACT OFF\n#define CT_HAS_SUBGROUPS 0\n#define CT_HAS_FP16 1\n#define CT_FP16_CONVERT 1\n'
  printf '#define CT_HAS_FP64 1\n#define CT_HAS_INT_DOT 0\n#define CT_HAS_NV_DP4A 1\n#define CT_HAS_NV_WARP 1\n'
  printf '#define CT_HAS_NV_ASYNC %s\n#define CT_NV_SHARED_CVTA %s\n#define CT_CORRECTLY_ROUNDED_DIV 1\n' "${async:-1}" "${cvta:-0}"
  printf '#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n'
  printf '#define CT_RAISE_ERROR(err, code) ((void)atomic_cmpxchg((volatile __global int *)(err), 0, (code)))\n'
  for f in $(ls src/opencl/kernels/*.cl | sort); do printf '#line 1 "%s"\n' $(basename $f); cat $f; echo; done
} > /tmp/all.cl
timeout 120 /tmp/build-log /tmp/all.cl "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -cl-nv-verbose" /tmp/all.ptx > $out/build-log.txt 2>&1
echo "build-log rc=$? (async ${async:-?} cvta ${cvta:-?}) $(( $(date +%s) - t0 )) s"
grep -v "^ptxas info\|^$" $out/build-log.txt | grep -iv "compiling entry\|function properties\|bytes stack\|registers" | head -12
grep -A3 "entry function '[a-z_]*mvq\|entry function '[a-z_]*mul_mv" $out/build-log.txt | grep -o "entry function '[a-z_0-9]*'\|Used [0-9]* registers\|[0-9]* bytes spill stores" | paste - - | head -30
[ -f /tmp/all.ptx ] && gzip -c /tmp/all.ptx > $out/all.ptx.gz && echo "cp.async in the PTX: $(grep -c cp.async /tmp/all.ptx)"
show() {
python3 - "$1" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l)
    if d.get('type')=='device': print('copy %.0f GB/s'%d['copy_gbps']); continue
    if d.get('status')=='ok' and d['bytes_per_run']>=4e6 and not any('type_a=%s,'%t in d['case'] for t in ('f32','f16','bf16')):
        print('%-62s %8.1f us %4.2f'%(d['case'].replace('type_','')[:62],d['us_per_run'],d['bw_frac']))
    elif d.get('status')!='ok': print(d.get('case'), d.get('status'), d.get('error',''))
PY
}
timeout 120 $x test -b $dev > /tmp/t.txt 2>&1; rc=$?; tail -2 /tmp/t.txt > $out/tests.txt; echo "ct-ops test rc=$rc" >> $out/tests.txt
cat $out/tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
for run in new1 reg old s2; do
    t=new; opts=""
    case $run in s2) opts="-DMVQ_STAGES=2";; reg) opts="-DCT_MVQ_ASYNC=0";; old) t=old;; esac
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-44-$run CT_OPENCL_BUILD_OPTIONS="$opts"
    timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-mv-$run.json 2>> /tmp/perf.err
    echo "== $run"; show $out/perf-mv-$run.json; echo "$(( $(date +%s) - t0 )) s"
done
unset CT_OPENCL_BUILD_OPTIONS
for t in new old; do
    export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-44-$t; [ $t = new ] && export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-44-new1
    for n in 2 4 8; do
        timeout 50 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=$n," --json --min-time 0.1
    done > $out/perf-mvn-$t.json 2>> /tmp/perf.err
    echo "== n = 2-8 $t"; show $out/perf-mvn-$t.json; echo "$(( $(date +%s) - t0 )) s"
done
tail -5 /tmp/perf.err
echo "total $(( $(date +%s) - t0 )) s"
