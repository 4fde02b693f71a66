#!/usr/bin/env python3
"""Audit every link of a run from its trace, against the contention model
and against the run's own statistics.

A run with `--trace` records each packet's crossing of each link as a span
on the link's track: when it started and ended on the wire (`ts`, `dur`)
and when it was ready to start there (`args.ready`: its head at the link,
or through its router's pipeline; for a network interface's link, when its
sender presented it). This script rebuilds each link's service from those
spans alone, in code of its own, and checks, per link:

  1. one wire: no two of its packets overlap;
  2. its packets are its statistics' (`<link>.packets`), and their wire
     times sum to its `<link>.busy_time`;
  3. a packet waits with the wire free only for credits: the sum over its
     packets of start - max(ready, the previous packet's end) is
     `<link>.credit_stall_time`, and the sum of start - ready is
     `<link>.queue_delay`'s (count times mean);
  4. first ready, first served (links in exact time order,
     `router.link-order = exact`, the default: docs/clusters.md, *The
     contention model*): no packet starts while another that was ready
     strictly before it still waits. Checked where credits never ran short:
     every VC buffer of the link's far end held at most its size less the
     link's largest packet (`<link>.vc<k>.buffer_hwm`), so that no packet
     ever lacked credits to start; elsewhere a packet may pass one that
     waits for credits, and the link is counted as not checked.

The trace must be the whole run's: one recorded with --trace-window
holds part of each link's packets, and fails rules 2 and 3 (with
--trace-filter the links of the nodes left out are not audited). Prints a
line per link class checked and one per violation (at most --show); exit
status 1 if any, 0 otherwise (2 for outputs it cannot read).

    build/vrdmasim run configs/halo.ini --trace --out out/h
    python3 scripts/audit_links.py out/h
"""
import argparse
import configparser
import json
import math
import os
import re
import sys
from collections import defaultdict

FLIT = 16   # bytes: a 128-bit flit (models/interconnect/exanet_packet.hpp)
BOARD = re.compile(r"^x(\d+)y(\d+)z(\d+)f(\d+)$")


def ps(us):
    """Microseconds as the trace writes them, in whole picoseconds."""
    return int(round(float(us) * 1e6))


def read_config(path):
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=None)
    with open(path) as f:
        cp.read_string(f.read())
    return cp


def size_bytes(text):
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]i?B|B)?\s*", text)
    if not m:
        raise ValueError("not a size: %r" % text)
    mult = {None: 1, "B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "KB": 1000, "MB": 1000 ** 2,
            "GB": 1000 ** 3}[m.group(2)]
    return int(m.group(1)) * mult


def link_class(proc, track, kind):
    """The stat prefix of the link whose track this is, and its parameter
    section (src/sim/node.cpp, src/sim/system.cpp name them)."""
    if track == "ni->router":
        return proc + ".inject", "ni"
    if track == "router->ni":
        return proc + ".eject", "ni"
    if track.startswith("link->"):
        far = track[len("link->"):]
        a, b = BOARD.match(proc), BOARD.match(far)
        same_board = not (a and b) or a.groups()[:3] == b.groups()[:3]
        section = "link" if same_board else ("mezz-link" if kind == "mezzanine" else "board-link")
        return proc + "_to_" + far, section
    return None, None


def load(out):
    with open(os.path.join(out, "trace.json")) as f:
        doc = json.load(f)
    with open(os.path.join(out, "stats.json")) as f:
        stats = json.load(f)
    return (doc["traceEvents"] if isinstance(doc, dict) else doc), stats, read_config(os.path.join(out, "config.ini"))


def spans_by_link(events, kind):
    procs, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    links = defaultdict(list)   # (stat prefix, section) -> [(ready, start, end, bytes, label)]
    for e in events:
        if e.get("ph") != "X" or "ready" not in e.get("args", {}):
            continue
        key = link_class(procs.get(e["pid"], ""), threads.get((e["pid"], e["tid"]), ""), kind)
        if key[0] is None:
            continue
        start = ps(e["ts"])
        end = ps(float(e["ts"]) + float(e["dur"]))
        a = e["args"]
        label = "%s seq %s" % (a.get("transfer"), a.get("seq"))
        links[key].append((ps(a["ready"]), start, end, int(a.get("bytes", 0)), label))
    return links


def close(a, b, n):
    """Two sums of n terms, one from picoseconds, one a statistic's double."""
    return abs(a - b) <= 1e-6 * (1 + n) + 1e-9 * abs(b)


def audit(out, show=5, quiet=False, any_order=False):
    events, stats, cfg = load(out)
    kind = cfg.get("topology", "kind", fallback="qfdb").strip()
    order = cfg.get("router", "link-order", fallback="exact").strip()
    links = spans_by_link(events, kind)
    problems = []
    checked = defaultdict(lambda: [0, 0, 0])   # section -> [links, links checked for rule 4, packets]

    def bad(link, text):
        problems.append("%s: %s" % (link, text))

    for (link, section), spans in sorted(links.items()):
        spans.sort(key=lambda s: (s[1], s[2]))
        counted = checked[section]
        counted[0] += 1
        counted[2] += len(spans)
        # 1. One wire.
        n_bad = 0
        for p, q in zip(spans, spans[1:]):
            if q[1] < p[2]:
                n_bad += 1
                if n_bad <= show:
                    bad(link, "%s starts at %d ps, before %s has ended (%d ps)" % (q[4], q[1], p[4], p[2]))
        # 2. The counts.
        if stats.get(link + ".packets") != len(spans):
            bad(link, "%d spans in the trace, %s packets in stats.json (a trace of the whole run? --trace-window "
                "records part of it, and cannot be audited)" % (len(spans), stats.get(link + ".packets")))
        # 3. Waits with the wire free, and waits in all.
        stall = wait = busy = 0
        prev_end = None
        for ready, start, end, _, label in spans:
            busy += end - start
            if start < ready:
                bad(link, "%s starts at %d ps, before it was ready (%d ps)" % (label, start, ready))
            free_from = ready if prev_end is None else max(ready, prev_end)
            stall += max(0, start - free_from)
            wait += start - ready
            prev_end = end
        st = stats.get(link + ".credit_stall_time")
        if st is not None and not close(stall / 1e6, st, len(spans)):
            bad(link, "waits with the wire free sum to %.6f us in the trace, credit_stall_time is %.6f us"
                % (stall / 1e6, st))
        bt = stats.get(link + ".busy_time")
        if bt is not None and not close(busy / 1e6, bt, len(spans)):
            bad(link, "its packets' wire times sum to %.6f us in the trace, busy_time is %.6f us" % (busy / 1e6, bt))
        qd = stats.get(link + ".queue_delay")
        if isinstance(qd, dict) and qd.get("count"):
            if not close(wait / 1e3, qd["count"] * qd["mean"], len(spans)):
                bad(link, "waits sum to %.3f ns in the trace, queue_delay to %.3f ns"
                    % (wait / 1e3, qd["count"] * qd["mean"]))
        # 4. First ready, first served, where no packet lacked credits.
        if order != "exact" and not any_order:
            continue
        buffer_flits = size_bytes(cfg.get(section, "buffer")) // FLIT
        largest = max((2 + math.ceil(s[3] / FLIT) for s in spans), default=0)
        hwm = [v for k, v in stats.items() if k.startswith(link + ".vc") and k.endswith(".buffer_hwm")]
        if not hwm or max(hwm) + largest > buffer_flits:
            continue
        counted[1] += 1
        n_bad = 0
        # Walking the starts in order, the packets ready before each start
        # and not yet started: the earliest of them must be the one that
        # starts (ties in readiness go by the model's queue order, not
        # checked here).
        by_ready = sorted(range(len(spans)), key=lambda i: spans[i][0])
        started = [False] * len(spans)
        k = 0   # by_ready[k:] not yet started, possibly
        for i, (ready, start, _, _, label) in enumerate(spans):
            started[i] = True
            while k < len(by_ready) and started[by_ready[k]]:
                k += 1
            if k < len(by_ready):
                j = by_ready[k]
                if spans[j][0] < ready:
                    n_bad += 1
                    if n_bad <= show:
                        bad(link, "%s started at %d ps (ready at %d ps) while %s, ready at %d ps, waited until %d ps"
                            % (label, start, ready, spans[j][4], spans[j][0], spans[j][1]))
        if n_bad > show:
            bad(link, "and %d more packets served before one ready earlier" % (n_bad - show))
    if not quiet:
        print("%s: links in %s order; rules 1 to 3 on every link, rule 4 (first ready, first served) where "
              "no packet lacked credits%s" % (out, order, "" if order == "exact" or any_order else
                                              " (not promised in this order: --any-order checks it)"))
        for section, (n, strict, packets) in sorted(checked.items()):
            print("  %s: %d links, %d packets; rule 4 on %d of them" % (section, n, packets, strict))
        for p in problems:
            print(p)
        print("%d problems" % len(problems))
    return problems, checked


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="a run's output directory (trace.json, stats.json, config.ini)")
    ap.add_argument("--show", type=int, default=5, help="violations listed per link and rule")
    ap.add_argument("--any-order", action="store_true",
                    help="check rule 4 in the approximate link orders too, which do not promise it (they "
                         "serve by call, or the first to call takes an interval: a run in one says so)")
    args = ap.parse_args(argv)
    try:
        problems, checked = audit(args.out, args.show, any_order=args.any_order)
    except (OSError, ValueError, KeyError) as e:
        print("audit_links: %s" % e, file=sys.stderr)
        return 2
    if not checked:
        print("audit_links: no link spans with their readiness in %s (a run with --trace?)" % args.out,
              file=sys.stderr)
        return 2
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
