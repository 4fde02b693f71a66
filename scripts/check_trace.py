#!/usr/bin/env python3
"""Check a Chrome trace-event JSON file (vrdmasim's trace.json) against the
Trace Event Format, and against what the viewers need to draw it.

    scripts/check_trace.py TRACE.json [TRACE.json.gz ...] [--quiet]

Exit status 0 when every file passes, 1 when one has errors (each printed as
"FILE: event N (ph, name, pid/tid, ts): what is wrong"), 2 on a bad command line.

What is checked, from the format's specification ("Trace Event Format",
the document chrome://tracing, Perfetto and the DevTools Performance panel
import; a [viewer] rule is what a viewer needs beyond the text):
  - the file: a JSON object with a "traceEvents" array (or a bare array);
    "displayTimeUnit", when given, is "ms" or "ns";
  - every event: an object with a known "ph"; "name" a string; "pid" and
    "tid" integers; "ts" a finite number of microseconds (not for "M");
    "args", when given, an object; "cat", when given, a string;
  - "X": "dur" a finite number >= 0;
  - "B"/"E": each E closes the innermost open B of its thread (and has its
    name, when named), no B left open; B/E and X slices of one thread nest
    (a slice starting inside another ends inside it) [viewer: chrome://tracing
    warns, Perfetto and DevTools drop or misdraw the overlapping one], also
    in double precision: a slice that starts where another ends must not
    start before that one's ts + dur as a viewer adds them [viewer: the
    DevTools panel drops one of the two];
  - "i"/"I": "s" (scope), when given, is "g", "p" or "t";
  - "b"/"n"/"e" (nestable async): "cat" and "id" given; an "e" closes an open
    "b" of the same cat, id and name, no earlier than it began; no "b" left open;
  - "s"/"t"/"f" (flow): "cat" and "id" given; one "s" starts a flow (cat, id),
    "t" steps and one "f" ends it, in time order, same name throughout
    [viewer: DevTools groups flows by cat, name and id]; "bp", when given,
    is "e"; an "s" or "t", and an "f" with "bp":"e", lies inside a slice of its
    thread (the enclosing slice it binds to), an "f" without it has a slice
    starting at or after it on its thread; [viewer: the DevTools Performance
    panel binds a flow event only to a slice of its thread that starts at the
    same ts and has the same cat: otherwise it draws no arrow];
  - "M": name is process_name, process_labels, process_sort_index,
    thread_name or thread_sort_index, with the matching args (name/labels a
    string, sort_index an integer); thread_* ones have a tid; one name per
    process or thread;
  - vrdmasim's own promises: every thread that has events has a thread_name
    and its process a process_name (a viewer shows "Thread 5" otherwise),
    given before the thread's (process's) first timed event; timed events
    come in non-decreasing ts order; no async events (b/n/e) [viewer: the
    DevTools Performance panel draws none; vrdmasim writes spans that
    overlap as slices on lane threads, "<track> lane <N>", whose slices
    nest like any thread's].
A file whose name ends in .gz is read gzip-compressed (--trace-gzip).
"""
import argparse
import bisect
import gzip
import json
import math
import sys

PHASES = set("BEXiIbneSTpFstfPNODMCVvRc()")  # every phase the specification defines
METADATA = {
    "process_name": ("name", str),
    "process_labels": ("labels", str),
    "process_sort_index": ("sort_index", int),
    "thread_name": ("name", str),
    "thread_sort_index": ("sort_index", int),
}
EPS = 1e-9  # us: ts values are decimal text, compared after float parsing


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))


class Checker:
    def __init__(self, path):
        self.path = path
        self.errors = []
        self.counts = {}

    def err(self, i, ev, text):
        if isinstance(ev, dict):
            where = "event %d (%s %r, %s/%s, ts %s)" % (i, ev.get("ph"), ev.get("name"), ev.get("pid"),
                                                       ev.get("tid"), ev.get("ts"))
        else:
            where = "event %d" % i
        self.errors.append("%s: %s: %s" % (self.path, where, text))

    def run(self, doc):
        if isinstance(doc, list):
            events = doc
        elif isinstance(doc, dict):
            events = doc.get("traceEvents")
            if not isinstance(events, list):
                self.errors.append("%s: no \"traceEvents\" array" % self.path)
                return
            unit = doc.get("displayTimeUnit")
            if unit is not None and unit not in ("ms", "ns"):
                self.errors.append("%s: displayTimeUnit %r is neither \"ms\" nor \"ns\"" % (self.path, unit))
        else:
            self.errors.append("%s: neither an object nor an array" % self.path)
            return
        good = []
        for i, ev in enumerate(events):
            if self.check_fields(i, ev):
                good.append((i, ev))
                self.counts[ev["ph"]] = self.counts.get(ev["ph"], 0) + 1
        self.check_order(good)
        self.check_metadata(good)
        slices = self.check_slices(good)
        self.check_async(good)
        self.check_flows(good, slices)

    # --- one event at a time ------------------------------------------------
    def check_fields(self, i, ev):
        if not isinstance(ev, dict):
            self.err(i, ev, "not an object")
            return False
        ph = ev.get("ph")
        if not isinstance(ph, str) or ph not in PHASES:
            self.err(i, ev, "unknown phase (ph) %r" % (ph,))
            return False
        ok = True
        if not isinstance(ev.get("name"), str):
            self.err(i, ev, "no name (a string)")
            ok = False
        if not is_int(ev.get("pid")):
            self.err(i, ev, "pid %r is not an integer" % (ev.get("pid"),))
            ok = False
        needs_tid = not (ph == "M" and str(ev.get("name", "")).startswith("process_"))
        if needs_tid and not is_int(ev.get("tid")):
            self.err(i, ev, "tid %r is not an integer" % (ev.get("tid"),))
            ok = False
        if ph != "M" and not is_num(ev.get("ts")):
            self.err(i, ev, "ts %r is not a finite number (microseconds)" % (ev.get("ts"),))
            ok = False
        if "args" in ev and not isinstance(ev["args"], dict):
            self.err(i, ev, "args is not an object")
            ok = False
        if "cat" in ev and not isinstance(ev["cat"], str):
            self.err(i, ev, "cat is not a string")
            ok = False
        if ph == "X":
            dur = ev.get("dur")
            if not is_num(dur) or dur < 0:
                self.err(i, ev, "complete event (X) without a finite dur >= 0 (got %r)" % (dur,))
                ok = False
        if ph in "iI" and "s" in ev and ev["s"] not in ("g", "p", "t"):
            self.err(i, ev, "instant scope s %r is not g, p or t" % (ev["s"],))
            ok = False
        if ph in "bnestf":
            kind = "async" if ph in "bne" else "flow"
            if not isinstance(ev.get("cat"), str):
                self.err(i, ev, "%s event without a cat" % kind)
                ok = False
            if not (is_int(ev.get("id")) or isinstance(ev.get("id"), str)):
                self.err(i, ev, "%s event without an id" % kind)
                ok = False
        if ph in "stf" and "bp" in ev and ev["bp"] != "e":
            self.err(i, ev, "flow binding point bp %r is not \"e\"" % (ev["bp"],))
            ok = False
        if ph == "M":
            spec = METADATA.get(ev.get("name"))
            if spec is None:
                self.err(i, ev, "unknown metadata name %r" % (ev.get("name"),))
                return False
            key, typ = spec
            args = ev.get("args")
            val = args.get(key) if isinstance(args, dict) else None
            if not (is_int(val) if typ is int else isinstance(val, typ)):
                self.err(i, ev, "metadata %s needs args.%s (%s)" % (ev["name"], key, typ.__name__))
                ok = False
        return ok

    # --- across events -------------------------------------------------------
    def check_order(self, good):
        last = None
        seen_process, seen_thread = set(), set()   # with timed events so far
        for i, ev in good:
            if ev["ph"] == "M":
                if ev["name"].startswith("process_") and ev["pid"] in seen_process:
                    self.err(i, ev, "%s after its process's first event (vrdmasim names a process before it)"
                             % ev["name"])
                elif ev["name"].startswith("thread_") and (ev["pid"], ev["tid"]) in seen_thread:
                    self.err(i, ev, "%s after its thread's first event (vrdmasim names a thread, a lane "
                             "too, before it)" % ev["name"])
                continue
            seen_process.add(ev["pid"])
            seen_thread.add((ev["pid"], ev["tid"]))
            if ev["ph"] in "bne":
                self.err(i, ev, "[viewer] an async event (%s): the DevTools Performance panel does not draw "
                         "async events (vrdmasim writes spans that overlap as slices on lanes)" % ev["ph"])
            if last is not None and ev["ts"] < last - EPS:
                self.err(i, ev, "out of time order: ts %s after %s" % (ev["ts"], last))
            last = ev["ts"]

    def check_metadata(self, good):
        pnames, tnames = {}, {}
        for i, ev in good:
            if ev["ph"] != "M" or ev["name"] not in ("process_name", "thread_name"):
                continue
            key, table = (ev["pid"], pnames) if ev["name"] == "process_name" else ((ev["pid"], ev["tid"]), tnames)
            name = ev["args"]["name"]
            if key in table and table[key] != name:
                self.err(i, ev, "%s %r given before as %r" % (ev["name"], name, table[key]))
            table[key] = name
        self.process_names, self.thread_names = pnames, tnames
        missing_p, missing_t = set(), set()
        for i, ev in good:
            if ev["ph"] == "M":
                continue
            if ev["pid"] not in pnames and ev["pid"] not in missing_p:
                missing_p.add(ev["pid"])
                self.err(i, ev, "process %d has no process_name" % ev["pid"])
            key = (ev["pid"], ev["tid"])
            if key not in tnames and key not in missing_t:
                missing_t.add(key)
                self.err(i, ev, "thread %d/%d has no thread_name" % key)

    def check_slices(self, good):
        """B/E pairing and nesting of B/E and X slices per thread. Returns per
        thread the slices as (start, end, cat, index)."""
        per_thread = {}
        for i, ev in good:
            if ev["ph"] in "BEX":
                per_thread.setdefault((ev["pid"], ev["tid"]), []).append((i, ev))
        slices = {}
        for key, evs in per_thread.items():
            out = []
            open_b = []
            for i, ev in sorted(evs, key=lambda p: (p[1]["ts"], p[0])):
                if ev["ph"] == "B":
                    open_b.append((i, ev))
                elif ev["ph"] == "E":
                    if not open_b:
                        self.err(i, ev, "E without an open B on its thread")
                        continue
                    bi, b = open_b.pop()
                    if ev.get("name") and ev["name"] != b["name"]:
                        self.err(i, ev, "E named %r closes B %r (event %d)" % (ev["name"], b["name"], bi))
                    out.append((b["ts"], ev["ts"], b.get("cat"), bi))
                else:
                    out.append((ev["ts"], ev["ts"] + ev["dur"], ev.get("cat"), i))
            for bi, b in open_b:
                self.err(bi, b, "B never closed by an E")
            # Nesting: sorted by start, longest first; a slice that starts
            # inside the innermost enclosing one must end inside it too.
            out.sort(key=lambda s: (s[0], -(s[1] - s[0]), s[3]))
            stack = []
            for s in out:
                # pop the slices that ended before s starts (a zero-length
                # slice at an end is still inside)
                while stack and s[0] >= stack[-1][1] - EPS and s[1] > stack[-1][1] + EPS:
                    if stack[-1][1] > s[0]:
                        p = stack[-1]
                        self.err(s[3], good_event(good, s[3]),
                                 "[viewer] starts where slice event %d ends, but that one's ts + dur is %r in "
                                 "double precision, past this start: the DevTools Performance panel drops one "
                                 "of the two (write dur so that ts + dur does not pass the end)" % (p[3], p[1]))
                    stack.pop()
                if stack and s[1] > stack[-1][1] + EPS:
                    p = stack[-1]
                    self.err(s[3], good_event(good, s[3]),
                             "slice [%s, %s] overlaps slice event %d [%s, %s] on its thread without nesting"
                             % (s[0], s[1], p[3], p[0], p[1]))
                    continue
                stack.append(s)
            slices[key] = sorted(out)
        return slices

    def check_async(self, good):
        open_spans = {}
        for i, ev in good:
            if ev["ph"] not in "be":
                continue
            key = (ev["cat"], str(ev["id"]), ev["name"])
            if ev["ph"] == "b":
                open_spans.setdefault(key, []).append((i, ev))
            else:
                if not open_spans.get(key):
                    self.err(i, ev, "async end (e) without an open begin (b) of cat %r, id %s, name %r"
                             % key)
                    continue
                bi, b = open_spans[key].pop()
                if ev["ts"] < b["ts"] - EPS:
                    self.err(i, ev, "async end before its begin (event %d)" % bi)
        for key, left in open_spans.items():
            for bi, b in left:
                self.err(bi, b, "async begin (b) never ended (no e of cat %r, id %s, name %r)" % key)

    def check_flows(self, good, slices):
        flows = {}
        for i, ev in good:
            if ev["ph"] in "stf":
                flows.setdefault((ev["cat"], str(ev["id"])), []).append((i, ev))
        self.flow_count = 0
        index = {}
        for key, sl in slices.items():   # per thread: starts, running max of ends, starts by cat
            starts, max_end, starting, m = [], [], {}, -math.inf
            for start, end, cat, _ in sl:
                starts.append(start)
                m = max(m, end)
                max_end.append(m)
                starting.setdefault(cat, {}).setdefault(round(start, 6), []).append(start)
            index[key] = {"starts": starts, "max_end": max_end, "starting": starting}
        empty = {"starts": [], "max_end": [], "starting": {}}
        for (cat, fid), evs in flows.items():
            phs = "".join(ev["ph"] for _, ev in evs)
            i0, e0 = evs[0]
            if phs.count("s") != 1 or phs.count("f") != 1 or phs[0] != "s" or phs[-1] != "f":
                self.err(i0, e0, "flow cat %r id %s is not one s, steps t and one f in that order (got %r)"
                         % (cat, fid, phs))
                continue
            self.flow_count += 1
            names = {ev["name"] for _, ev in evs}
            if len(names) > 1:
                self.err(i0, e0, "flow cat %r id %s changes name %s" % (cat, fid, sorted(names)))
            for (_, a), (j, b) in zip(evs, evs[1:]):
                if b["ts"] < a["ts"] - EPS:
                    self.err(j, b, "flow cat %r id %s goes back in time" % (cat, fid))
            for i, ev in evs:
                self.check_binding(i, ev, index.get((ev["pid"], ev["tid"]), empty))

    def check_binding(self, i, ev, thread):
        ts = ev["ts"]
        starts, max_end, starting = thread["starts"], thread["max_end"], thread["starting"]
        k = bisect.bisect_right(starts, ts + EPS)   # slices starting at or before ts
        if ev["ph"] in "st" or ev.get("bp") == "e":
            if k == 0 or max_end[k - 1] < ts - EPS:
                self.err(i, ev, "flow event binds to no slice: none on its thread encloses ts %s" % ts)
                return
        elif bisect.bisect_left(starts, ts - EPS) == len(starts):
            self.err(i, ev, "flow end binds to no slice: none on its thread starts at or after ts %s" % ts)
            return
        if not any(abs(start - ts) <= EPS for start in starting.get(ev["cat"], {}).get(round(ts, 6), ())):
            self.err(i, ev, "[viewer] no slice of cat %r starts at ts %s on its thread: the DevTools "
                     "Performance panel binds flows only to such a slice, and draws no arrow" % (ev["cat"], ts))


def good_event(good, index):
    for i, ev in good:
        if i == index:
            return ev
    return {}


def check_file(path):
    c = Checker(path)
    try:
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            doc = json.load(f)
    except (OSError, ValueError, EOFError) as e:
        c.errors.append("%s: not readable JSON: %s" % (path, e))
        return c
    c.run(doc)
    return c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--quiet", action="store_true", help="print errors only")
    args = ap.parse_args(argv)
    failed = False
    for path in args.traces:
        c = check_file(path)
        for e in c.errors:
            print(e)
        if c.errors:
            failed = True
            print("%s: %d error(s)" % (path, len(c.errors)))
        elif not args.quiet:
            counts = " ".join("%s:%d" % kv for kv in sorted(c.counts.items()))
            print("%s: ok (%s; %d flows)" % (path, counts, getattr(c, "flow_count", 0)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
