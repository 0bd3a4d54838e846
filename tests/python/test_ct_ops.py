"""Runs the built ct-ops tool: every subcommand, its exit codes and its output formats.

ct-ops is found through CT_OPS (set by ctest), else next to the library named by
CT_LIBRARY (<build>/tools/ct-ops)."""
import fcntl
import json
import os
import pty
import re
import select
import struct
import termios
import subprocess
import sys
import unittest

SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")


def find_ct_ops():
    path = os.environ.get("CT_OPS")
    if path:
        return path
    lib = os.environ.get("CT_LIBRARY")
    if not lib:
        sys.exit("neither CT_OPS nor CT_LIBRARY is set (run through ctest)")
    return os.path.join(os.path.dirname(lib), "tools", "ct-ops")


CT_OPS = find_ct_ops()


def run(*args, env=None, timeout=120):
    full_env = dict(os.environ)
    full_env.pop("CT_OPS_FAULT", None)
    if env:
        full_env.update(env)
    p = subprocess.run([CT_OPS, *args], capture_output=True, text=True, env=full_env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def json_lines(text):
    """Every line of a --json run: one object each, all with schema 1 and a type."""
    objs = [json.loads(line) for line in text.splitlines()]
    for o in objs:
        assert o.get("schema") == 1 and isinstance(o.get("type"), str), o
    return objs


def records(objs, kind):
    return [o for o in objs if o["type"] == kind]


def summary(stdout):
    m = SUMMARY.match(stdout.strip().splitlines()[-1])
    assert m, "no summary line in: " + stdout[-500:]
    return tuple(int(g) for g in m.groups())


class CtOps(unittest.TestCase):
    def test_devices(self):
        rc, out, err = run("devices")
        self.assertEqual(rc, 0, err)
        self.assertIn("device 0: CPU", out)
        self.assertIn("REF", out)
        self.assertRegex(out, r"buffer type: \S+ \(alignment \d+")
        rc, out, err = run("devices", "--json")
        self.assertEqual(rc, 0, err)
        objs = json_lines(out)
        self.assertEqual({k: objs[0][k] for k in ("type", "command")}, {"type": "run", "command": "devices"})
        self.assertRegex(objs[0]["ctensor"], r"^\d+\.\d+\.\d+")
        devices = records(objs, "device")
        names = [d["device"] for d in devices]
        self.assertEqual(names[0], "CPU")
        self.assertIn("REF", names)
        self.assertEqual((objs[0]["devices"], objs[0]["registrations"]), (len(devices), len(records(objs, "registration"))))
        for d in devices:
            self.assertGreater(d["memory_total"], 0)
            self.assertGreaterEqual(d["memory_total"], d["memory_free"])
            self.assertIn(d["device_type"], ("CPU", "GPU", "ACCEL"))
            self.assertGreater(d["buffer_type"]["alignment"], 0)
            self.assertGreater(d["buffer_type"]["max_size"], 0)
            self.assertEqual(set(d["caps"]), {"async", "host_buffer", "buffer_from_host_ptr", "events"})
        regs = {r["name"]: r["devices"] for r in records(objs, "registration")}
        self.assertIn("CPU", regs["CPU"])
        self.assertIn("REF", regs["REF"])

    def test_selfcheck(self):
        rc, out, err = run("selfcheck", "--seed", "7")
        self.assertEqual(rc, 0, out + err)
        m = re.match(r"^(\d+) passed, (\d+) failed$", out.strip().splitlines()[-1])
        self.assertTrue(m, out[-300:])
        self.assertGreater(int(m.group(1)), 20)
        self.assertEqual(int(m.group(2)), 0)
        self.assertRegex(out, r"\n\s+8 q8_0\s+32\s+34 yes\s+yes\s+yes")
        rc, out, err = run("selfcheck", "--json")
        self.assertEqual(rc, 0, out + err)
        objs = json_lines(out)
        types = {o["name"]: o for o in objs if o["type"] == "type"}
        self.assertEqual(len(types), 31)
        self.assertEqual((types["q4_K"]["block_size"], types["q4_K"]["bytes"]), (256, 144))
        self.assertTrue(types["iq4_nl"]["can_quantize"])
        self.assertTrue(types["q6_K"]["can_quantize"])
        self.assertFalse(types["iq2_xs"]["can_quantize"])
        self.assertTrue(types["q6_K"]["can_dequantize"])
        checks = [o for o in objs if o["type"] == "check"]
        self.assertTrue(all(c["ok"] for c in checks), [c for c in checks if not c["ok"]])
        self.assertTrue(any("fp16" in c["name"] for c in checks) and any("bf16" in c["name"] for c in checks))
        self.assertTrue(any("q4_0 quantize twice" in c["name"] for c in checks))
        self.assertEqual(objs[-1], {"schema": 1, "type": "summary", "passed": len(checks), "failed": 0})
        self.assertEqual((objs[0]["type"], objs[0]["command"]), ("run", "selfcheck"))

    def test_support(self):
        rc, out, err = run("support")
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"GET_ROWS\s+f32\s+yes\s+yes")
        rc, out, err = run("support", "--json", "-o", "GET_ROWS", "-b", "CPU")
        self.assertEqual(rc, 0, out + err)
        objs = json_lines(out)
        self.assertEqual((objs[0]["type"], objs[0]["command"], objs[0]["devices"]), ("run", "support", ["CPU"]))
        rows = records(objs, "support")
        self.assertEqual(objs[-1], {"schema": 1, "type": "summary", "rows": len(rows), "build_errors": 0})
        cells = {r["types"]: r["support"]["CPU"] for r in rows}
        self.assertEqual({r["op"] for r in rows}, {"GET_ROWS"})
        self.assertEqual(cells["f32"], "yes")
        self.assertEqual(cells["q4_0"], "yes")
        self.assertEqual(cells["iq2_xxs"], "no")  # no dequantizer for the IQ grids

    def test_full_cpu_against_ref(self):
        rc, out, err = run("test", "-b", "CPU", timeout=1200)
        self.assertEqual(rc, 0, "\n".join(l for l in out.splitlines() if "FAIL" in l)[:3000] + err[-1000:])
        passed, failed, skipped = summary(out)
        self.assertEqual(failed, 0)
        self.assertGreater(passed, 500)
        self.assertGreater(skipped, 0)  # the IQ grid types are not supported
        # by default no line per case: a table of ops whose counts add up to the total
        self.assertNotIn(": OK", out)
        self.assertNotIn("not supported [", out)
        # every op with cases has a row; the ops ct-ops always had must be among them
        table = {m.group(1): tuple(int(g) for g in m.groups()[1:])
                 for m in re.finditer(r"(?m)^  ([A-Z][A-Z_0-9]*) +(\d+) +(\d+) +(\d+)$", out)}
        for op in ("GET_ROWS", "SET_ROWS", "MUL_MAT", "CPY", "DUP", "CONT", "CAST", "RMS_NORM", "NORM", "L2_NORM",
                   "GROUP_NORM", "SUM_ROWS", "MEAN"):
            self.assertIn(op, table)
        for op, counts in table.items():
            self.assertGreater(counts[0], 0, op)
        self.assertEqual(tuple(sum(t[i] for t in table.values()) for i in range(3)), (passed, failed, skipped))
        self.assertLess(len(out.splitlines()), len(table) + 10)  # the table and a few lines around it
        self.assertIn("against REF", out)
        self.assertIn("\nCPU: %d passed, %d failed, %d not supported (" % (passed, failed, skipped), out)

    def test_verbose_prints_every_case(self):
        rc, out, err = run("test", "-b", "CPU", "-o", "SET_ROWS", "-p", "type=q4_0", "-v", "-q")
        self.assertEqual(rc, 0, out + err)
        passed, failed, skipped = summary(out)
        self.assertIn("  SET_ROWS(type=q4_0,ne=[256,5,1,3],nr23=[1,1],r=1,v=0): OK (bytes equal", out)
        self.assertEqual(len(re.findall(r"\n  SET_ROWS\(.*\): OK", out)), passed)
        self.assertEqual(len(re.findall(r"\n  SET_ROWS\(.*\): not supported \[", out)), skipped)
        self.assertEqual(err, "")

    def test_ref_against_cpu(self):
        rc, out, err = run("test", "-o", "GET_ROWS", "-b", "REF")
        self.assertEqual(rc, 0, out[-2000:] + err)
        passed, failed, _ = summary(out)
        self.assertGreater(passed, 40)
        self.assertEqual(failed, 0)
        self.assertIn("against CPU", out)
        self.assertNotIn("SET_ROWS", out)

    def test_json_and_filters(self):
        rc, out, err = run("test", "--json", "-b", "CPU", "-o", "SET_ROWS", "-p", "type=q4_0", "--seed", "3")
        self.assertEqual(rc, 0, out + err)
        objs = json_lines(out)
        self.assertEqual({k: objs[0][k] for k in ("type", "command", "seed", "devices")},
                         {"type": "run", "command": "test", "seed": 3, "devices": 1})
        cases = [o for o in objs if o["type"] == "case"]
        self.assertEqual(objs[0]["cases"], len(cases))
        ops = records(objs, "op")
        self.assertEqual([(o["device"], o["op"], o["passed"], o["failed"], o["not_supported"]) for o in ops],
                         [("CPU", "SET_ROWS", len(cases), 0, 0)])
        self.assertGreater(len(cases), 10)
        for c in cases:
            self.assertEqual((c["op"], c["device"], c["baseline"]), ("SET_ROWS", "CPU", "REF"))
            self.assertIn("type=q4_0", c["case"])
            self.assertEqual(c["status"], "OK", c)
            self.assertTrue(c["exact"])
        self.assertEqual(objs[-1]["type"], "summary")
        self.assertEqual((objs[-1]["passed"], objs[-1]["failed"]), (len(cases), 0))
        self.assertRegex(err, r"\d+ passed, 0 failed, 0 skipped")

    def test_same_seed_same_results(self):
        args = ("test", "--json", "-b", "CPU", "-o", "MUL_MAT", "-p", "type_a=f16,type_b=f32,m=16,", "--seed", "11")
        a = [(o.get("case"), o.get("nmse")) for o in json_lines(run(*args)[1])]
        b = [(o.get("case"), o.get("nmse")) for o in json_lines(run(*args)[1])]
        self.assertEqual(a, b)
        self.assertTrue(any(n is not None and n > 0 for _, n in a))  # MUL_MAT F16 differs a little from REF

    def test_detects_damage(self):
        # each check of the comparison fires when ct-ops damages a result on purpose
        for fault, what, ops in (("output", "bytes differ", "GET_ROWS,SET_ROWS,CPY,DUP"),
                                 ("output", "NMSE", "RMS_NORM,NORM"),
                                 ("sentinel", "sentinel", "GET_ROWS,MUL_MAT"),
                                 ("nan", "NaN", "SUM_ROWS,MEAN,L2_NORM")):
            rc, out, err = run("test", "-b", "CPU", "-o", ops, env={"CT_OPS_FAULT": fault})
            self.assertEqual(rc, 1, fault)
            passed, failed, _ = summary(out)
            self.assertGreater(failed, 5, fault)
            fails = [l for l in out.splitlines() if ": FAIL: " in l]
            self.assertEqual(len(fails), failed)
            self.assertTrue(any(what in l for l in fails), (fault, fails[:3]))

    def test_perf_quick(self):
        rc, out, err = run("perf", "--quick", "-o", "SET_ROWS", "-b", "CPU", "--json")
        self.assertEqual(rc, 0, out + err)
        objs = json_lines(out)
        self.assertEqual((objs[0]["type"], objs[0]["command"], objs[0]["cases"]), ("run", "perf", 27))
        dev = objs[1]
        self.assertEqual((dev["type"], dev["device"], dev["registration"]), ("device", "CPU", "CPU"))
        self.assertGreater(dev["copy_gbps"], 0)
        self.assertGreater(dev["copy_bytes"], 0)
        cases = [o for o in objs if o["type"] == "perf"]
        self.assertEqual(len(cases), 27)  # 9 destination types x 3 row counts
        types = set()
        for c in cases:
            self.assertEqual(c["op"], "SET_ROWS")
            self.assertEqual(c["status"], "ok", c)
            for key in ("runs", "us_per_run", "best_us", "bytes_per_run", "gbps", "bw_frac"):
                self.assertGreater(c[key], 0, (key, c))
            self.assertLessEqual(c["best_us"], c["us_per_run"])
            self.assertAlmostEqual(c["bw_frac"], c["gbps"] / dev["copy_gbps"], delta=1e-3 * c["bw_frac"] + 1e-9)
            types.add(re.match(r"SET_ROWS\(type=(\w+),", c["case"]).group(1))
        self.assertEqual(objs[-1], {"schema": 1, "type": "summary", "ok": 27, "not_supported": 0, "skipped": 0,
                                    "errors": 0, "devices": 1})
        self.assertEqual(types, {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"})
        # one F32 row of 4096 into F32: 4096*4 written + 4096*4 read + 8 index bytes
        one = [c for c in cases if c["case"].startswith("SET_ROWS(type=f32,") and ",r=1," in c["case"]][0]
        self.assertEqual(one["bytes_per_run"], 4096 * 4 * 2 + 8)

    def test_perf_copy_each(self):
        # each case's fraction is of a copy timed just before it, not of the device line's
        rc, out, err = run("perf", "--quick", "--copy-each", "-o", "SUM_ROWS,GET_ROWS", "-p", "f32", "-b", "CPU",
                           "--json", "--min-time", "0")
        self.assertEqual(rc, 0, out + err)
        objs = json_lines(out)
        cases = [o for o in objs if o["type"] == "perf" and o["status"] == "ok"]
        self.assertGreaterEqual(len(cases), 4)
        for c in cases:
            self.assertGreater(c["copy_gbps"], 0, c)
            self.assertAlmostEqual(c["bw_frac"], c["gbps"] / c["copy_gbps"], delta=1e-3 * c["bw_frac"] + 1e-9)
        # a fresh timing per case: a case's figure is the larger of its own CPY kernel copy and the
        # device line's buffer copy, so either some case differs from the device line or the buffer
        # copy (which is not retimed) is what they all carry
        dev = records(objs, "device")[0]
        self.assertTrue(any(c["copy_gbps"] != dev["copy_gbps"] for c in cases)
                        or all(c["copy_gbps"] == dev["copy_driver_gbps"] for c in cases), (dev, cases))
        rc, out, err = run("test", "--copy-each")
        self.assertEqual(rc, 2)
        self.assertIn("--copy-each", err)

    def test_perf_text(self):
        rc, out, err = run("perf", "--quick", "-o", "RMS_NORM,MUL_MAT", "-p", "n=512,k=14336", "-b", "CPU",
                           "--min-time", "0")
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(out, r"copy bandwidth [0-9.]+ GB/s")
        self.assertRegex(out, r"MUL_MAT\(type_a=f16,.*n=512.*\): \d+ runs, [0-9.]+ us/run, [0-9.]+ [KMGT]?FLOP/s")
        self.assertNotIn("RMS_NORM", out)  # -p applies to every op

    def test_json_schema_every_command(self):
        # one rule for every command: JSON Lines, each record {"schema": 1, "type": ...}, a run record first
        expect = {
            ("devices",): {"run", "registration", "device"},
            ("selfcheck", "--seed", "1"): {"run", "type", "check", "summary"},
            ("support", "-o", "SUM_ROWS"): {"run", "support", "summary"},
            ("test", "-b", "CPU", "-o", "SUM_ROWS", "-q"): {"run", "device", "case", "op", "summary"},
            ("perf", "--quick", "-b", "CPU", "-o", "SUM_ROWS", "--min-time", "0", "-q"):
                {"run", "device", "perf", "summary"},
        }
        fields = {"run": {"command", "ctensor"}, "device": {"device"}, "case": {"device", "op", "case", "status"},
                  "perf": {"device", "op", "case", "status"}, "support": {"op", "types", "support"},
                  "op": {"device", "op", "passed", "failed", "not_supported"}, "check": {"name", "ok"},
                  "registration": {"name", "devices"}, "type": {"id", "name"}, "summary": set()}
        for args, kinds in expect.items():
            rc, out, err = run(*args, "--json")
            self.assertEqual(rc, 0, (args, err))
            objs = json_lines(out)
            self.assertEqual((objs[0]["type"], objs[0]["command"]), ("run", args[0]), args)
            self.assertEqual(len(records(objs, "run")), 1, args)
            self.assertEqual({o["type"] for o in objs}, kinds, args)
            for o in objs:
                self.assertLessEqual(fields[o["type"]], set(o), (args, o))
            if "summary" in kinds:
                self.assertEqual(objs[-1]["type"], "summary", args)

    def test_progress_on_a_pipe(self):
        # stderr not a terminal: the case count, then plain lines (here one per case), then a done line
        rc, out, err = run("test", "-b", "CPU", "-o", "SUM_ROWS", env={"CT_OPS_PROGRESS_SECONDS": "0"})
        self.assertEqual(rc, 0, out + err)
        passed, failed, skipped = summary(out)
        n = passed + failed + skipped
        lines = err.splitlines()
        self.assertEqual(lines[0], "ct-ops test: %d cases on CPU (against REF)" % n)
        steps = [l for l in lines if l.startswith("[")]
        self.assertEqual(len(steps), n, err)
        for i, l in enumerate(steps):
            self.assertRegex(l, r"^\[%d/%d +\d+%%, about (\?|\d+ s) left\] CPU: SUM_ROWS\(" % (i + 1, n))
        self.assertRegex(lines[-1], r"^ct-ops test: %d cases done in \d+ s$" % n)
        self.assertNotIn("\r", err)
        # the default interval (seconds): a short run still shows the count and the first case
        rc, out, err = run("perf", "--quick", "-b", "CPU", "-o", "SUM_ROWS", "--min-time", "0")
        self.assertEqual(rc, 0, out + err)
        self.assertRegex(err, r"^ct-ops perf: \d+ cases .*\n\[1/\d+ +0%, about \? left\] CPU: SUM_ROWS\(")
        self.assertRegex(err, r"\nct-ops perf: \d+ cases done in \d+ s\n$")

    def test_progress_on_a_terminal(self):
        # stderr a terminal: one line redrawn with \r and erased (ESC [K); stdout stays clean
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 60, 0, 0))  # 60 columns
        env = dict(os.environ, CT_OPS_PROGRESS_SECONDS="0")
        env.pop("CT_OPS_FAULT", None)
        p = subprocess.Popen([CT_OPS, "test", "-b", "CPU", "-o", "SUM_ROWS,MEAN"], stdout=subprocess.PIPE,
                             stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            r, _, _ = select.select([master], [], [], 60)
            if not r:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        out = p.stdout.read().decode()
        p.stdout.close()
        self.assertEqual(p.wait(timeout=60), 0, out)
        os.close(master)
        err = b"".join(chunks).decode()
        passed, failed, skipped = summary(out)
        n = passed + failed + skipped
        self.assertIn("ct-ops test: %d cases" % n, err)
        redraws = re.findall(r"\r\[(\d+)/%d +\d+%%, about [^\]]+ left\] CPU: (SUM_ROWS|MEAN)\(" % n, err)
        self.assertEqual([int(k) for k, _ in redraws], list(range(1, n + 1)))
        self.assertIn("\x1b[K", err)
        # each redrawn line fits the terminal's 60 columns (cut with "..."), so \r returns to its start
        drawn = [seg.split("\x1b[K")[0] for seg in err.split("\r") if seg.startswith("[")]
        self.assertEqual(len(drawn), n)
        self.assertTrue(all(len(d) < 60 for d in drawn), drawn)
        self.assertTrue(any(d.endswith("...") for d in drawn), drawn)
        self.assertRegex(err, r"ct-ops test: %d cases done in \d+ s" % n)
        self.assertNotIn("\r", out)
        self.assertNotIn("[1/", out)

    def test_quiet(self):
        for args in (("test", "-b", "CPU", "-o", "SUM_ROWS"),
                     ("perf", "--quick", "-b", "CPU", "-o", "SUM_ROWS", "--min-time", "0")):
            for q in ("-q", "--quiet"):
                rc, out, err = run(*args, q, env={"CT_OPS_PROGRESS_SECONDS": "0"})
                self.assertEqual(rc, 0, (args, out, err))
                self.assertEqual(err, "", args)
                self.assertNotEqual(out, "", args)
        rc, out, err = run("devices", "-q")
        self.assertEqual(rc, 2)
        self.assertIn("option -q does not apply to 'devices'", err)

    def test_no_case_matches(self):
        # a filter that selects nothing is a usage error (2) that says so, for every command that takes one
        for cmd in ("test", "support", "perf"):
            rc, out, err = run(cmd, "-b", "CPU", "-o", "MUL_MAT", "-p", "no-such-case")
            self.assertEqual(rc, 2, (cmd, out, err))
            self.assertIn("ct-ops %s: no case matches -o MUL_MAT -p 'no-such-case'; nothing was run" % cmd, err)
            self.assertEqual(out, "", cmd)

    def test_unknown_op_lists_ops(self):
        rc, out, err = run("test", "-o", "GET_ROWS,MATMUL")
        self.assertEqual(rc, 2)
        m = re.search(r"unknown op 'MATMUL'; ops: (.*)\n", err)
        self.assertTrue(m, err)
        ops = m.group(1).split()
        for op in ("GET_ROWS", "SET_ROWS", "MUL_MAT", "CPY", "RMS_NORM", "MEAN"):
            self.assertIn(op, ops)
        rc, out, err = run("--help")
        for op in ops:  # the help lists the same ops
            self.assertIn(op, out)

    def test_usage_errors(self):
        for args in ((), ("bogus",), ("test", "--bogus"), ("test", "-o"), ("test", "-o", "NOT_AN_OP"),
                     ("devices", "-o", "GET_ROWS"), ("perf", "--size-scale", "2"), ("test", "--quick"),
                     ("selfcheck", "--seed", "x")):
            rc, out, err = run(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn("ct-ops", err, args)
        for args in (("--help",), ("test", "--help"), ("perf", "-h")):
            rc, out, err = run(*args)
            self.assertEqual(rc, 0, args)
            self.assertIn("usage: ct-ops", out)

    def test_bad_values(self):
        # each a usage error (2) with a message naming the option and the value, before anything runs
        cases = ((("test", "-t", "600"), "bad thread count '600'"),
                 (("test", "-t", "513"), "n_threads=513 is outside [1, 512]"),
                 (("perf", "-t", "600"), "bad thread count '600'"),
                 (("test", "-t", "0"), "bad thread count '0'"),
                 (("test", "-t", " -1"), "bad thread count ' -1'"),
                 (("test", "-t", "99999999999"), "bad thread count '99999999999'"),
                 (("test", "-o", ""), "option -o '' names no op"),
                 (("test", "-o", ",,,"), "option -o ',,,' names no op"),
                 (("support", "-o", ","), "option -o ',' names no op"),
                 (("test", "--seed", " -1"), "bad seed ' -1'"),
                 (("test", "--seed", "99999999999999999999"), "bad seed"),
                 (("perf", "--size-scale", "0"), "bad --size-scale '0'"),
                 (("perf", "--size-scale", "nan"), "bad --size-scale 'nan'"),
                 (("perf", "--min-time", "nan"), "bad --min-time 'nan'"),
                 (("perf", "--min-time", "-1"), "bad --min-time '-1'"),
                 (("perf", "--min-time", "1e400"), "bad --min-time '1e400'"))
        for args, msg in cases:
            rc, out, err = run(*args, "-b", "CPU")
            self.assertEqual(rc, 2, (args, out[-300:], err))
            self.assertIn(msg, err, args)
            self.assertEqual(out, "", args)  # refused before any case ran
        # the largest accepted count still runs
        rc, out, err = run("test", "-t", "512", "-b", "CPU", "-o", "SUM_ROWS")
        self.assertEqual(rc, 0, out + err)

    def test_unknown_device(self):
        for cmd in ("test", "support", "perf"):
            rc, out, err = run(cmd, "-b", "NoSuchDevice")
            self.assertNotEqual(rc, 0)
            self.assertIn("unknown device 'NoSuchDevice'", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
