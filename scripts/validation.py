#!/usr/bin/env python3
"""docs/validation.md: every published figure vrdmasim can reproduce, side by side.

    scripts/validation.py [--exe build/vrdmasim]           # run, rewrite docs/validation.md
    scripts/validation.py --check [--exe build/vrdmasim]   # run, exit 1 if the doc differs

Each figure below names its source, the command that reproduces it, the
summary column it is read from, and whether it was *calibrated* (a
parameter was fitted so that the model gives it: agreement is by
construction) or is an *independent check* (nothing was fitted to it:
agreement is evidence). The script runs every command, writes the table
(published, simulated, error) and the notes, and the ctest `validation_doc`
runs it with --check, so the document cannot drift from the simulator.
"""
import argparse
import csv
import difflib
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "validation.md")
PROTO = "configs/exanest-prototype.ini"
CAL = "configs/exanest-calibrated.ini"

# (what, published value, unit, source, arguments of `vrdmasim run`,
#  column, scale applied to the column, status, note)
FIGURES = [
    ("one-way latency, one hop, 64 B user to user (pingpong between the network "
     "FPGAs of two QFDBs: one board link, two routers)",
     1.3, "µs", "arXiv 2307.09371", [PROTO], "latency_us_p50", 1.0, "calibrated",
     "`rdma.post-overhead`, `rdma.completion-overhead`, `rdma.poll-interval` and `dma.setup-time` were fitted "
     "to it (docs/references.md, *Calibration*), when the board link's latency was still an estimate; it is "
     "now the AMD PG074 component figure, and the fit was not redone: the difference is left visible."),
    ("one-way latency, five hops, 64 B user to user (two hops inside boards and three between them on a "
     "4 × 2 × 1 torus; the published route is not given)",
     2.55, "µs", "arXiv 2307.09371",
     [PROTO, "--topology.x=4", "--topology.y=2", "--workload.src-node=0", "--workload.dst-node=24"],
     "latency_us_p50", 1.0, "independent check",
     "Nothing was fitted to it with the defaults. The model is high: a hop between boards adds 0.47 µs (a "
     "router's 100 ns, an *estimate*; 357 ns of link from the 64B/66B core's 55 cycles, AMD PG074), a hop "
     "inside a board 0.25–0.28 µs. Either the ExaNet link layer is faster than a vendor 64B/66B core or its "
     "router is faster than 100 ns; no published figure says which. With the defaults, multi-hop latencies "
     "are upper estimates; configs/exanest-calibrated.ini fits them (next rows)."),
    ("one-way latency, one hop, with configs/exanest-calibrated.ini",
     1.3, "µs", "arXiv 2307.09371", [PROTO, CAL], "latency_us_p50", 1.0, "calibrated",
     "The profile's `rdma.post-overhead` and `rdma.completion-overhead` (110 ns each) were fitted to it once "
     "its router latency had been fitted to the slope (next row)."),
    ("one-way latency, five hops, with configs/exanest-calibrated.ini",
     2.55, "µs", "arXiv 2307.09371",
     [PROTO, CAL, "--topology.x=4", "--topology.y=2", "--workload.src-node=0", "--workload.dst-node=24"],
     "latency_us_p50", 1.0, "calibrated",
     "The profile's `router.latency` (10 ns) was fitted to the published slope, 1.25 µs for the four hops "
     "beyond the first, with every link at its component figure (AMD PG074); the per-hop cost is then "
     "*calibrated*, not sourced: the published figures cannot tell a faster router from a faster link layer. "
     "The defaults keep the router at its 100 ns *estimate* (rows above), so that every other figure the "
     "documentation quotes stays reproducible; give the profile after any configuration to use the fit."),
    ("utilisation of one board link by a stream of RDMA writes (1 MiB messages between the network FPGAs "
     "of two QFDBs, from the first post; payload over the 10 Gb/s line rate)",
     82.0, "%", "arXiv 2307.09371",
     [PROTO, "--workload.kind=stream", "--workload.message-size=1MiB", "--workload.total-bytes=16MiB"],
     "post_window_throughput_gbps", 10.0, "independent check",
     "Nothing was fitted to it; the published figure's message size is not given. A packet carries 256 B "
     "of payload in 18 flits of 128 bits (header, 16 payload, footer: ExaNet switch RTL), so at most "
     "88.9 % of a link is payload; the model's gap below that is the NI's buffer and the gaps between "
     "blocks and transfers."),
]


def run_figure(exe, args, column, scale, scratch, n):
    out = os.path.join(scratch, f"run{n}")
    cmd = [exe, "run"] + [os.path.join(ROOT, a) if a.endswith(".ini") else a for a in args] + ["--out", out, "-q"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"validation: `{' '.join(cmd)}` exited {p.returncode}:\n{p.stdout[-2000:]}")
    with open(os.path.join(out, "summary.csv"), newline="") as f:
        row = next(csv.DictReader(f))
    return float(row[column]) * scale


def render(results):
    lines = [
        "# Validation: published figures against the simulator",
        "",
        "<!-- Generated by scripts/validation.py from runs of the simulator; the ctest",
        "     validation_doc regenerates it and fails if this file differs. Do not edit. -->",
        "",
        "Every published measurement of the ExaNeSt prototype that vrdmasim can reproduce, with the command",
        "that reproduces it. *Calibrated*: a parameter was fitted so that the model gives the figure, so",
        "agreement is by construction and only shows the fit still holds. *Independent check*: nothing was",
        "fitted to it, so agreement (or not) is evidence about the model. Error = (simulated − published) /",
        "published.",
        "",
        "| figure | published | simulated | error | status | source |",
        "|---|---:|---:|---:|---|---|",
    ]
    for (what, pub, unit, src, args, column, scale, status, note), sim in results:
        err = (sim - pub) / pub * 100
        lines.append(f"| {what} | {pub:g} {unit} | {sim:.3g} {unit} | {err:+.1f} % | {status} | {src} |")
    lines += ["", "## How each figure is reproduced", ""]
    for (what, pub, unit, src, args, column, scale, status, note), sim in results:
        cmd = "build/vrdmasim run " + " ".join(shlex.quote(a) for a in args)
        read = f"`{column}`" + (f" / 10 Gb/s, in %" if unit == "%" else f" × {scale:g}" if scale != 1.0 else "")
        lines += [f"**{what[0].upper() + what[1:]}.** `{cmd}`, {read} of `summary.csv`: {sim:.4g} {unit} "
                  f"against {pub:g} {unit} ({src}). *{status.capitalize()}.* {note}", ""]
    lines += [
        "## What is not here",
        "",
        "The prototype's split of the one-hop latency (about 0.47 µs in the network interface and user",
        "library, arXiv 2307.09371) has no counterpart the model can isolate without changing the system it",
        "measures: the model's network interface and library account for 0.67 µs of its 1.35 µs, because it",
        "counts four DRAM accesses and two register reads the prototype's figure may count elsewhere",
        "(docs/references.md, *Calibration*). The thesis's fault-path figures are not published per stage;",
        "its software costs are *estimates* (docs/references.md).",
        "",
    ]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "vrdmasim"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    exe = os.path.abspath(args.exe)
    with tempfile.TemporaryDirectory(prefix="vrdmasim-validation-") as scratch:
        results = [(f, run_figure(exe, f[4], f[5], f[6], scratch, n)) for n, f in enumerate(FIGURES)]
    text = render(results)
    if args.check:
        with open(DOC) as f:
            old = f.read()
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       "docs/validation.md", "measured"))
            print("validation: docs/validation.md differs from the runs (scripts/validation.py rewrites it)",
                  file=sys.stderr)
            return 1
        print(f"validation: docs/validation.md matches {len(results)} figures")
        return 0
    with open(DOC, "w") as f:
        f.write(text)
    print(f"validation: wrote docs/validation.md ({len(results)} figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
