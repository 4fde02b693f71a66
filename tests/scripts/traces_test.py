#!/usr/bin/env python3
"""The shipped test traces (configs/traces/) are what scripts/make_traces.py
writes, and hold the applications its docstring describes.

    traces_test.py SOURCE_DIR

Writes every trace afresh into a scratch directory and compares otf2-print's
view of it (the events, and the global definitions) with the shipped
archive's: an OTF2 anchor file holds a random trace id, so the bytes differ
while the traces are the same. Then counts, in each trace, the events its
application must have (e.g. the solver's 8 ranks x 10 iterations
allreduces).
"""
import os
import subprocess
import sys
import tempfile

SOURCE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(SOURCE, "configs", "traces")
TRACES = ["farm", "solver", "transpose"]


def show(anchor, *flags):
    return subprocess.run(["otf2-print", *flags, anchor], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=True).stdout


def count(text, kind):
    return sum(1 for line in text.splitlines() if line.split(" ", 1)[0] == kind)


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="vrdmasim-traces-") as scratch:
        subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "scripts", "make_traces.py"), "--out", scratch],
                       check=True, stdout=subprocess.DEVNULL)
        for name in TRACES:
            shipped = os.path.join(SHIPPED, name, name + ".otf2")
            fresh = os.path.join(scratch, name, name + ".otf2")
            if not os.path.exists(shipped):
                failures.append(f"{name}: {shipped} is missing (run scripts/make_traces.py)")
                continue
            for flags in ([], ["-G"]):
                if show(shipped, *flags) != show(fresh, *flags):
                    failures.append(f"{name}: configs/traces/{name} differs from what scripts/make_traces.py "
                                    f"writes (otf2-print {' '.join(flags)}); run scripts/make_traces.py")
        events = {name: show(os.path.join(SHIPPED, name, name + ".otf2")) for name in TRACES}
        expect = [
            ("solver", "MPI_COLLECTIVE_END", 8 * 10),      # an allreduce per rank and iteration
            ("solver", "MPI_ISEND", 8 * 10 * 2),           # a halo to each neighbour
            ("solver", "MPI_IRECV_REQUEST", 8 * 10 * 2),
            ("solver", "MPI_IRECV", 8 * 10 * 2),
            ("solver", "MPI_ISEND_COMPLETE", 8 * 10 * 2),
            ("transpose", "MPI_COLLECTIVE_END", 8 * 5),
            ("farm", "MPI_SEND", 16 * 2 + 3),              # tasks, results, the stop messages
            ("farm", "MPI_RECV", 16 * 2 + 3),
        ]
        for name, kind, n in expect:
            got = count(events[name], kind)
            if got != n:
                failures.append(f"{name}: {got} {kind} events, {n} expected")
    for f in failures:
        print("FAIL:", f)
    print(f"traces: {len(TRACES)} traces, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
