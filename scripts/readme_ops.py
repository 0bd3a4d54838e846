#!/usr/bin/env python3
"""The README's table of ops and types per backend, from `ct-ops support --json`.

    scripts/readme_ops.py [--ct-ops PATH]             # prints the table
    scripts/readme_ops.py --check README.md           # exit 1 when the README's table differs
    scripts/readme_ops.py --write README.md           # rewrites the table in place

The table sits between <!-- ops-table-begin --> and <!-- ops-table-end --> in the
README: a line per op and set of backends, with the types that exactly those backends
take ("some shapes": only some of the test cases' shapes). The columns are the CPU and
REF backends and the OpenCL backend as PoCL (the OpenCL driver on the CPU that CI
uses) reports it; a GPU's driver may differ, which `ct-ops support` there shows.
Without a PoCL device --check says so and passes (exit 0), --write fails.
"""
import argparse
import json
import os
import subprocess
import sys

BEGIN, END = "<!-- ops-table-begin -->", "<!-- ops-table-end -->"
COLUMNS = ("CPU", "REF", "OpenCL (PoCL)")


def default_ct_ops():
    env = os.environ.get("CT_OPS")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, "build", "tools", "ct-ops")


def support(ct_ops):
    """[(op, types, {column: yes/part/no})] from ct-ops support --json, and whether PoCL was there."""
    out = subprocess.run([ct_ops, "support", "--json"], capture_output=True, text=True, check=True).stdout
    recs = [json.loads(line) for line in out.splitlines()]
    run = recs[0]
    if run.get("schema") != 1 or run.get("type") != "run":
        sys.exit("readme_ops.py: %s support --json: unexpected first record %r" % (ct_ops, run))
    devs = subprocess.run([ct_ops, "devices", "--json"], capture_output=True, text=True, check=True).stdout
    pocl = [d["device"] for d in map(json.loads, devs.splitlines()) if d["type"] == "device" and
            d.get("registration") == "OpenCL" and d["description"].startswith("Portable Computing Language")]
    device_of = dict(zip(COLUMNS, ("CPU", "REF", pocl[0] if pocl else None)))
    rows = [(r["op"], r["types"], {c: r["support"].get(device_of[c], "no") for c in COLUMNS})
            for r in recs if r["type"] == "support"]
    return rows, bool(pocl)


def types_text(labels):
    """Type labels of one op, grouped: 'f32 → f16, q8_0; f16 → f32', 'q4_0, q8_0 × f32'."""
    groups, order = {}, []
    for types in labels:
        if " -> " in types:
            key, item, fmt = types.split(" -> ")[0], types.split(" -> ")[1], "{key} → {items}"
        elif " x " in types:
            key, item, fmt = types.split(" x ")[1], types.split(" x ")[0], "{items} × {key}"
        else:
            key, item, fmt = "", types, "{items}"
        if key not in groups:
            groups[key] = (fmt, [])
            order.append(key)
        groups[key][1].append(item)
    return "; ".join(groups[k][0].format(key=k, items=", ".join(groups[k][1])) for k in order)


CELL = {"yes": "yes", "part": "some shapes", "no": "—"}


def markdown(rows):
    """One line per op and set of backends: the types that exactly those backends take."""
    lines = ["| op | types | " + " | ".join(COLUMNS) + " |", "|---|---|" + ":-:|" * len(COLUMNS)]
    ops = []
    for op, _, _ in rows:
        if op not in ops:
            ops.append(op)
    for op in ops:
        sigs, order = {}, []
        for o, types, cells in rows:
            if o != op or all(v == "no" for v in cells.values()):
                continue
            sig = tuple(cells[c] for c in COLUMNS)
            if sig not in sigs:
                sigs[sig] = []
                order.append(sig)
            sigs[sig].append(types)
        for sig in order:
            lines.append("| `%s` | %s | " % (op, types_text(sigs[sig])) + " | ".join(CELL[v] for v in sig) + " |")
    return "\n".join(lines)


def readme_table(text, path):
    if BEGIN not in text or END not in text:
        sys.exit("readme_ops.py: %s has no %s ... %s markers" % (path, BEGIN, END))
    i, j = text.index(BEGIN) + len(BEGIN), text.index(END)
    return i, j, text[i:j].strip("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ct-ops", default=default_ct_ops(), help="the ct-ops to ask (default: $CT_OPS, build/tools/ct-ops)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", metavar="README", help="compare README's table with ct-ops' answer")
    g.add_argument("--write", metavar="README", help="rewrite README's table")
    args = ap.parse_args()
    if not os.access(args.ct_ops, os.X_OK):
        sys.exit("readme_ops.py: no ct-ops at %s (build it, or pass --ct-ops)" % args.ct_ops)
    rows, have_pocl = support(args.ct_ops)
    md = markdown(rows)
    if (args.write or args.check) and not have_pocl:
        print("readme_ops.py: no PoCL device (pocl-opencl-icd): the OpenCL column cannot be %s; skipped" %
              ("written" if args.write else "checked"), file=sys.stderr)
        return 1 if args.write else 0
    if args.write:
        text = open(args.write).read()
        i, j, _ = readme_table(text, args.write)
        open(args.write, "w").write(text[:i] + "\n" + md + "\n" + text[j:])
        return 0
    if args.check:
        _, _, old = readme_table(open(args.check).read(), args.check)
        if old == md:
            print("readme_ops.py: %s's op table matches ct-ops support" % args.check)
            return 0
        import difflib
        sys.stderr.writelines(difflib.unified_diff(old.splitlines(True), (md + "\n").splitlines(True),
                                                   args.check, "ct-ops support"))
        print("\nreadme_ops.py: %s's op table is out of date: run scripts/readme_ops.py --write %s" %
              (args.check, args.check), file=sys.stderr)
        return 1
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
