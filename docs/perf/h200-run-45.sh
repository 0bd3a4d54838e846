#!/usr/bin/env bash
# Device call 45 (session 10): why the library with call 43's mat-vec does not build on
# NVIDIA (CL_UNKNOWN_ERROR, no log) and why the cp.async probe fails. The library source
# as the library makes it (NVIDIA's prelude: no fp16, no cp.async), built by hand in
# parallel: whole; with the old mul_mvq.cl; with one mat-vec kernel each; and the probe's
# kernel with and without cvta. -cl-nv-verbose: ptxas's registers and spills per kernel.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s)
gcc -O1 docs/perf/h200-build-log.c -lOpenCL -o /tmp/build-log
prelude() {
  printf '#pragma OPENCL FP_CONTRACT OFF\n#define CT_HAS_SUBGROUPS 0\n#define CT_HAS_FP16 0\n#define CT_FP16_CONVERT 0\n'
  printf '#define CT_HAS_FP64 1\n#define CT_HAS_INT_DOT 0\n#define CT_HAS_NV_DP4A 1\n#define CT_HAS_NV_WARP 1\n'
  printf '#define CT_HAS_NV_ASYNC %s\n#define CT_NV_SHARED_CVTA 0\n#define CT_CORRECTLY_ROUNDED_DIV 1\n' "$1"
  printf '#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n'
  printf '#define CT_RAISE_ERROR(err, code) ((void)atomic_cmpxchg((volatile __global int *)(err), 0, (code)))\n'
}
# library DIR ASYNC [only-kernel-line]
library() {
  prelude $2
  for f in $(ls $1/*.cl | sort); do
    printf '#line 1 "%s"\n' $(basename $f)
    if [ -n "${3:-}" ] && [ $(basename $f) = mul_mvq.cl ]; then
      grep -v "^MVQ_KERNEL1\?(" $f; echo "$3"
    else cat $f; fi
    echo
  done
}
mkdir -p /tmp/v
library src/opencl/kernels 0 > /tmp/v/new.cl
library src/opencl/kernels 1 > /tmp/v/new-async.cl
library .ab-old/src/opencl/kernels 0 > /tmp/v/old.cl
rm -rf /tmp/mix && cp -r src/opencl/kernels /tmp/mix && cp .ab-old/src/opencl/kernels/mul_mvq.cl /tmp/mix/
library /tmp/mix 0 > /tmp/v/new-oldmvq.cl
library src/opencl/kernels 0 " " > /tmp/v/new-nomvq.cl
grep "^MVQ_KERNEL1\?(" src/opencl/kernels/mul_mvq.cl | while read -r k; do
  n=$(echo "$k" | tr -c 'a-zA-Z0-9_\n' '_' | cut -c1-30)
  library src/opencl/kernels 0 "$k" > /tmp/v/k-$n.cl
done
sed -n '/static const char \*const kernel =/,/";$/p' src/opencl/device.c | sed '1d' | sed 's/^ *"//; s/\\n"$//; s/\\n";$//; s/\\"/"/g' > /tmp/probe.body
{ echo "#define CVTA 0"; cat /tmp/probe.body; } > /tmp/v/probe0.cl
{ echo "#define CVTA 1"; cat /tmp/probe.body; } > /tmp/v/probe1.cl
head -5 /tmp/v/probe0.cl
opts="-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt -cl-nv-verbose"
for f in /tmp/v/*.cl; do
  b=$(basename $f .cl)
  (timeout 300 /tmp/build-log $f "$opts" /tmp/v/$b.ptx > $out/log-$b.txt 2>&1; echo "rc=$?" >> $out/log-$b.txt) &
done
wait
echo "builds $(( $(date +%s) - t0 )) s"
for f in $out/log-*.txt; do
  echo "== $(basename $f .txt): $(grep -o '^clBuildProgram: -\?[0-9]*' $f) $(tail -1 $f)"
  grep -v "overriding noinline\|^ptxas info *: *\(Used\|Function properties\|Compiling\|Compile time\)\|bytes stack frame\|^$\|^clBuildProgram\|^rc=" $f | head -8
done
for b in new old new-oldmvq; do
  [ -f $out/log-$b.txt ] && echo "== $b mat-vec registers" &&
  grep -A3 "entry function '[a-z_0-9]*mv" $out/log-$b.txt | grep -o "entry function '[a-z_0-9]*'\|Used [0-9]* registers\|[0-9]* bytes spill stores" | paste -s -d' ' | sed "s/entry/\nentry/g" | head -40
done
for p in /tmp/v/old.ptx /tmp/v/probe0.ptx /tmp/v/new.ptx; do [ -f $p ] && echo "$p: $(grep -m2 '^\.version\|^\.target' $p | paste -s -d' ')"; done
for p in /tmp/v/probe*.ptx /tmp/v/new*.ptx; do [ -f $p ] && gzip -c $p > $out/$(basename $p).gz; done
echo "total $(( $(date +%s) - t0 )) s"
