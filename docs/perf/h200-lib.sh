# Shared steps of the H200 device-call scripts from call 53 on (source it; earlier
# scripts carry their own copies). Registers NVIDIA's OpenCL driver with the ICD loader
# (it is installed but not registered on the device machine) and defines:
#   ct_tree NAME          copy of this working tree at /tmp/NAME (no build/, .git, .ab-*)
#   ct_build SRC DIR [J]  Release build of SRC in DIR (-jJ, default 8); its log's tail on failure
#   ct_nv_device BIN      the ct-ops name of the NVIDIA device (BIN: a ct-ops binary)
#   ct_show FILE [all]    a `ct-ops perf --json` file as lines: case, us, fraction of copy
#                         (default: cases of >= 4 MB; `all`: every size)
#   ct_ptx CACHE OUT      the driver's PTX from a program cache directory (32-byte header), gzipped
#   ct_since              seconds since this file was sourced
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd
ct_t0=$(date +%s)
ct_since() { echo $(( $(date +%s) - ct_t0 )); }
ct_tree() {
    rm -rf "/tmp/$1" && mkdir -p "/tmp/$1" &&
        tar --exclude=./build --exclude=./.git --exclude='./.ab-*' -cf - . | tar -xf - -C "/tmp/$1"
}
ct_build() {
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
        cmake --build "$2" -j"${3:-8}" >"$2.log" 2>&1 || { echo "build of $1 failed:"; tail -20 "$2.log"; }
}
ct_nv_device() { "$1" devices | awk '/^device [0-9]+: /{name=$3} /description:.*NVIDIA/{print name; exit}'; }
ct_show() {
    python3 - "$1" "${2:-large}" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get('type') == 'device':
        print('copy %.0f GB/s' % d['copy_gbps'])
    elif d.get('status') == 'ok' and (sys.argv[2] == 'all' or d['bytes_per_run'] >= 4e6):
        print('%-62s %8.1f us %4.2f' % (d['case'].replace('type_', '')[:62], d['us_per_run'], d['bw_frac']))
    elif d.get('status') not in ('ok', 'not supported'):
        print(d.get('case'), d.get('status'), d.get('error', '')[:300])
PY
}
ct_ptx() { local f; f=$(ls "$1" | head -1); tail -c +33 "$1/$f" | tr -d '\000' | gzip >"$2"; }
