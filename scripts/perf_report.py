#!/usr/bin/env python3
"""Turns `ct-ops perf --json` output into a Markdown table and a PNG chart.

    ct-ops perf -b DEVICE --json > perf.json
    scripts/perf_report.py perf.json --png chart.png [--title TITLE] [--large-only]

The table (stdout) lists each supported case with µs/run, GB/s, the fraction of
the device's copy bandwidth measured in the same run (with `perf --copy-each`: the
copy timed just before that case, and its figure in a column of its own), the
fraction of the buffer's own copy (memcpy on the CPU) measured at the start, and
FLOP/s where the case counts them. The chart has one panel per op family: the bandwidth
fraction of each memory-bound case, coloured by band (legend), and TFLOP/s for the
compute-bound MUL_MAT cases; the title names the backend and the device plainly
(an OpenCL device by its name, not its platform's, so that NVIDIA's "NVIDIA CUDA"
platform does not read as ggml's CUDA backend). --png needs matplotlib (exit 2 with a
message when it is missing: apt install python3-matplotlib or pip install matplotlib).

Reads `ct-ops perf --json` (JSON Lines, schema 1; also the earlier records without a
schema field, such as runs made before schema 1).
"""
import argparse
import json
import sys

SCHEMA = 1


def load(path):
    device, cases = None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            if rec.get("schema", SCHEMA) != SCHEMA:
                sys.exit(f"{path}: schema {rec.get('schema')} records; this script reads schema {SCHEMA}")
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
    head = (f"{device_label(device)}: copy bandwidth "
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


def backend_of(device):
    """The ctensor backend that ran: the registration field, else the device name's prefix (older runs)."""
    reg = device.get("registration")
    if reg:
        return reg
    name = device["device"]
    return "OpenCL" if name.startswith("OpenCL") else name


def device_label(device):
    """'ctensor OpenCL backend on NVIDIA H200 (device OpenCL1)': the hardware, without the OpenCL
    platform's name ("NVIDIA CUDA: ..." would read as if ggml's CUDA backend had run)."""
    backend, desc = backend_of(device), device.get("description", "")
    if backend == "OpenCL" and ": " in desc:
        platform, hw = desc.split(": ", 1)
        if platform.startswith("Portable Computing Language"):
            hw = f"{hw.split('-', 2)[-1] if hw.startswith('pthread-') else hw} via PoCL"
        desc = hw
    return f"ctensor {backend} backend on {desc} (device {device['device']})"


# (panel title, ops) in the order the panels are drawn
FAMILIES = (
    ("GET_ROWS", ("GET_ROWS",)),
    ("SET_ROWS", ("SET_ROWS",)),
    ("MUL_MAT, memory-bound (small batch)", ("MUL_MAT",)),
    ("copies: CPY, CAST, DUP, CONT", ("CPY", "CAST", "DUP", "CONT")),
    ("norms: NORM, RMS_NORM, L2_NORM, GROUP_NORM", ("NORM", "RMS_NORM", "L2_NORM", "GROUP_NORM")),
    ("reductions: SUM_ROWS, MEAN", ("SUM_ROWS", "MEAN")),
)
BANDS = ((85, "#2a7", "85% or more of copy"), (50, "#e93", "50-85%"), (0, "#c33", "under 50%"))
DEFAULTS = (",bs=[1,1],nr=[1,1],per=[0,1,2,3],v=0", ",permute_src=[0,1,2,3]", ",permute_dst=[0,1,2,3]",
            ",nr23=[1,1]", ",v=0", ",eps=1e-06", ",b=1")


def short_label(rec, mixed):
    """The case without the defaults; the op's name only where a panel mixes ops."""
    name = rec["case"]
    for d in DEFAULTS:
        name = name.replace(d, "")
    name = name.replace(",type_dst=", " -> ").replace(",type_b=", " x ")
    name = name.replace("type_src=", "").replace("type_a=", "")
    name = name.replace("type=", "")
    if not mixed and name.startswith(rec["op"] + "(") and name.endswith(")"):
        name = name[len(rec["op"]) + 1:-1]
    depth, spaced = 0, []
    for ch in name:  # a space after the commas between parameters, not inside [..]
        depth += ch == "["
        depth -= ch == "]"
        spaced.append(", " if ch == "," and depth == 0 else ch)
    name = "".join(spaced)
    if len(name) > 56:  # two lines, split at a comma near the middle
        cut = name.rfind(", ", 0, len(name) // 2 + 8)
        if cut > 0:
            name = name[:cut + 1] + "\n" + name[cut + 2:]
    return name


def bar_inches(labels):
    """Bars are evenly spaced: room for two-line labels where many are, a little more where a few are."""
    wrapped = sum("\n" in l for l in labels)
    return 0.2 if not wrapped else 0.34 if wrapped > len(labels) // 4 else 0.25


def panels_of(cases):
    """[(title, records, mixed ops?, 'frac' or 'flops')]: one panel per op family that has cases."""
    panels = []
    for name, ops in FAMILIES:
        recs = [r for r in cases if r.get("op") in ops and not is_flops_case(r)]
        if recs:
            panels.append((name, recs, len(ops) > 1, "frac"))
    flops = [r for r in cases if is_flops_case(r)]
    if flops:
        panels.append(("MUL_MAT, compute-bound (n=512)", flops, False, "flops"))
    return panels


def chart(device, cases, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D

    panels = panels_of(cases)
    if not panels:
        sys.exit(f"perf_report.py: no case to chart in {len(cases)} record(s)")
    flops = [r for r in cases if is_flops_case(r)]
    panels = [(n, recs, mixed, kind, [short_label(r, mixed) for r in recs]) for n, recs, mixed, kind in panels]
    heights = [max(1.0, len(p[4]) * bar_inches(p[4]) + 0.6) for p in panels]
    total = sum(heights) + 1.6  # inches: the panels, then title, legend and footnote
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, total),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    each = copy_each(device, cases)
    copy = "timed before each case" if each else f"{device['copy_gbps']:.0f} GB/s, measured in the same run"
    for ax, (name, recs, mixed, kind, labels) in zip(axes[:, 0], panels):
        if kind == "frac":
            values = [100 * r["bw_frac"] for r in recs]
            colors = [next(c for lo, c, _ in BANDS if v >= lo) for v in values]
            ax.barh(range(len(recs)), values, color=colors)
            ax.axvline(85, color="gray", linestyle="--", linewidth=0.8)
            ax.set_xlim(0, max(110, max(values) * 1.05))
            ax.set_xlabel("% of the device's copy bandwidth", fontsize=8)
            for i, (v, r) in enumerate(zip(values, recs)):
                ax.text(v + 0.5, i, f"{v:.0f}% ({r['gbps']:.0f} GB/s)", va="center", fontsize=6)
        else:
            tera = max(r["gflops"] for r in recs) >= 1000
            values = [r["gflops"] / (1000 if tera else 1) for r in recs]
            ax.barh(range(len(recs)), values, color="#48c")
            ax.set_xlabel("TFLOP/s" if tera else "GFLOP/s", fontsize=8)
            for i, v in enumerate(values):
                ax.text(v, i, f" {v:.1f}", va="center", fontsize=6)
        ax.set_yticks(range(len(recs)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_ylim(len(recs) - 0.5, -0.5)  # first case on top, no blank margin
        ax.set_title(name, fontsize=9, loc="left", fontweight="bold")
        ax.tick_params(axis="x", labelsize=7)
    handles = [Patch(color=c, label=l) for _, c, l in BANDS]
    handles.append(Line2D([0], [0], color="gray", linestyle="--", linewidth=0.8, label="85% line"))
    if flops:
        handles.append(Patch(color="#48c", label="FLOP/s (compute-bound MUL_MAT)"))
    fig.suptitle(title or device_label(device), fontsize=12, x=0.02, y=1 - 0.12 / total, ha="left", va="top")
    fig.legend(handles=handles, loc="upper left", fontsize=8, ncol=len(handles), frameon=False,
               bbox_to_anchor=(0.015, 1 - 0.45 / total))
    fig.text(0.01, 0.003, f"Bars: GB/s read + written per case as a % of the copy bandwidth ({copy}). "
             "ct-ops perf --json; scripts/perf_report.py.", fontsize=7, color="#444")
    fig.tight_layout(rect=(0, 0.25 / total, 1, 1 - 0.7 / total))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--png")
    ap.add_argument("--title")
    ap.add_argument("--large-only", action="store_true",
                    help="leave out the small, launch-bound cases (under 1 MB per run)")
    args = ap.parse_args()
    if args.png:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("perf_report.py: --png needs matplotlib, which is not installed "
                  "(apt install python3-matplotlib, or python3 -m pip install matplotlib; "
                  "scripts/bootstrap.sh installs it)", file=sys.stderr)
            return 2
    device, cases = load(args.json)
    if args.large_only:
        cases = [r for r in cases if r["bytes_per_run"] >= 1e6 or "gflops" in r]
    print(table(device, cases))
    if args.png:
        chart(device, cases, args.png, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
