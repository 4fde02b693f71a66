#!/usr/bin/env python3
"""Fill the README tables that quote a sweep's results, or check them.

    scripts/sweep_tables.py [--exe build/vrdmasim] [--jobs 2]           # rewrite the tables
    scripts/sweep_tables.py --check [--exe build/vrdmasim] [--jobs 2]   # exit 1 if any differs

A table is the block between

    <!-- BEGIN SWEEP TABLE: CONFIG | COLUMN COLUMN ... -->
    <!-- END SWEEP TABLE -->

in README.md, workloads/README.md, models/*/README.md, library/*/README.md or docs/*.md: the
script runs `vrdmasim sweep CONFIG` (once per config) and writes one row per
point of its results.csv, in order, with the named columns (swept keys or
summary columns) exactly as results.csv holds them. The simulation is
deterministic, so a table that differs from a fresh run is out of date: the
ctest `sweep_tables` runs --check, and the figures a README quotes cannot
drift from what the shipped config prints. With --check --checked-pages
PAGE ..., a table on one of those pages that follows a run block of the page
sweeping the same config (`<!-- run -->`, the plain `build/vrdmasim sweep
CONFIG --out DIR`) is left to scripts/tutorial.py, which checks it against
that run when it checks the page (the ctests quoted_figures and
thesis_table): the sweep is not run twice.
"""
import argparse
import csv
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tutorial import page_sweeps  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- BEGIN SWEEP TABLE: ([^|>]+?) \| ([^>]+?) -->\n)(.*?)(<!-- END SWEEP TABLE -->)", re.S)


def documents():
    paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "workloads", "README.md")]
    paths += sorted(glob.glob(os.path.join(ROOT, "models", "*", "README.md")))
    paths += sorted(glob.glob(os.path.join(ROOT, "library", "*", "README.md")))
    paths += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return paths


def sweep(exe, config, jobs, cache, scratch):
    """The rows of results.csv of `config` (run once per config)."""
    if config not in cache:
        out = os.path.join(scratch, f"sweep{len(cache)}")
        # From the repository, as a table's command is typed (a config may
        # name a file relative to it: trace.file).
        subprocess.run([exe, "sweep", os.path.join(ROOT, config), "--jobs", str(jobs), "--out", out],
                       check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        with open(os.path.join(out, "results.csv"), newline="") as f:
            cache[config] = list(csv.DictReader(f))
    return cache[config]


def table(rows, columns, where):
    missing = [c for c in columns if rows and c not in rows[0]]
    if missing:
        sys.exit(f"{where}: results.csv has no column {', '.join(missing)}")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(r[c] for c in columns) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "vrdmasim"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--check", action="store_true", help="exit 1 if a table differs from a fresh sweep")
    ap.add_argument("--checked-pages", nargs="*", default=[], metavar="PAGE",
                    help="with --check: pages that scripts/tutorial.py checks (the ctests quoted_figures, "
                         "thesis_table); a table there after a run block of the page that sweeps its config "
                         "is checked by it against that run, and left out here")
    args = ap.parse_args()
    elsewhere = {os.path.realpath(p) for p in args.checked_pages} if args.check else set()
    cache = {}
    stale = []
    with tempfile.TemporaryDirectory(prefix="vrdmasim-sweep-tables-") as scratch:
        for path in documents():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if "<!-- BEGIN SWEEP TABLE" not in text:
                continue
            rel = os.path.relpath(path, ROOT)

            swept = page_sweeps(text) if os.path.realpath(path) in elsewhere else {}

            def fill(m):
                config, columns = m.group(2).strip(), m.group(3).split()
                if swept.get(config, len(text)) < m.start():
                    return m.group(0)   # scripts/tutorial.py checks it against the page's own sweep
                rows = sweep(args.exe, config, args.jobs, cache, scratch)
                return m.group(1) + table(rows, columns, f"{rel}: {config}") + m.group(5)

            new = BLOCK.sub(fill, text)
            if new.count("<!-- BEGIN SWEEP TABLE") != new.count("<!-- END SWEEP TABLE -->"):
                sys.exit(f"{rel}: unbalanced SWEEP TABLE markers")
            if new == text:
                continue
            if args.check:
                stale.append(rel)
                sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), rel, rel))
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
                print(f"rewrote {rel}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run scripts/sweep_tables.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
