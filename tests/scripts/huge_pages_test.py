#!/usr/bin/env python3
"""ctest: the simulator's heap is in huge pages where the host allows them.

    huge_pages_test.py --exe VRDMASIM --tcmalloc ON|OFF

Runs a 256-node halo (big enough that the heap is most of the process: the
executable, its libraries and the stacks are some 30 MiB outside it, and
since the DRAM keeps the data pattern as stretches a 64-node halo's heap
is smaller than that) and reads the summary's host_huge_pages_mib (what
/proc/self/smaps_rollup says at the simulation's end). Linked with tcmalloc
(src/cli/huge_pages.hpp) on a host whose transparent huge pages are
`always` or `madvise`, most of the heap must be in huge pages (more than
half of peak_rss_mib); with THP `never`, none; without tcmalloc, the column
is only checked to be a number. (That the simulated results do not depend
on it is what scripts/same_results.py shows between builds.)
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            m = re.search(r"\[(\w+)\]", f.read())
            return m.group(1) if m else None
    except OSError:
        return None


def run(exe, out, source):
    p = subprocess.run([exe, "run", os.path.join(source, "configs", "torus-cluster.ini"), "--topology.x=4",
                        "--topology.y=4", "--topology.z=4", "--workload.message-size=16KiB",
                        "--workload.iterations=2", "--out", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        print(p.stdout)
        raise AssertionError("the halo run exited %d" % p.returncode)
    with open(os.path.join(out, "summary.csv"), newline="") as f:
        return list(csv.DictReader(f))[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--tcmalloc", required=True)
    args = ap.parse_args()
    tcmalloc = args.tcmalloc.upper() in ("ON", "1", "TRUE", "YES")
    mode = thp_mode()
    failures = []
    with tempfile.TemporaryDirectory(prefix="vrdmasim_thp_") as d:
        row = run(args.exe, os.path.join(d, "a"), args.source)
        huge, peak = row.get("host_huge_pages_mib"), float(row["peak_rss_mib"])
        print("THP %s, tcmalloc %s: host_huge_pages_mib %s of peak_rss_mib %g" % (mode, tcmalloc, huge, peak))
        if huge is None:
            failures.append("summary.csv has no host_huge_pages_mib")
        elif mode is None:
            if huge != "":
                failures.append("no THP on this host, yet host_huge_pages_mib is %r" % huge)
        elif mode == "never":
            if float(huge) != 0:
                failures.append("THP is never, yet %s MiB in huge pages" % huge)
        elif tcmalloc:
            if not float(huge) > 0.5 * peak:
                failures.append("THP is %s and the executable allocates through tcmalloc, yet only %s of %g MiB "
                                "are in huge pages (src/cli/huge_pages.hpp: the system allocator asks for them)"
                                % (mode, huge, peak))
        else:
            float(huge)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: the heap's huge pages are what the host and the allocator give")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
