#!/usr/bin/env python3
"""The narrated log must tell whole stories that hold together.

Runs every tutorial lesson's command that writes a log (docs/tutorial/*.md,
`<!-- run -->` blocks with --log: lessons 1, 3, 4, 7, 8, 10 and 14) with
--log (and --trace where the lesson traces, but lesson 8, whose trace is
large) and checks, for every run:
- every line is a numbered step ("#N"), numbers unique: there is no
  unnumbered line;
- every "(after #M)" names a step the log has (no dangling cause);
- the trace has one arrow end ("f") per arrow start ("s"), paired by id,
  and as many arrows as the log's steps whose cause has a slice;
and, per run, that the story a teacher expects is there, as a chain of
causes (following "after" links back from the last step):
- terminate mode: the resend on node 0 follows node 1's retransmit request,
  which follows the fault's outcome, the fault library, the Netlink message,
  the handler's register reads and the SMMU fault, which follows the walk of
  the transfer's first packet, which follows the transfer's start on node 0;
- stall mode: the driver's RESUME and the SMMU's RESUME follow the fault;
- memory pressure (log only: its trace is large): swap-outs by kswapd, and
  major faults with their SSD reads, whose completion lines follow the
  fault that started them.
"""
import argparse
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINE = re.compile(r"^\s*\d+\.\d+ us  (\S+)  #(\d+) (.*?)(?: \(after #(\d+)\))?$")


RUN_BLOCK = re.compile(r"<!-- run(?: exit=(\d+))? *-->\s*\n```(?:sh|console)?\n(.*?)```", re.S)
# Lessons whose trace is too large to load here: their log only.
LOG_ONLY = {"configs/tutorial/08-pressure.ini"}
# `vrdmasim run` options whose value is the next word.
VALUE_OPTIONS = ("--trace-window", "--trace-filter", "--log-filter", "--sample-interval", "--trace-warn-size")


def lesson_runs():
    """[(name, config, trace, extra args, exit status)] of every tutorial command that writes a log, once each."""
    runs, seen = [], set()
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "tutorial", "*.md"))):
        with open(path) as f:
            text = f.read()
        for m in RUN_BLOCK.finditer(text):
            for command in m.group(2).splitlines():
                words = shlex.split(command)
                if "--log" not in words or len(words) < 3 or words[1] != "run":
                    continue
                config = next(w for w in words[2:] if w.endswith(".ini"))
                extra, skip, take = [], False, False
                for w in words[2:]:
                    if skip:
                        skip = False
                    elif take:
                        extra.append(w)   # the value of the option before
                        take = False
                    elif w in ("--out", "-o"):
                        skip = True
                    elif w in VALUE_OPTIONS:
                        extra.append(w)
                        take = True
                    elif w.startswith("--") and w not in ("--log", "--trace") and not w.startswith("--out="):
                        extra.append(w)
                trace = "--trace" in words and config not in LOG_ONLY
                if not trace and "--trace-filter" in extra:   # it needs --trace: dropped with it
                    i = extra.index("--trace-filter")
                    del extra[i:i + 2]
                key = (config, tuple(extra))
                if key not in seen:
                    seen.add(key)
                    runs.append((f"{os.path.basename(path)}: {' '.join([config] + extra)}", config, trace, extra,
                                 int(m.group(1) or 0)))
    return runs


def run(exe, config, out, trace, *extra, status=0):
    if "/" not in config:
        config = os.path.join("configs", "tutorial", config)
    cmd = [exe, "run", os.path.join(ROOT, config), "--out", out, "--log",
           "--no-progress", *extra] + (["--trace"] if trace else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != status:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    steps = {}
    with open(os.path.join(out, "events.log")) as f:
        for n, line in enumerate(f, 1):
            m = LINE.match(line.rstrip("\n"))
            if not m:
                raise AssertionError(f"{config}: events.log line {n} is not a numbered step: {line!r}")
            who, sid, text, after = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            if sid in steps:
                raise AssertionError(f"{config}: step #{sid} appears twice")
            steps[sid] = (who, text, int(after) if after else None)
    for sid, (_, _, after) in steps.items():
        if after is not None and after not in steps:
            raise AssertionError(f"{config}: #{sid} follows #{after}, which the log does not have")
    if not trace:
        return steps
    with open(os.path.join(out, "trace.json")) as f:
        events = json.load(f)["traceEvents"]
    starts = {e["id"] for e in events if e.get("ph") == "s"}
    ends = [e["id"] for e in events if e.get("ph") == "f"]
    if sorted(starts) != sorted(ends) or len(ends) != len(set(ends)):
        raise AssertionError(f"{config}: {len(starts)} arrow starts and {len(ends)} arrow ends do not pair up")
    noted = [e for e in events if e.get("cat") == "cause" and e.get("ph") == "X"]
    with_arrow = [e for e in noted if "after" in e.get("args", {})]
    if len(ends) > len(with_arrow):
        raise AssertionError(f"{config}: {len(ends)} arrows for {len(with_arrow)} slices that follow a step")
    return steps


def chain(steps, sid):
    """The step and its causes, back to the first: [(who, text), ...], latest first."""
    out = []
    while sid is not None:
        who, text, after = steps[sid]
        out.append((who, text))
        sid = after
    return out


def find(steps, who, pattern):
    rx = re.compile(pattern)
    hits = [sid for sid, (w, t, _) in steps.items() if w == who and rx.search(t)]
    if not hits:
        raise AssertionError(f"no step of {who} matching {pattern!r}")
    return hits


def expect_chain(name, steps, sid, patterns):
    """The chain back from sid passes the patterns ((who regex, text regex)) in this order."""
    c = chain(steps, sid)
    at = 0
    for who, pattern in patterns:
        rx = re.compile(pattern)
        while at < len(c) and not (re.fullmatch(who, c[at][0]) and rx.search(c[at][1])):
            at += 1
        if at == len(c):
            shown = "\n    ".join(f"{w}  {t}" for w, t in c)
            raise AssertionError(f"{name}: the chain back from #{sid} lacks {who} /{pattern}/:\n    {shown}")
        at += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    exe = os.path.abspath(ap.parse_args().exe)
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        cases = [
            ("terminate: the resend's causes reach back to the transfer's start", "03-faults-terminate.ini", True,
             lambda s: expect_chain("03", s, find(s, "node0.dma", r"resends from packet 0")[0], [
                 ("node1.dma", r"retransmit request"),
                 ("node1.smmu_driver.pid1", r"is resolved"),
                 ("node1.smmu_driver.pid1", r"fault library's thread wakes"),
                 ("node1.smmu_driver", r"Netlink message"),
                 ("node1.smmu_driver", r"handler reads cb0: FSR"),
                 ("node1.smmu", r"translation fault in cb0 .*write, level 0"),
                 ("node1.smmu", r"page-table walk"),
                 ("node0.dma", r"transfer 0:1 starts"),
             ])),
            ("terminate: the page fault the library takes is a step of its story", "03-faults-terminate.ini", True,
             lambda s: expect_chain("03", s, find(s, "node0.vm", r"minor fault at 0x7efffffff000")[0], [
                 ("node0.vm", r"page-fault work"),
                 ("node0.smmu_driver.pid1", r"wakes"),
             ])),
            ("stall: RESUME written by the driver, after the fault", "04-stall.ini", True,
             lambda s: [expect_chain("04", s, sid, [
                 ("node1.smmu_driver", r"writes RESUME of cb\d+ with TnR = 0"),
                 (r"node1\.smmu_driver\.pid\d+", r"is resolved"),
                 ("node1.smmu", r"fault in cb\d+"),
             ]) for sid in find(s, "node1.smmu", r"RESUME of cb\d+: the stalled transactions retry")]),
            ("pressure: swap-outs, and a swap-in's completion follows its fault", "08-pressure.ini", False,
             lambda s: (expect_chain("08", s, find(s, "node1.vm", r"swap-out of 0x")[0], [
                            ("node1.vm", r"reclaim \(kswapd\)"),
                        ]),
                        expect_chain("08", s, find(s, "node0.vm", r"the SSD read of swap slot \d+ completes")[0], [
                            ("node0.vm", r"major fault at 0x[0-9a-f]+: a swap entry"),
                        ]))),
        ]
        logs = {}
        for name, config, trace, check in cases:
            out = os.path.join(d, config)
            try:
                if out not in logs:
                    logs[out] = run(exe, config, out, trace)
                check(logs[out])
                print(f"ok   {name}")
            except (AssertionError, RuntimeError) as e:
                print(f"FAIL {name}: {e}")
                failures += 1
        # Every lesson that writes a log: every line a numbered step, every
        # cause one of its steps, the trace's arrows paired.
        lessons = lesson_runs()
        if not any("14-fileserve" in config for _, config, _, _, _ in lessons):
            print("FAIL lesson 14's run with --log was not found in docs/tutorial/14-fileserve.md")
            failures += 1
        for k, (name, config, trace, extra, status) in enumerate(lessons):
            out = os.path.join(d, f"lesson{k}")
            case_out = os.path.join(d, os.path.basename(config))
            try:
                if not extra and case_out in logs:
                    steps = logs[case_out]   # run above already, with as much (trace or not)
                else:
                    steps = run(exe, config, out, trace, *extra, status=status)
                print(f"ok   every line numbered, every cause there: {name} ({len(steps)} steps)")
            except (AssertionError, RuntimeError) as e:
                print(f"FAIL {name}: {e}")
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
