#!/usr/bin/env python3
"""ctest: every shipped cluster configuration runs with cut links.

    handoff_configs_test.py --exe VRDMASIM --source SOURCE_DIR

Runs each run configuration of configs/ (sweep files left out) whose
topology has links between boards (a torus or a mezzanine) with
--board-link.handoff=message (in the approximate time order,
--router.link-order=time-approximate: exact time order, the default, cuts
links only between ranks and refuses the setting), and three runs beside them that reach what
the shipped ones do not: a mezzanine (its ring edges are the cut links),
a torus with adaptive routing (links in time order) and cold buffers whose
faults are NACKed and resent, and the same halo with dimension-order
routing. Each must finish (exit 0: every byte verified, every self-check of
src/sim/invariants.cpp passed, handoff-delivered among them) with no
failed transfer, and its cut links must have carried packets: every packet
message posted delivered and answered with a credit. And each shipped
configuration still runs with the defaults (exact time order,
board-link.handoff = call) without a handoff statistic.
"""
import argparse
import configparser
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

EXTRA = [
    ("mezzanine halo, cold", ["--topology.kind=mezzanine", "--workload.kind=halo", "--workload.message-size=16KiB",
                              "--workload.iterations=2", "--workload.populate=false",
                              "--smmu-driver.fault-mode=terminate", "--dma.fault-tolerant=true"]),
    ("adaptive torus halo, cold", ["--topology.kind=torus", "--topology.x=4", "--topology.y=2", "--topology.z=2",
                                   "--router.routing=adaptive", "--router.vcs=3", "--workload.kind=halo",
                                   "--workload.message-size=16KiB", "--workload.iterations=2",
                                   "--workload.populate=false", "--smmu-driver.fault-mode=terminate",
                                   "--dma.fault-tolerant=true"]),
    ("dimension-order torus halo, cold", ["--topology.kind=torus", "--topology.x=3", "--topology.y=3",
                                          "--topology.z=2", "--workload.kind=halo", "--workload.message-size=16KiB",
                                          "--workload.iterations=2", "--workload.populate=false",
                                          "--smmu-driver.fault-mode=terminate", "--dma.fault-tolerant=true"]),
]


def cluster_configs(source):
    out = []
    for path in sorted(glob.glob(os.path.join(source, "configs", "**", "*.ini"), recursive=True)):
        with open(path) as f:
            text = f.read()
        if "[sweep]" in text:
            continue
        cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
        try:
            cp.read_string(text)
        except configparser.Error:
            continue
        kind = cp.get("topology", "kind", fallback="qfdb").strip()
        # A value list is a sweep's axis: not a run configuration.
        if kind in ("torus", "mezzanine") and all("," not in v for s in cp.sections() for v in cp[s].values()):
            out.append(path)
    return out


def run(exe, args, out, cwd):
    return subprocess.run([exe, "run"] + args + ["--out", out, "--quiet"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, cwd=cwd)


def check(name, p, out, message, failures):
    if p.returncode != 0:
        failures.append("%s: exit %d\n%s" % (name, p.returncode, p.stdout[-3000:]))
        return
    with open(os.path.join(out, "summary.csv"), newline="") as f:
        row = list(csv.DictReader(f))[0]
    for key in ("transfer_errors", "data_mismatches"):
        if row.get(key, "0") not in ("", "0"):
            failures.append("%s: %s = %s" % (name, key, row[key]))
    if row.get("bytes_verified") != row.get("bytes_delivered"):
        failures.append("%s: %s B delivered, %s verified" % (name, row.get("bytes_delivered"),
                                                              row.get("bytes_verified")))
    with open(os.path.join(out, "stats.json")) as f:
        stats = json.load(f)

    def total(suffix):
        return sum(v for k, v in stats.items() if k.endswith(".handoff." + suffix) and isinstance(v, (int, float)))

    posted = total("packets_posted")
    if not message:
        if any(".handoff." in k for k in stats):
            failures.append("%s: handoff statistics with board-link.handoff = call" % name)
        return
    counts = {k: total(k) for k in ("packets_delivered", "credits_posted", "credits_received")}
    if posted == 0:
        failures.append("%s: no packet crossed a cut link" % name)
    for k, v in counts.items():
        if v != posted:
            failures.append("%s: %d packet messages posted, %s = %d" % (name, posted, k, v))
    if total("refused"):
        failures.append("%s: %d packets refused at a far end" % (name, total("refused")))
    print("ok   %-40s %s packet messages, %s late deliveries, %s waits; sim_seconds %s" %
          (name, posted, total("late_deliveries"), total("waits"), row.get("sim_seconds")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    failures = []
    configs = cluster_configs(args.source)
    if len(configs) < 3:
        failures.append("only %d cluster configurations found under configs/" % len(configs))
    with tempfile.TemporaryDirectory(prefix="vrdmasim_handoff_") as d:
        runs = [(os.path.relpath(c, args.source), [c]) for c in configs] + EXTRA
        for i, (name, cfg) in enumerate(runs):
            for mode in ("message", "call"):
                if mode == "call" and i >= len(configs):
                    continue
                out = os.path.join(d, "%d-%s" % (i, mode))
                order = ["--router.link-order=time-approximate"] if mode == "message" else []
                p = run(args.exe, cfg + ["--board-link.handoff=" + mode] + order, out, args.source)
                check("%s (%s)" % (name, mode), p, out, mode == "message", failures)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
