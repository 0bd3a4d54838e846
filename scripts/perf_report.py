#!/usr/bin/env python3
"""Turns `ct-ops perf --json` output into a Markdown table and a PNG chart.

    ct-ops perf -b DEVICE --json > perf.json
    scripts/perf_report.py perf.json --png chart.png [--title TITLE] [--large-only]

The table (stdout) lists each supported case with µs/run, GB/s, the fraction of
the device's copy bandwidth measured in the same run (with `perf --copy-each`: the
copy timed just before that case, and its figure in a column of its own), the
fraction of the buffer's own copy (memcpy on the CPU) measured at the start, and
FLOP/s where the case counts them. The chart shows the bandwidth fraction of every memory-bound case
(cases reported in FLOP/s are left out of it). Needs matplotlib for --png.
"""
import argparse
import json
import sys


def load(path):
    device, cases = None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            if rec.get("type") == "device":
                device = rec
            elif rec.get("type") == "perf" and rec.get("status") == "ok":
                cases.append(rec)
    if device is None:
        sys.exit(f"{path}: no device record (was it written by ct-ops perf --json?)")
    return device, cases


def is_flops_case(rec):
    return "gflops" in rec and rec.get("op") == "MUL_MAT" and "n=512" in rec["case"]


def copy_each(device, cases):
    """Whether the cases carry copy figures of their own (ct-ops perf --copy-each)."""
    return any(abs(r["copy_gbps"] - device["copy_gbps"]) > 1e-9 for r in cases)


def table(device, cases):
    each = copy_each(device, cases)
    driver = device.get("copy_driver_gbps") or float("nan")
    head = (f"Device {device['device']} ({device['description']}): copy bandwidth "
            f"{device['copy_gbps']:.1f} GB/s ({device['copy_case']}) at the start"
            f"{', timed again before each case (its column)' if each else ''}; "
            f"the buffer's own copy {driver:.1f} GB/s.")
    out = [head, "", "| case | µs/run | GB/s | of copy |" + (" copy GB/s |" if each else "") +
           " of buffer copy | TFLOP/s |", "|---|---:|---:|---:|" + ("---:|" if each else "") + "---:|---:|"]
    for r in cases:
        tflops = f"{r['gflops'] / 1000:.2f}" if "gflops" in r else ""
        extra = f" ({r['us_per_node']:.2f} µs/node)" if "us_per_node" in r else ""
        copy = f" {r['copy_gbps']:.1f} |" if each else ""
        out.append(f"| `{r['case']}`{extra} | {r['us_per_run']:.1f} | {r['gbps']:.1f} | "
                   f"{100 * r['bw_frac']:.1f}% |{copy} {100 * r['gbps'] / driver:.0f}% | {tflops} |")
    return "\n".join(out)


def chart(device, cases, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = [r for r in cases if not is_flops_case(r) and r.get("op") != "CHAIN"]
    labels = [r["case"].replace("type_", "").replace(",bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0", "")
              for r in bars]
    values = [100 * r["bw_frac"] for r in bars]
    height = max(4, 0.18 * len(bars) + 1.5)
    fig, ax = plt.subplots(figsize=(11, height))
    colors = ["#2a7" if v >= 85 else "#e93" if v >= 50 else "#c33" for v in values]
    ax.barh(range(len(bars)), values, color=colors)
    ax.set_yticks(range(len(bars)))
    ax.set_yticklabels(labels, fontsize=5)
    ax.invert_yaxis()
    ax.axvline(85, color="gray", linestyle="--", linewidth=0.8)
    copy = ("timed before each case" if copy_each(device, cases)
            else f"{device['copy_gbps']:.0f} GB/s, same run")
    ax.set_xlabel(f"% of the device's copy bandwidth ({copy})")
    ax.set_title(title or f"ctensor on {device['description']}")
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--png")
    ap.add_argument("--title")
    ap.add_argument("--large-only", action="store_true",
                    help="leave out the small, launch-bound cases (under 1 MB per run)")
    args = ap.parse_args()
    device, cases = load(args.json)
    if args.large_only:
        cases = [r for r in cases if r["bytes_per_run"] >= 1e6 or "gflops" in r]
    print(table(device, cases))
    if args.png:
        chart(device, cases, args.png, args.title)


if __name__ == "__main__":
    main()
