"""The README's table of ops and types per backend matches `ct-ops support`
(scripts/readme_ops.py --check), and the check fails on a table that differs."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from test_ct_ops import CT_OPS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "readme_ops.py")


def check(readme):
    return subprocess.run([sys.executable, SCRIPT, "--ct-ops", CT_OPS, "--check", readme], capture_output=True,
                          text=True)


def main():
    readme = os.path.join(ROOT, "README.md")
    p = check(readme)
    print(p.stdout + p.stderr, end="")
    if p.returncode != 0:
        return 1
    if "skipped" in p.stderr:
        return 0  # no PoCL device: nothing more to compare
    # the check can fail: a README whose table says REF lacks MEAN
    text = open(readme).read()
    bad = text.replace("| `MEAN` | f32 | yes | yes | yes |", "| `MEAN` | f32 | yes | — | yes |")
    assert bad != text, "README has no MEAN row"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "README.md")
        open(path, "w").write(bad)
        p = check(path)
        if p.returncode != 1 or "out of date" not in p.stderr or "-| `MEAN` | f32 | yes | — | yes |" not in p.stderr:
            print("the check passed a wrong table:", p.returncode, p.stdout, p.stderr)
            return 1
    print("a changed table is caught")
    return 0


if __name__ == "__main__":
    sys.exit(main())
