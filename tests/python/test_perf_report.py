"""scripts/perf_report.py: the Markdown table and the PNG chart from `ct-ops perf --json`
(a short real run on the CPU, and hand-written records in the earlier schema-less
form of the runs made before schema 1), a plain device label for OpenCL devices, and a clear message
with exit status 2 instead of a traceback when matplotlib is missing."""
import importlib.util
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from test_ct_ops import CT_OPS, json_lines  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "perf_report.py")
spec = importlib.util.spec_from_file_location("perf_report", SCRIPT)
perf_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(perf_report)
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None


def report(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=300)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", head[:8]
    return struct.unpack(">II", head[16:24])


# Two devices' worth of records as older ct-ops wrote them (no schema field).
OLD = [
    {"type": "device", "device": "OpenCL1", "description": "NVIDIA CUDA: NVIDIA H200", "copy_case": "CPY(...)",
     "copy_bytes": 2.7e8, "copy_gbps": 2000.0, "min_time": 0.1, "size_scale": 1},
    {"type": "perf", "device": "OpenCL1", "op": "GET_ROWS", "case": "GET_ROWS(type=f32,n=4096,m=32768,r=16384,b=1,v=0)",
     "status": "ok", "runs": 10, "us_per_run": 140.0, "best_us": 130.0, "bytes_per_run": 2.7e8, "gbps": 1900.0,
     "copy_gbps": 2000.0, "bw_frac": 0.95},
    {"type": "perf", "device": "OpenCL1", "op": "RMS_NORM", "case": "RMS_NORM(type=f32,ne=[8192,8192,1,1],v=0,eps=1e-06)",
     "status": "ok", "runs": 10, "us_per_run": 300.0, "best_us": 290.0, "bytes_per_run": 5.4e8, "gbps": 1000.0,
     "copy_gbps": 2000.0, "bw_frac": 0.5},
    {"type": "perf", "device": "OpenCL1", "op": "MUL_MAT",
     "case": "MUL_MAT(type_a=q4_0,type_b=f32,m=4096,n=512,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0)",
     "status": "ok", "runs": 10, "us_per_run": 4000.0, "best_us": 3900.0, "bytes_per_run": 3.3e7, "gbps": 8.0,
     "copy_gbps": 2000.0, "bw_frac": 0.004, "flops_per_run": 6e10, "gflops": 15000.0},
    {"type": "perf", "device": "OpenCL1", "op": "MUL_MAT", "case": "MUL_MAT(...)", "status": "not supported"},
]


class PerfReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, records):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in records))
        return path

    def test_real_run_table_and_chart(self):
        p = subprocess.run([CT_OPS, "perf", "--quick", "-b", "CPU", "-o", "GET_ROWS,SUM_ROWS,MEAN", "-p", "f32",
                            "--min-time", "0", "--json", "-q"], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        recs = json_lines(p.stdout)
        cases = [r for r in recs if r["type"] == "perf" and r["status"] == "ok"]
        self.assertGreaterEqual(len(cases), 3)
        path = os.path.join(self.dir, "cpu.json")
        with open(path, "w") as f:
            f.write(p.stdout)
        png = os.path.join(self.dir, "cpu.png")
        args = (path, "--png", png) if HAVE_MPL else (path,)
        r = report(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^ctensor CPU backend on .+ \(device CPU\): copy bandwidth [0-9.]+ GB/s")
        rows = [l for l in lines if l.startswith("| `")]
        self.assertEqual([l.split("`")[1] for l in rows], [c["case"] for c in cases])
        # one panel per op family: GET_ROWS alone, SUM_ROWS and MEAN together
        self.assertEqual([t for t, *_ in perf_report.panels_of(cases)], ["GET_ROWS", "reductions: SUM_ROWS, MEAN"])
        if not HAVE_MPL:
            self.skipTest("matplotlib is not installed (scripts/bootstrap.sh installs it): no PNG checked")
        w, h = png_size(png)
        self.assertGreater(w, 1000)
        self.assertGreater(h, 300)

    def test_old_records_and_device_label(self):
        path = self.write("h200.json", OLD)
        png = os.path.join(self.dir, "h200.png")
        r = report(path, "--png", png) if HAVE_MPL else report(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        head = r.stdout.splitlines()[0]
        # the hardware and ctensor's backend, not the OpenCL platform ("NVIDIA CUDA")
        self.assertTrue(head.startswith("ctensor OpenCL backend on NVIDIA H200 (device OpenCL1): "), head)
        self.assertNotIn("CUDA", head)
        self.assertEqual(perf_report.device_label({"device": "OpenCL0", "registration": "OpenCL",
                                                   "description": "Portable Computing Language: pthread-haswell-AMD EPYC"}),
                         "ctensor OpenCL backend on AMD EPYC via PoCL (device OpenCL0)")
        ok = [x for x in OLD if x.get("status") == "ok"]
        self.assertEqual([t for t, *_ in perf_report.panels_of(ok)],
                         ["GET_ROWS", "norms: NORM, RMS_NORM, L2_NORM, GROUP_NORM", "MUL_MAT, compute-bound (n=512)"])
        self.assertIn("| 15.00 |", r.stdout)  # TFLOP/s of the compute-bound case
        if HAVE_MPL:
            self.assertGreater(png_size(png)[1], 300)

    def test_newer_schema_refused(self):
        recs = [dict(OLD[0], schema=2)]
        r = report(self.write("new.json", recs))
        self.assertEqual(r.returncode, 1)
        self.assertIn("schema 2", r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_without_matplotlib(self):
        # an importable package named matplotlib that fails as a missing one would
        fake = os.path.join(self.dir, "fake")
        os.makedirs(os.path.join(fake, "matplotlib"))
        with open(os.path.join(fake, "matplotlib", "__init__.py"), "w") as f:
            f.write("raise ImportError('no matplotlib')\n")
        env = dict(os.environ, PYTHONPATH=fake)
        png = os.path.join(self.dir, "x.png")
        r = report(self.write("h200.json", OLD), "--png", png, env=env)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--png needs matplotlib", r.stderr)
        self.assertIn("pip install matplotlib", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertFalse(os.path.exists(png))
        # the table alone does not need it
        r = report(self.write("h200.json", OLD), env=env)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
