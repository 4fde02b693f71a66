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
