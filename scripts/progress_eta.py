#!/usr/bin/env python3
"""How far was the progress line's ETA from the truth? (docs/running.md)

    scripts/progress_eta.py VRDMASIM RUN-ARGS...
    scripts/progress_eta.py build/vrdmasim configs/tutorial/08-pressure.ini --out /tmp/e8 --trace --log

Runs `vrdmasim run RUN-ARGS` with stderr on a pseudo-terminal (so that the
progress line is drawn), notes when each line arrived and when the line was
cleared (the simulation's end: the outputs are written after it, and no ETA
counts them), and prints, for the first line at or past 10, 25 and 50 % of
the transfers, the simulation's real remaining host time against two ETAs:
the cumulative average (host time per transfer so far times the transfers
left: the line's ETA before #41, computed from the line's own figures) and
what the line printed (one figure, or the range "low to high"; "?" while
too little of the run has passed to tell).
"""
import os
import re
import subprocess
import sys
import time

HOST = r"([0-9]+\.[0-9] s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m)"
LINE = re.compile(r"([0-9]+) of ([0-9]+) transfers \(([0-9]+)%\) \| host " + HOST +
                  r"(?: \| ETA " + HOST + r"(?: to " + HOST + r")?(\?)?)?")


def secs(s):
    m = re.fullmatch(r"([0-9.]+) s", s)
    if m:
        return float(m.group(1))
    m = re.fullmatch(r"([0-9]+)m([0-9]+)s", s)
    if m:
        return int(m.group(1)) * 60 + int(m.group(2))
    m = re.fullmatch(r"([0-9]+)h([0-9]+)m", s)
    return int(m.group(1)) * 3600 + int(m.group(2)) * 60


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, args = sys.argv[1], sys.argv[2:]
    master, slave = os.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([exe, "run"] + args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    buf, samples, sim_end = "", [], None
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:   # EIO: the child closed the terminal
            break
        if not data:
            break
        now = time.monotonic() - t0
        buf += data.decode(errors="replace")
        parts = buf.split("\r")
        buf = parts[-1]
        for line in parts[:-1]:
            m = LINE.search(line)
            if m:
                samples.append((now, int(m.group(1)), int(m.group(2)), line.strip()))
            elif samples and line and not line.strip() and sim_end is None:
                sim_end = now   # the line cleared: the simulation is over
    status = p.wait()
    total = time.monotonic() - t0
    if sim_end is None:
        sim_end = total
    print(f"exit {status}; {total:.1f} s of host time, the simulation over at {sim_end:.1f} s; "
          f"{len(samples)} progress lines")
    for frac in (0.10, 0.25, 0.50):
        hit = next((s for s in samples if s[1] >= frac * s[2]), None)
        if not hit:
            print(f"{int(frac * 100)}%: no line")
            continue
        t, done, of, line = hit
        m = LINE.search(line)
        old = secs(m.group(4)) * (of - done) / done if done else None
        low = secs(m.group(5)) if m.group(5) else None
        high = secs(m.group(6)) if m.group(6) else low
        left = sim_end - t
        ratio = lambda v: f"{v:.1f} s ({v / left:.2f}x)" if v is not None and left > 0 else "-"
        printed = ratio(low) if high == low else f"{ratio(low)} to {ratio(high)}"
        print(f"{int(frac * 100)}% ({done} of {of}) at {t:.1f} s, {left:.1f} s really left: cumulative "
              f"{ratio(old)}; printed {printed}{m.group(7) or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
