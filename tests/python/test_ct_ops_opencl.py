"""Runs `ct-ops test` on every OpenCL device against the CPU backend: the full case
list, byte for byte where the op is deterministic. In CI that is PoCL; where no
OpenCL device exists the test says so and passes (there is nothing to compare)."""
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
    failed = 0
    for dev in devices:
        p = subprocess.run([CT_OPS, "test", "-q", "-b", dev], capture_output=True, text=True, timeout=1200)
        lines = p.stdout.strip().splitlines()
        m = SUMMARY.match(lines[-1]) if lines else None
        print(f"{dev}: exit {p.returncode}: {lines[-1] if lines else '(no output)'}")
        for line in lines:
            if re.search(r": FAIL", line):
                print("  " + line)
        if p.returncode != 0 or not m or int(m.group(2)) != 0 or int(m.group(1)) == 0:
            failed += 1
            print(p.stderr[-2000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
