#!/usr/bin/env bash
# Device call 60 (session 12): why F16 -> F32 rows (GET_ROWS F16, CPY F16 -> F32) sit at
# 68-72% of the copy when the plain 1 : 2 mix ran at 97% (h200-probe-mix.c, session 5).
#   1. docs/perf/h200-probe-rows.c: the conversion and the row kernels' shape, a part at a time;
#   2. the library as it is (base) and with the temporary switches of common.cl, CT_TUNE_F16_MUL
#      (ct_half_to_float by a multiply of the exponent bits: mul), CT_TUNE_F16_INT (by the integer
#      path the library takes where the device's conversions are not exact: int) and CT_TUNE_I2F_MAG (the
#      dequantizers' integers to float by a magic-number add: mag), interleaved twice: GET_ROWS
#      and CPY at the large sizes, the F16 mat-vec at 16384^2, n = 1 and 4 (the same conversion),
#      n = 512 for F16 and Q4_0 at 4096 x 14336 (TFLOP/s);
#   3. both switches' bytes: ct-ops test of GET_ROWS, CPY and MUL_MAT, and test_opencl_rows.
set -uo pipefail
out=$1
. docs/perf/h200-lib.sh
ct_build . /tmp/ct-new 16 &
gcc -O2 -o /tmp/probe-rows docs/perf/h200-probe-rows.c -lOpenCL -lm && /tmp/probe-rows > $out/probe.txt 2>&1
cat $out/probe.txt; echo "probe $(ct_since) s"
wait
x=/tmp/ct-new/tools/ct-ops
dev=$(ct_nv_device $x)
echo "device $dev; $(ct_since) s"
variant() { # $1 base|mul|int|mag|both: the environment of that variant
  export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-60-$1
  case $1 in
    base) unset CT_OPENCL_BUILD_OPTIONS ;;
    mul) export CT_OPENCL_BUILD_OPTIONS=-DCT_TUNE_F16_MUL ;;
    int) export CT_OPENCL_BUILD_OPTIONS=-DCT_TUNE_F16_INT ;;
    mag) export CT_OPENCL_BUILD_OPTIONS=-DCT_TUNE_I2F_MAG ;;
    both) export CT_OPENCL_BUILD_OPTIONS="-DCT_TUNE_F16_MUL -DCT_TUNE_I2F_MAG" ;;
  esac
}
for run in 1 2; do
  vs="base mul int mag both"; [ $run = 2 ] && vs="base mul int both"
  for v in $vs; do
    variant $v
    { timeout 60 $x perf -b $dev -o GET_ROWS -p "n=4096,m=32768,r=16384" --json --min-time 0.1
      timeout 60 $x perf -b $dev -o CPY -p "ne=[4096,4096" --json --min-time 0.1
      timeout 60 $x perf -b $dev -o MUL_MAT -p "type_a=f16,type_b=f32,m=16384,n=1," --json --min-time 0.1
      timeout 60 $x perf -b $dev -o MUL_MAT -p "type_a=f16,type_b=f32,m=16384,n=4," --json --min-time 0.1
      for t in f16 q4_0; do timeout 60 $x perf -b $dev -o MUL_MAT -p "type_a=$t,type_b=f32,m=4096,n=512," --json --min-time 0.1; done
    } > /tmp/perf-$v-$run.json 2>> /tmp/perf.err
    cat /tmp/perf-$v-$run.json >> $out/perf-$v.json
    echo "$v run $run: $(ct_since) s"
  done
done
python3 - /tmp/perf-{base,mul,int,mag,both}-1.json /tmp/perf-{base,mul,int,both}-2.json <<'PY' | tee $out/summary.txt
import json, sys
frac, copy = {}, {}
for f in sys.argv[1:]:
    v = f.split('perf-')[1].rsplit('.', 1)[0]
    for l in open(f):
        d = json.loads(l)
        if d.get('type') == 'device': copy.setdefault(v, []).append(d['copy_gbps'])
        elif d.get('status') == 'ok' and d['bytes_per_run'] >= 4e6:
            c = d['case'].replace('type_', '').split(',permute_dst')[0].split(',bs=')[0]
            frac.setdefault(c, {})[v] = ('%5.1f %3.0f%%' % (d['us_per_run'], 100 * d['bw_frac']) if 'n=512' not in c
                                         else '%.1f TF' % (d['gflops'] / 1e3))
vs = [f.split('perf-')[1].rsplit('.', 1)[0] for f in sys.argv[1:]]
print('copy GB/s: ' + ', '.join('%s %.0f-%.0f' % (v, min(copy[v]), max(copy[v])) for v in vs if v in copy))
print('%-62s' % 'case (us, % of copy)' + ''.join('%11s' % v for v in vs))
for c, r in frac.items(): print('%-62s' % c[:62] + ''.join('%11s' % r.get(v, '-') for v in vs))
PY
variant both
{ timeout 120 $x test -b $dev -o GET_ROWS,CPY,MUL_MAT | tail -1; echo "ct-ops test (both) rc=$?"
  CT_TEST_OPENCL_DEVICE=$dev timeout 200 /tmp/ct-new/tests/test_opencl_rows > /tmp/r.txt 2>&1; rc=$?
  grep -E "CHECK failed|checks" /tmp/r.txt | tail -4; echo "test_opencl_rows (both) rc=$rc"
} > $out/tests.txt 2>&1
cat $out/tests.txt
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
