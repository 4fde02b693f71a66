#!/usr/bin/env python3
"""ctest checks of scripts/plot_results.py.

    plot_results_test.py SCRIPT FIXTURE_DIR          tables and plots of a fixture
    plot_results_test.py SCRIPT FIXTURE_DIR --empty  an empty file: exit 2, clear message
"""
import os
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_axes(script):
    """The plotting library's panels: categories on x (strategies: no order,
    no values in between) as bars or lone markers, never joined by lines;
    a linear y axis of throughputs or latencies starts at zero (a line of
    1.5 to 2.5 Gb/s drawn from 1.4 up reads as a factor of ten)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    from plotting import draw, results as res, series as ser
    plt = draw.import_pyplot()
    rows = []
    for i, (strategy, size, gbps, lat) in enumerate([
            ("pin", "4KiB", "1.5", "20"), ("prefault", "4KiB", "1.75", "18.5"),
            ("fault-tolerant", "4KiB", "2.5", "12.5"), ("pin", "64KiB", "9.5", "70.25"),
            ("prefault", "64KiB", "10.5", "60"), ("fault-tolerant", "64KiB", "10.25", "40.75")]):
        rows.append({"point": "p%04d-1" % i, "status": "ok", "rdma.strategy": strategy,
                     "workload.message-size": size, "throughput_gbps": gbps, "latency_us_p50": lat})
    header = ["point", "status", "rdma.strategy", "workload.message-size", "throughput_gbps", "latency_us_p50"]
    results = res.Results("results.csv", header, rows, swept_keys=["rdma.strategy", "workload.message-size"])
    units = {"throughput_gbps": "Gb/s", "latency_us_p50": "us"}
    for metric in ("throughput_gbps", "latency_us_p50"):
        for x, group in (("rdma.strategy", "workload.message-size"), ("workload.message-size", "rdma.strategy")):
            s = ser.build(results, metric, x, [group], [], [], units)
            xscale, yscale = draw.x_scale(s, "auto"), draw.y_scale(s, "auto")
            fig, ax = plt.subplots()
            draw.draw_panel(ax, s, s.facet_values()[0], xscale, yscale, None)
            what = "%s against %s" % (metric, x)
            if yscale != "linear":
                fail("%s: y %s, the check wants a linear axis" % (what, yscale))
            if ax.get_ylim()[0] != 0:
                fail("%s: the y axis starts at %g, not at zero" % (what, ax.get_ylim()[0]))
            if xscale is None:
                joined = [l for l in ax.get_lines() if l.get_linestyle() not in ("None", "none", "", " ")
                          and len(l.get_xdata()) > 1]
                if joined:
                    fail("%s: categories joined by %d line(s)" % (what, len(joined)))
                if not ax.patches and not ax.get_lines() and not ax.collections:
                    fail("%s: nothing drawn" % what)
            plt.close(fig)


def run(script, csv, out):
    p = subprocess.run([sys.executable, script, csv, out], capture_output=True, text=True)
    print(p.stdout + p.stderr)
    return p


def main():
    script, fixtures = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "plots")
        if "--empty" in sys.argv:
            p = run(script, os.path.join(fixtures, "empty_results.csv"), out)
            if p.returncode != 2:
                fail("empty CSV: exit %d, expected 2" % p.returncode)
            if "empty" not in p.stderr:
                fail("empty CSV: the message does not say the file is empty")
            # Missing columns: exit 2, naming them.
            bad = os.path.join(tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write("point,label,status,throughput_gbps\np0000-1,cold,ok,1\n")
            p = run(script, bad, out)
            if p.returncode != 2:
                fail("missing columns: exit %d, expected 2" % p.returncode)
            for col in ("workload.message-size", "latency_us_p50", "strategy"):
                if col not in p.stderr:
                    fail("missing columns: %s not named" % col)
            print("ok")
            return
        check_axes(script)
        p = run(script, os.path.join(fixtures, "thesis_results.csv"), out)
        if p.returncode != 0:
            fail("exit %d" % p.returncode)
        for name in ("table.md", "latency.png", "latency.svg", "bandwidth.png", "bandwidth.svg"):
            path = os.path.join(out, name)
            if not os.path.isfile(path) or os.path.getsize(path) == 0:
                fail("%s missing or empty" % name)
        with open(os.path.join(out, "latency.png"), "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail("latency.png is not a PNG")
        with open(os.path.join(out, "bandwidth.svg")) as f:
            if "<svg" not in f.read():
                fail("bandwidth.svg is not an SVG")
        table = open(os.path.join(out, "table.md")).read()
        print(table)
        lines = table.splitlines()
        cold = lines.index("## cold")
        warm = lines.index("## warm")
        if not cold < warm:
            fail("states not in the order cold, warm")
        header = lines[cold + 2]
        cols = [c.strip() for c in header.strip("|").split("|")]
        expect_cols = ["message size", "fault-tolerant/touch-one, THP never",
                       "fault-tolerant/touch-ahead, THP never", "pin, THP never", "pin, THP always"]
        if cols != expect_cols:
            fail("cold columns %s, expected %s" % (cols, expect_cols))

        def row(start, size):
            for l in lines[start:]:
                if l.startswith("| %s |" % size):
                    return [c.strip() for c in l.strip("|").split("|")]
            fail("no row %s" % size)

        expect = {
            (cold, "4 KiB"): ["4 KiB", "12.5 / 2.5", "9.125 / 3.5", "20 / 1.5", "18.5 / 1.75"],
            # pin, THP never, 64 KiB failed: shown as failed, not as numbers.
            (cold, "64 KiB"): ["64 KiB", "40.75 / 10.25", "38 / 11", "*failed*", "70.25 / 9.5"],
            # rdma.strategy stands in for a missing strategy summary column.
            (warm, "4 KiB"): ["4 KiB", "6.5 / 4.25"],
            (warm, "64 KiB"): ["64 KiB", "33 / 12.75"],
        }
        for (start, size), cells in expect.items():
            got = row(start, size)
            if got != cells:
                fail("row %s after line %d: %s, expected %s" % (size, start, got, cells))
        if "1 more point(s) failed whose strategy is unknown" not in table:
            fail("the failed point of unknown strategy is not reported")
        if "prefault, THP never" not in lines[warm + 2]:
            fail("warm table lacks the prefault column: " + lines[warm + 2])
        print("ok")


main()
