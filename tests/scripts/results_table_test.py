#!/usr/bin/env python3
"""ctest: scripts/results_table.py makes the table a document quotes from a
results.csv, and refuses what would make a wrong one.

    results_table_test.py --source SOURCE_DIR

On a small results.csv written here: rows by label (ordered by
--row-order), columns split by a swept key and ordered by --col-order,
cells formatted by f-strings and dec(), several points in a row picked by
--several's pick(), --where, a missing combination shown as "–",
right alignment; and exit status 2 for two points that give one cell, a
--header of the wrong width, a bad expression, no row left and a pick()
that does not find one point.
"""
import argparse
import os
import subprocess
import sys
import tempfile

CSV = """point,workload.message-size,rdma.strategy,latency_us_p50,throughput_gbps,handler_runs
p0,64B,pin,1.19512,0.5,0
p1,64B,netvm,1.3,0.6,4000
p2,4KiB,pin,3.67127,7.86477,0
p3,4KiB,netvm,3.8,7.9,4000
p4,1MiB,pin,666.081,12.5632,0
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    script = os.path.join(ap.parse_args().source, "scripts", "results_table.py")
    failures = []
    with tempfile.TemporaryDirectory(prefix="vrdmasim-results-table-") as d:
        path = os.path.join(d, "results.csv")
        with open(path, "w") as f:
            f.write(CSV)

        def table(*args):
            p = subprocess.run([sys.executable, script, path] + list(args), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            return p.returncode, p.stdout, p.stderr

        size = "size(p['workload.message-size'])"
        cases = [
            ("a pivot, columns in the order asked, a missing cell as a dash",
             ["--row", size, "--col", "p['rdma.strategy']", "--col-order", "p['rdma.strategy'] != 'pin'",
              "--cell", "f'{latency_us_p50:.3g}'", "--header", "message | pin | netvm"],
             "| message | pin | netvm |\n|---|---|---|\n| 64 B | 1.2 | 1.3 |\n| 4 KiB | 3.67 | 3.8 |\n"
             "| 1 MiB | 666 | – |\n"),
            ("two label rows, raw values as the CSV holds them, --where, right-aligned",
             ["--row", size, "--row", "p['rdma.strategy']", "--cell", "handler_runs", "--cell", "throughput_gbps",
              "--where", "handler_runs > 0", "--align", "right"],
             "| size(p['workload.message-size']) | p['rdma.strategy'] | handler_runs | throughput_gbps |\n"
             "|---:|---:|---:|---:|\n| 64 B | netvm | 4000 | 0.6 |\n| 4 KiB | netvm | 4000 | 7.9 |\n"),
            ("rows sorted by --row-order", ["--row", size, "--where", "p['rdma.strategy'] == 'pin'",
                                            "--row-order=-latency_us_p50", "--cell", "f'{latency_us_p50:.0f}'"],
             "| size(p['workload.message-size']) | f'{latency_us_p50:.0f}' |\n|---|---|\n| 1 MiB | 666 |\n"
             "| 4 KiB | 4 |\n| 64 B | 1 |\n"),
            ("several points in a table row, each cell picking its own; dec()",
             ["--several", "--row", size, "--where", "p['workload.message-size'] != '1MiB'",
              "--cell", "pick('rdma.strategy=pin')['handler_runs']",
              "--cell", "dec(pick('rdma.strategy=netvm')['throughput_gbps'] / 100, 2)",
              "--header", "message | pin's runs | netvm's Gb/s / 100"],
             "| message | pin's runs | netvm's Gb/s / 100 |\n|---|---|---|\n| 64 B | 0 | 0.006 |\n| 4 KiB | 0 | 0.08 |\n"),
            ("a conditional cell", ["--row", size, "--where", "p['rdma.strategy'] == 'netvm'", "--cell",
                                    "f'{handler_runs:,}' if handler_runs else '–'"],
             "| size(p['workload.message-size']) | f'{handler_runs:,}' if handler_runs else '–' |\n|---|---|\n"
             "| 64 B | 4,000 |\n| 4 KiB | 4,000 |\n"),
        ]
        for name, args, want in cases:
            status, out, err = table(*args)
            if status != 0 or out != want:
                failures.append("%s: exit %d\n%s%s--- expected:\n%s" % (name, status, out, err, want))
        refused = [
            ("two points in one cell (no --col for the strategy)", ["--row", size, "--cell", "latency_us_p50"]),
            ("a header of the wrong width", ["--row", size, "--col", "p['rdma.strategy']", "--cell", "handler_runs",
                                             "--header", "a | b"]),
            ("an expression that fails", ["--row", size, "--col", "p['rdma.strategy']", "--cell", "no_such_column"]),
            ("no row left", ["--row", size, "--cell", "handler_runs", "--where", "False"]),
            ("a pick that finds two points", ["--several", "--row", size, "--cell", "pick()['handler_runs']"]),
        ]
        for name, args in refused:
            status, out, err = table(*args)
            if status != 2 or "results_table: error:" not in err:
                failures.append("%s: exit %d, expected 2 with an error\n%s%s" % (name, status, out, err))
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: tables as asked, and bad input refused")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
