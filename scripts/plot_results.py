#!/usr/bin/python3
"""Tables and plots of a thesis sweep's results.csv.

    scripts/plot_results.py RESULTS.csv OUTDIR

RESULTS.csv is a `vrdmasim sweep` results.csv, or several merged with
`vrdmasim merge`. Writes into OUTDIR:

  table.md                    one table per buffer state (the `label` column):
                              rows message size, columns strategy[/policy] and
                              THP, each cell "latency p50 (us) / throughput (Gb/s)"
  latency.png, latency.svg    latency p50 against message size, log-log
  bandwidth.png, bandwidth.svg  throughput against message size, log-log
                              (panels: one row per state, one column per vm.thp;
                              one line per strategy, fault-tolerant per policy)
  latency.csv, bandwidth.csv  the plotted numbers (state, THP, x, x_value,
                              group, y, point)

The figures are drawn by scripts/plot.py's library (scripts/plotting/), the
general tool: any metric against any swept key (docs/plotting.md).

Columns used: `workload.message-size`, `latency_us_p50`, `throughput_gbps`, and
the strategy: `strategy` (summary column) or else `rdma.strategy` (swept key).
Optional: `status` (points not "ok" are shown as "failed" in the table and
left out of the plots), `label` (the state; "all" without it), `vm.thp`,
`fault-lib.policy` (shown for fault-tolerant only). Any other swept key
(section.key) that varies within a state (e.g. workload.buffers in the
pin-cache sweep) splits the lines further. Rows without a message size are
left out (and counted).

Exit status: 0 done; 2 unusable input (missing file or columns, no rows);
1 unexpected failure. Needs python3 and matplotlib (Agg backend) only.
"""
import csv
import math
import os
import re
import sys

SIZE_UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
              "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
MESSAGE = "workload.message-size"
LATENCY = "latency_us_p50"
THROUGHPUT = "throughput_gbps"
STATE_ORDER = ["cold", "warm", "pressure"]
THP_ORDER = ["never", "madvise", "always"]


def die(msg, code=2):
    print("plot_results: error: " + msg, file=sys.stderr)
    sys.exit(code)


def parse_size(text):
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", text or "")
    if not m or m.group(2) not in SIZE_UNITS:
        return None
    return float(m.group(1)) * SIZE_UNITS[m.group(2)]


def fmt_size(b):
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= f and b % f == 0:
            return "%d %s" % (b // f, unit)
    return "%d B" % b


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def read_rows(path):
    if not os.path.isfile(path):
        die("no such file: %s" % path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    rows = [r for r in rows if r and any(c.strip() for c in r)]
    if not rows:
        die("%s is empty: no header, no rows (did the sweep run any point?)" % path)
    header = rows[0]
    missing = [c for c in (MESSAGE, LATENCY, THROUGHPUT) if c not in header]
    if "strategy" not in header and "rdma.strategy" not in header:
        missing.append("strategy (or rdma.strategy)")
    if missing:
        die("%s lacks the column%s %s (it has: %s)" % (path, "s" if len(missing) > 1 else "",
                                                       ", ".join(missing), ", ".join(header)))
    data = []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            die("%s: row %d has %d fields, the header has %d" % (path, i, len(r), len(header)))
        data.append(dict(zip(header, r)))
    if not data:
        die("%s has a header but no rows" % path)
    return header, data


def ordered(values, preferred):
    first = [v for v in preferred if v in values]
    return first + [v for v in values if v not in first]


class Point:
    def __init__(self, row, extra_keys):
        self.state = row.get("label") or "all"
        self.thp = row.get("vm.thp") or "-"
        strategy = row.get("strategy") or row.get("rdma.strategy") or "?"
        name = strategy
        policy = row.get("fault-lib.policy", "")
        if policy and strategy == "fault-tolerant":
            name += "/" + policy
        for k in extra_keys:
            if row.get(k, ""):
                name += " %s=%s" % (k.split(".", 1)[-1], row[k])
        self.series = name
        self.size = parse_size(row.get(MESSAGE, ""))
        self.size_text = row.get(MESSAGE, "")
        self.latency_text, self.gbps_text = row.get(LATENCY, ""), row.get(THROUGHPUT, "")
        self.point = row.get("point", "")
        self.ok = row.get("status", "ok") == "ok"
        self.latency = number(row.get(LATENCY)) if self.ok else None
        self.gbps = number(row.get(THROUGHPUT)) if self.ok else None


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        die("usage: plot_results.py RESULTS.csv OUTDIR")
    path, out = argv[1], argv[2]
    header, data = read_rows(path)

    # Swept keys that split lines beyond strategy/policy/THP: any section.key
    # column that takes more than one value within one state.
    known = {MESSAGE, "rdma.strategy", "vm.thp", "fault-lib.policy"}
    params = [c for c in header if "." in c and c not in known]
    extra = []
    for k in params:
        per_state = {}
        for r in data:
            per_state.setdefault(r.get("label") or "all", set()).add(r.get(k, ""))
        if any(len(v) > 1 for v in per_state.values()):
            extra.append(k)

    points, no_size, anonymous = [], 0, 0
    seen = set()
    for r in data:
        p = Point(r, extra)
        if p.size is None:
            no_size += 1
            continue
        if p.series.startswith("?"):
            # A failed point of a sweep that fixes rdma.strategy: its summary
            # (and so its strategy) is missing. Counted, not placed.
            anonymous += 1
            continue
        key = (p.state, p.thp, p.series, p.size)
        if key in seen:
            # The same series point again: a sweep that crosses the policy
            # with strategies it does not apply to (pin under touch-one and
            # touch-ahead). The first one stands for both.
            continue
        seen.add(key)
        points.append(p)
    if not points:
        die("%s: no row has a message size in %s" % (path, MESSAGE))
    if no_size:
        print("plot_results: note: %d row(s) without a %s left out" % (no_size, MESSAGE), file=sys.stderr)

    states = ordered(list(dict.fromkeys(p.state for p in points)), STATE_ORDER)
    thps = ordered(list(dict.fromkeys(p.thp for p in points)), THP_ORDER)
    series = list(dict.fromkeys(p.series for p in points))
    cells = {}
    duplicates = 0
    for p in points:
        key = (p.state, p.series, p.thp, p.size)
        if key in cells:
            duplicates += 1
            continue
        cells[key] = p
    if duplicates:
        print("plot_results: warning: %d duplicate point(s) (same state, strategy, THP and size); "
              "the first of each is used" % duplicates, file=sys.stderr)
    failed = sum(1 for p in points if not p.ok)
    if anonymous:
        print("plot_results: warning: %d failed point(s) of unknown strategy left out" % anonymous,
              file=sys.stderr)

    os.makedirs(out, exist_ok=True)
    write_table(os.path.join(out, "table.md"), path, states, thps, series, cells, failed, anonymous)
    plot(out, states, thps, series, cells)
    print("plot_results: %d point(s), %d not ok; wrote %s" % (len(points), failed, out))
    return 0


def write_table(path, source, states, thps, series, cells, failed, anonymous):
    lines = ["# Results", "",
             "From `%s`. Each cell: latency p50 (us) / throughput (Gb/s); "
             "*failed*: the point did not run to the end (status not ok); -: not run." % source, ""]
    if failed:
        lines += ["%d point(s) failed." % failed, ""]
    if anonymous:
        lines += ["%d more point(s) failed whose strategy is unknown (their sweep fixes rdma.strategy "
                  "and a failed point has no summary): see the sweep's logs." % anonymous, ""]
    for state in states:
        cols = [(s, t) for s in series for t in thps
                if any(k[0] == state and k[1] == s and k[2] == t for k in cells)]
        sizes = sorted({k[3] for k in cells if k[0] == state})
        lines += ["## %s" % state, "",
                  "| message size | " + " | ".join("%s, THP %s" % c for c in cols) + " |",
                  "|---:|" + "---:|" * len(cols)]
        for size in sizes:
            row = []
            for s, t in cols:
                p = cells.get((state, s, t, size))
                if p is None:
                    row.append("-")
                elif not p.ok:
                    row.append("*failed*")
                else:
                    lat = "%.4g" % p.latency if p.latency is not None else "?"
                    bw = "%.4g" % p.gbps if p.gbps is not None else "?"
                    row.append("%s / %s" % (lat, bw))
            lines.append("| %s | %s |" % (fmt_size(int(size)), " | ".join(row)))
        lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def plot(out, states, thps, series, cells):
    """The figures, drawn by scripts/plot.py's library: panels state x THP,
    one line per series, against message size, log-log."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from plotting import draw, results as res, series as ser
    try:
        plt = draw.import_pyplot()
    except RuntimeError as e:
        die(str(e) + "; table.md is written", 1)
    header = ["point", "status", "state", "THP", "series", MESSAGE, LATENCY, THROUGHPUT]
    rows = []
    for (state, name, thp, size), p in sorted(cells.items(), key=lambda kv: (
            states.index(kv[0][0]), thps.index(kv[0][2]), series.index(kv[0][1]), kv[0][3])):
        if not p.ok:
            continue
        # As results.csv writes them; none <= 0 (log axes).
        positive = lambda v, text: "" if v is None or v <= 0 else text   # noqa: E731
        rows.append({"point": p.point, "status": "ok", "state": state, "THP": thp, "series": name,
                     MESSAGE: p.size_text, LATENCY: positive(p.latency, p.latency_text),
                     THROUGHPUT: positive(p.gbps, p.gbps_text)})
    if not rows:
        print("plot_results: no successful point to plot", file=sys.stderr)
        return
    results = res.Results("results.csv", header, rows, swept_keys=[])
    units = res.metric_units(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for name, metric in (("latency", LATENCY), ("bandwidth", THROUGHPUT)):
        try:
            s = ser.build(results, metric, MESSAGE, ["series"], ["state", "THP"], [], units, check_keys=[])
        except res.InputError as e:
            print("plot_results: %s not plotted: %s" % (name, e), file=sys.stderr)
            continue
        draw.plot_one(plt, s, os.path.join(out, name), [], "log", "log", ["png", "svg"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
