#!/usr/bin/env python3
"""The README's table of the thesis experiment, from its results, or a check of it.

    scripts/thesis_table.py RESULTS.csv            # rewrite the table in README.md
    scripts/thesis_table.py RESULTS.csv --check    # exit 1 if README.md's table differs

RESULTS.csv is what `scripts/thesis.sh OUT` merges into OUT/results.csv. The
table is the block between `<!-- BEGIN THESIS TABLE -->` and `<!-- END THESIS
TABLE -->` in README.md: one row per buffer state and strategy, one column
per message size, each cell the end-to-end throughput (`throughput_gbps`, the
headline) and, in parentheses, the throughput from the first post
(`post_window_throughput_gbps`), in Gb/s to three significant digits. The
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
    ("warm, fault-tolerant", "warm", "fault-tolerant", "touch-ahead", "never"),
    ("warm, pin", "warm", "pin", None, "never"),
    ("warm, pin-static", "warm", "pin-static", None, "never"),
    ("warm, prefault", "warm", "prefault", None, "never"),
    ("pressure, fault-tolerant touch-one", "pressure", "fault-tolerant", "touch-one", "never"),
    ("pressure, fault-tolerant touch-ahead", "pressure", "fault-tolerant", "touch-ahead", "never"),
    ("pressure, pin", "pressure", "pin", None, "never"),
    ("pressure, pin-static", "pressure", "pin-static", None, "never"),
    ("pressure, prefault", "pressure", "prefault", None, "never"),
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
                   and r.get("vm.thp") == thp and r.get("workload.message-size") == size
                   and (policy is None or r.get("fault-lib.policy") in (policy, ""))]
            if len(hit) != 1:
                sys.exit(f"thesis_table: {len(hit)} rows for {label}, {size} (expected 1)")
            r = hit[0]
            if r.get("status") != "ok":
                sys.exit(f"thesis_table: {label}, {size}: status {r.get('status')}")
            cells.append(f"{sig3(r['throughput_gbps'])} ({sig3(r['post_window_throughput_gbps'])})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args()
    with open(args.results, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(args.readme) as f:
        text = f.read()
    m = BLOCK.search(text)
    if not m:
        sys.exit(f"thesis_table: no <!-- BEGIN THESIS TABLE --> block in {args.readme}")
    fresh = table(rows)
    if args.check:
        if m.group(2) != fresh:
            print(f"thesis_table: {args.readme}'s table differs from {args.results}:\n--- quoted\n{m.group(2)}"
                  f"--- measured\n{fresh}", file=sys.stderr)
            return 1
        print("thesis_table: the README's table is what the experiment prints")
        return 0
    with open(args.readme, "w") as f:
        f.write(text[:m.start(2)] + fresh + text[m.end(2):])
    print(f"thesis_table: rewrote the table in {args.readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
