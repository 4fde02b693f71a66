#!/usr/bin/env python3
"""ctest link_audit: scripts/audit_links.py on real runs, and on broken
copies of a real run's trace.

    link_audit_test.py --exe VRDMASIM --source SOURCE_DIR

- configs/halo.ini (4 FPGAs of one QFDB, every node sending to every
  other), four rounds, with far buffers too large to run short, in exact
  time order:
  every link's service passes every rule, first ready first served
  checked on all 16 links (docs/clusters.md, *The contention model*,
  quotes these counts);
- the same in `call-approximate` order, audited as if it promised first
  ready first served (--any-order): the rule fails (the approximate
  orders do not promise it; the audit must see that), and only that rule;
- a 4 KiB halo on the torus of configs/torus-cluster.ini with the
  shipped buffers: rules 1 to 3 on every link, rule 4 where credits never
  ran short;
- the exact run's trace broken four ways (two packets on one wire at once;
  a span dropped; a packet started later than the trace's own waits
  account for; one ready before another that started first): each is
  found, by its rule's message.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

BIG = ["--link.buffer=1MiB", "--ni.buffer=1MiB", "--mezz-link.buffer=1MiB", "--board-link.buffer=1MiB"]


def fail(text):
    print("FAIL: " + text)
    sys.exit(1)


def run(exe, source, out, args):
    p = subprocess.run([exe, "run"] + args + ["--trace", "-q", "--out", out], cwd=source, capture_output=True,
                       text=True)
    if p.returncode != 0:
        fail("vrdmasim run %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr[-2000:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.source, "scripts"))
    import audit_links  # noqa: E402

    with tempfile.TemporaryDirectory(prefix="link-audit-") as tmp:
        exact = os.path.join(tmp, "exact")
        run(a.exe, a.source, exact, ["configs/halo.ini", "--workload.iterations=4"] + BIG)
        problems, checked = audit_links.audit(exact, quiet=True)
        if problems:
            fail("exact order, halo.ini: %s" % problems[:5])
        want = {"link": [8, 8, 4128], "ni": [8, 8, 8256]}
        if {k: list(v) for k, v in checked.items()} != want:
            fail("exact order, halo.ini: checked %s, expected %s" % (dict(checked), want))
        print("exact order, halo.ini: 16 links, 12,384 packets, every rule on every link")

        call = os.path.join(tmp, "call")
        run(a.exe, a.source, call,
            ["configs/halo.ini", "--workload.iterations=4", "--router.link-order=call-approximate"] + BIG)
        problems, _ = audit_links.audit(call, quiet=True)
        if problems:
            fail("call-approximate, halo.ini, rules 1 to 3: %s" % problems[:5])
        problems, _ = audit_links.audit(call, quiet=True, any_order=True)
        if not problems or any("ready earlier" not in p and "waited until" not in p for p in problems):
            fail("call-approximate, halo.ini, rule 4: expected its violations alone, got %s" % problems[:5])
        links = len({p.split(":")[0] for p in problems})
        if links != 7:   # docs/clusters.md quotes it
            fail("call-approximate, halo.ini: first ready first served fails on %d links, not 7" % links)
        print("call-approximate, halo.ini: first ready first served fails on %d links, as it should" % links)

        torus = os.path.join(tmp, "torus")
        run(a.exe, a.source, torus, ["configs/torus-cluster.ini", "--workload.kind=halo",
                                      "--workload.message-size=4KiB", "--workload.iterations=1"])
        problems, checked = audit_links.audit(torus, quiet=True)
        if problems:
            fail("exact order, torus halo: %s" % problems[:5])
        # docs/clusters.md quotes both counts.
        if sum(v[0] for v in checked.values()) != 264 or sum(v[1] for v in checked.values()) != 50:
            fail("exact order, torus halo: checked %s" % dict(checked))
        print("exact order, torus halo with the shipped buffers: %s" % dict(checked))

        with open(os.path.join(exact, "trace.json")) as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        spans = [i for i, e in enumerate(events) if e.get("ph") == "X" and "ready" in e.get("args", {})]
        by_track = {}
        for i in spans:
            by_track.setdefault((events[i]["pid"], events[i]["tid"]), []).append(i)
        # Two neighbours on a wire, the second ready before the first
        # started (it waited for it): the mutations' material.
        pair = None
        for track in by_track.values():
            track.sort(key=lambda i: float(events[i]["ts"]))
            pair = next(((p, q) for p, q in zip(track, track[1:])
                         if float(events[q]["args"]["ready"]) < float(events[p]["ts"])), None)
            if pair:
                break
        if not pair:
            fail("exact order, halo.ini: no packet waited for another on any link")

        def broken(name, mutate, expect):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            for f in ("stats.json", "config.ini"):
                shutil.copy(os.path.join(exact, f), d)
            evs = json.loads(json.dumps(events))
            mutate(evs)
            with open(os.path.join(d, "trace.json"), "w") as f:
                json.dump({"traceEvents": evs}, f)
            problems, _ = audit_links.audit(d, quiet=True)
            if not any(expect in p for p in problems):
                fail("%s: no problem says %r: %s" % (name, expect, problems[:5]))
            print("%s: found (%s)" % (name, next(p for p in problems if expect in p)))

        p, q = pair

        def overlap(evs):
            evs[q]["ts"] = round(float(evs[q]["ts"]) - float(evs[p]["dur"]) / 2, 6)
            evs[q]["args"]["ready"] = min(float(evs[q]["args"]["ready"]), evs[q]["ts"])

        def dropped(evs):
            evs[q]["ph"] = "i"

        def late(evs):
            # The second starts a nanosecond later than it did: it waited
            # with the wire free, which its link's credit stalls do not say.
            for i in track[track.index(q):]:
                evs[i]["ts"] = round(float(evs[i]["ts"]) + 0.001, 6)

        def passed(evs):
            # The second was ready before the first: the first passed it.
            evs[q]["args"]["ready"] = round(float(evs[p]["args"]["ready"]) - 0.001, 6)

        broken("overlap", overlap, "has ended")
        broken("dropped", dropped, "spans in the trace")
        broken("late", late, "credit_stall_time")
        broken("passed", passed, "waited until")
    print("link_audit: passed")


if __name__ == "__main__":
    main()
