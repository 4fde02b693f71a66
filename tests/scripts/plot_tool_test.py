#!/usr/bin/env python3
"""ctest checks of scripts/plot.py on a tiny real sweep.

    plot_tool_test.py VRDMASIM PLOT_SCRIPT

Runs a 6-point sweep (stream, message-size 1 KiB..256 KiB x window 1, 4),
plots latency and transfers against the message size grouped by window, and
checks: the CSV's numbers are the points' summary.csv values; the PNG and SVG
are real, non-blank figures; the axis choice (log x for sizes spanning two
decades, log y only for values that do); and that bad input exits 2 with a
clear message and writes nothing.
"""
import csv
import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SWEEP = """[sweep]
base = {root}/configs/default.ini
[workload]
message-size = 1KiB, 16KiB, 256KiB
window = 1, 4
total-bytes = 512KiB
"""


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def plot(script, *args):
    p = subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)
    print("$ plot.py %s\n%s%s" % (" ".join(args), p.stdout, p.stderr))
    return p


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_png(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    w, h = struct.unpack(">II", head[16:24])
    if w < 300 or h < 200:
        fail("%s is %dx%d" % (path, w, h))
    import matplotlib.image
    img = matplotlib.image.imread(path)
    colours = {tuple(px) for px in img.reshape(-1, img.shape[-1])[::7].tolist()}
    if len(colours) < 8:
        fail("%s is (nearly) blank: %d colours" % (path, len(colours)))


def check_svg(path, lines):
    root = ET.parse(path).getroot()
    if not root.tag.endswith("svg"):
        fail("%s: root element %s" % (path, root.tag))
    paths = [e for e in root.iter() if e.tag.endswith("path")]
    if len(paths) < 30:
        fail("%s has only %d paths" % (path, len(paths)))
    # Each line drawn in its colour (C0, C1, ... of matplotlib's cycle),
    # clipped to the axes, through its points.
    for colour in ("#1f77b4", "#ff7f0e", "#2ca02c")[:lines]:
        drawn = [e for e in paths if "clip-path" in e.attrib and "stroke: %s" % colour in e.attrib.get("style", "")
                 and e.attrib.get("d", "").count("L") >= 2]
        if not drawn:
            fail("%s: no line in %s through 3 points" % (path, colour))


def main():
    exe, script = sys.argv[1], sys.argv[2]
    # Geometric sweeps under two decades (16 KiB..1 MiB by 4) are log too.
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    from plotting.draw import geometric
    for values, want in (([16384, 65536, 262144, 1048576], True), ([1, 2, 4], True), ([1, 2, 3], False),
                         ([10, 20], False), ([2, 4, 8, 10], False), ([0, 1, 2, 4], False), ([5, 5, 5], False)):
        if geometric(values) != want:
            fail("geometric(%s) should be %s" % (values, want))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as tmp:
        sweep_ini = os.path.join(tmp, "tiny.ini")
        with open(sweep_ini, "w") as f:
            f.write(SWEEP.format(root=root))
        sweep = os.path.join(tmp, "sweep")
        r = subprocess.run([exe, "sweep", sweep_ini, "--out", sweep, "--jobs", "2"], capture_output=True, text=True)
        if r.returncode != 0:
            fail("sweep exit %d: %s" % (r.returncode, r.stderr))
        results = {row["point"]: row for row in read_csv(os.path.join(sweep, "results.csv"))}
        if len(results) != 6:
            fail("%d points" % len(results))

        out = os.path.join(tmp, "plots")
        p = plot(script, sweep, "latency_us_p50", "transfers", "--x", "workload.message-size",
                 "--group", "workload.window", "--out", out)
        if p.returncode != 0:
            fail("plot exit %d" % p.returncode)
        scales = dict(line.split(": ", 1) for line in p.stdout.splitlines() if ": x " in line)
        base_lat = os.path.join(out, "latency_us_p50_vs_workload.message-size")
        base_tr = os.path.join(out, "transfers_vs_workload.message-size")
        # Sizes 1 KiB..256 KiB span 2.4 decades: log x. Latency 2..175 us
        # spans less than two: linear y; transfers 512..2 span more: log y.
        if scales.get(base_lat) != "x log, y linear":
            fail("latency axes: %s" % scales.get(base_lat))
        if scales.get(base_tr) != "x log, y log":
            fail("transfers axes: %s" % scales.get(base_tr))
        for base, metric in ((base_lat, "latency_us_p50"), (base_tr, "transfers")):
            check_png(base + ".png")
            check_svg(base + ".svg", 2)
            rows = read_csv(base + ".csv")
            if [list(rows[0].keys())] != [["x", "x_value", "group", "y", "point"]]:
                fail("%s.csv columns %s" % (base, list(rows[0].keys())))
            if len(rows) != 6 or {r["point"] for r in rows} != set(results):
                fail("%s.csv has %d rows, not one per point" % (base, len(rows)))
            for r in rows:
                summary = read_csv(os.path.join(sweep, "points", r["point"], "summary.csv"))[0]
                point = results[r["point"]]
                if r["y"] != summary[metric] or r["y"] != point[metric]:
                    fail("%s at %s: CSV %s, summary.csv %s" % (metric, r["point"], r["y"], summary[metric]))
                if r["x"] != point["workload.message-size"] or r["group"] != point["workload.window"]:
                    fail("%s: x/group %s/%s, point has %s/%s" % (r["point"], r["x"], r["group"],
                                                                 point["workload.message-size"],
                                                                 point["workload.window"]))
                size = {"1KiB": 1024, "16KiB": 16384, "256KiB": 262144}[r["x"]]
                if float(r["x_value"]) != size:
                    fail("x_value %s for %s" % (r["x_value"], r["x"]))

        # --where fixes a key; forced log y; one figure with two panels.
        p = plot(script, sweep, "latency_us_p50", "throughput_gbps", "--x", "workload.message-size",
                 "--where", "workload.window=4", "--subplots", "--logy", "--name", "w4", "--out", out)
        if p.returncode != 0 or "y log" not in p.stdout:
            fail("--where/--subplots/--logy")
        rows = read_csv(os.path.join(out, "w4.throughput_gbps.csv"))
        if len(rows) != 3 or any(results[r["point"]]["workload.window"] != "4" for r in rows):
            fail("--where workload.window=4 kept %s" % [r["point"] for r in rows])
        check_png(os.path.join(out, "w4.png"))

        # Bad input: exit 2, a message naming the problem, nothing written.
        bad_out = os.path.join(tmp, "bad")
        empty = os.path.join(tmp, "empty.csv")
        open(empty, "w").close()
        dup = os.path.join(tmp, "dup.csv")
        with open(os.path.join(sweep, "results.csv")) as f:
            text = f.read().splitlines()
        with open(dup, "w") as f:   # the same point twice under two ids
            f.write("\n".join(text + [text[1].replace(text[1].split(",")[0], "p9999-00000000", 1)]) + "\n")
        cases = [
            ((sweep, "latency_us_p5", "--x", "workload.message-size", "--group", "workload.window"),
             "did you mean latency_us_p50"),
            ((sweep, "latency_us_p50", "--x", "workload.size"), "--x workload.size: no such column"),
            ((sweep, "latency_us_p50", "--x", "workload.message-size"),
             "swept key workload.window varies within a line"),
            ((sweep, "latency_us_p50"), "say which key is on the x axis"),
            ((sweep, "strategy", "--x", "workload.message-size", "--group", "workload.window"), "is text"),
            ((sweep, "latency_us_p50", "--x", "workload.message-size", "--where", "workload.window=3"),
             "never takes that value"),
            ((tmp, "latency_us_p50", "--x", "workload.message-size"), "is not a sweep output directory"),
            ((os.path.join(sweep, "points", sorted(results)[0]), "latency_us_p50", "--x", "x.y"),
             "a single run's output"),
            ((empty, "latency_us_p50", "--x", "workload.message-size"), "is empty"),
            ((dup, "latency_us_p50", "--x", "workload.message-size", "--group", "workload.window"),
             "fall on the same workload.message-size"),
            ((sweep, "latency_us_p50", "--x", "workload.message-size", "--group", "workload.window",
              "--logx", "--logy", "--where", "workload.window=1", "--facet", "workload.window"),
             "named more than once"),
        ]
        # Replications: averaged, the error bar the 95 % CI aggregate.csv gives.
        rep_ini = os.path.join(tmp, "rep.ini")
        with open(rep_ini, "w") as f:
            f.write("[sweep]\nreplications = 3\n[noise]\ncpu-jitter = 0.05\nstart-skew = 20us\n"
                    "[workload]\nmessage-size = 4KiB, 64KiB\ntotal-bytes = 256KiB\n")
        rep = os.path.join(tmp, "rep")
        r = subprocess.run([exe, "sweep", rep_ini, "--out", rep, "--jobs", "2"], capture_output=True, text=True)
        if r.returncode != 0:
            fail("replicated sweep exited %d: %s" % (r.returncode, r.stderr))
        p = plot(script, rep, "throughput_gbps", "--x", "workload.message-size")
        if p.returncode != 0 or "95 % confidence intervals" not in p.stderr:
            fail("plot of replications: exit %d, stderr %s" % (p.returncode, p.stderr))
        plotted = read_csv(os.path.join(rep, "plots", "throughput_gbps_vs_workload.message-size.csv"))
        agg = read_csv(os.path.join(rep, "aggregate.csv"))
        if len(plotted) != 2 or any(abs(float(a["ci95"]) - float(b["throughput_gbps_ci95"])) > 1e-6 * float(b["throughput_gbps"])
                                    or abs(float(a["y"]) - float(b["throughput_gbps"])) > 1e-6 * float(b["throughput_gbps"])
                                    for a, b in zip(plotted, agg)):
            fail("the plotted means and error bars are not aggregate.csv's")
        # A run's time series (--sample-interval): its columns against
        # time_us, the plots beside the run (the run stays a run's output).
        run = os.path.join(tmp, "sampled")
        r = subprocess.run([exe, "run", "--sample-interval=1ms", "--out", run, "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            fail("run --sample-interval exited %d: %s" % (r.returncode, r.stderr))
        p = plot(script, run, "throughput_gbps", "free_mib")
        if p.returncode != 0:
            fail("plot of a time series exited %d: %s" % (p.returncode, p.stderr))
        series_csv = os.path.join(run + "-plots", "throughput_gbps_vs_time_us.csv")
        rows = read_csv(series_csv)
        samples = read_csv(os.path.join(run, "timeseries.csv"))
        if [float(x["y"]) for x in rows] != [float(x["throughput_gbps"]) for x in samples]:
            fail("the plotted time series is not timeseries.csv's throughput_gbps")
        check_png(os.path.join(run + "-plots", "throughput_gbps_vs_time_us.png"))
        if os.path.exists(os.path.join(run, "plots")):
            fail("plotting a run's time series wrote into the run's directory")
        for args, message in cases:
            p = plot(script, *(list(args) + ["--out", bad_out]))
            if p.returncode != 2:
                fail("%s: exit %d, expected 2" % (" ".join(args), p.returncode))
            if message not in p.stderr:
                fail("%s: the message does not say %r" % (" ".join(args), message))
            if os.path.exists(bad_out):
                fail("%s: wrote %s" % (" ".join(args), bad_out))
    print("ok")


if __name__ == "__main__":
    main()
