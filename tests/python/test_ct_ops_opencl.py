"""Runs `ct-ops test` on every OpenCL device against the CPU backend: the full case
list, byte for byte where the op is deterministic, then the tensor-core kernels (MUL_MAT's tiles and
mat-vec, MUL_MAT_ID's tiles, FLASH_ATTN_EXT's kernel) on their emulation (CT_OPENCL_MMA_EMULATE=1). In CI that is PoCL; where no OpenCL
device exists the test says so and passes (there is nothing to compare)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from test_ct_ops import CT_OPS, SUMMARY, json_lines  # noqa: E402


def main():
    out = subprocess.run([CT_OPS, "devices", "--json"], capture_output=True, text=True, check=True).stdout
    devices = [d["device"] for d in json_lines(out) if d["type"] == "device" and d.get("registration") == "OpenCL"]
    if not devices:
        print("no OpenCL device: nothing to compare")
        return 0
    # then the tensor-core kernels on their portable emulation: MUL_MAT's tiles (kernels/mul_mm_tc.cl)
    # on the cases of 16 src1 rows, every type, partial tiles and broadcasts; its mat-vec
    # (kernels/mul_mv_tc.cl) on 2, 3, 8 and 9 rows: partial and whole column blocks, partial row
    # blocks, odd k, broadcasts and permuted sources; MUL_MAT_ID's whole list, whose grouped path runs
    # the same tiles. PoCL compiles the emulation slowly: the first run builds it, the others find it
    # in the program cache.
    emulate = {"CT_OPENCL_MMA_EMULATE": "1"}
    runs = [(dev, [], {}) for dev in devices]
    runs += [(dev, ["-o", "MUL_MAT", "-p", p], emulate) for dev in devices for p in ("n=16,", "n=2,", "n=3,", "n=8,", "n=9,")]
    runs += [(dev, ["-o", "MUL_MAT_ID"], emulate) for dev in devices]
    # FLASH_ATTN_EXT's whole list: its cases of F16 and block-type K/V with head sizes of multiples of
    # 16 up to 256 run the tensor-core kernel (kernels/flash_attn_tc.cl)
    runs += [(dev, ["-o", "FLASH_ATTN_EXT"], emulate) for dev in devices]
    failed = 0
    for dev, args, env in runs:
        p = subprocess.run([CT_OPS, "test", "-q", "-b", dev] + args, capture_output=True, text=True, timeout=1200,
                           env=dict(os.environ, **env))
        lines = p.stdout.strip().splitlines()
        m = SUMMARY.match(lines[-1]) if lines else None
        print(f"{dev} {' '.join(args)} {env or ''}: exit {p.returncode}: {lines[-1] if lines else '(no output)'}")
        for line in lines:
            if re.search(r": FAIL", line):
                print("  " + line)
        if p.returncode != 0 or not m or int(m.group(2)) != 0 or int(m.group(1)) == 0:
            failed += 1
            print(p.stderr[-2000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
