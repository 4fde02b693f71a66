#!/usr/bin/env python3
"""docs/experiments.md's table of the thesis experiment, from its results, or a check of it.

    scripts/thesis_table.py RESULTS.csv            # rewrite the table in docs/experiments.md
    scripts/thesis_table.py RESULTS.csv --check    # exit 1 if the table differs

RESULTS.csv is what `scripts/thesis.sh OUT` merges into OUT/results.csv. The
table is the block between `<!-- BEGIN THESIS TABLE -->` and `<!-- END THESIS
TABLE -->` in docs/experiments.md: one row per buffer state and strategy, one column
per message size, each cell the end-to-end throughput (`throughput_gbps`, the
headline) and, in parentheses, the throughput from the first post
(`post_window_throughput_gbps`), in Gb/s to three significant digits; and
the block between `<!-- BEGIN THESIS ENERGY TABLE -->` and its END: the
energy per byte delivered at 64 KiB (`energy_nj_per_byte`, and in
parentheses the cores' share, `energy_cpu_nj_per_byte`). The
simulation is deterministic, so a table that differs from a fresh run is out
of date: the ctest `thesis_table` runs the experiment and --check.
"""
import argparse
import csv
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- BEGIN THESIS TABLE -->\n)(.*?)(<!-- END THESIS TABLE -->)", re.S)
SIZES = ["4KiB", "64KiB", "1MiB", "64MiB"]
# (row label, sweep label, strategy, fault-lib.policy or None, vm.thp)
ROWS = [
    ("cold, fault-tolerant touch-one, THP never", "cold", "fault-tolerant", "touch-one", "never"),
    ("cold, fault-tolerant touch-ahead, THP never", "cold", "fault-tolerant", "touch-ahead", "never"),
    ("cold, fault-tolerant (either), THP always", "cold", "fault-tolerant", "touch-ahead", "always"),
    ("cold, pin, THP never", "cold", "pin", None, "never"),
    ("cold, pin-static, THP never", "cold", "pin-static", None, "never"),
    ("cold, pin-deferred, THP never", "cold", "pin-deferred", None, "never"),
    ("cold, prefault, THP never", "cold", "prefault", None, "never"),
    ("cold, fault-tolerant touch-ahead + prefetch advice, THP never", "cold-prefetch", "fault-tolerant", "touch-ahead",
     "never"),
    ("warm, fault-tolerant", "warm", "fault-tolerant", "touch-ahead", "never"),
    ("warm, pin", "warm", "pin", None, "never"),
    ("warm, pin-static", "warm", "pin-static", None, "never"),
    ("warm, prefault", "warm", "prefault", None, "never"),
    ("pressure, fault-tolerant touch-one", "pressure", "fault-tolerant", "touch-one", "never"),
    ("pressure, fault-tolerant touch-ahead", "pressure", "fault-tolerant", "touch-ahead", "never"),
    ("pressure, pin", "pressure", "pin", None, "never"),
    ("pressure, pin-static", "pressure", "pin-static", None, "never"),
    ("pressure, prefault", "pressure", "prefault", None, "never"),
    ("pressure, fault-tolerant touch-ahead + prefetch advice", "pressure-prefetch", "fault-tolerant", "touch-ahead",
     "never"),
]


def sig3(text):
    v = float(text)
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def table(rows):
    head = "| Gb/s, end to end (from the first post) | " + " | ".join(
        s.replace("KiB", " KiB").replace("MiB", " MiB") for s in SIZES) + " |"
    lines = [head, "|---|" + "---:|" * len(SIZES)]
    for label, sweep, strategy, policy, thp in ROWS:
        cells = []
        for size in SIZES:
            hit = [r for r in rows if r.get("label") == sweep and r.get("strategy") == strategy
                   and r.get("vm.thp") in (thp, "") and r.get("workload.message-size") == size
                   and (policy is None or r.get("fault-lib.policy") in (policy, ""))]
            if len(hit) != 1:
                sys.exit(f"thesis_table: {len(hit)} rows for {label}, {size} (expected 1)")
            r = hit[0]
            if r.get("status") != "ok":
                sys.exit(f"thesis_table: {label}, {size}: status {r.get('status')}")
            cells.append(f"{sig3(r['throughput_gbps'])} ({sig3(r['post_window_throughput_gbps'])})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


ENERGY_BLOCK = re.compile(r"(<!-- BEGIN THESIS ENERGY TABLE -->\n)(.*?)(<!-- END THESIS ENERGY TABLE -->)", re.S)
ENERGY_SIZE = "64KiB"
# (row label, sweep label) x strategies: nJ per byte delivered, in all and of the cores.
ENERGY_ROWS = [("cold", "cold"), ("warm", "warm"), ("pressure", "pressure")]
ENERGY_STRATEGIES = [("fault-tolerant", "touch-ahead"), ("pin", None), ("pin-static", None),
                     ("pin-deferred", None), ("prefault", None)]


def energy_table(rows):
    head = ("| nJ per byte, 64 KiB messages, THP never: all (cores) | " +
            " | ".join(s if p is None else f"{s} {p}" for s, p in ENERGY_STRATEGIES) + " |")
    lines = [head, "|---|" + "---:|" * len(ENERGY_STRATEGIES)]
    for label, sweep in ENERGY_ROWS:
        cells = []
        for strategy, policy in ENERGY_STRATEGIES:
            hit = [r for r in rows if r.get("label") == sweep and r.get("strategy") == strategy
                   and r.get("vm.thp") == "never" and r.get("workload.message-size") == ENERGY_SIZE
                   and (policy is None or r.get("fault-lib.policy") in (policy, ""))]
            if len(hit) != 1:
                sys.exit(f"thesis_table: {len(hit)} rows for {label}, {strategy} (expected 1)")
            r = hit[0]
            cells.append(f"{sig3(r['energy_nj_per_byte'])} ({sig3(r['energy_cpu_nj_per_byte'])})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--readme", default=os.path.join(ROOT, "docs", "experiments.md"))
    args = ap.parse_args()
    with open(args.results, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(args.readme) as f:
        text = f.read()
    m = BLOCK.search(text)
    if not m:
        sys.exit(f"thesis_table: no <!-- BEGIN THESIS TABLE --> block in {args.readme}")
    e = ENERGY_BLOCK.search(text)
    if not e:
        sys.exit(f"thesis_table: no <!-- BEGIN THESIS ENERGY TABLE --> block in {args.readme}")
    blocks = sorted([(m, table(rows)), (e, energy_table(rows))], key=lambda b: b[0].start(2))
    if args.check:
        stale = [fresh for block, fresh in blocks if block.group(2) != fresh]
        for block, fresh in blocks:
            if block.group(2) != fresh:
                print(f"thesis_table: a table in {args.readme} differs from {args.results}:\n--- quoted\n"
                      f"{block.group(2)}--- measured\n{fresh}", file=sys.stderr)
        if stale:
            return 1
        print("thesis_table: docs/experiments.md's tables are what the experiment prints")
        return 0
    out, at = [], 0
    for block, fresh in blocks:
        out += [text[at:block.start(2)], fresh]
        at = block.end(2)
    with open(args.readme, "w") as f:
        f.write("".join(out) + text[at:])
    print(f"thesis_table: rewrote the tables in {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
