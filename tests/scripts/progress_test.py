#!/usr/bin/env python3
"""ctest checks of the progress line of `vrdmasim run` (src/sim/progress.hpp).

    progress_test.py VRDMASIM ROOT

Runs the same simulation with stderr on a pseudo-terminal (progress shown),
on a pipe (nothing shown), and on a terminal with --no-progress, and checks:
the line appears, updated in place, names the simulated time, the transfers
done of the total the run really does, the host time and an ETA, and is
cleared at the end; nothing appears without a terminal or with
--no-progress; a short run shows nothing; stats.json is byte-identical in
every case (the sliced simulation runs the same events in the same order).
"""
import csv
import os
import pty   # noqa: F401  (the pseudo-terminal comes from os.openpty)
import re
import subprocess
import sys
import tempfile

HOST = r"([0-9]+\.[0-9] s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m)"
LINE = re.compile(r"^vrdmasim: sim [0-9.e+]+ (ns|us|ms|s) \(limit 10 s\) \| ([0-9]+) of ([0-9]+) transfers "
                  r"\(([0-9]+)%\) \| host " + HOST + r"( \| ETA " + HOST + r"(?: to " + HOST + r")?\??)?\s*$")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


# The progress line's host times (first line after 1 s, then every 0.25 s,
# slices of 0.1 s) ten times shorter (src/sim/progress.hpp): many updates in
# a run of a second or two, where they took a run of many seconds.
PACE = {"VRDMASIM_PROGRESS_PACE": "10"}


def run(exe, args, tty, env=None):
    """(exit status, stderr bytes) of `exe run ARGS`, stderr on a pty or a pipe,
    with `env` added to the environment."""
    env = dict(os.environ, **(env or {}))
    if tty:
        master, slave = os.openpty()
        p = subprocess.Popen([exe, "run"] + args, stdout=subprocess.DEVNULL, stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:   # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        return p.wait(), b"".join(chunks)
    p = subprocess.run([exe, "run"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stderr


def summary(out):
    with open(os.path.join(out, "summary.csv"), newline="") as f:
        return next(csv.DictReader(f))


def stats(out):
    with open(os.path.join(out, "stats.json"), "rb") as f:
        return f.read()


def main():
    exe, root = sys.argv[1], sys.argv[2]
    cfg = os.path.join(root, "configs", "default.ini")
    # Long enough for the line to show several updates at PACE (first line
    # after 0.1 s, then every 0.025 s): a stream of 64 KiB messages whose
    # total the workload knows; 512 MiB took 2.2 s of a Release build on
    # 2026-11-29 (4 GiB took 18 s: the runs at the default pace were 4 GiB).
    long_args = [cfg, "--workload.total-bytes=512MiB"]
    with tempfile.TemporaryDirectory() as tmp:
        a, b, c = (os.path.join(tmp, n) for n in ("tty", "pipe", "noprogress"))
        rc, err = run(exe, long_args + ["--out", a], tty=True, env=PACE)
        if rc != 0:
            fail("run on a terminal: exit %d: %r" % (rc, err[-500:]))
        text = err.decode()
        print("stderr on the terminal: %r" % (text[:300] + " ... " + text[-300:]))
        parts = text.replace("\r\n", "\n").split("\r")
        if parts[0] != "":
            fail("something before the first progress line: %r" % parts[0])
        lines, tail = parts[1:-2], parts[-2:]
        if len(lines) < 2:
            fail("%d progress line(s), expected several updates in place" % len(lines))
        if tail[0].strip() != "" or len(tail[0]) < max(len(l.rstrip()) for l in lines) or tail[1] != "":
            fail("the line is not cleared at the end: %r" % tail)
        total = int(summary(a)["transfers"])
        seen_eta = False
        last_done = -1
        for l in lines:
            m = LINE.match(l)
            if not m:
                fail("progress line %r" % l)
            done, of = int(m.group(2)), int(m.group(3))
            if of != total:
                fail("the line says %d transfers in all, the run did %d" % (of, total))
            if done < last_done or done > of:
                fail("transfers done %d after %d (of %d)" % (done, last_done, of))
            last_done = done
            seen_eta = seen_eta or "ETA" in l
        if not seen_eta:
            fail("no ETA although the workload knows its total")

        rc, err = run(exe, long_args + ["--out", b], tty=False, env=PACE)
        if rc != 0 or err != b"":
            fail("without a terminal: exit %d, stderr %r (expected nothing)" % (rc, err[:300]))
        rc, err = run(exe, long_args + ["--out", c, "--no-progress"], tty=True, env=PACE)
        if rc != 0 or b"vrdmasim: sim" in err or err.strip() != b"":
            fail("--no-progress on a terminal: exit %d, stderr %r" % (rc, err[:300]))
        if not (stats(a) == stats(b) == stats(c)):
            fail("stats.json differs between the runs with and without the progress line")
        for k in ("sim_seconds", "transfers", "latency_us_p50", "throughput_gbps", "sim_events"):
            if summary(a)[k] != summary(b)[k]:
                fail("%s: %s with the progress line, %s without" % (k, summary(a)[k], summary(b)[k]))

        # A pace that is not a number of 1 or more is refused before the run.
        rc, err = run(exe, [cfg, "--out", os.path.join(tmp, "badpace")], tty=True, env={"VRDMASIM_PROGRESS_PACE": "0"})
        if rc != 2 or b"VRDMASIM_PROGRESS_PACE = 0" not in err or os.path.exists(os.path.join(tmp, "badpace")):
            fail("VRDMASIM_PROGRESS_PACE=0: exit %d, stderr %r" % (rc, err[:300]))

        # A short run on a terminal shows nothing (under a second of host
        # time, at the default pace).
        rc, err = run(exe, [cfg, "--workload.total-bytes=1MiB", "--out", os.path.join(tmp, "short")], tty=True)
        if rc != 0 or err.strip() != b"":
            fail("short run on a terminal: exit %d, stderr %r" % (rc, err[:300]))
    print("ok: %d progress updates, stats.json identical with and without them" % len(lines))


if __name__ == "__main__":
    main()
