#!/usr/bin/env python3
"""Run the tutorial's lessons and check every number their text quotes.

    scripts/tutorial.py [--exe build/vrdmasim] [--keep DIR] [LESSON.md ...]

A lesson (docs/tutorial/NN-*.md, and the teachers' answers.md) marks what
it runs and what it quotes with HTML comments, which a Markdown viewer does
not show:

    <!-- run -->
    ```sh
    build/vrdmasim run configs/tutorial/01-one-write.ini --out out/01 --trace --log
    ```

runs the commands of the code block that follows, exactly as a student
types them, in a scratch directory where `build/vrdmasim` is the simulator
under test and `configs/` the repository's configs; `--out DIR` names the
run's output directory, by which later checks refer to it.

    the write took 16 packets<!-- check: out/01 stats node0.dma.packets_sent -->

checks the number written just before the comment against the run's
figure. A quoted piece of the narrated log,

    <!-- log excerpt: out/03 -->
    ```
        5.448589 us  node0.smmu  #3 translation fault in cb0 ...
    ...
    ```

must be lines of that run's events.log, in the log's order (a line `...`
stands for lines left out; spaces at the ends do not count). Every line of
a lesson that looks like a line of the log ("  12.345678 us  node1.dma  #3
...") must be in such an excerpt, so that none goes unchecked; and a step
number the prose names in code (`#1614`, `after #921`) must be one of the
steps the lesson's excerpts quote (they are checked against the run, so a
renumbered log fails the lesson until its text follows). Sources of
the number checks:

    stats KEY                  stats.json (a histogram's field: KEY.p50, KEY.count, ...)
    summary COLUMN             summary.csv
    log REGEX                  number of events.log lines matching REGEX
    trace REGEX                number of trace.json events whose name matches REGEX
    expr PYTHON                a Python expression over stats[...], summary[...],
                               log(REGEX), trace(REGEX), exists(FILE) (in the run's
                               output directory) and status (the command's exit status)

The written number must equal the figure rounded to as many decimals as
it is written with (4.64 accepts 4.63656; 16 accepts 16 only; 1,024 and
thousands separators are read as 1024). A lesson that quotes a number the
simulator no longer prints fails, so the tutorial cannot drift from the
tool. Every command of a `<!-- run -->` block must exit 0 (`<!-- run exit=3 -->`:
exit 3, a run whose transfers failed); every lesson's `configs/tutorial/*.ini` must be run by some
lesson.
"""
import argparse
import csv
import glob
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = re.compile(r"<!-- run(?: exit=(\d+))? *-->\s*\n```(?:sh|console)?\n(.*?)```", re.S)
CHECK = re.compile(r"<!-- check: *(\S+) +(stats|summary|log|trace|expr) *(.*?) *-->")
EXCERPT = re.compile(r"<!-- log excerpt: *(\S+) *-->[ \t]*\n[ \t]*```[a-z]*\n(.*?)```", re.S)
MARKER = re.compile(r"<!-- (run|log excerpt)\b")
LOG_LINE = re.compile(r"^[ \t]*\d+\.\d{6} us  \S+  ", re.M)
STEP_REF = re.compile(r"`[^`\n]*?#(\d+)[^`\n]*`")
NUMBER = re.compile(r"(-?\d[\d,]*(?:\.\d+)?)(?:[^\d<]*?)$")


class Run:
    def __init__(self, out, status):
        self.out = out
        self.status = status
        self._stats = self._summary = self._log = self._trace = None

    def stats(self):
        if self._stats is None:
            with open(os.path.join(self.out, "stats.json")) as f:
                raw = json.load(f)
            self._stats = {}
            for key, value in raw.items():
                if isinstance(value, dict):
                    for field, v in value.items():
                        self._stats[f"{key}.{field}"] = v
                else:
                    self._stats[key] = value
        return self._stats

    def summary(self):
        if self._summary is None:
            with open(os.path.join(self.out, "summary.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
            if len(rows) != 1:
                raise ValueError(f"{self.out}/summary.csv has {len(rows)} rows")
            self._summary = {k: _number_or_text(v) for k, v in rows[0].items()}
        return self._summary

    def log_lines(self):
        if self._log is None:
            with open(os.path.join(self.out, "events.log")) as f:
                self._log = f.read().splitlines()
        return self._log

    def trace_events(self):
        if self._trace is None:
            with open(os.path.join(self.out, "trace.json")) as f:
                self._trace = json.load(f)["traceEvents"]
        return self._trace

    def log(self, pattern):
        rx = re.compile(pattern)
        return sum(1 for line in self.log_lines() if rx.search(line))

    def trace(self, pattern):
        rx = re.compile(pattern)
        return sum(1 for e in self.trace_events() if e.get("ph") != "M" and rx.search(str(e.get("name", ""))))


def _number_or_text(v):
    try:
        return float(v)
    except ValueError:
        return v


def figure(run, source, arg):
    if source == "stats":
        stats = run.stats()
        if arg not in stats:
            raise KeyError(f"no statistic {arg!r} in {run.out}/stats.json")
        return stats[arg]
    if source == "summary":
        summary = run.summary()
        if arg not in summary:
            raise KeyError(f"no column {arg!r} in {run.out}/summary.csv")
        return summary[arg]
    if source == "log":
        return run.log(arg)
    if source == "trace":
        return run.trace(arg)
    env = {"stats": _Lazy(run.stats), "summary": _Lazy(run.summary), "log": run.log, "trace": run.trace,
           "exists": lambda name: os.path.exists(os.path.join(run.out, name)), "status": run.status, "math": math}
    return eval(arg, {"__builtins__": {"min": min, "max": max, "abs": abs, "round": round, "sum": sum, "len": len, "int": int, "float": float}}, env)


class _Lazy:
    """stats[...] / summary[...] in an expression: read only when used."""

    def __init__(self, load):
        self.load = load

    def __getitem__(self, key):
        return self.load()[key]


def written_number(text):
    """The number written just before a check comment, and its decimals."""
    text = re.sub(r"<!--.*?-->", "", text)          # earlier comments on the line
    text = re.sub(r"[*`_]", "", text).rstrip()       # **16**, `16`
    m = NUMBER.search(text)
    if not m:
        return None, 0
    s = m.group(1)
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")
    elif "," in s:
        s = s.rsplit(",", 1)[-1]
    decimals = len(s.split(".")[1]) if "." in s else 0
    return float(s), decimals


def matches(written, decimals, actual):
    if not isinstance(actual, (int, float)) or isinstance(actual, bool):
        return False
    tolerance = 0.5 * 10 ** (-decimals) + 1e-9 * max(1.0, abs(actual))
    return abs(written - actual) <= tolerance


def excerpt_problem(run, block):
    """None if every line of `block` is a line of the run's log, in order."""
    log = [line.strip() for line in run.log_lines()]
    at = 0
    for line in block.splitlines():
        want = line.strip()
        if not want or want in ("...", "\u2026"):
            continue
        try:
            at = log.index(want, at) + 1
        except ValueError:
            where = "anywhere in" if want not in log else "after the line before it in"
            return f"the quoted line is not {where} {run.out}/events.log:\n    {want}"
    return None


def lessons(paths):
    if paths:
        return paths
    return sorted(glob.glob(os.path.join(ROOT, "docs", "tutorial", "[0-9]*.md"))) + \
        [os.path.join(ROOT, "docs", "tutorial", "answers.md")]


def out_dir_of(command):
    words = shlex.split(command)
    for i, w in enumerate(words):
        if w in ("--out", "-o") and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--out="):
            return w.split("=", 1)[1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "vrdmasim"))
    ap.add_argument("--keep", help="run in this directory and keep the outputs")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    exe = os.path.abspath(args.exe)
    if not os.access(exe, os.X_OK):
        print(f"tutorial: no simulator at {exe}", file=sys.stderr)
        return 2

    scratch = args.keep or tempfile.mkdtemp(prefix="vrdmasim-tutorial-")
    os.makedirs(os.path.join(scratch, "build"), exist_ok=True)
    link = os.path.join(scratch, "build", "vrdmasim")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(exe, link)
    for name in ("configs", "scripts"):
        target = os.path.join(scratch, name)
        if not os.path.lexists(target):
            os.symlink(os.path.join(ROOT, name), target)

    runs = {}
    failures = 0
    checks = 0
    used_configs = set()
    try:
        for path in lessons(args.files):
            with open(path) as f:
                text = f.read()
            name = os.path.relpath(path, ROOT)
            events = [(m.start(), "run", m) for m in RUN.finditer(text)]
            events += [(m.start(), "check", m) for m in CHECK.finditer(text)]
            events += [(m.start(), "excerpt", m) for m in EXCERPT.finditer(text)]
            # A marker whose code block the patterns do not find would be
            # skipped silently: every marker must start a match.
            starts = {pos for pos, kind, _ in events if kind != "check"}
            for m in MARKER.finditer(text):
                if m.start() not in starts:
                    print(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: a `{m.group(1)}` marker not followed "
                          "by a fenced code block", file=sys.stderr)
                    failures += 1
            # Quoted log lines outside an excerpt would go unchecked; step
            # numbers named in the prose must be quoted steps.
            spans = [(m.start(), m.end()) for _, kind, m in events if kind == "excerpt"]
            inside = lambda pos: any(a <= pos < b for a, b in spans)
            quoted = {int(n) for _, kind, m in events if kind == "excerpt" for n in re.findall(r"#(\d+)", m.group(2))}
            for m in LOG_LINE.finditer(text):
                if not inside(m.start()):
                    print(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: a quoted line of the log outside a "
                          "`<!-- log excerpt: RUN -->` block (not checked against the run)", file=sys.stderr)
                    failures += 1
            for m in STEP_REF.finditer(text):
                if not inside(m.start()) and int(m.group(1)) not in quoted:
                    print(f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)} names step #{m.group(1)}, "
                          "which no log excerpt of the lesson quotes", file=sys.stderr)
                    failures += 1
            if not any(kind == "check" for _, kind, _ in events):
                print(f"{name}: quotes no checked figure", file=sys.stderr)
                failures += 1
            for pos, kind, m in sorted(events, key=lambda e: e[0]):
                line_no = text.count("\n", 0, pos) + 1
                where = f"{name}:{line_no}"
                if kind == "run":
                    expected = int(m.group(1) or 0)
                    for command in [c for c in m.group(2).splitlines() if c.strip() and not c.startswith("#")]:
                        used_configs.update(re.findall(r"configs/tutorial/[\w./-]+\.ini", command))
                        out = out_dir_of(command)
                        if out:
                            shutil.rmtree(os.path.join(scratch, out), ignore_errors=True)
                        p = subprocess.run(command, shell=True, cwd=scratch, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True)
                        if p.returncode != expected:
                            print(f"{where}: `{command}` exited {p.returncode}, not {expected}:\n{p.stdout[-2000:]}", file=sys.stderr)
                            failures += 1
                        if out:
                            runs[out] = Run(os.path.join(scratch, out), p.returncode)
                    continue
                checks += 1
                if kind == "excerpt":
                    key = m.group(1)
                    if key not in runs:
                        print(f"{where}: no run with --out {key} before this log excerpt", file=sys.stderr)
                        failures += 1
                        continue
                    problem = excerpt_problem(runs[key], m.group(2))
                    if problem:
                        print(f"{where}: {problem}", file=sys.stderr)
                        failures += 1
                    continue
                key, source, arg = m.group(1), m.group(2), m.group(3)
                line_start = text.rfind("\n", 0, pos) + 1
                written, decimals = written_number(text[line_start:pos])
                if written is None:
                    print(f"{where}: no number before the check of {source} {arg}", file=sys.stderr)
                    failures += 1
                    continue
                if key not in runs:
                    print(f"{where}: no run with --out {key} before this check", file=sys.stderr)
                    failures += 1
                    continue
                try:
                    actual = figure(runs[key], source, arg)
                except Exception as e:  # a missing statistic or output is a failed check
                    print(f"{where}: {source} {arg}: {e}", file=sys.stderr)
                    failures += 1
                    continue
                if not matches(written, decimals, actual):
                    print(f"{where}: the text says {written:g}, the run gives {actual} ({source} {arg})",
                          file=sys.stderr)
                    failures += 1
        if not args.files:
            shipped = {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "configs", "tutorial", "*.ini"))}
            for unused in sorted(shipped - used_configs):
                print(f"{unused}: no lesson runs it", file=sys.stderr)
                failures += 1
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"tutorial: {checks} figures checked, {failures} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
