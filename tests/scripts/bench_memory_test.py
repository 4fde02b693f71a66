#!/usr/bin/env python3
"""ctest: `vrdmasim bench --memory` measures host memory per idle node.

Runs it on 64 and 256 nodes and checks what it prints: a peak for each size
that grows with the nodes, a cost per node from the fit that agrees with the
two sizes' difference, and the machine-readable line.
"""
import argparse
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    exe = ap.parse_args().exe
    p = subprocess.run([exe, "bench", "--memory", "--max-nodes", "256"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    print(p.stdout)
    failures = []
    if p.returncode != 0:
        failures.append("bench --memory exited %d" % p.returncode)
    fig = {}
    for line in p.stdout.splitlines():
        if line.startswith("bench_memory_csv,"):
            parts = line.split(",")[1:]
            fig = {parts[i]: float(parts[i + 1]) for i in range(0, len(parts) - 1, 2)}
    for key in ("n64_peak_mib", "n256_peak_mib", "fixed_mib", "kib_per_node"):
        if key not in fig:
            failures.append("%s missing from the csv line" % key)
    if not failures:
        if not fig["n256_peak_mib"] > fig["n64_peak_mib"] > 0:
            failures.append("peaks do not grow with the nodes: %s" % fig)
        # Two sizes: the fit is the line through them.
        slope = (fig["n256_peak_mib"] - fig["n64_peak_mib"]) * 1024 / 192
        if abs(slope - fig["kib_per_node"]) > 0.01 * abs(slope) + 0.01:
            failures.append("fit %g KiB per node, the two sizes say %g" % (fig["kib_per_node"], slope))
        # A node is more than nothing and less than a megabyte of host memory.
        if not 10 < fig["kib_per_node"] < 1024:
            failures.append("%g KiB per idle node is not plausible" % fig["kib_per_node"])
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: peaks per size, a cost per node that the sizes agree with")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
