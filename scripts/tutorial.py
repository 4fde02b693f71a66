#!/usr/bin/env python3
"""Run the tutorial's lessons and check every number their text quotes.

    scripts/tutorial.py [--exe build/vrdmasim] [--keep DIR [--have OUT ...]] [--slow] [--write] [LESSON.md ...]

A lesson (docs/tutorial/NN-*.md, and the teachers' answers.md) marks what
it runs and what it quotes with HTML comments, which a Markdown viewer does
not show:

    <!-- run -->
    ```sh
    build/vrdmasim run configs/tutorial/01-one-write.ini --out out/01 --trace --log
    ```

runs the commands of the code block that follows, exactly as a student
types them (a line ending in `\\` goes on on the next), in a scratch
directory where `build/vrdmasim` is the simulator under test and `configs/`
and `scripts/` the repository's; `--out DIR` names the run's output
directory, by which later checks refer to it. `<!-- run slow -->` marks a
block too slow for the test suite: it runs with --slow only, and without it
every command, check, excerpt and output block that names one of its
output directories is skipped (and counted as skipped, not as checked).
`<!-- run out=DIR -->` names the output directory of a block whose
commands do not say `--out` (a script that writes DIR); with `--keep SCRATCH
--have DIR`, DIR is already in SCRATCH (a test made it for its own check)
and the block is not run again, so two checks can share one long run.
A plain sweep (`build/vrdmasim sweep CONFIG --out DIR`, with --jobs or not)
that an earlier block of the same pass ran, word for word, is not run again
either: the pages given together share it.

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
                               stat_sum(REGEX) (the sum of the stats.json figures whose
                               key matches), results('KEY=VALUE', ...) (the one row of a
                               sweep's results.csv with those swept values, numbers as
                               numbers; rows(...): every such row), log(REGEX), trace(REGEX), exists(FILE) (in the
                               run's output directory), status (the command's exit
                               status) and run(OUT) (another run: run('out/a').summary[...],
                               .stats[...], .results(...))

The written number must equal the figure rounded to as many decimals as
it is written with (4.64 accepts 4.63656; 16 accepts 16 only; 1,024 and
thousands separators are read as 1024). A lesson that quotes a number the
simulator no longer prints fails, so the tutorial cannot drift from the
tool. Every command of a `<!-- run -->` block must exit 0 (`<!-- run exit=3 -->`:
exit 3, a run whose transfers failed); every lesson's `configs/tutorial/*.ini` must be run by some
lesson.

A table (or any text) that a command prints, quoted whole:

    <!-- output: scripts/cut_traffic.py out/halo1296 --markdown --hop-cost 1570 --ranks 1,1,1 -->
    | ranks | cut packets | ... |
    |---|---|---|
    | 1 | 0 | ... |
    <!-- end output -->

runs COMMAND (a line ending in a backslash goes on on the next) in the
scratch directory (after the runs before it) and the
lines between the markers must be exactly what it prints on its standard
output (spaces at the ends of lines and blank lines at the ends of the
block do not count; a block quoted as a fenced code block is compared
without its fences, so it reads as the terminal's output); it must exit 0. `<!-- output slow: COMMAND -->`: a
block over a slow run's outputs, checked with --slow only (a block that
names a skipped run's output directory is skipped anyway). The text reads as a plain Markdown
table, and the command that makes it is beside it. `--write` rewrites
every such block with what its command prints now (after a change that
moves the figures on purpose: review the diff), and still checks the
numbers. A sweep table (`<!-- BEGIN SWEEP TABLE: CONFIG | COLUMN ... -->`,
scripts/sweep_tables.py) after a run block whose command is the plain
`build/vrdmasim sweep CONFIG --out DIR` (--jobs aside) is checked against
that run's results.csv, as sweep_tables.py would check it against its own
sweep of CONFIG (the ctest sweep_tables leaves such tables to this, with
--checked-pages). The same blocks check any document: the ctests `tutorial`,
`quoted_figures` and `scaling_tables` run this script over the tutorial,
the READMEs and docs/ pages that quote figures.
"""
import argparse
import csv
import difflib
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
RUN = re.compile(r"<!-- run((?: exit=\d+| slow| out=\S+)*) *-->\s*\n[ \t]*```(?:sh|console)?\n(.*?)```", re.S)
CHECK = re.compile(r"<!-- check: *(\S+) +(stats|summary|log|trace|expr) *(.*?) *-->")
OUTPUT = re.compile(r"<!-- output( slow)?: *(.+?) *-->[ \t]*\n(.*?)<!-- end output -->", re.S)
EXCERPT = re.compile(r"<!-- log excerpt: *(\S+) *-->[ \t]*\n[ \t]*```[a-z]*\n(.*?)```", re.S)
MARKER = re.compile(r"<!-- (run|log excerpt|output(?: slow)?:)")
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

    def rows(self, *conditions):
        """The rows of the sweep's results.csv whose swept keys have these values (KEY=VALUE)."""
        with open(os.path.join(self.out, "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        want = [c.split("=", 1) for c in conditions]
        return [{k: _number_or_text(v) for k, v in r.items()} for r in rows if all(r.get(k) == v for k, v in want)]

    def results(self, *conditions):
        """The one row of the sweep's results.csv whose swept keys have these values."""
        found = self.rows(*conditions)
        if len(found) != 1:
            raise KeyError(f"{len(found)} rows of {self.out}/results.csv with {', '.join(conditions)}")
        return found[0]

    def stat_sum(self, pattern):
        rx = re.compile(pattern)
        return sum(v for k, v in self.stats().items() if rx.search(k) and isinstance(v, (int, float)))

    def trace(self, pattern):
        rx = re.compile(pattern)
        return sum(1 for e in self.trace_events() if e.get("ph") != "M" and rx.search(str(e.get("name", ""))))


def _number_or_text(v):
    try:
        return float(v)
    except ValueError:
        return v


class _Other:
    """run(OUT) in an expression: another run's stats, summary and results."""

    def __init__(self, run):
        self.stats, self.summary, self.results, self.rows = _Lazy(run.stats), _Lazy(run.summary), run.results, run.rows


def figure(run, source, arg, runs=None):
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
           "stat_sum": run.stat_sum, "results": run.results, "rows": run.rows, "run": lambda out: _Other((runs or {})[out]),
           "exists": lambda name: os.path.exists(os.path.join(run.out, name)), "status": run.status, "math": math}
    # One namespace (globals), so that a generator expression sees the names too.
    builtins = {"min": min, "max": max, "abs": abs, "round": round, "sum": sum, "len": len, "int": int,
                "float": float, "zip": zip, "sorted": sorted}
    return eval(arg, dict(env, __builtins__=builtins))


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


def words_of(command):
    """The command's words, a trailing `# comment` left out."""
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def out_dir_of(command):
    words = words_of(command)
    for i, w in enumerate(words):
        if w in ("--out", "-o") and i + 1 < len(words):
            return words[i + 1]
        if w.startswith("--out="):
            return w.split("=", 1)[1]
    return None


def commands(block):
    """The commands of a run block: one a line, a line ending in a backslash joined
    with the next, comment lines left out."""
    joined = re.sub(r"\\\n", " ", block)
    return [c for c in joined.splitlines() if c.strip() and not c.lstrip().startswith("#")]


def plain_sweep(command):
    """(CONFIG, OUT) of `build/vrdmasim sweep CONFIG --out OUT` with nothing
    else but --jobs / -j, whose results.csv is what scripts/sweep_tables.py's
    own run of CONFIG writes; None for any other command."""
    words = words_of(command)
    if len(words) < 3 or not words[0].endswith("vrdmasim") or words[1] != "sweep" or words[2].startswith("-"):
        return None
    rest, out = words[3:], None
    while rest:
        if rest[0] in ("--jobs", "-j", "--out", "-o") and len(rest) > 1:
            out = rest[1] if rest[0] in ("--out", "-o") else out
            rest = rest[2:]
        else:
            return None
    return (words[2], out) if out else None


def page_sweeps(text):
    """{CONFIG: position} of the plain sweeps (plain_sweep) that a page's run
    blocks make whenever the page is checked: not slow, not given (out=)."""
    found = {}
    for m in RUN.finditer(text):
        if "slow" in m.group(1).split() or "out=" in m.group(1):
            continue
        for command in commands(m.group(2)):
            swept = plain_sweep(command)
            if swept:
                found.setdefault(swept[0], m.start())
    return found


def names_run(command, outs):
    """Whether `command` names one of the output directories `outs`."""
    return any(w == o or w.startswith(o.rstrip("/") + "/") for w in words_of(command) for o in outs)


def block_text(text):
    """An output block's lines, as compared: no spaces at line ends, no blank lines at the ends."""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")


def fences(text):
    """The opening and closing fence lines of an output block quoted as a code block, or None."""
    lines = text.strip("\n").splitlines()
    if len(lines) >= 2 and re.match(r"^\s*```", lines[0]) and re.match(r"^\s*```\s*$", lines[-1]):
        return lines[0], lines[-1]
    return None


class Checker:
    """One pass over the documents: runs, checks and their tallies."""

    def __init__(self, scratch, slow, write, have=()):
        self.scratch, self.slow, self.write, self.have = scratch, slow, write, set(have)
        self.runs = {}
        # {words of a plain sweep that finished: (where it ran, its directory)}:
        # the same sweep again (another page's block, checked in this pass)
        # reads that run, unless a command since named its directory.
        self.swept_at = {}
        self.skipped_outs = set()
        self.failures = self.checks = self.skipped = 0
        self.used_configs = set()

    def fail(self, where, message):
        print(f"{where}: {message}", file=sys.stderr)
        self.failures += 1

    def document(self, path):
        with open(path) as f:
            text = f.read()
        name = os.path.relpath(path, ROOT)
        events = [(m.start(), "run", m) for m in RUN.finditer(text)]
        events += [(m.start(), "check", m) for m in CHECK.finditer(text)]
        events += [(m.start(), "excerpt", m) for m in EXCERPT.finditer(text)]
        events += [(m.start(), "output", m) for m in OUTPUT.finditer(text)]
        self.lint(name, text, events)
        # A sweep table after the page's own run of its sweep is checked
        # against that run (scripts/sweep_tables.py --checked-pages leaves it).
        import sweep_tables
        events += [(m.start(), "table", m) for m in sweep_tables.BLOCK.finditer(text)]
        self.swept = {}
        rewrites = []
        for pos, kind, m in sorted(events, key=lambda e: e[0]):
            where = f"{name}:{text.count(chr(10), 0, pos) + 1}"
            if kind == "run":
                self.run(where, m)
            elif kind == "output":
                new = self.output(where, m)
                if new is not None:
                    rewrites.append((m.start(3), m.end(3), new))
            elif kind == "excerpt":
                self.excerpt(where, m)
            elif kind == "table":
                self.sweep_table(where, m)
            else:
                line_start = text.rfind("\n", 0, pos) + 1
                self.number(where, m, text[line_start:pos])
        if self.write and rewrites:
            for start, end, new in reversed(rewrites):
                text = text[:start] + new + text[end:]
            with open(path, "w") as f:
                f.write(text)
            print(f"rewrote {len(rewrites)} output block(s) of {name}")

    def lint(self, name, text, events):
        """Markers without their block, quoted log lines and step numbers
        outside checked excerpts, a document that checks nothing."""
        # A marker whose code block the patterns do not find would be
        # skipped silently: every marker must start a match.
        starts = {pos for pos, kind, _ in events if kind != "check"}
        for m in MARKER.finditer(text):
            if m.start() not in starts:
                what = "`<!-- end output -->`" if m.group(1).startswith("output") else "a fenced code block"
                self.fail(f"{name}:{text.count(chr(10), 0, m.start()) + 1}",
                          f"a `{m.group(1).rstrip(':')}` marker not followed by {what}")
        # Quoted log lines outside an excerpt would go unchecked; step
        # numbers named in the prose must be quoted steps.
        spans = [(m.start(), m.end()) for _, kind, m in events if kind == "excerpt"]
        inside = lambda pos: any(a <= pos < b for a, b in spans)
        quoted = {int(n) for _, kind, m in events if kind == "excerpt" for n in re.findall(r"#(\d+)", m.group(2))}
        for m in LOG_LINE.finditer(text):
            if not inside(m.start()):
                self.fail(f"{name}:{text.count(chr(10), 0, m.start()) + 1}", "a quoted line of the log outside a "
                          "`<!-- log excerpt: RUN -->` block (not checked against the run)")
        for m in STEP_REF.finditer(text):
            if not inside(m.start()) and int(m.group(1)) not in quoted:
                self.fail(f"{name}:{text.count(chr(10), 0, m.start()) + 1}",
                          f"{m.group(0)} names step #{m.group(1)}, which no log excerpt of the lesson quotes")
        if not any(kind in ("check", "output") for _, kind, _ in events):
            self.fail(name, "quotes no checked figure")

    def run(self, where, m):
        flags = m.group(1)
        expected = int(re.search(r"exit=(\d+)", flags).group(1)) if "exit=" in flags else 0
        declared = re.search(r"out=(\S+)", flags)
        declared = declared.group(1) if declared else None
        if declared and declared in self.have:
            # Made before this checker ran (--have): its commands are not run again.
            if not os.path.isdir(os.path.join(self.scratch, declared)):
                self.fail(where, f"--have {declared}: no such directory in {self.scratch}")
            self.runs[declared] = Run(os.path.join(self.scratch, declared), expected)
            print(f"{where}: not run, {declared} is given (--have)")
            return
        status = 0
        for command in commands(m.group(2)):
            self.used_configs.update(re.findall(r"configs/tutorial/[\w./-]+\.ini", command))
            out = out_dir_of(command)
            if ("slow" in flags.split() and not self.slow) or names_run(command, self.skipped_outs):
                self.skipped_outs.update(o for o in (out, declared) if o)
                print(f"{where}: skipped, slow (--slow runs it): {command}")
                continue
            swept = plain_sweep(command)
            words = tuple(words_of(command))
            if swept and expected == 0 and words in self.swept_at:
                # A sweep writes its directory from its config alone: the
                # same words give the same results.csv (figures are a
                # function of the model), so it is read, not run twice.
                print(f"{where}: not run again, the same sweep ran at {self.swept_at[words][0]}: {command}")
                returncode = 0
            else:
                self.forget_sweeps(command)
                if out:
                    shutil.rmtree(os.path.join(self.scratch, out), ignore_errors=True)
                p = subprocess.run(command, shell=True, cwd=self.scratch, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                returncode = p.returncode
                if returncode != expected:
                    self.fail(where, f"`{command}` exited {returncode}, not {expected}:\n{p.stdout[-2000:]}")
                if swept and returncode == 0:
                    self.swept_at[words] = (where, swept[1])
            if out:
                self.runs[out] = Run(os.path.join(self.scratch, out), returncode)
            if swept and returncode == 0 and "out=" not in flags:
                self.swept[swept[0]] = os.path.join(self.scratch, swept[1])
            status = returncode
        if declared and declared not in self.skipped_outs:
            self.runs[declared] = Run(os.path.join(self.scratch, declared), status)

    def forget_sweeps(self, command):
        """A command about to run that names a finished sweep's directory
        (it may write there): that sweep, given again, runs again."""
        self.swept_at = {w: (at, out) for w, (at, out) in self.swept_at.items() if not names_run(command, [out])}

    def output(self, where, m):
        """Check an output block; the command's output, for --write."""
        command = re.sub(r"\\\n\s*", " ", m.group(2))
        if (m.group(1) and not self.slow) or names_run(command, self.skipped_outs):
            self.skipped += 1
            return None
        self.checks += 1
        self.forget_sweeps(command)
        p = subprocess.run(command, shell=True, cwd=self.scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode != 0:
            self.fail(where, f"`{command}` exited {p.returncode}:\n{p.stderr[-2000:]}")
            return None
        fence = fences(m.group(3))
        quoted = "\n".join(m.group(3).strip("\n").splitlines()[1:-1]) if fence else m.group(3)
        want, got = block_text(quoted), block_text(p.stdout)
        if want != got and not self.write:
            diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "quoted", "printed now", lineterm="")
            self.fail(where, f"the block differs from what `{command}` prints (scripts/tutorial.py --write "
                      "rewrites it):\n" + "\n".join(diff))
        return (fence[0] + "\n" + got + "\n" + fence[1] + "\n") if fence else got + "\n"

    def sweep_table(self, where, m):
        """A sweep table (scripts/sweep_tables.py) against the page's own run of its sweep, if one came before."""
        import sweep_tables
        config, columns = m.group(2).strip(), m.group(3).split()
        if config not in self.swept:
            return
        self.checks += 1
        with open(os.path.join(self.swept[config], "results.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        got = sweep_tables.table(rows, columns, where)
        if m.group(4) != got:
            diff = difflib.unified_diff(m.group(4).splitlines(), got.splitlines(), "quoted", "swept now", lineterm="")
            self.fail(where, f"the sweep table of {config} differs from this page's sweep of it "
                      "(scripts/sweep_tables.py rewrites it):\n" + "\n".join(diff))

    def excerpt(self, where, m):
        key = m.group(1)
        if key in self.skipped_outs:
            self.skipped += 1
            return
        self.checks += 1
        if key not in self.runs:
            self.fail(where, f"no run with --out {key} before this log excerpt")
            return
        problem = excerpt_problem(self.runs[key], m.group(2))
        if problem:
            self.fail(where, problem)

    def number(self, where, m, before):
        key, source, arg = m.group(1), m.group(2), m.group(3)
        if key in self.skipped_outs:
            self.skipped += 1
            return
        self.checks += 1
        written, decimals = written_number(before)
        if written is None:
            self.fail(where, f"no number before the check of {source} {arg}")
            return
        if key not in self.runs:
            self.fail(where, f"no run with --out {key} before this check")
            return
        try:
            actual = figure(self.runs[key], source, arg, self.runs)
        except Exception as e:  # a missing statistic or output is a failed check
            self.fail(where, f"{source} {arg}: {e}")
            return
        if not matches(written, decimals, actual):
            self.fail(where, f"the text says {written:g}, the run gives {actual} ({source} {arg})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", default=os.path.join(ROOT, "build", "vrdmasim"))
    ap.add_argument("--keep", help="run in this directory and keep the outputs")
    ap.add_argument("--slow", action="store_true", help="also run the blocks marked <!-- run slow -->")
    ap.add_argument("--write", action="store_true", help="rewrite the output blocks with what their commands print")
    ap.add_argument("--have", action="append", default=[], metavar="OUT",
                    help="OUT already exists in the --keep directory: the run block that makes it is not run")
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

    if args.have and not args.keep:
        print("tutorial: --have needs --keep DIR (the directory that holds them)", file=sys.stderr)
        return 2
    checker = Checker(scratch, args.slow, args.write, args.have)
    try:
        for path in lessons(args.files):
            checker.document(path)
        if not args.files:
            shipped = {os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "configs", "tutorial", "*.ini"))}
            for unused in sorted(shipped - checker.used_configs):
                checker.fail(unused, "no lesson runs it")
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    skipped = f", {checker.skipped} skipped with their slow runs (--slow checks them)" if checker.skipped else ""
    print(f"tutorial: {checker.checks} figures checked, {checker.failures} problems{skipped}")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main())
