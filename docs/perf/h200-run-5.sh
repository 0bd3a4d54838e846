#!/usr/bin/env bash
# Device call 5: mat-vec shape sweep. Builds copies of the tree with MV_NR0 (src0 rows per
# local row) and MV_WG (work-items per group) changed in both mul_mat.cl and ops_mul_mat.c,
# and times MUL_MAT n = 1, 4, 8 for each.
set -uo pipefail
out=$1
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CT_OPENCL_CACHE_DIR=/tmp/ct-opencl-cache
t0=$(date +%s)
for v in "2 128" "4 128" "8 128" "4 64" "8 64" "4 256"; do
  set -- $v; nr0=$1; wg=$2; s=/tmp/src-$nr0-$wg; b=/tmp/b-$nr0-$wg
  rm -rf $s; cp -r . $s
  sed -i "s/^#define MV_NR0 2 /#define MV_NR0 $nr0 /" $s/src/opencl/kernels/mul_mat.cl
  sed -i "s/MV_NR0 = 2,/MV_NR0 = $nr0,/; s/MV_WG = 128,/MV_WG = $wg,/" $s/src/opencl/ops_mul_mat.c
  grep -c "MV_NR0 $nr0 " $s/src/opencl/kernels/mul_mat.cl >/dev/null || echo "sed failed"
  cmake -S $s -B $b -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build $b -j16 >/tmp/build.txt 2>&1 || { tail -20 /tmp/build.txt; exit 1; }
  x=$b/tools/ct-ops
  dev=$($x devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}')
  timeout 40 $x test -b $dev -o MUL_MAT -p "n=1," > $out/test-$nr0-$wg.txt 2>&1; echo "nr0=$nr0 wg=$wg test rc=$? $(tail -1 $out/test-$nr0-$wg.txt)"
  for n in 1 4 8; do timeout 100 $x perf -b $dev --json -o MUL_MAT -p ",n=$n,k=1" --min-time 0.05; done > $out/perf-$nr0-$wg.json 2>/dev/null
  echo "  $(( $(date +%s) - t0 )) s"
done
python3 - $out <<'PY'
import json,sys,glob,collections
res=collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1]+'/perf-*.json')):
    v=f.split('perf-')[1][:-5]
    for l in open(f):
        d=json.loads(l)
        if d.get('type')=='device': continue
        if d.get('status')!='ok': continue
        c=d['case'].replace('MUL_MAT(type_a=','').replace(',type_b=f32','').replace(',bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0)','')
        res[c][v]=d['us_per_run']
vs=sorted({v for r in res.values() for v in r})
print('%-34s'%'case'+''.join('%9s'%v for v in vs))
for c,r in res.items(): print('%-34s'%c[:34]+''.join('%9.1f'%r.get(v,0) for v in vs))
PY
