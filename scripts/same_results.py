#!/usr/bin/env python3
"""Do two vrdmasim builds simulate the same? For work on the simulator's speed
or memory, whose simulated results must not move.

    scripts/same_results.py --base OLD_EXE --new NEW_EXE [CONFIG.ini ...]

Runs every given config (default: every run config under configs/, sweep
files left out; --args adds settings to every run) with both executables and compares what they write:
stats.json exactly, summary.csv apart from the host's own figures (time and
memory). Prints one line per config and the differing statistics; exit
status 1 if any differ or a run fails, 0 if all agree.

--absent-is-zero: a statistic the base prints at zero (a histogram with no
sample) and the new build does not print at all counts as the same, and is
counted in the line of its config. For a change that makes a model register
a part's statistics only once the part is used; the summary must still agree
exactly, and a statistic the new build prints must agree with the base.

--new-args with the same executable on both sides compares two settings
instead of two builds: the ctest event_order_configs runs every shipped
config in SystemC's order and in the keyed order, whose figures must agree
(docs/clusters.md, *The contention model*); --may-differ names the configs
that still move with the order of same-time events, until links break those
ties by the model.
"""
import argparse
import csv
import glob
import re
import json
import os
import subprocess
import sys
import tempfile
import time

HOST_COLUMNS = {"host_seconds", "peak_rss_mib", "host_huge_pages_mib", "host_build_seconds", "host_output_seconds",
                "ranks", "host_windows", "host_exchanged_bytes", "host_peak_rss_mib_max"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_configs(exe):
    """Every shipped run config: a file of one point, as the simulator's
    sweep reader sees it (a sweep is a file with lists of values, with or
    without a [sweep] section: its points are run configs too, but many)."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "**", "*.ini"), recursive=True)):
        with open(path) as f:
            if "[sweep]" in f.read():
                continue
        p = subprocess.run([exe, "sweep", path, "--list-points"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        m = re.search(r"^sweep: (\d+) points? ", p.stdout, re.M)
        if p.returncode == 0 and m and int(m.group(1)) > 1:
            continue
        out.append(path)
    return out


def run(exe, config, out, extra=()):
    t = time.time()
    p = subprocess.run([exe, "run", config, *extra, "--out", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return p, time.time() - t


def summary(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [{k: v for k, v in r.items() if k not in HOST_COLUMNS} for r in rows]


def is_zero(v):
    if isinstance(v, dict):
        return v.get("count") == 0
    return v == 0


def compare(args, name, label, base, new):
    """Compare one config's base run with one new run, each (process,
    seconds, output directory); print its line and return 1 if they differ
    where they may not (or a run fails), else 0. name is the config's path
    in the repository (--may-differ's terms), label that and the new side's
    --new-args when there are several."""
    (pb, tb, out_b), (pn, tn, out_n) = base, new
    if pb.returncode != pn.returncode:
        print("DIFFER  %s: exit %d before, %d after\n%s" % (label, pb.returncode, pn.returncode, pn.stdout[-2000:]))
        return 1
    if pb.returncode == 2 and pb.stdout == pn.stdout.replace(out_n, out_b):
        print("same    %s (both refuse it: %s)" % (label, pb.stdout.strip().splitlines()[-1][:100]))
        return 0
    if not os.path.exists(os.path.join(out_b, "stats.json")):
        print("FAIL    %s: no output (exit %d)\n%s" % (label, pb.returncode, pb.stdout[-2000:]))
        return 1
    with open(os.path.join(out_b, "stats.json")) as f:
        sb = json.load(f)
    with open(os.path.join(out_n, "stats.json")) as f:
        sn = json.load(f)
    dropped = 0
    if args.absent_is_zero:
        ub = sb.get("units", {})
        for k in [k for k in sb if k != "units" and k not in sn and is_zero(sb[k])]:
            del sb[k]
            ub.pop(k, None)
            dropped += 1
    diffs = sorted(k for k in set(sb) | set(sn) if sb.get(k) != sn.get(k))
    before, after = summary(os.path.join(out_b, "summary.csv")), summary(os.path.join(out_n, "summary.csv"))
    if args.absent_is_zero:
        # A column one side has and the other lacks counts as the
        # same when it reads 0 (a new or removed figure).
        for a, b in zip(before, after):
            for one, other in ((a, b), (b, a)):
                for k in [k for k in one if k not in other and one[k] in ("0", "")]:
                    del one[k]
    same_summary = before == after
    if diffs or not same_summary:
        allowed = name in args.may_differ
        print("%s %s: %d statistics%s" % ("differs" if allowed else "DIFFER ", label, len(diffs),
                                          "" if same_summary else ", summary.csv"))
        for k in diffs[:20]:
            print("        %s: %s -> %s" % (k, sb.get(k), sn.get(k)))
        return 0 if allowed else 1
    if name in args.may_differ:
        print("note    %s is allowed to differ but is the same: take it off the list" % label)
    print("same    %s (%.1f s before, %.1f s after%s)" %
          (label, tb, tn, ", %d zero statistics no longer printed" % dropped if dropped else ""))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the executable before the change")
    ap.add_argument("--new", required=True, help="the executable after it")
    ap.add_argument("--absent-is-zero", action="store_true",
                    help="a statistic or summary column at zero on one side and absent on the other "
                         "counts as the same")
    ap.add_argument("--args", default="",
                    help="settings given to both runs of every config, split at spaces; written with '=' "
                         "since they start with '--': --args=--router.link-order=call-approximate")
    ap.add_argument("--new-args", action="append", default=[],
                    help="settings given to the new side's runs only (after --args), e.g. the same executable "
                         "as --base in another event order: --new-args='--sim.event-order=keyed "
                         "--sim.event-order-seed=2'; repeated, each is another new side compared with the "
                         "one base run of every config")
    ap.add_argument("--may-differ", action="append", default=[], metavar="CONFIG",
                    help="a config (path relative to the repository) allowed to differ: reported, not counted "
                         "(repeatable); one that no longer differs is reported too, so the list can shrink")
    ap.add_argument("configs", nargs="*")
    args = ap.parse_args()
    configs = args.configs or run_configs(args.base)
    news = args.new_args or [""]
    differing = 0
    with tempfile.TemporaryDirectory(prefix="vrdmasim_same_") as d:
        for i, config in enumerate(configs):
            extra = args.args.split()
            base_out = os.path.join(d, "%d-base" % i)
            base = run(args.base, config, base_out, extra) + (base_out,)
            for j, new_args in enumerate(news):
                new_out = os.path.join(d, "%d-new%d" % (i, j))
                new = run(args.new, config, new_out, extra + new_args.split()) + (new_out,)
                label = os.path.relpath(config, ROOT) + (" [%s]" % new_args if len(news) > 1 else "")
                differing += compare(args, os.path.relpath(config, ROOT), label, base, new)
                sys.stdout.flush()
    if len(news) > 1:
        print("%d of %d comparisons differ (%d configs, %d --new-args)" % (differing, len(configs) * len(news),
                                                                          len(configs), len(news)))
    else:
        print("%d of %d configs differ" % (differing, len(configs)))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
