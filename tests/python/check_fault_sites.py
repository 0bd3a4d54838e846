#!/usr/bin/env python3
"""Fault-injection coverage (docs/RELIABILITY.md): every allocation and OpenCL
creation site that the test suite reaches must have been failed at least once
by test_faults.

  check_fault_sites.py --reset DIR      clear DIR (run before the suite)
  check_fault_sites.py SUITE FAULTS     compare the two site files

Each file holds lines "host src/x.c:123" or "opencl src/x.c:123", with
" failed" appended where one of that site's calls failed; every test process
appends its own lines, so duplicates are expected."""
import os
import shutil
import sys

# Sites that no failing allocation can reach, each with the reason. Empty: every
# site the suite reaches is covered.
ALLOWED_UNFAILED = {
}


def read_sites(path):
    reached, failed = set(), set()
    with open(path, encoding="utf-8") as f:
        for raw in f:
            words = raw.split()
            if not words:
                continue
            if words[0] == "overflow":
                sys.exit(f"{path}: the site registry overflowed (raise SITE_SLOTS in src/core/fault.c)")
            if len(words) not in (2, 3) or words[0] not in ("host", "opencl"):
                sys.exit(f"{path}: malformed line {raw!r}")
            # Only the library's sites count: a test's own direct calls are not injection points.
            if not words[1].startswith("src/"):
                continue
            site = (words[0], words[1])
            reached.add(site)
            if len(words) == 3 and words[2] == "failed":
                failed.add(site)
    return reached, failed


def main(argv):
    if len(argv) == 3 and argv[1] == "--reset":
        shutil.rmtree(argv[2], ignore_errors=True)
        os.makedirs(argv[2], exist_ok=True)
        print(f"cleared {argv[2]}")
        return 0
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv[1:]:
        if not os.path.exists(path):
            print(f"{path} is missing: run the whole suite (ctest) so that every test records its sites",
                  file=sys.stderr)
            return 1
    suite, _ = read_sites(argv[1])
    faults_reached, faults_failed = read_sites(argv[2])
    everything = suite | faults_reached
    missing = sorted(s for s in everything - faults_failed if s not in ALLOWED_UNFAILED)
    stale = sorted(s for s in ALLOWED_UNFAILED if s in faults_failed or s not in everything)
    n_host = sum(1 for s in everything if s[0] == "host")
    print(f"{len(everything)} sites reached by the suite ({n_host} host allocation, "
          f"{len(everything) - n_host} OpenCL creation); {len(faults_failed & everything)} failed by test_faults")
    for kind, loc in missing:
        print(f"  never failed by fault injection: {kind} {loc}")
    for kind, loc in stale:
        print(f"  allow-listed but failed or no longer reached (remove it): {kind} {loc}")
    if missing or stale:
        print(f"FAIL: {len(missing)} of {len(everything)} sites reached but not exercised by test_faults")
        return 1
    if ALLOWED_UNFAILED:
        print(f"{len(everything)} sites reached by the suite, all exercised by fault injection except "
              f"{len(ALLOWED_UNFAILED)} allow-listed")
    else:
        print(f"{len(everything)} sites reached by the suite, all {len(everything)} exercised by fault injection")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
