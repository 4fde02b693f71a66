#!/usr/bin/env python3
"""Write the project's test traces: small MPI applications recorded as OTF2
archives (the format Score-P writes), with the OTF2 writer (Debian's
python3-otf2, the bindings of the same library Score-P links).

    /usr/bin/python3 scripts/make_traces.py [--out configs/traces]

Each trace is an archive directory holding the anchor file NAME.otf2, the
global definitions and one event file per rank, laid out as Score-P lays
them out: a location group (process) per MPI rank with one location (its
thread), MPI_COMM_WORLD over the ranks, an MPI region per MPI call entered
and left around its MPI event, and the application's compute between
calls in a region of its own. Time is in nanoseconds (timer resolution
1 GHz). The three applications (issue #40):

  solver     an iterative solver's skeleton on 8 ranks in a ring: each of
             10 iterations computes 200 us, exchanges 8 KiB halos with both
             neighbours (MPI_Irecv, MPI_Isend, MPI_Waitall) and reduces its
             residual (MPI_Allreduce of 8 B)
  transpose  an FFT's transposes on 8 ranks: each of 5 iterations computes
             500 us and exchanges 4 KiB with every other rank (MPI_Alltoall)
  farm       master and workers on 4 ranks: rank 0 hands 16 tasks of 1 KiB
             to 3 workers (MPI_Send), takes each 4 KiB result from whoever
             ends first (MPI_Recv from MPI_ANY_SOURCE, the sender recorded)
             and gives that worker the next task, then a stop message of
             0 B to each; a worker's task takes 100 us + 30 us x its number

The files are deterministic: the same script writes the same bytes, and the
ctest `traces` checks that configs/traces/ holds what it writes.

    /usr/bin/python3 scripts/make_traces.py --only solver --ranks 1024 --iterations 40 --out DIR

writes a larger solver (not shipped; workloads/tests/trace_reader_test.cpp
reads ones of 2,048 ranks to show that the reader's memory is bounded), and
`--only transpose --block 262144` a transpose of 256 KiB blocks (the fault
situations of tests/system/trace_test.cpp need 2 MiB buffers).
"""
import argparse
import os
import shutil
import sys

try:
    import otf2
    from otf2.enums import CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole
except ImportError:
    sys.exit("make_traces: the OTF2 Python bindings are missing (apt-get install python3-otf2, scripts/setup.sh; "
             "run with /usr/bin/python3)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = 1_000_000_000   # timer resolution: ticks per second
# The writer's chunks, of events and of definitions: the smallest OTF2 takes
# (256 KiB). Every rank's writer has one of each, allocated and cleared
# whole, so the bindings' defaults (1 MiB and 4 MiB) cost the 2,048 ranks of
# the trace reader's test (workloads/tests/trace_reader_test.cpp) 7 s of
# system time a trace, 0.8 s with these (2026-11-29). The events and
# definitions written are the same (tests/scripts/traces_test.py).
CHUNK = 256 * 1024
# A collective without a root (OTF2_COLLECTIVE_ROOT_NONE: UINT32_MAX).
ROOT_NONE = 0xFFFFFFFF


class App:
    """One archive being written: its definitions and a writer per rank,
    each with its own clock."""

    def __init__(self, trace, ranks):
        d = trace.definitions
        machine = d.system_tree_node("machine")
        self.groups = [d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                        system_tree_parent=d.system_tree_node(f"node {r}", parent=machine))
                       for r in range(ranks)]
        locations = tuple(d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in self.groups)
        self.writers = [trace.event_writer_from_location(loc) for loc in locations]
        # Score-P's layout: the MPI locations, then MPI_COMM_WORLD's group
        # (its ranks: the locations in rank order).
        d.group("MPI", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locations)
        world = d.group("MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                        members=locations)
        self.comm = d.comm("MPI_COMM_WORLD", world)
        self.regions = {}
        self.definitions = d
        self.clock = [0] * ranks

    def region(self, name):
        if name not in self.regions:
            mpi = name.startswith("MPI_")
            self.regions[name] = self.definitions.region(
                name, region_role=RegionRole.FUNCTION, paradigm=Paradigm.MPI if mpi else Paradigm.USER)
        return self.regions[name]

    def compute(self, r, us):
        w, reg = self.writers[r], self.region("compute")
        w.enter(self.clock[r], reg)
        self.clock[r] += int(us * 1000)
        w.leave(self.clock[r], reg)

    def call(self, r, name, events, duration_ns=1000):
        """An MPI call: enter its region, its events (functions of the
        writer and the time), leave."""
        w, reg = self.writers[r], self.region(name)
        w.enter(self.clock[r], reg)
        for e in events:
            self.clock[r] += 100
            e(w, self.clock[r])
        self.clock[r] += duration_ns
        w.leave(self.clock[r], reg)


def solver(app, ranks=8, iterations=10):
    halo, req = 8192, [0] * ranks
    for it in range(iterations):
        for r in range(ranks):
            left, right = (r + ranks - 1) % ranks, (r + 1) % ranks
            app.compute(r, 200)
            ids = []
            for peer in (left, right):
                req[r] += 1
                rid = req[r]
                ids.append(("recv", peer, rid))
                app.call(r, "MPI_Irecv", [lambda w, t, rid=rid: w.mpi_irecv_request(t, rid)])
            for peer in (left, right):
                req[r] += 1
                rid = req[r]
                ids.append(("send", peer, rid))
                app.call(r, "MPI_Isend", [lambda w, t, peer=peer, rid=rid:
                                          w.mpi_isend(t, peer, app.comm, it, halo, rid)])
            done = []
            for kind, peer, rid in ids:
                if kind == "recv":
                    done.append(lambda w, t, peer=peer, rid=rid: w.mpi_irecv(t, peer, app.comm, it, halo, rid))
                else:
                    done.append(lambda w, t, rid=rid: w.mpi_isend_complete(t, rid))
            app.call(r, "MPI_Waitall", done, duration_ns=20_000)
            app.call(r, "MPI_Allreduce", [lambda w, t: w.mpi_collective_begin(t),
                                          lambda w, t: w.mpi_collective_end(t, CollectiveOp.ALLREDUCE, app.comm,
                                                                            ROOT_NONE, 8, 8)],
                     duration_ns=15_000)


def transpose(app, ranks=8, iterations=5, block=4096):
    for _ in range(iterations):
        for r in range(ranks):
            app.compute(r, 500)
            app.call(r, "MPI_Alltoall", [lambda w, t: w.mpi_collective_begin(t),
                                         lambda w, t: w.mpi_collective_end(t, CollectiveOp.ALLTOALL, app.comm,
                                                                           ROOT_NONE, block * ranks,
                                                                           block * ranks)],
                     duration_ns=60_000)


def farm(app, ranks=4, tasks=16):
    task, result = 1024, 4096
    workers = list(range(1, ranks))
    # Who finishes when: worker w takes 100 + 30 w us a task. The master
    # hands out the first tasks, then the next to whoever returns first.
    busy_until = {}
    order = []            # (worker, task) in the order the master receives results
    given = {w: [] for w in workers}
    t = 0
    queue = list(range(tasks))
    for w in workers:
        k = queue.pop(0)
        given[w].append(k)
        busy_until[w] = t + 100 + 30 * w
    while busy_until:
        w = min(busy_until, key=lambda x: (busy_until[x], x))
        now = busy_until.pop(w)
        order.append(w)
        if queue:
            k = queue.pop(0)
            given[w].append(k)
            busy_until[w] = now + 100 + 30 * w
    m = 0
    for w in workers:
        app.call(m, "MPI_Send", [lambda wr, t, w=w: wr.mpi_send(t, w, app.comm, 1, task)])
    handed = {w: 1 for w in workers}
    for w in order:
        app.call(m, "MPI_Recv", [lambda wr, t, w=w: wr.mpi_recv(t, w, app.comm, 2, result)], duration_ns=50_000)
        if handed[w] < len(given[w]):
            handed[w] += 1
            app.call(m, "MPI_Send", [lambda wr, t, w=w: wr.mpi_send(t, w, app.comm, 1, task)])
    for w in workers:
        app.call(m, "MPI_Send", [lambda wr, t, w=w: wr.mpi_send(t, w, app.comm, 3, 0)])
    for w in workers:
        for _ in given[w]:
            app.call(w, "MPI_Recv", [lambda wr, t: wr.mpi_recv(t, 0, app.comm, 1, task)], duration_ns=10_000)
            app.compute(w, 100 + 30 * w)
            app.call(w, "MPI_Send", [lambda wr, t: wr.mpi_send(t, 0, app.comm, 2, result)])
        app.call(w, "MPI_Recv", [lambda wr, t: wr.mpi_recv(t, 0, app.comm, 3, 0)])


TRACES = {"solver": (solver, 8), "transpose": (transpose, 8), "farm": (farm, 4)}


def write(out, name, ranks=None, iterations=None, block=None):
    fn, default_ranks = TRACES[name]
    ranks = ranks or default_ranks
    path = os.path.join(out, name)
    if os.path.exists(path):
        shutil.rmtree(path)
    with otf2.writer.open(path, timer_resolution=NS, archive_name=name, chunk_size_events=CHUNK,
                           chunk_size_definitions=CHUNK) as trace:
        app = App(trace, ranks)
        kwargs = {"ranks": ranks}
        if iterations:
            kwargs["iterations"] = iterations
        if block:
            kwargs["block"] = block
        fn(app, **kwargs)
        # The clock's wall-clock date (OTF2 ClockProperties): fixed, so the
        # same script writes the same bytes (the bindings would take the
        # time of the first event's writing).
        trace._realtime_timestamp = 1767225600   # 2026-01-01 00:00 UTC
    return os.path.join(path, name + ".otf2")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "configs", "traces"))
    ap.add_argument("--only", choices=sorted(TRACES))
    ap.add_argument("--ranks", type=int, help="with --only: this many ranks instead of the shipped trace's")
    ap.add_argument("--iterations", type=int, help="with --only solver or transpose: this many iterations")
    ap.add_argument("--block", type=int, help="with --only transpose: bytes each rank sends each other rank")
    args = ap.parse_args()
    if (args.ranks or args.iterations or args.block) and not args.only:
        sys.exit("make_traces: --ranks, --iterations and --block need --only")
    if args.block is not None and (args.only != "transpose" or args.block < 1):
        sys.exit("make_traces: --block is the transpose's, 1 byte or more")
    if args.iterations and args.only == "farm":
        sys.exit("make_traces: the farm has tasks, not iterations")
    if args.ranks is not None and args.ranks < 2:
        sys.exit("make_traces: --ranks must be 2 or more")
    os.makedirs(args.out, exist_ok=True)
    for name in ([args.only] if args.only else sorted(TRACES)):
        print("make_traces: wrote",
              os.path.relpath(write(args.out, name, args.ranks, args.iterations, args.block), os.getcwd()))


if __name__ == "__main__":
    main()
