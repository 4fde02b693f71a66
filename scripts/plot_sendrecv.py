#!/usr/bin/env python3
"""Two-sided latency (configs/sweeps/sendrecv.ini) or bandwidth
(configs/sweeps/sendrecv-bandwidth.ini, whose runs have no latency samples)
against message size by protocol, from a sweep's results.csv: writes
OUTDIR/sendrecv.md (the table) and, with matplotlib, OUTDIR/sendrecv.png and
.svg (the figure, drawn by scripts/plot.py's library) and sendrecv.csv (its
numbers), and prints the table and the crossover sizes (the
smallest size from which each rendezvous stays better than eager).
Bandwidth is `post_window_throughput_gbps`, from the first post to the last
completion, as osu_bw times its window loop (the end-to-end
`throughput_gbps` adds the buffers' allocation and registration).

    python3 scripts/plot_sendrecv.py vrdmasim-out/sendrecv/results.csv vrdmasim-out/sendrecv/plots
"""
import csv
import os
import sys

UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}


def size_bytes(text):
    for unit in ("KiB", "MiB", "B"):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * UNITS[unit])
    return int(text)


def protocol(row):
    return "eager" if size_bytes(row["msg.eager-threshold"]) >= size_bytes(row["workload.message-size"]) \
        else "rendezvous " + row["msg.rendezvous"]


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(argv[1])))
    bad = [r["point"] for r in rows if r["status"] != "ok" or r["data_mismatches"] != "0"]
    if bad:
        sys.exit("points failed or with mismatched data: " + ", ".join(bad))
    bandwidth = all(r["latency_us_p50"] in ("", "0") for r in rows)
    # Bandwidth as osu_bw measures it, over the transfers only: from the
    # first post (post_window_throughput_gbps), without the buffers' set-up
    # that the end-to-end headline (throughput_gbps) includes.
    column, what = ("post_window_throughput_gbps", "Gb/s") if bandwidth else ("latency_us_p50", "p50 (us)")
    better = (lambda a, b: a > b) if bandwidth else (lambda a, b: a < b)
    lat, raw = {}, {}
    for r in rows:
        size = size_bytes(r["workload.message-size"])
        lat.setdefault(protocol(r), {})[size] = float(r[column])
        raw[(protocol(r), size)] = (r[column], r["point"])   # the figure's CSV: as results.csv has it
    sizes = sorted({s for v in lat.values() for s in v})
    protos = ["eager"] + sorted(p for p in lat if p != "eager")
    lines = ["| message | " + " | ".join(p + " " + what for p in protos) + " |",
             "|---:|" + "---:|" * len(protos)]
    for s in sizes:
        name = f"{s // 1024} KiB" if s >= 1024 else f"{s} B"
        lines.append(f"| {name} | " + " | ".join(f"{lat[p].get(s, float('nan')):.2f}" for p in protos) + " |")
    for p in protos[1:]:
        cross = None
        for s in sizes:
            if all(better(lat[p][t], lat["eager"][t]) for t in sizes if t >= s):
                cross = s
                break
        lines.append("")
        lines.append(f"{p} beats eager from {cross} B on" if cross else f"{p} never beats eager")
    text = "\n".join(lines) + "\n"
    os.makedirs(argv[2], exist_ok=True)
    open(os.path.join(argv[2], "sendrecv.md"), "w").write(text)
    print(text, end="")
    plot(argv[2], protos, lat, raw, column)


def plot(out, protos, lat, raw, column):
    """The figure, by scripts/plot.py's library: one line per protocol
    against message size, log-log; sendrecv.csv holds the plotted numbers."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from plotting import draw, results as res, series as ser
    try:
        plt = draw.import_pyplot()
    except RuntimeError:
        print("(matplotlib not installed: table only)")
        return
    size_key = "workload.message-size"
    rows = [{"point": raw[(p, s)][1], "status": "ok", "protocol": p, size_key: "%dB" % s, column: raw[(p, s)][0]}
            for p in protos for s in sorted(lat[p])]
    results = res.Results("results.csv", ["point", "status", "protocol", size_key, column], rows, swept_keys=[])
    units = res.metric_units(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    series = ser.build(results, column, size_key, ["protocol"], [], [], units, check_keys=[])
    draw.plot_one(plt, series, os.path.join(out, "sendrecv"), [], "log", "log", ["png", "svg"])


if __name__ == "__main__":
    main(sys.argv)
