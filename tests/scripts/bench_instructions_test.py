#!/usr/bin/env python3
"""ctest: `vrdmasim bench --instructions` prints instruction counts that mean something.

    bench_instructions_test.py --exe VRDMASIM [--doc docs/performance.md]

Runs the bench twice, small (a 1 MiB stream, a 4-node halo of one iteration),
under valgrind's callgrind as the bench does, and checks: every figure is
there and positive; the two runs agree within 0.5 % (the point of counting
instructions: a figure that does not move with the host's load); and the
count covers the simulation loop only: a run of four times the volume costs
close to four times the instructions (not a constant of elaboration plus a
little). --scale with --instructions is refused.

With --doc, the bench also runs as the page says it was run (its defaults:
a 16 MiB stream, the halo on 4, 64 and 256 nodes, four iterations; this run
replaces the 4 MiB one above), and the first figures column of the page's
instruction table ("2,844 per packet", "4,123 per packet-hop", ...) must
be within 1 % of it, and the packets and packet-hops its first column
names must be exactly the run's. The counts are exact for one compiler,
its flags and the CPU's vector extensions (which pick the data pattern's
loop), not for every machine: a failure there means the page's figures were
measured with another build or CPU, or the code's cost moved; re-measure
and update the table (a new column when the cost moved on purpose).
"""
import argparse
import re
import subprocess
import sys


# The rows of docs/performance.md's instruction table, by the start of their
# first cell, and the bench's figure in their first figures column.
DOC_ROWS = (("stream, default config", "stream_per_packet"), ("halo, 4 nodes", "n4_per_hop"),
            ("halo, 64 nodes", "n64_per_hop"), ("halo, 256 nodes", "n256_per_hop"))
TOLERANCE = 0.01


def bench(exe, *options):
    p = subprocess.run([exe, "bench", "--instructions"] + list(options), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=900)
    print(p.stdout.strip())
    if p.returncode != 0:
        raise AssertionError("bench --instructions exited %d" % p.returncode)
    line = next((l for l in p.stdout.splitlines() if l.startswith("bench_instructions_csv,")), None)
    if not line:
        raise AssertionError("no bench_instructions_csv line")
    cells = line.split(",")[1:]
    return {cells[i]: float(cells[i + 1]) for i in range(0, len(cells), 2)}, p.stdout


def figures(exe, volume):
    return bench(exe, "--volume", volume, "--max-nodes", "4", "--iterations", "1")[0]


def number(text):
    return float(text.replace(",", ""))


def doc_failures(path, counts, printed):
    """The page's table against a run of the bench with its defaults."""
    with open(path, encoding="utf-8") as f:
        lines = [l for l in f.read().splitlines() if l.startswith("| ")]
    failures = []
    for start, key in DOC_ROWS:
        row = next((l.split("|")[1:-1] for l in lines if l[2:].startswith(start)), None)
        m = re.match(r"^\s*([\d,]+) per packet(-hop)?\s*$", row[1]) if row and len(row) > 1 else None
        if not m:
            failures.append("%s: no table row \"%s\" with a figure \"N per packet\" in its second cell" % (path, start))
            continue
        quoted, measured = number(m.group(1)), counts.get(key, 0)
        if abs(quoted - measured) > TOLERANCE * measured:
            failures.append("%s, \"%s\": the page says %s, this build counts %.2f (%+.1f %%). The counts depend on "
                            "the compiler, its flags and the CPU's vector extensions: measured with another build or "
                            "CPU, or the code's cost moved. Re-measure (build/vrdmasim bench --instructions) and "
                            "update the page's table." % (path, start, m.group(1), measured,
                                                          100.0 * (quoted - measured) / measured))
        # "16 MiB (65,536 packets)", "256 nodes (1,076,201 packet-hops)": simulated counts, exact.
        for n, what in re.findall(r"\(([\d,]+) (packets|packet-hops)\)", row[0]):
            label = "stream, the default config" if key.startswith("stream") else start
            m2 = re.search(re.escape(label) + r"[^:]*: (\d+) packets, (\d+) packet-hops", printed)
            ran = m2 and int(m2.group(1 if what == "packets" else 2))
            if ran != number(n):
                failures.append("%s, \"%s\": the page says %s %s, the run %s" % (path, start, n, what, ran))
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--doc", help="docs/performance.md: its table's figures against a run with the defaults")
    args = ap.parse_args()
    exe = args.exe
    failures = []
    a = figures(exe, "1MiB")
    b = figures(exe, "1MiB")
    if args.doc:
        big, printed = bench(exe)
        failures += doc_failures(args.doc, big, printed)
    else:
        big = figures(exe, "4MiB")
    for key in ("stream_per_packet", "stream_per_hop", "n4_per_hop"):
        if a.get(key, 0) <= 0:
            failures.append("%s missing or not positive: %s" % (key, a.get(key)))
        elif abs(a[key] - b.get(key, 0)) > 0.005 * a[key]:
            failures.append("%s: %g then %g: counts that move between runs" % (key, a[key], b.get(key, 0)))
    # Per packet, four times the volume costs about the same: the loop only.
    if a.get("stream_per_packet", 0) > 0 and not 0.8 < big["stream_per_packet"] / a["stream_per_packet"] < 1.25:
        failures.append("per packet, %s costs %g and 1 MiB %g: not the simulation loop alone"
                        % ("16 MiB" if args.doc else "4 MiB", big["stream_per_packet"], a["stream_per_packet"]))
    p = subprocess.run([exe, "bench", "--instructions", "--scale"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 2 or "different benches" not in p.stdout:
        failures.append("--instructions with --scale: exit %d, expected 2" % p.returncode)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: instruction counts present, repeatable and per packet independent of the volume"
              + (", and as %s quotes them" % args.doc if args.doc else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
