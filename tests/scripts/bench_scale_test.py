#!/usr/bin/env python3
"""ctest: `vrdmasim bench --scale` reports its sizes and the overhead lines.

Runs it on tori of 4 and 16 nodes (one iteration) and checks what it prints:
a row per size with its build and output times, the cost per packet-hop
against 4 nodes, (build + output) / simulation both on the largest torus
and as the largest of any size, each agreeing with the rows and with the
machine-readable line.
"""
import argparse
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    exe = ap.parse_args().exe
    p = subprocess.run([exe, "bench", "--scale", "--max-nodes", "16", "--iterations", "1"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    print(p.stdout)
    failures = []
    if p.returncode != 0:
        failures.append("bench --scale exited %d" % p.returncode)
    rows = {}
    fig = {}
    largest_line = None
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 10 and parts[0].isdigit():
            rows[int(parts[0])] = {"host": float(parts[1]), "build": float(parts[2]), "output": float(parts[3]),
                                   "errors": int(parts[8])}
        if line.startswith("bench_scale_csv,"):
            kv = line.split(",")[1:]
            fig = {kv[i]: float(kv[i + 1]) for i in range(0, len(kv) - 1, 2)}
        if "on the largest torus (" in line:
            largest_line = line
    if sorted(rows) != [4, 16]:
        failures.append("rows for %s, expected 4 and 16 nodes" % sorted(rows))
    for key in ("worst_overhead", "largest_torus_overhead", "n16_build_s", "n16_output_s", "n16_host_s"):
        if key not in fig:
            failures.append("%s missing from the csv line" % key)
    if not failures:
        ratios = {n: (r["build"] + r["output"]) / r["host"] for n, r in rows.items()}
        if abs(fig["largest_torus_overhead"] - ratios[16]) > 0.02 * ratios[16] + 1e-3:
            failures.append("largest torus overhead %g, its row says %g" % (fig["largest_torus_overhead"], ratios[16]))
        if abs(fig["worst_overhead"] - max(ratios.values())) > 0.02 * max(ratios.values()) + 1e-3:
            failures.append("largest overhead %g, the rows say %g" % (fig["worst_overhead"], max(ratios.values())))
        if largest_line is None or "(16 nodes)" not in largest_line:
            failures.append("no line for the largest torus naming its 16 nodes: %r" % largest_line)
        if any(r["errors"] for r in rows.values()):
            failures.append("transfer errors in the halo: %s" % rows)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: a row per size; both overhead figures agree with the rows and the csv line")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
