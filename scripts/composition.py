#!/usr/bin/env python3
"""The composition matrix: every mechanism with every workload.

    scripts/composition.py [--exe build/vrdmasim] [--jobs N] [--list] [--only KIND]

Runs every combination of the axes below, each read from the parameter
registry (`vrdmasim params`), so a new workload, strategy, guard, operation
or completion mode joins the matrix without editing this script:

    workload.kind × rdma.strategy × rdma.buffer-guard × workload.operation
        × rdma.completion × workload.two-sided × node.processes (1, 2)

with, on one combination in four, each other choice of rdma.prefetch, and
on another one of a workload's combinations in four, each other choice of
that workload's own mechanisms (WORKLOAD_AXES, as each workload declares
them: the file server's methods and its direct access, ...),

in the cold situation (message buffers mapped without MAP_POPULATE and the
source never written: every page the engine touches faults), and a sample of
the same combinations warm, and another with 64 B messages (buffers in
flight sharing pages). Each run must either finish (exit 0: every byte
verified, every self-check passed) or be refused with exit status 2 by a
rule of the refusal table in docs/composition.md, whose message pattern its
error matches; the table gives each refusal's physical reason. Anything else
(exit 1 or 3, a crash, a refusal no rule explains) is a hole in the matrix,
and so is a rule no combination needs any more (the table must not keep
refusals that are gone). Exit status 1 when there is one; the ctest
`composition` runs this.

The runs go through `vrdmasim run-batch` (--jobs at a time, and beside
them those of workloads that start real processes, one at a time, which
mostly wait): each is a process of its own, forked from it, that enters the executable's main as
`vrdmasim run ARGS...` would, without loading and initialising its
libraries again (most of a small run's host time).
"""
import argparse
import csv
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_results import HOST_COLUMNS   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "composition.md")

# The axes: enum parameters whose every choice is a mechanism, and the
# process counts.
ENUM_AXES = ["workload.kind", "rdma.strategy", "rdma.buffer-guard", "workload.operation", "rdma.completion"]
# Enum parameters whose other choices are mechanisms too, each run on a
# sample of the combinations above (cold): one in SAMPLE_OTHERS with every
# choice but the default.
SAMPLED_AXES = ["rdma.prefetch"]
SAMPLE_OTHERS = 4
# What each workload declares of its trial runs (WorkloadKind::Trial,
# workloads/registry.hpp; `vrdmasim params --json`'s "workloads"), read by
# enum_choices, so that a new workload needs no edit here:
# - WORKLOAD_AXES: enum parameters of one workload whose choices are that
#   workload's mechanisms: each other choice on one of its combinations in
#   SAMPLE_OTHERS (another than the sampled axes');
# - KIND_SAMPLE: workloads whose every run starts real processes (an MPI
#   program under mpirun: about a second of host time each) are run on one
#   combination in this many (by a hash of the settings: every axis's values
#   are met);
# - NEEDS: what a workload needs to run at all beyond the defaults, then
#   the matrix's own small settings of it ({build} in a value: the folder
#   of --exe; {source}: the source tree);
# - IGNORES: the shared workload.* parameters it does not read (a run
#   refuses a setting of one): SMALL's and SMALL_MSG's settings of them are
#   left out of its runs; READS_ONLY: those it reads only when another
#   parameter has some values (its "reads_only"), left out of a run where
#   that parameter has another (DEFAULTS: every parameter's default).
WORKLOAD_AXES = {}
KIND_SAMPLE = {}
NEEDS = {}
IGNORES = {}
READS_ONLY = {}
DEFAULTS = {}
# Boolean parameters that switch a mechanism on (false, true).
BOOL_AXES = ["workload.two-sided"]
PROCESSES = ["1", "2"]

# Small runs: every workload moves a few messages (each given only the
# settings it reads: IGNORES).
SMALL = ["--workload.total-bytes=32KiB", "--workload.message-size=8KiB", "--workload.iterations=2",
         "--sim.time-limit=2s"]
COLD = ["--workload.populate=false", "--workload.fill-source=false"]
WARM = ["--workload.populate=true", "--workload.fill-source=true"]
# Messages smaller than a page: several buffers in flight share pages
# (the guard protects whole pages; an engine write lands beside a source).
SMALL_MSG = COLD + ["--workload.message-size=64B", "--workload.total-bytes=1KiB"]
# One combination in this many is also run warm, and one (another) with
# messages of 64 B.
WARM_SAMPLE = 7


def enum_choices(exe):
    # The schema as JSON (`params --json`): the text listing is for people,
    # wrapped to the terminal.
    out = json.loads(subprocess.run([exe, "params", "--json"], stdout=subprocess.PIPE, text=True, check=True).stdout)
    read_trials(exe, out["workloads"])
    axes = {}
    own = list(dict.fromkeys(a for names in WORKLOAD_AXES.values() for a in names))
    for section in out["sections"]:
        for p in section["parameters"]:
            name = p["name"]
            DEFAULTS[name] = p["default"]
            if name in ENUM_AXES + SAMPLED_AXES + own and p["type"] == "enum":
                choices = list(p["choices"])
                if name in SAMPLED_AXES + own:   # the default first: the other choices are the sample's
                    choices = [p["default"]] + [c for c in choices if c != p["default"]]
                axes[name] = choices
            if name in BOOL_AXES and p["type"] == "bool":
                axes[name] = ["false", "true"]
    missing = [a for a in ENUM_AXES + SAMPLED_AXES + own + BOOL_AXES if a not in axes]
    if missing:
        sys.exit(f"composition: `vrdmasim params` has no enum or bool {', '.join(missing)}")
    return axes


def read_trials(exe, workloads):
    """WORKLOAD_AXES, KIND_SAMPLE and NEEDS from the workloads' declarations."""
    places = {"{build}": os.path.dirname(exe), "{source}": ROOT}
    for w in workloads:
        kind = w["name"]
        if w["matrix_axes"]:
            WORKLOAD_AXES[kind] = w["matrix_axes"]
        if w["matrix_sample"] > 1:
            KIND_SAMPLE[kind] = w["matrix_sample"]
        IGNORES[kind] = set(w["ignores"])
        READS_ONLY[kind] = w["reads_only"]
        settings = dict(w["needs"], **w["matrix"])   # the matrix's own last, each setting once
        for key, value in settings.items():
            for mark, path in places.items():
                value = value.replace(mark, path)
            NEEDS.setdefault(kind, []).append(f"--{key}={value}")


def refusal_rules():
    """The table of docs/composition.md: (id, compiled pattern)."""
    rules = []
    with open(DOC) as f:
        text = f.read()
    m = re.search(r"<!-- BEGIN REFUSALS -->\n(.*?)<!-- END REFUSALS -->", text, re.S)
    if not m:
        sys.exit(f"composition: {DOC} has no refusal table")
    for line in m.group(1).splitlines():
        # Cells split on unescaped pipes; "\\|" in a cell is a pipe (Markdown).
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) < 4 or not cells[0].startswith("R"):
            continue
        pattern = cells[3].strip("`")
        rules.append((cells[0], re.compile(pattern)))
    return rules


def combinations(axes):
    names = ENUM_AXES + BOOL_AXES + ["node.processes"]
    values = [axes[a] for a in ENUM_AXES + BOOL_AXES] + [PROCESSES]
    for n, combo in enumerate(itertools.product(*values)):
        settings = dict(zip(names, combo))
        every = KIND_SAMPLE.get(settings["workload.kind"], 1)
        if every > 1 and zlib.crc32(" ".join(f"{k}={v}" for k, v in settings.items()).encode()) % every:
            continue
        yield "cold", settings
        if n % WARM_SAMPLE == 0:
            yield "warm", settings
        if n % WARM_SAMPLE == 3:
            yield "small", settings
        # Which combinations the samples take: by a hash of the settings,
        # not by position (a period of 4 would fall on the same values of
        # the innermost axes every time).
        pick = zlib.crc32(" ".join(f"{k}={v}" for k, v in settings.items()).encode()) % SAMPLE_OTHERS
        if pick == 1:
            for axis in SAMPLED_AXES:
                for choice in axes[axis][1:]:   # every choice but the default
                    yield "cold", dict(settings, **{axis: choice})
        if pick == 2:
            for axis in WORKLOAD_AXES.get(settings["workload.kind"], []):
                for choice in axes[axis][1:]:
                    yield "cold", dict(settings, **{axis: choice})


def run_arguments(scratch, n, situation, settings, extra=()):
    """The arguments of run n after `vrdmasim run` (`extra`: --setting's, last)."""
    kind = settings["workload.kind"]
    given = dict(a[2:].split("=", 1) for a in NEEDS.get(kind, []))
    given.update(settings)
    ignores = set(IGNORES.get(kind, ()))
    for r in READS_ONLY.get(kind, []):
        if given.get(r["when"], DEFAULTS.get(r["when"])) not in r["values"]:
            ignores.add(r["param"])
    read = [a for a in SMALL + {"cold": COLD, "warm": WARM, "small": SMALL_MSG}[situation]
            if a[2:].split("=", 1)[0] not in ignores]
    args = ["-q", "--out", os.path.join(scratch, f"run{n}")] + read
    args += NEEDS.get(kind, [])
    return args + [f"--{k}={v}" for k, v in settings.items()] + [f"--{kv}" for kv in extra]


def run_all(exe, scratch, combos, jobs, extra=(), orders=None):
    """Every combination's (exit status, stdout and stderr), in order:
    `vrdmasim run-batch`, whose children are each the process `vrdmasim
    run ARGS...` would be, forked instead of started (a small run's host time
    is mostly the executable's start: its libraries loaded and initialised),
    --jobs at a time (and a second one beside it, below). A status is negative for a signal, as subprocess's.

    With `orders` (a list of lists of settings, e.g. [[], ["sim.event-order=
    keyed", "sim.event-order-seed=2"]]), each combination is run once in each
    order, and its results are a list of (status, text, figures) by order:
    figures are what the run wrote (stats.json, and summary.csv without the
    host's columns), None if it wrote nothing."""
    variants = orders or [[]]
    # The runs of workloads that start real processes (KIND_SAMPLE: an MPI
    # program under mpirun) mostly wait (the mpi cell: 14 s of CPU in 30 s,
    # one at a time, 2026-11-29), and come one after the other in the
    # matrix's order: they go in a run-batch of their own, one at a time,
    # beside the others' --jobs (all of them if there are no others), so
    # that the cores do the others' work while they wait. Each run is numbered as in the matrix, whichever
    # batch runs it.
    batches = {}   # name -> [run numbers, their argument lines]
    for i, (situation, settings) in enumerate(combos):
        name = "waiting" if settings["workload.kind"] in KIND_SAMPLE else "busy"
        for v, order in enumerate(variants):
            n = i * len(variants) + v
            args = run_arguments(scratch, n, situation, settings, list(extra) + list(order))
            assert not any("\t" in a or "\n" in a for a in args)
            batch = batches.setdefault(name, [[], []])
            batch[0].append(n)
            batch[1].append("\t".join(args) + "\n")
    figures = {}
    status = {}
    logs = {}   # run number -> its log file

    def run_batch(name, numbers, lines):
        runs = os.path.join(scratch, f"runs-{name}.txt")
        with open(runs, "w") as f:
            f.writelines(lines)
        folder = os.path.join(scratch, f"logs-{name}")
        os.mkdir(folder)
        with subprocess.Popen([exe, "run-batch", runs, "--logs", folder, "--jobs",
                               str(1 if name == "waiting" and len(batches) > 1 else jobs)], stdout=subprocess.PIPE, text=True) as p:
            for line in p.stdout:
                k, how, value = line.split()
                n = numbers[int(k)]
                status[n] = int(value) if how == "exit" else -int(value)
                logs[n] = os.path.join(folder, f"{k}.log")
                # Each run's output goes as soon as it ends: thousands of them
                # would fill the disk (with orders, its figures are kept first).
                if orders:
                    figures[n] = run_figures(os.path.join(scratch, f"run{n}"))
                    settle(n // len(variants))
                shutil.rmtree(os.path.join(scratch, f"run{n}"), ignore_errors=True)
        if p.returncode != 0:
            failed.append(f"composition: vrdmasim run-batch ended with status {p.returncode}")

    def settle(i):
        # Combination i's figures, once each order has run: where they agree,
        # one mark (SAME) instead of them, so that the matrix does not keep
        # every run's parsed stats.json to the end (some 90 KB a run, 2 GB
        # over the matrix's 22,000). Its runs are in one batch (one thread).
        ns = [i * len(variants) + v for v in range(len(variants))]
        if all(k in figures for k in ns) and figures[ns[0]] is not None and \
                all(figures[k] == figures[ns[0]] for k in ns[1:]):
            for k in ns:
                figures[k] = SAME

    failed = []
    threads = [threading.Thread(target=run_batch, args=(name, *batch)) for name, batch in batches.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        sys.exit(failed[0])
    results = []
    for n in range(len(combos) * len(variants)):
        log = logs.get(n, "")
        text = ""
        if log and os.path.exists(log):
            with open(log, errors="replace") as f:
                text = f.read()
            os.remove(log)
        results.append((status.get(n, "none: run-batch gave no status"), text, figures.get(n)))
    if not orders:
        return [(rc, text) for rc, text, _ in results]
    return [results[i:i + len(variants)] for i in range(0, len(results), len(variants))]


# The figures of a combination whose runs in every order agree (run_all:
# kept as this mark, not as the figures).
SAME = ("the same in every order",)


def order_moves(by_order, orders):
    """How a combination's runs in other orders differ from its first
    (SystemC's order): a line each, empty if they agree."""
    rc0, _, fig0 = by_order[0]
    moved = []
    for order, (rc, text, fig) in zip(orders[1:], by_order[1:]):
        name = " ".join(order)
        if rc != rc0:
            moved.append(f"{name}: exit {rc}, against {rc0}: {text.strip()[-300:]}")
        elif rc == 0 and (fig0 is None or fig is None):
            moved.append(f"{name}: no stats.json or summary.csv")
        elif rc == 0 and fig != fig0:
            diffs = sorted(k for k in set(fig[0]) | set(fig0[0]) if fig[0].get(k) != fig0[0].get(k))
            cols = sorted({k for a, b in zip(fig[1], fig0[1]) for k in set(a) | set(b) if a.get(k) != b.get(k)})
            moved.append(f"{name}: {len(diffs)} statistics ({', '.join(diffs[:6])}), summary columns "
                         f"({', '.join(cols[:6]) or 'none'})")
    return moved


def run_figures(out):
    """What a run wrote that must not depend on the order of same-time events:
    stats.json, and summary.csv but for the host's own columns
    (scripts/same_results.py's HOST_COLUMNS). None if it wrote nothing."""
    try:
        with open(os.path.join(out, "stats.json")) as f:
            stats = json.load(f)
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            rows = [{k: v for k, v in r.items() if k not in HOST_COLUMNS} for r in csv.DictReader(f)]
    except (OSError, ValueError):
        return None
    return stats, rows


def describe(situation, settings):
    return situation + " " + " ".join(f"--{k}={v}" for k, v in settings.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "vrdmasim"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", help="one workload.kind")
    ap.add_argument("--list", action="store_true", help="print every combination's outcome")
    ap.add_argument("--write", action="store_true",
                    help="rewrite docs/composition.md's table of outcomes by workload (otherwise it is checked)")
    ap.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                    help="every run also with this setting (repeatable), e.g. router.link-order=time-approximate: the same "
                         "outcomes are then required (the doc's table and counts are checked against them)")
    ap.add_argument("--sample", type=int, default=1, metavar="N",
                    help="run one combination in N (every Nth, from the first): holes only, the doc's table and "
                         "counts are not checked")
    ap.add_argument("--orders", metavar="SEEDS",
                    help="run each combination also in the keyed order of same-time events with each of these "
                         "seeds (comma-separated, e.g. 2,3: sim.event-order=keyed, sim.event-order-seed): its "
                         "stats.json and summary.csv (host columns aside) must be SystemC's order's, byte for byte")
    args = ap.parse_args()
    orders = None
    if args.orders:
        try:
            seeds = [int(x) for x in args.orders.split(",")]
        except ValueError:
            sys.exit(f"composition: --orders takes seeds separated by commas, not {args.orders!r}")
        orders = [[]] + [["sim.event-order=keyed", f"sim.event-order-seed={s}"] for s in seeds]
    if args.sample < 1:
        sys.exit("composition: --sample must be 1 or more")
    if args.write and (args.setting or args.sample > 1 or args.orders):
        sys.exit("composition: --write with --setting would write another configuration's outcomes")
    exe = os.path.abspath(args.exe)
    axes = enum_choices(exe)
    if args.only:
        axes["workload.kind"] = [args.only]
    rules = refusal_rules()
    combos = list(combinations(axes))[::args.sample]
    ok, refused, holes = 0, {}, []
    by_kind = {}   # workload.kind -> [finished, {rule: refused}]
    with tempfile.TemporaryDirectory(prefix="vrdmasim-composition-") as scratch:
        results = run_all(exe, scratch, combos, args.jobs, args.setting, orders)
        if orders:
            for (situation, settings), by_order in zip(combos, results):
                moved = order_moves(by_order, orders)
                if moved:
                    holes.append(f"moves with the order of same-time events: {describe(situation, settings)}\n    "
                                 + "\n    ".join(moved))
            results = [by_order[0][:2] for by_order in results]
        for (situation, settings), (rc, text) in zip(combos, results):
            what = describe(situation, settings)
            row = by_kind.setdefault(settings["workload.kind"], [0, {}])
            if rc == 0:
                ok += 1
                row[0] += 1
                if args.list:
                    print(f"ok       {what}")
                continue
            if rc == 2:
                hit = [rid for rid, pat in rules if pat.search(text)]
                if len(hit) == 1:
                    refused.setdefault(hit[0], []).append(what)
                    row[1][hit[0]] = row[1].get(hit[0], 0) + 1
                    if args.list:
                        print(f"{hit[0]:8s} {what}")
                    continue
                why = "matches no rule" if not hit else "matches several rules: " + ", ".join(hit)
                holes.append(f"refused, {why}: {what}\n    {text.strip()[-400:]}")
                continue
            holes.append(f"exit {rc}: {what}\n    {text.strip()[-600:]}")
    unused = [rid for rid, _ in rules if rid not in refused and not args.only and args.sample == 1]
    total = len(combos)
    own = list(dict.fromkeys(a for names in WORKLOAD_AXES.values() for a in names))
    full = ', '.join(f'{len(v)} {k}' for k, v in axes.items() if k not in SAMPLED_AXES + own)
    sampled = ', '.join(f'{len(axes[k]) - 1} other {k}' for k in SAMPLED_AXES + own)
    print(f"composition: {total} runs ({full}, {len(PROCESSES)} process counts; cold, and 1 in {WARM_SAMPLE} warm, "
          f"1 in {WARM_SAMPLE} with 64 B messages, 1 in {SAMPLE_OTHERS} cold with {sampled}; "
          f"{', '.join(f'1 in {n} of {k}' for k, n in KIND_SAMPLE.items())}): {ok} finished verified, "
          f"{sum(len(v) for v in refused.values())} refused by a rule, {len(holes)} holes")
    for rid, _ in rules:
        if rid in refused:
            print(f"  {rid}: {len(refused[rid])} refused")
    # The counts the doc quotes are this run's (full matrix only), and its
    # table of outcomes by workload.
    if not args.only and args.sample == 1:
        table = ["| workload | runs | finished verified | refused, by rule |", "|---|---:|---:|---|"]
        for kind in axes["workload.kind"]:
            fin, rules_hit = by_kind.get(kind, [0, {}])
            runs = fin + sum(rules_hit.values())
            refusals = ", ".join(f"{r} {n}" for r, n in sorted(rules_hit.items(), key=lambda x: int(x[0][1:])))
            table.append(f"| `{kind}` | {runs:,} | {fin:,} | {refusals or 'none'} |")
        block = "\n".join(table) + "\n"
        with open(DOC) as f:
            text = f.read()
        m = re.search(r"(<!-- BEGIN OUTCOMES -->\n)(.*?)(<!-- END OUTCOMES -->)", text, re.S)
        if not m:
            holes.append("docs/composition.md has no <!-- BEGIN OUTCOMES --> block")
        elif args.write:
            with open(DOC, "w") as f:
                f.write(text[:m.start(2)] + block + text[m.end(2):])
            print("composition: rewrote the table of outcomes in docs/composition.md")
        elif m.group(2) != block:
            holes.append("docs/composition.md's table of outcomes differs from this run (scripts/composition.py --write)")
    # The counts the doc quotes are this run's (full matrix only).
    if not args.only and args.sample == 1:
        quoted = (f"Today {ok:,} of the {total:,} runs finish verified; the other "
                  f"{sum(len(v) for v in refused.values()):,} are refused")
        with open(DOC) as f:
            if quoted not in " ".join(f.read().split()):
                holes.append(f"docs/composition.md does not say: {quoted}")
    for u in unused:
        holes.append(f"rule {u} refuses nothing any more: remove it from docs/composition.md")
    for h in holes:
        print("HOLE " + h)
    return 1 if holes else 0


if __name__ == "__main__":
    sys.exit(main())
