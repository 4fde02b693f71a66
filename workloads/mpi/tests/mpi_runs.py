"""What the mpi workload's ctest scripts (mpi_program_test.py,
mpi_one_sided_test.py) share: the test programs under names of the test's
own, vrdmasim runs with a TMPDIR of the test's own, their summary and
statistics, a recorded run against its replay, and the end report."""
import csv
import json
import os
import shutil
import subprocess
import tempfile


class Runs:
    """The programs under names of this test's own (`tag` in each), and
    vrdmasim's socket directories in a TMPDIR of its own: other tests
    running at the same time (the composition matrix runs mpi_ring) are not
    mistaken for what this one left behind. An unexpected exit status is
    added to `failures`."""

    def __init__(self, exe, programs, names, prefix, failures):
        self.exe, self.failures = exe, failures
        self.tag = "%s%d" % (prefix, os.getpid())
        self.scratch = tempfile.mkdtemp(prefix=prefix)
        self.program = {}
        for name in names:
            self.program[name] = os.path.join(self.scratch, "%s_%s" % (self.tag, name[len("mpi_"):]))
            shutil.copy(os.path.join(programs, name), self.program[name])
        self.sockets = os.path.join(self.scratch, "tmp")
        os.mkdir(self.sockets)
        self.env = dict(os.environ, TMPDIR=self.sockets)

    def run(self, out, *args, kind="mpi", expect=0, timeout=300, cwd=None, env=None):
        """`vrdmasim run` of workload.kind `kind` with the SMMU on (`env`:
        variables added to its environment)."""
        cmd = [self.exe, "run", "--out", out, "--workload.kind=" + kind, "--smmu.enabled=true"] + list(args)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=dict(self.env, **(env or {})),
                           cwd=cwd)
        if p.returncode != expect:
            self.failures.append("%s: exit %d, expected %d\n%s%s" % (" ".join(cmd), p.returncode, expect,
                                                                     p.stdout[-3000:], p.stderr[-3000:]))
        return p

    def replay(self, out, anchor, *args, expect=0):
        """The trace workload's replay of the OTF2 archive `anchor`."""
        return self.run(out, "--trace.file=" + anchor, *args, kind="trace", expect=expect, timeout=120)

    def left_behind(self):
        """Processes of this test's programs still running."""
        ps = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
        return [line for line in ps.splitlines() if self.tag in line and " Z" not in line and "ps -eo" not in line]

    def finish(self, test):
        """The report, the scratch directory removed: the exit status."""
        if os.path.isdir(self.sockets) and os.listdir(self.sockets):
            self.failures.append("socket directories left in TMPDIR: %s" % os.listdir(self.sockets))
        shutil.rmtree(self.scratch, ignore_errors=True)
        for f in self.failures:
            print("FAIL:", f)
        print("%s: %d failure(s)" % (test, len(self.failures)))
        return 1 if self.failures else 0


def summary(out):
    """The run's summary.csv row ({} if it wrote none)."""
    path = os.path.join(out, "summary.csv")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return next(csv.DictReader(f))


def statistics(out):
    """The run's stats.json, flattened: {dotted name: value} ({} if none)."""
    path = os.path.join(out, "stats.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return dict(_flat(json.load(f)))


def _flat(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from _flat(v, path + "." + k if path else k)
    else:
        yield path, o


def same_figures(failures, what, direct, replayed, all_statistics=True):
    """Every summary column the two runs both have, but the host's and the
    workload kinds' own, is the same, and the app time (`all_statistics`:
    every statistic too, of 1,000 at least in common)."""
    x, y = summary(direct), summary(replayed)
    if not x or not y:
        failures.append("%s: no summary to compare" % what)
        return
    if float(x["mpi_app_time_us"]) != float(y["trace_app_time_us"]) or float(x["mpi_app_time_us"]) <= 0:
        failures.append("%s: the program took %s us, its replay %s us" % (what, x["mpi_app_time_us"],
                                                                       y["trace_app_time_us"]))
    own = ("host_", "peak_rss", "mpi_", "trace_", "workload")
    for k in x:
        if not k.startswith(own) and x[k] != y.get(k):
            failures.append("%s: %s is %s run, %s replayed" % (what, k, x[k], y.get(k)))
    if not all_statistics:
        return
    sx, sy = statistics(direct), statistics(replayed)
    differ = [k for k in sx if k in sy and sx[k] != sy[k] and "host" not in k]
    if differ or len(set(sx) & set(sy)) < 1000:
        failures.append("%s: %d statistics differ (%s ...) of %d in common" % (what, len(differ), differ[:3],
                                                                              len(set(sx) & set(sy))))
