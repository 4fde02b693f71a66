#!/usr/bin/env python3
"""ctest checks of scripts/check_trace.py (the Trace Event Format validator).

    trace_check_test.py --exe VRDMASIM --fixture TRACE_FIXTURE --source SOURCE_DIR

The traces of real runs (two page faults, one write, a multi-board system;
the faults' run also through --trace-window, --trace-filter and
--trace-gzip) and the fixture's trace with flow arrows (written whole and
through spilled sorted runs) must pass; broken copies of the fixture's trace (an unpaired
flow, a flow end outside any slice, an unknown phase, an E without a B, ...)
must each fail with the message that names the fault.
"""
import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_runs  # noqa: E402
from trace_runs import fail  # noqa: E402


def check(script, path):
    p = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def first(doc, pred):
    for i, e in enumerate(doc["traceEvents"]):
        if pred(e):
            return i, e
    fail("the fixture's trace has no event the mutation needs")


def thread_of(doc, name):
    for e in doc["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["args"]["name"] == name:
            return e["pid"], e["tid"]
    fail("no thread %r in the fixture's trace" % name)


# Broken traces: (what, mutation of the fixture's document, expected message part).
def drop_first_f(doc):
    i, _ = first(doc, lambda e: e.get("ph") == "f")
    del doc["traceEvents"][i]


def f_outside_slices(doc):
    _, e = first(doc, lambda e: e.get("ph") == "f")
    e["ts"] = 1000   # past every slice of its thread


def bad_ph(doc):
    _, e = first(doc, lambda e: e.get("ph") == "X")
    e["ph"] = "Q"


def e_without_b(doc):
    pid, tid = thread_of(doc, "vm")
    doc["traceEvents"].append({"ph": "E", "pid": pid, "tid": tid, "name": "page in", "ts": 30})


def b_never_closed(doc):
    pid, tid = thread_of(doc, "vm")
    doc["traceEvents"].append({"ph": "B", "pid": pid, "tid": tid, "name": "lock", "ts": 30})


def overlap(doc):
    pid, tid = thread_of(doc, "dram")
    doc["traceEvents"].append({"ph": "X", "pid": pid, "tid": tid, "name": "read", "ts": 3.1, "dur": 1})


def async_unpaired(doc):
    pid, tid = thread_of(doc, "vm")
    doc["traceEvents"].append({"ph": "e", "pid": pid, "tid": tid, "name": "io", "cat": "async", "id": 1, "ts": 30})


def async_pair(doc):
    pid, tid = thread_of(doc, "vm")
    doc["traceEvents"] += [{"ph": "b", "pid": pid, "tid": tid, "name": "io", "cat": "async", "id": 1, "ts": 30},
                           {"ph": "e", "pid": pid, "tid": tid, "name": "io", "cat": "async", "id": 1, "ts": 31}]


def lane_overlap(doc):
    # The second slice of a lane moved to start inside the first one.
    pid, tid = thread_of(doc, "dma lane 2")
    lane = [e for e in doc["traceEvents"] if e.get("ph") == "X" and (e["pid"], e["tid"]) == (pid, tid)]
    if len(lane) < 2:
        fail("the fixture's lane 'dma lane 2' has fewer than two slices")
    lane[1]["ts"] = lane[0]["ts"] + lane[0]["dur"] / 2
    lane[1]["dur"] = lane[0]["dur"]


def touching_in_doubles(doc):
    # Back-to-back slices whose first ends past the second's start when a
    # viewer adds ts and dur in double precision (9.490322 + 0.144).
    pid, tid = thread_of(doc, "vm")
    doc["traceEvents"] += [{"ph": "X", "pid": pid, "tid": tid, "name": "a", "ts": 9.490322, "dur": 0.144},
                           {"ph": "X", "pid": pid, "tid": tid, "name": "b", "ts": 9.634322, "dur": 0.1}]
    doc["traceEvents"].sort(key=lambda e: (e.get("ph") != "M", e.get("ts", 0)))


def lane_named_late(doc):
    # A lane's name after its first slice.
    evs = doc["traceEvents"]
    i, meta = first(doc, lambda e: e.get("ph") == "M" and e.get("name") == "thread_name"
                    and e["args"]["name"] == "dma lane 2")
    del evs[i]
    evs.append(meta)


def note_without_cat(doc):
    _, e = first(doc, lambda e: e.get("ph") == "X" and e.get("cat") == "cause" and e["name"] == "page in")
    del e["cat"]


def no_thread_name(doc):
    i, _ = first(doc, lambda e: e.get("ph") == "M" and e.get("name") == "thread_name"
                 and e["args"]["name"] == "dram")
    del doc["traceEvents"][i]


def out_of_order(doc):
    evs = doc["traceEvents"]
    i, e = first(doc, lambda e: e.get("ph") == "X" and e["ts"] > 10)
    del evs[i]
    j, _ = first(doc, lambda e: e.get("ph") != "M")
    evs.insert(j, e)


def no_dur(doc):
    _, e = first(doc, lambda e: e.get("ph") == "X")
    del e["dur"]


def string_ts(doc):
    _, e = first(doc, lambda e: e.get("ph") == "i")
    e["ts"] = str(e["ts"])


def flow_renamed(doc):
    _, e = first(doc, lambda e: e.get("ph") == "f")
    e["name"] = "effect"


def bad_unit(doc):
    doc["displayTimeUnit"] = "us"


BROKEN = [
    ("an unpaired flow (s without f)", drop_first_f, "is not one s, steps t and one f"),
    ("a flow end outside any slice", f_outside_slices, "flow event binds to no slice"),
    ("an unknown phase", bad_ph, "unknown phase (ph) 'Q'"),
    ("an E without a B", e_without_b, "E without an open B"),
    ("a B never closed", b_never_closed, "B never closed"),
    ("slices that overlap without nesting", overlap, "without nesting"),
    ("an async end without a begin", async_unpaired, "async end (e) without an open begin"),
    ("async events, which DevTools does not draw", async_pair, "[viewer] an async event"),
    ("slices of a lane that overlap", lane_overlap, "without nesting"),
    ("a lane named after its first slice", lane_named_late, "thread_name after its thread's first event"),
    ("slices that touch but overlap in double precision", touching_in_doubles, "in double precision, past this start"),
    ("a flow's slice without the flow's cat", note_without_cat, "[viewer] no slice of cat 'cause'"),
    ("a thread without a name", no_thread_name, "has no thread_name"),
    ("events out of time order", out_of_order, "out of time order"),
    ("an X without dur", no_dur, "without a finite dur"),
    ("a ts that is a string", string_ts, "is not a finite number"),
    ("a flow whose end has another name", flow_renamed, "changes name"),
    ("a displayTimeUnit that is not ms or ns", bad_unit, "displayTimeUnit 'us'"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    script = os.path.join(args.source, "scripts", "check_trace.py")
    with tempfile.TemporaryDirectory(prefix="vrdmasim_trace_check_") as tmp:
        # Also a run whose faults are recorded out of simulated-time order
        # (THP collapse, terminate mode): once, an arrow from a fault to the
        # handler ended before it started (the handler saw a later fault).
        traces = trace_runs.make_traces(args.exe, args.fixture, args.source, tmp,
                                        extra=["configs/thp-collapse.ini"])
        for label, path in traces:
            rc, out = check(script, path)
            print("$ check_trace.py %s\n%s" % (label, out))
            if rc != 0:
                fail("%s's trace does not pass the Trace Event Format check:\n%s" % (label, out))
        # Bounded traces of a real run pass too: a window, a filter, gzip.
        for label, extra, keep in (
                ("window", ["--trace-window", "10us,30us"],
                 lambda e, names: e["ts"] <= 30 and e["ts"] + e.get("dur", 0) >= 10),
                ("filter", ["--trace-filter", "node1,smmu,cpu"],
                 lambda e, names: names[e["pid"]] == "node1" and re.match(r"(smmu |cpu\d)", names[e["pid"], e["tid"]])),
                ("gzip", ["--trace-gzip"], lambda e, names: True)):
            path = trace_runs.run_config(args.exe, args.source, trace_runs.CONFIGS[0], os.path.join(tmp, label), extra)
            rc, out = check(script, path)
            print("$ check_trace.py %s (%s)\n%s" % (os.path.basename(path), " ".join(extra), out))
            if rc != 0:
                fail("the trace of %s does not pass the Trace Event Format check:\n%s" % (" ".join(extra), out))
            doc = trace_runs.load(path)
            names = {}
            for e in doc["traceEvents"]:
                if e.get("ph") == "M" and e["name"] == "process_name":
                    names[e["pid"]] = e["args"]["name"]
                elif e.get("ph") == "M" and e["name"] == "thread_name":
                    names[e["pid"], e["tid"]] = e["args"]["name"]
            timed = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
            stray = [e for e in timed if not keep(e, names)]
            if not timed or stray:
                fail("%s: %d events, %d outside what it keeps: %s" % (" ".join(extra), len(timed), len(stray), stray[:3]))

        fixture = trace_runs.load(dict(traces)["fixture"])
        flows = trace_runs.flow_pairs(fixture)
        if len(flows) != trace_runs.FIXTURE_FLOWS:
            fail("the fixture's trace has %d flows, not %d" % (len(flows), trace_runs.FIXTURE_FLOWS))
        if trace_runs.load(dict(traces)["fixture-spilled"]) != fixture:
            fail("the fixture's trace differs when written through spilled sorted runs")
        if "%d flows" % trace_runs.FIXTURE_FLOWS not in check(script, dict(traces)["fixture"])[1]:
            fail("check_trace.py does not count the fixture's flows")

        failures = 0
        for what, mutate, expected in BROKEN:
            doc = copy.deepcopy(fixture)
            mutate(doc)
            path = os.path.join(tmp, "broken.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            rc, out = check(script, path)
            if rc != 1 or expected not in out:
                print("FAIL: %s: expected exit 1 and %r, got exit %d:\n%s" % (what, expected, rc, out))
                failures += 1
            else:
                print("rejected %s: %s" % (what, [l for l in out.splitlines() if expected in l][0]))
        with open(os.path.join(tmp, "bad.json"), "w") as f:
            f.write('{"traceEvents": [')
        rc, out = check(script, os.path.join(tmp, "bad.json"))
        if rc != 1 or "not readable JSON" not in out:
            print("FAIL: truncated JSON: exit %d\n%s" % (rc, out))
            failures += 1
        if failures:
            sys.exit(1)
    print("trace_format: %d traces pass, %d broken ones rejected" % (len(traces), len(BROKEN) + 1))


if __name__ == "__main__":
    main()
