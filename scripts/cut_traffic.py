#!/usr/bin/env python3
"""What a cut of a torus into MPI ranks would carry: the figures behind
docs/scaling.md, measured from one run's own statistics.

    scripts/cut_traffic.py OUT --ranks PX,PY,PZ [--ranks ...]

OUT is a `vrdmasim run` output directory of a torus (`topology.kind =
torus`). Each --ranks splits the torus's boards into PX x PY x PZ blocks of
contiguous boards (a QFDB is never split: the cut runs along board links
only, whose latency is the lookahead). For each partition it prints, from
the links' `packets` statistics in OUT/stats.json:

- packets that crossed a cut (board links between ranks), and their share of
  all router-to-router packet-hops;
- the lookahead L (board-link.latency from OUT/config.ini) and the number of
  windows of length L in the run (sim_seconds / L);
- per window: packets crossing cuts (all ranks, and the busiest rank's
  sends), the models' transactions (sim_events, the sum of every
  `*.transactions` counter, / windows), and packet-hops, in all and on the
  busiest rank (its routers' `packets`): the balance of the work;
- the speed-up that implies, T1 / TP per window: one rank spends c x (all
  packet-hops) per window, P ranks c x (busiest rank's packet-hops) + s +
  m x (its cut sends), with c the host cost per packet-hop (--hop-cost;
  default this run's own host_seconds / packet_hops), s the cost of one
  window's synchronisation (--sync-cost, default 5 us, an *estimate* of an
  MPI reduction across a cluster) and m the cost of one cut packet's message
  (--message-cost, default 1 us, an *estimate*). Every window is counted,
  none skipped.

--markdown prints the partitions as the Markdown table docs/scaling.md
quotes, and nothing else (a `<!-- output: -->` block there, checked by
scripts/tutorial.py): one row a partition, its ranks written "PX × PY × PZ =
P" (one rank: "1"; a board each: "... (a board each)"), counts with
thousands separators, shares to two decimals, figures per window to two
decimals below 10 and one from 10, the speed-up to one decimal. Give
--hop-cost with it: the run's own host time differs from run to run, and a
table that a test compares must not (--markdown without it is refused).

Exit status 2 on a directory that is not a torus run, or a partition that
does not divide the torus's boards into blocks of at least one board.
"""
import argparse
import configparser
import csv
import json
import os
import re
import sys

NODE = re.compile(r"^x(\d+)y(\d+)z(\d+)f(\d)$")
TIME = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def fail(msg):
    print("cut_traffic: error: " + msg, file=sys.stderr)
    sys.exit(2)


def seconds(text):
    m = re.match(r"^\s*([0-9.]+)\s*(ps|ns|us|ms|s)\s*$", text)
    if not m:
        fail("cannot read the time %r" % text)
    return float(m.group(1)) * TIME[m.group(2)]


def block(coord, size, parts):
    # Boards 0..size-1 in `parts` contiguous blocks, the first size % parts
    # one board larger.
    base, extra = divmod(size, parts)
    edge = 0
    for p in range(parts):
        edge += base + (1 if p < extra else 0)
        if coord < edge:
            return p
    return parts - 1


def partition(spec, dims, links, routers, hops, windows, events, c, args):
    """One --ranks partition's figures: cut packets, the busiest rank's sends
    and packet-hops per window, and the speed-up they imply."""
    try:
        parts = [int(v) for v in spec.split(",")]
    except ValueError:
        parts = []
    if len(parts) != 3 or any(p < 1 or p > d for p, d in zip(parts, dims)):
        fail("--ranks %s: expected PX,PY,PZ with 1 <= Pk <= the torus's boards in that dimension (%d,%d,%d)"
             % (spec, dims[0], dims[1], dims[2]))

    def rank(board):
        return tuple(block(x, d, p) for x, d, p in zip(board, dims, parts))

    cut = 0
    sends = {}
    for a, b, n in links:
        ra, rb = rank(a), rank(b)
        if ra != rb:
            cut += n
            sends[ra] = sends.get(ra, 0) + n
    load = {}
    for board, n in routers.items():
        load[rank(board)] = load.get(rank(board), 0) + n
    nranks = parts[0] * parts[1] * parts[2]
    busiest_send = max(sends.values()) if sends else 0
    busiest_load = max(load.values()) if load else 0
    total_load = sum(load.values())
    busiest_hops = busiest_load * hops / total_load / windows if total_load else 0
    t1 = c * 1e-3 * hops / windows   # us per window on one rank
    tp = c * 1e-3 * busiest_hops + (args.sync_cost + args.message_cost * busiest_send / windows
                                    if nranks > 1 else 0)
    return {"parts": parts, "nranks": nranks, "cut": cut, "busiest_send": busiest_send,
            "busiest_hops": busiest_hops, "imbalance": busiest_load * nranks / total_load if total_load else 0,
            "speedup": t1 / tp if tp > 0 else 0, "hops": hops, "windows": windows, "events": events}


def per_window(x):
    """A figure per window as docs/scaling.md writes it."""
    return "0" if x == 0 else "%.2f" % x if x < 10 else "%.1f" % x


def markdown(rows, dims):
    """The partitions as docs/scaling.md's Markdown table."""
    lines = ["| ranks | cut packets | of all packet-hops | per window: cut | busiest rank's sends | transactions "
             "| packet-hops, all (busiest rank) | implied speed-up |", "|---|---|---|---|---|---|---|---|"]
    boards = dims[0] * dims[1] * dims[2]
    for r in rows:
        n = r["nranks"]
        label = "1" if n == 1 else "%s = %d" % (" × ".join(map(str, r["parts"])), n)
        if n == boards and n > 1:
            label += " (a board each)"
        hops, windows = r["hops"], r["windows"]
        lines.append("| %s | %s | %s | %s | %s | %s | %.1f (%.1f) | %s |"
                     % (label, "{:,}".format(r["cut"]), "0 %" if not r["cut"] else "%.2f %%" % (100.0 * r["cut"] / hops),
                        per_window(r["cut"] / windows), per_window(r["busiest_send"] / windows),
                        "{:,.0f}".format(r["events"] / windows), hops / windows, r["busiest_hops"],
                        "1" if n == 1 else "%.1f" % r["speedup"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", action="append", required=True, help="PX,PY,PZ blocks of boards")
    ap.add_argument("--hop-cost", type=float, help="host ns per packet-hop on one rank (default: this run's)")
    ap.add_argument("--sync-cost", type=float, default=5.0, help="us per window's synchronisation (estimate)")
    ap.add_argument("--message-cost", type=float, default=1.0, help="us per cut packet sent (estimate)")
    ap.add_argument("--markdown", action="store_true", help="print docs/scaling.md's table only")
    args = ap.parse_args()
    if args.markdown and not args.hop_cost:
        fail("--markdown needs --hop-cost: a table a test compares cannot hold this run's host time")
    try:
        with open(os.path.join(args.out, "stats.json")) as f:
            stats = json.load(f)
        with open(os.path.join(args.out, "summary.csv"), newline="") as f:
            summary = list(csv.DictReader(f))[0]
        cfg = configparser.ConfigParser(inline_comment_prefixes=("#", ";"))
        cfg.read(os.path.join(args.out, "config.ini"))
    except (OSError, ValueError, IndexError) as e:
        fail("%s: not a vrdmasim run's output (%s)" % (args.out, e))
    if cfg.get("topology", "kind", fallback="") != "torus":
        fail("%s: not a torus run (topology.kind = %s)" % (args.out, cfg.get("topology", "kind", fallback="?")))
    dims = [cfg.getint("topology", k) for k in ("x", "y", "z")]
    lookahead = seconds(cfg.get("board-link", "latency"))
    sim = float(summary["sim_seconds"])
    events = float(summary["sim_events"])
    windows = sim / lookahead

    links = []   # (from board, to board, packets), one per link
    for key, value in stats.items():
        if key.endswith(".packets") and "_to_" in key:
            a, b = key[: -len(".packets")].split("_to_")
            ma, mb = NODE.match(a), NODE.match(b)
            if ma and mb:
                links.append((tuple(map(int, ma.groups()[:3])), tuple(map(int, mb.groups()[:3])), int(value)))
    routers = {}   # board -> packets through its four routers
    for key, value in stats.items():
        m = re.match(r"^x(\d+)y(\d+)z(\d+)f\d\.router\.packets$", key)
        if m:
            board = tuple(map(int, m.groups()))
            routers[board] = routers.get(board, 0) + int(value)
    hops = sum(n for _, _, n in links)
    if not hops:
        fail("%s: no router-to-router packets in stats.json" % args.out)

    c = args.hop_cost if args.hop_cost else float(summary["host_seconds"]) * 1e9 / hops
    rows = [partition(spec, dims, links, routers, hops, windows, events, c, args) for spec in args.ranks]
    if args.markdown:
        print(markdown(rows, dims))
        return 0
    print("%s: %d x %d x %d QFDBs, %d MPSoCs, %s, %.6g s simulated, %d packet-hops, %.4g transactions (sim_events)"
          % (args.out, dims[0], dims[1], dims[2], 4 * dims[0] * dims[1] * dims[2], summary.get("workload", "?"),
             sim, hops, events))
    print("lookahead L = board-link.latency = %.0f ns: %.0f windows; host cost per packet-hop c = %.1f ns%s, "
          "sync s = %g us, message m = %g us" % (lookahead * 1e9, windows, c,
                                                 "" if args.hop_cost else " (this run's)", args.sync_cost,
                                                 args.message_cost))
    print("  ranks     cut packets  share of hops  per window: cut  busiest rank sends  transactions  "
          "packet-hops (busiest rank)  speed-up")
    for r in rows:
        print("  %-8s  %11d  %12.2f%%  %15.2f  %18.2f  %12.0f  %.1f (%.1f, %.2fx the mean)  %.1f"
              % ("x".join(map(str, r["parts"])) + " " + str(r["nranks"]), r["cut"], 100.0 * r["cut"] / hops,
                 r["cut"] / windows, r["busiest_send"] / windows, events / windows, hops / windows,
                 r["busiest_hops"], r["imbalance"], r["speedup"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
