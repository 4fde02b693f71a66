#!/usr/bin/env python3
"""ctest: scripts/cut_traffic.py counts what docs/scaling.md says it counts.

    cut_traffic_test.py --exe VRDMASIM --source SOURCE_DIR

Runs a short halo on the 3x2x2 torus of configs/torus-cluster.ini and checks the
script's figures against sums taken here another way from the same
stats.json: one rank cuts nothing; a rank per board cuts every link between
boards; three slabs along x cut the links whose ends differ in x (a ring of
three: every x link); the windows are sim_seconds / 357 ns; the share is of
the summary's packet_hops; --markdown prints the same counts as
docs/scaling.md's table rows. And that bad input is refused with exit
status 2.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    script = os.path.join(args.source, "scripts", "cut_traffic.py")
    failures = []
    with tempfile.TemporaryDirectory(prefix="vrdmasim_cut_") as d:
        out = os.path.join(d, "halo")
        p = subprocess.run([args.exe, "run", os.path.join(args.source, "configs", "torus-cluster.ini"),
                            "--workload.iterations=2", "--workload.message-size=4KiB",
                            "--out", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            print(p.stdout)
            print("FAIL: the halo run exited %d" % p.returncode)
            return 1
        with open(os.path.join(out, "stats.json")) as f:
            stats = json.load(f)
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            summary = list(csv.DictReader(f))[0]
        board_links = x_links = 0
        for k, v in stats.items():
            m = re.match(r"^(x\d+)(y\d+z\d+)f\d_to_(x\d+)(y\d+z\d+)f\d\.packets$", k)
            if m:
                if m.group(1, 2) != m.group(3, 4):
                    board_links += v
                if m.group(1) != m.group(3):
                    x_links += v
        hops = int(summary["packet_hops"])
        windows = float(summary["sim_seconds"]) / 357e-9
        p = subprocess.run([sys.executable, script, out, "--ranks", "1,1,1", "--ranks", "3,2,2", "--ranks", "3,1,1",
                            "--hop-cost", "1000"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout)
        rows = {}
        for line in p.stdout.splitlines():
            m = re.match(r"^\s+(\d+x\d+x\d+) (\d+)\s+(\d+)\s+([0-9.]+)%\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)\s+.*\s([0-9.]+)$",
                         line)
            if m:
                rows[m.group(1)] = m.groups()
        if p.returncode != 0 or set(rows) != {"1x1x1", "3x2x2", "3x1x1"}:
            failures.append("cut_traffic.py exited %d or printed no row per partition" % p.returncode)
        else:
            want = {"1x1x1": 0, "3x2x2": board_links, "3x1x1": x_links}
            for part, cut in want.items():
                if int(rows[part][2]) != cut:
                    failures.append("%s: %s packets cut, the links say %d" % (part, rows[part][2], cut))
                if abs(float(rows[part][3]) - 100.0 * cut / hops) > 0.01:
                    failures.append("%s: share %s%%, expected %.2f%% of %d packet-hops"
                                    % (part, rows[part][3], 100.0 * cut / hops, hops))
                if abs(float(rows[part][4]) - cut / windows) > 0.01:
                    failures.append("%s: %s cut packets per window, expected %.2f" % (part, rows[part][4],
                                                                                      cut / windows))
            if float(rows["1x1x1"][7]) != 1.0:
                failures.append("one rank's speed-up is %s, not 1" % rows["1x1x1"][7])
            if not 0 < board_links < hops or not 0 < x_links < board_links:
                failures.append("the run has %d packet-hops, %d on board links, %d on x links: not a torus halo"
                                % (hops, board_links, x_links))
            if "%.0f windows" % windows not in p.stdout:
                failures.append("the windows are not sim_seconds / 357 ns = %.0f" % windows)
        # --markdown: docs/scaling.md's table, the same counts as the plain output, one row a partition.
        p = subprocess.run([sys.executable, script, out, "--markdown", "--ranks", "1,1,1", "--ranks", "3,2,2",
                            "--ranks", "3,1,1", "--hop-cost", "1000"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print(p.stdout)
        table = [line.split(" | ") for line in p.stdout.splitlines()]
        labels = {"1": "1x1x1", "3 × 2 × 2 = 12 (a board each)": "3x2x2", "3 × 1 × 1 = 3": "3x1x1"}
        body = {r[0].lstrip("| "): r for r in table[2:]}
        if (p.returncode != 0 or len(table) != 5 or not table[1][0].startswith("|---")
                or set(body) != set(labels) or any(len(r) != 8 for r in table[:1] + table[2:])):
            failures.append("--markdown: exit %d, not a header, a rule and one row a partition as labelled %s"
                            % (p.returncode, sorted(labels)))
        elif rows:
            for label, part in labels.items():
                if body[label][1].replace(",", "") != rows[part][2]:
                    failures.append("--markdown %s: %s cut packets, the plain output %s"
                                    % (label, body[label][1], rows[part][2]))
                if body[label][7].rstrip(" |") != ("1" if part == "1x1x1" else "%.1f" % float(rows[part][7])):
                    failures.append("--markdown %s: speed-up %s, the plain output %s"
                                    % (label, body[label][7], rows[part][7]))
        # Refused, exit status 2: a partition finer than the boards, a run that is not a torus, no run,
        # a table without a fixed host cost.
        single = os.path.join(d, "single")
        subprocess.run([args.exe, "run", os.path.join(args.source, "configs", "tutorial", "01-one-write.ini"),
                        "--out", single], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for argv, what in (([out, "--ranks", "4,1,1"], "more ranks than boards along x"),
                           ([out, "--ranks", "3,1"], "two numbers"),
                           ([single, "--ranks", "1,1,1"], "a run on one QFDB"),
                           ([os.path.join(d, "none"), "--ranks", "1,1,1"], "no such directory"),
                           ([out, "--ranks", "1,1,1", "--markdown"], "--markdown without --hop-cost")):
            r = subprocess.run([sys.executable, script] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
            if r.returncode != 2 or "cut_traffic: error:" not in r.stdout:
                failures.append("%s: exit %d, expected 2 with an error\n%s" % (what, r.returncode, r.stdout))
    for line in failures:
        print("FAIL: " + line)
    if not failures:
        print("ok: cut packets, shares, windows and refusals as the links' own statistics say")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
