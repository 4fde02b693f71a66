"""Traces for the trace checks (trace_check_test.py, trace_viewer_test.py):
real runs of shipped configurations and the fixture's trace with flows."""
import gzip
import json
import os
import subprocess
import sys

# Two page faults (one terminated), one write, and a multi-board system (8 nodes).
CONFIGS = ["configs/tutorial/03-faults-terminate.ini", "configs/tutorial/01-one-write.ini",
           "configs/exanest-prototype.ini"]
FIXTURE_FLOWS = 5   # arrows the fixture notes (tests/core/trace_fixture.cpp)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run_config(exe, source, config, out, extra=()):
    """The trace of a run of `config` (trace.json, or trace.json.gz with --trace-gzip in `extra`)."""
    cmd = [exe, "run", os.path.join(source, config), "--trace", "--quiet", "--no-progress", "--out", out] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):   # 3: transfers failed by design (a terminated fault)
        fail("%s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    path = os.path.join(out, "trace.json.gz" if "--trace-gzip" in extra else "trace.json")
    if not os.path.exists(path):
        fail("%s wrote no trace.json" % " ".join(cmd))
    return path


def make_traces(exe, fixture, source, tmp, extra=()):
    """[(label, path)] of the real runs' traces (CONFIGS, then `extra`) and the fixture's."""
    out = []
    for config in list(CONFIGS) + list(extra):
        label = os.path.splitext(os.path.basename(config))[0]
        out.append((label, run_config(exe, source, config, os.path.join(tmp, label))))
    for label, spill in (("fixture", None), ("fixture-spilled", "64")):
        path = os.path.join(tmp, label + ".json")
        p = subprocess.run([fixture, path] + ([spill] if spill else []), capture_output=True, text=True)
        if p.returncode != 0:
            fail("trace_fixture exited %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        out.append((label, path))
    return out


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def flow_pairs(doc):
    """{(cat, id): [events]} of the trace's flow events."""
    flows = {}
    for e in doc["traceEvents"]:
        if e.get("ph") in ("s", "t", "f"):
            flows.setdefault((e.get("cat"), str(e.get("id"))), []).append(e)
    return flows
