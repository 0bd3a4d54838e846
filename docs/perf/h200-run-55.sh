#!/usr/bin/env bash
# Device call 55 (session 11): where the quantized mat-vec's time goes at n = 1, by
# timing-only trees (their results are wrong; perf does not check them): `stage`, each
# chunk's weight loads, local stores and barriers only (one stage word read a chunk);
# `decode`, those plus each lane decoding its units (no src1 loads, no dot products);
# `full`, the tree as it is.
set -uo pipefail
out=$1
. docs/perf/h200-lib.sh
f=src/opencl/kernels/mul_mvq.cl
ct_tree full; ct_tree stage; ct_tree decode
sed -i 's|^        const int u = base + lane;$|        if (1) { acc[0] += as_float(stage[lane]); continue; }\n&|' /tmp/stage/$f
sed -i 's|^            mvq_decode(t, (__local const uchar \*)(stage + r \* sw), lane, kv, &w\[r\]);$|&\
        if (1) { int s = 0; float g = 0.0f;\
            for (int r = 0; r < MVQ_NR0; r++) {\
                for (int k = 0; k < 16; k++) s ^= w[r].p[k] * w[r].m[k / 4];\
                g += w[r].a[0] + w[r].a[1] + w[r].b[0] + w[r].b[1] + (float)w[r].off;\
            }\
            acc[0] += (float)s + g; continue; }|' /tmp/decode/$f
grep -c "if (1)" /tmp/stage/$f /tmp/decode/$f
for t in full stage decode; do ct_build /tmp/$t /tmp/ct-$t 5 & done; wait
dev=$(ct_nv_device /tmp/ct-full/tools/ct-ops)
echo "device $dev; builds $(ct_since) s"
for t in full stage decode; do
  export CT_OPENCL_CACHE_DIR=/tmp/ct-cache-55-$t
  timeout 100 /tmp/ct-$t/tools/ct-ops perf -b "$dev" -o MUL_MAT -p "n=1," --json --min-time 0.1 > $out/perf-$t.json 2>> /tmp/perf.err
  echo "== $t ($(ct_since) s)"; ct_show $out/perf-$t.json | grep -v "a=f\|a=bf"
done
ct_ptx /tmp/ct-cache-55-decode $out/decode.ptx.gz
tail -3 /tmp/perf.err | cut -c1-300
echo "total $(ct_since) s"
