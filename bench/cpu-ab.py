#!/usr/bin/env python3
"""A/B of two ct-ops binaries on the CPU, for a machine whose bandwidth drifts (a shared VM).

    bench/cpu-ab.py OP PATTERN ROUNDS OLD_CT_OPS NEW_CT_OPS
    e.g. bench/cpu-ab.py GET_ROWS r=16384 6 ../old/build/tools/ct-ops build/tools/ct-ops

Runs `ct-ops perf -b CPU -o OP -p PATTERN --json --min-time 0.1` with each binary in turn, the order
alternating by round, and prints per large case (30 MB or more a run) the median GB/s of each binary
and the median of the rounds' time ratios old/new (above 1: new faster), with how many rounds new won.
Interleaving the two binaries round by round keeps a drift of the machine's bandwidth from
looking like a difference between them.
"""
import json
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    op, pattern, rounds, old, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    times = {}  # case -> round -> binary -> (us, bytes)
    for r in range(rounds):
        for binary in ((old, new) if r % 2 == 0 else (new, old)):
            out = subprocess.run([binary, "perf", "-b", "CPU", "-o", op, "-p", pattern, "--json", "--min-time", "0.1"],
                                 capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                rec = json.loads(line)
                if rec.get("status") == "ok" and rec["bytes_per_run"] > 3e7:
                    times.setdefault(rec["case"], {}).setdefault(r, {})[binary] = (rec["us_per_run"], rec["bytes_per_run"])
    for case, by_round in times.items():
        pairs = [v for v in by_round.values() if old in v and new in v]
        if not pairs:
            continue
        ratios = [v[old][0] / v[new][0] for v in pairs]
        nbytes = pairs[0][old][1]
        gbps = [nbytes / statistics.median(v[b][0] for v in pairs) / 1e3 for b in (old, new)]
        print(f"{case[:60]:60s} old {gbps[0]:5.1f} new {gbps[1]:5.1f} GB/s  speed new/old "
              f"{statistics.median(ratios):.3f}  new faster in {sum(x > 1 for x in ratios)}/{len(ratios)}")


if __name__ == "__main__":
    main()
