#!/usr/bin/env python3
"""ctest: `vrdmasim bench --instructions` prints instruction counts that mean something.

    bench_instructions_test.py --exe VRDMASIM

Runs the bench twice, small (a 1 MiB stream, a 4-node halo of one iteration),
under valgrind's callgrind as the bench does, and checks: every figure is
there and positive; the two runs agree within 0.5 % (the point of counting
instructions: a figure that does not move with the host's load); and the
count covers the simulation loop only: a run of four times the volume costs
close to four times the instructions (not a constant of elaboration plus a
little). --scale with --instructions is refused.
"""
import argparse
import subprocess
import sys


def figures(exe, volume):
    p = subprocess.run([exe, "bench", "--instructions", "--volume", volume, "--max-nodes", "4", "--iterations", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    print(p.stdout.strip())
    if p.returncode != 0:
        raise AssertionError("bench --instructions exited %d" % p.returncode)
    line = next((l for l in p.stdout.splitlines() if l.startswith("bench_instructions_csv,")), None)
    if not line:
        raise AssertionError("no bench_instructions_csv line")
    cells = line.split(",")[1:]
    return {cells[i]: float(cells[i + 1]) for i in range(0, len(cells), 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    exe = ap.parse_args().exe
    failures = []
    a = figures(exe, "1MiB")
    b = figures(exe, "1MiB")
    big = figures(exe, "4MiB")
    for key in ("stream_per_packet", "stream_per_hop", "n4_per_hop"):
        if a.get(key, 0) <= 0:
            failures.append("%s missing or not positive: %s" % (key, a.get(key)))
        elif abs(a[key] - b.get(key, 0)) > 0.005 * a[key]:
            failures.append("%s: %g then %g: counts that move between runs" % (key, a[key], b.get(key, 0)))
    # Per packet, four times the volume costs about the same: the loop only.
    if a.get("stream_per_packet", 0) > 0 and not 0.8 < big["stream_per_packet"] / a["stream_per_packet"] < 1.25:
        failures.append("per packet, 4 MiB costs %g and 1 MiB %g: not the simulation loop alone"
                        % (big["stream_per_packet"], a["stream_per_packet"]))
    p = subprocess.run([exe, "bench", "--instructions", "--scale"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 2 or "different benches" not in p.stdout:
        failures.append("--instructions with --scale: exit %d, expected 2" % p.returncode)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: instruction counts present, repeatable and per packet independent of the volume")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
