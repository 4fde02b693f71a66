#!/usr/bin/env python3
"""ctest mpi_program: real MPI programs (workloads/mpi/tests/*.cpp, built
against Debian's Open MPI) run unmodified through `vrdmasim run` with
workload.kind = mpi (workloads/mpi/README.md).

Checks: the program's own data checks pass and its clocks read simulated
time; NetPIPE (Debian's netpipe-openmpi, unmodified) prints the sendrecv
workload's latencies at the same sizes; HPCC (Debian's hpcc) finishes with
every call timed and its network figures within the link's ceiling; two runs with mpi.compute = none, and two with fixed, give the same
stats.json; a strategy that pins shows its pins; an untimed call stops the
run naming it, or (mpi.untimed = count) runs and is named in the findings;
a rank that crashes stops the run saying so; no process is left behind;
a run recorded with mpi.record replays (workload.kind = trace, at the
program's recorded buffers) to the same figures under fault-tolerant and
pin, LAMMPS's too (README "Record, then replay"); the program's own first
touches and frees reach the simulation (README "The program's memory").
"""
import argparse
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import mpi_runs
from mpi_runs import statistics, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--source", required=True)
    a = ap.parse_args()
    failures = []
    runs = mpi_runs.Runs(a.exe, a.programs, ("mpi_comms", "mpi_requests", "mpi_memory", "mpi_vectors", "mpi_ring",
                                            "mpi_clock"), "mpt", failures)
    ring, clock, comms, requests, memprog, vectors = (runs.program[n] for n in (
        "mpi_ring", "mpi_clock", "mpi_comms", "mpi_requests", "mpi_memory", "mpi_vectors"))
    run, replay = runs.run, runs.replay

    def same_figures(what, direct, replayed):
        mpi_runs.same_figures(failures, what, direct, replayed)

    with tempfile.TemporaryDirectory() as d:
        # The ring on 4 ranks, twice: the program's checks pass, its own
        # figures are printed, and the two runs' statistics are the same.
        outs = []
        for i in range(2):
            out = os.path.join(d, "ring%d" % i)
            p = run(out, "--mpi.program=" + ring, "--mpi.args=4096 3", "--mpi.ranks=4", "--topology.nodes=4")
            if "ring: ok" not in p.stdout:
                failures.append("ring: the program's checks did not pass:\n" + p.stdout[-2000:] + p.stderr[-2000:])
            # What it printed is in the run's outputs too.
            printed = os.path.join(out, "program.stdout")
            if not os.path.exists(printed) or "ring: ok" not in open(printed).read() or not os.path.exists(
                    os.path.join(out, "program.stderr")):
                failures.append("ring: the program's stdout and stderr are not in the run's outputs")
            outs.append(out)
        if all(os.path.exists(os.path.join(o, "stats.json")) for o in outs):
            if statistics(outs[0]) != statistics(outs[1]):
                failures.append("ring: two runs with mpi.compute = none give different stats.json")
            s = summary(outs[0])
            # Per rank: 3 rounds x (1 sendrecv + 2 irecv + 2 isend + 4 waits),
            # the any-source gather, 9 collectives, finalize.
            if int(s["mpi_calls"]) < 4 * (3 * 9 + 9):
                failures.append("ring: mpi_calls = %s, fewer than the program makes" % s["mpi_calls"])
            # Its MPI_MAX over MPI_INT and MPI_MINLOC over MPI_DOUBLE_INT
            # run with their operation and datatype, every result checked.
            if s["mpi_untimed_calls"] != "0" or s["data_mismatches"] != "0":
                failures.append("ring: untimed calls or data mismatches: %s" % s)
            # Its allreduce of its own MPI_Op: timed with a stand-in, said so.
            if "4 reduction(s) of a user-defined MPI_Op timed with a stand-in" not in p.stdout + p.stderr:
                failures.append("ring: no findings line on the stand-in reduction:\n" + p.stdout[-2000:])
            m = re.search(r"ring: 4 ranks, 4096 B, 3 rounds: ([0-9.]+) us a round", p.stdout)
            if not m or not 0.5 < float(m.group(1)) < 1000:
                failures.append("ring: the program's MPI_Wtime figure is missing or not simulated: " + p.stdout)
        # Communicators (README "Communicators"): splits, a duplicate whose
        # messages share sources and tags with MPI_COMM_WORLD's, a cartesian
        # grid, a communicator from a group; the program checks its data,
        # vrdmasim every byte. 3 ranks leave one out of the 2 x 1 grid, and
        # make messages to itself (a half of one rank, a dimension of one):
        # recorded and replayed to the same figures (README "Record, then
        # replay").
        for ranks, size in (("3", "4096"), ("4", "4096")):
            out = os.path.join(d, "comms" + ranks)
            rec = os.path.join(d, "t-comms" + ranks)
            p = run(out, "--mpi.program=" + comms, "--mpi.args=" + size, "--mpi.ranks=" + ranks, "--topology.nodes=4",
                    *(["--mpi.record=" + rec] if ranks == "3" else []), timeout=120)
            if "comms: ok" not in p.stdout:
                failures.append("comms on %s ranks: the program's checks did not pass:\n%s%s" %
                                (ranks, p.stdout[-2000:], p.stderr[-2000:]))
            elif int(summary(out)["mpi_untimed_calls"]) != 0 or summary(out)["transfer_errors"] != "0":
                failures.append("comms on %s ranks: untimed calls or transfer errors: %s" % (ranks, summary(out)))
            if ranks == "3":
                own = sum(v for k, v in statistics(out).items() if k.endswith("self_sends") and isinstance(v, int))
                if own < 3:
                    failures.append("comms on 3 ranks: %s self messages, 3 or more expected" % own)
                replay(out + "-replayed", os.path.join(rec, "t-comms3.otf2"), "--topology.nodes=4")
                same_figures("comms on 3 ranks (messages to itself) recorded and replayed", out, out + "-replayed")
        # Requests (README "Receives", "Requests", "Datatypes"): receives
        # from any source before receives of one, HPCC's RandomAccess loop
        # and its cancelled receive, sends Open MPI completes at once, a
        # strided datatype, MPI_COMM_SELF, messages to itself, non-blocking
        # collectives (by MPI_Waitany and MPI_Waitsome with receives, and
        # one freed); every call timed. And on 64 ranks (64 processes on
        # this machine's 2 cores), a torus of 16 QFDBs.
        for ranks in ("3", "4", "64"):
            out = os.path.join(d, "requests" + ranks)
            where = (["--topology.kind=torus", "--topology.x=4", "--topology.y=2", "--topology.z=2"]
                     if ranks == "64" else ["--topology.nodes=4"])
            p = run(out, "--mpi.program=" + requests, "--mpi.ranks=" + ranks, *where, timeout=300)
            if "requests: ok" not in p.stdout:
                failures.append("requests on %s ranks: the program's checks did not pass:\n%s%s" %
                                (ranks, p.stdout[-2000:], p.stderr[-2000:]))
            elif int(summary(out)["mpi_untimed_calls"]) != 0 or summary(out)["transfer_errors"] != "0":
                failures.append("requests on %s ranks: untimed calls or transfer errors: %s" % (ranks, summary(out)))
        # MPI_Cancel of a non-blocking collective's request: erroneous in
        # MPI, refused naming the rule.
        p = run(os.path.join(d, "cancel"), "--mpi.program=" + requests, "--mpi.ranks=3", "--mpi.args=cancel",
                "--topology.nodes=4", expect=2)
        if "MPI_Cancel of a non-blocking collective (MPI-3.1 5.12), which MPI makes erroneous" not in p.stderr:
            failures.append("cancel: the error does not name the rule:\n" + p.stderr[-2000:])
        # Its non-blocking collectives (mode nonblocking: an iallreduce while
        # an allreduce runs, an ibarrier tested in a loop, an ibcast and an
        # iallgather waited for in reverse, an iscan and an ireduce reading
        # one input) recorded as NonBlockingCollectiveRequest/Complete and
        # replayed to the same figures (README "Record, then replay").
        out = os.path.join(d, "requests-nonblocking")
        rec = os.path.join(d, "t-nonblocking")
        p = run(out, "--mpi.program=" + requests, "--mpi.args=nonblocking", "--mpi.ranks=4", "--topology.nodes=4",
                "--mpi.record=" + rec, timeout=120)
        if "requests: ok" not in p.stdout:
            failures.append("requests nonblocking: the program's checks did not pass:\n%s%s" %
                            (p.stdout[-2000:], p.stderr[-2000:]))
        else:
            replay(out + "-replayed", os.path.join(rec, "t-nonblocking.otf2"), "--topology.nodes=4")
            same_figures("non-blocking collectives recorded and replayed", out, out + "-replayed")
        # MPI_Waitany over a non-blocking collective and a receive (mode
        # ties, README "Non-blocking collectives"): of two ended before the
        # call, the first listed, in both orders (the program checks it);
        # and the same figures whichever order SystemC runs same-time events
        # in (heap, keyed with two seeds). 489 calls (163 a rank), exact:
        # 141 a rank from the program's source (in each of tie()'s 22 runs
        # an MPI_Irecv, an MPI_Isend, an MPI_Ibarrier (6) or MPI_Iallreduce
        # (16), an MPI_Waitany and two MPI_Wait: 132; an MPI_Barrier in the
        # 6 with both ended before: 6; main's two MPI_Allreduce and its
        # MPI_Finalize: 3), and 22 the preloaded library makes: the MPI_Wait
        # that ends the request each MPI_Waitany returned (preload/calls.cpp
        # MPI_Waitany; protocol.hpp Waitany), a call to the simulation like
        # any other. MPI_Init (the hello) and MPI_Comm_size (local) are not
        # counted. (Counted from the recorded trace's regions per rank:
        # MPI_Wait 66, MPI_Waitany, MPI_Isend, MPI_Irecv 22 each,
        # MPI_Iallreduce 16, MPI_Barrier 6, MPI_Ibarrier 6, MPI_Allreduce 2,
        # MPI_Finalize 1.)
        # The first recorded and replayed to the same figures (MPI_Waitany
        # over a collective's request replayed by the same rule, README
        # "Record, then replay").
        tied = []
        rec = os.path.join(d, "t-ties")
        for order in ([], ["--sim.event-order=keyed", "--sim.event-order-seed=2"],
                      ["--sim.event-order=keyed", "--sim.event-order-seed=3"]):
            out = os.path.join(d, "ties%d" % len(tied))
            record = [] if tied else ["--mpi.record=" + rec]
            p = run(out, "--mpi.program=" + requests, "--mpi.args=ties", "--mpi.ranks=3", "--topology.nodes=4", *order,
                    *record, timeout=120)
            s = summary(out)
            if "requests: ok, 18 ties" not in p.stdout:
                failures.append("requests ties %s: the program's checks did not pass:\n%s%s" %
                                (order, p.stdout[-2000:], p.stderr[-2000:]))
            elif s["mpi_calls"] != "489" or s["mpi_untimed_calls"] != "0" or s["transfer_errors"] != "0":
                failures.append("requests ties %s: %s calls (489 expected), untimed calls or errors: %s" %
                                (order, s.get("mpi_calls"), s))
            elif record:
                replay(out + "-replayed", os.path.join(rec, "t-ties.otf2"), "--topology.nodes=4")
                same_figures("MPI_Waitany over non-blocking collectives (ties) recorded and replayed", out,
                             out + "-replayed")
            tied.append(statistics(out))
        if not tied[0] or any(t != tied[0] for t in tied):
            failures.append("requests ties: stats.json differs between sim.event-order heap and keyed (seeds 2, 3)")
        # The same both ways of progress (library/collectives/README.md
        # "Progress"), 20 us of compute before each call: in-call (libnbc)
        # waits for the program's calls between rounds, so the program
        # takes longer than under async progress; recorded and replayed
        # under in-call, the same figures (the replay's collectives reach
        # the library's in-call progress too).
        app_us = {}
        for progress in ("async", "in-call"):
            out = os.path.join(d, "requests-nonblocking-" + progress)
            rec = os.path.join(d, "t-progress-" + progress)
            p = run(out, "--mpi.program=" + requests, "--mpi.args=nonblocking", "--mpi.ranks=4", "--topology.nodes=4",
                    "--mpi.compute=fixed", "--mpi.compute-time=20us", "--collective.progress=" + progress,
                    "--mpi.record=" + rec, timeout=120)
            if "requests: ok" not in p.stdout:
                failures.append("requests nonblocking, %s progress: the program's checks did not pass:\n%s%s" %
                                (progress, p.stdout[-2000:], p.stderr[-2000:]))
                continue
            app_us[progress] = float(summary(out)["mpi_app_time_us"])
            if progress == "in-call":
                replay(out + "-replayed", os.path.join(rec, "t-progress-in-call.otf2"), "--topology.nodes=4",
                       "--collective.progress=in-call")
                same_figures("non-blocking collectives under in-call progress, recorded and replayed", out,
                             out + "-replayed")
        if len(app_us) == 2 and not app_us["in-call"] > app_us["async"]:
            failures.append("requests nonblocking: in-call progress took %s us, async %s us (in-call should be "
                            "longer)" % (app_us["in-call"], app_us["async"]))
        # The program's memory (README "The program's memory"): a receive
        # buffer the program wrote first takes no fault; a freed block is
        # unmapped, so the block allocated in its place is new memory (it
        # faults again, and the pin-down cache misses on it).
        mem = {}
        # The same with the program's own mmap and munmap (mode mmap).
        for mode, strategy in (("touch", "fault-tolerant"), ("reuse", "fault-tolerant"), ("reuse", "pin-cache"),
                               ("mmap", "pin-cache")):
            for memory in ("observed", "buffers-only"):
                out = os.path.join(d, "memory-%s-%s-%s" % (mode, strategy, memory))
                p = run(out, "--mpi.program=" + memprog, "--mpi.args=" + mode, "--mpi.ranks=2",
                        "--rdma.strategy=" + strategy, "--mpi.program-memory=" + memory)
                if "memory: ok" not in p.stdout or summary(out)["transfer_errors"] != "0":
                    failures.append("memory %s %s %s: the program's checks did not pass:\n%s%s" %
                                    (mode, strategy, memory, p.stdout[-2000:], p.stderr[-2000:]))
                    continue
                st = statistics(out)
                mem[mode, strategy, memory] = dict(summary(out), touched=st.get("workload.mpi.pages_touched", 0),
                                                   unmaps=st.get("workload.mpi.unmaps", 0))
        if len(mem) == 8:
            t_obs, t_bo = mem["touch", "fault-tolerant", "observed"], mem["touch", "fault-tolerant", "buffers-only"]
            r_obs, r_bo = mem["reuse", "fault-tolerant", "observed"], mem["reuse", "fault-tolerant", "buffers-only"]
            c_obs, c_bo = mem["reuse", "pin-cache", "observed"], mem["reuse", "pin-cache", "buffers-only"]
            m_obs, m_bo = mem["mmap", "pin-cache", "observed"], mem["mmap", "pin-cache", "buffers-only"]
            checks = [
                ("a block written first: no SMMU fault",
                 int(t_obs["smmu_faults"]) == 0 < int(t_bo["smmu_faults"])),
                ("its pages counted as touched", int(t_obs["touched"]) >= 2 * 256 and int(t_bo["touched"]) == 0),
                ("a block freed and allocated again: its pages fault again",
                 int(r_obs["smmu_faults"]) > int(r_bo["smmu_faults"])),
                ("the free counted as an unmap", int(r_obs["unmaps"]) >= 1 and int(r_bo["unmaps"]) == 0),
                ("the pin-down cache misses on each rank's new block",
                 int(c_obs["pin_cache_misses"]) == int(c_bo["pin_cache_misses"]) + 2 and
                 int(c_obs["pin_cache_hits"]) + 2 == int(c_bo["pin_cache_hits"])),
                ("the program's own mapping: written first, unmapped, mapped again: touched, unmapped, missed",
                 int(m_obs["touched"]) >= 2 * 256 and int(m_obs["unmaps"]) >= 4 and int(m_bo["unmaps"]) == 0 and
                 int(m_obs["pin_cache_misses"]) == int(m_bo["pin_cache_misses"]) + 2 and
                 int(m_obs["pin_cache_hits"]) + 2 == int(m_bo["pin_cache_hits"])),
            ]
            for what, ok in checks:
                if not ok:
                    failures.append("program memory: %s: %s" % (what, {k: {c: v[c] for c in (
                        "smmu_faults", "touched", "unmaps", "pin_cache_hits", "pin_cache_misses")}
                        for k, v in mem.items()}))
            with open(os.path.join(a.source, "workloads", "mpi", "README.md")) as f:
                readme = f.read()
            quoted = ["| %s | %s | %s |" % (mode, o["smmu_faults"], b["smmu_faults"])
                      for mode, o, b in (("written first", t_obs, t_bo), ("freed, allocated again", r_obs, r_bo))]
            quoted.append("%.2f ms against %.2f ms" % (float(t_obs["mpi_app_time_us"]) / 1e3,
                                                       float(t_bo["mpi_app_time_us"]) / 1e3))
            quoted.append("observed, %s misses and no hit; buffers-only, %s misses and %s hits" % (
                c_obs["pin_cache_misses"], c_bo["pin_cache_misses"], c_bo["pin_cache_hits"]))
            quoted.append("received into): observed, %s misses and no hit; buffers-only, %s misses and %s hits" % (
                m_obs["pin_cache_misses"], m_bo["pin_cache_misses"], m_bo["pin_cache_hits"]))
            for q in quoted:
                if " ".join(q.split()) not in " ".join(readme.split()):
                    failures.append("workloads/mpi/README.md does not quote the measured " + q)
        # Transparent huge pages (README "The program's memory"): one byte
        # written per rank in a region advised MADV_HUGEPAGE (as a host with
        # THP "always" backs every mapping) is one page touched, not 512: the
        # figure follows the program, not the host's THP settings (without
        # the launcher's PR_SET_THP_DISABLE this run counted 1025).
        out = os.path.join(d, "memory-huge")
        p = run(out, "--mpi.program=" + memprog, "--mpi.args=huge", "--mpi.ranks=2")
        touched = statistics(out).get("workload.mpi.pages_touched", 0) if "memory: ok" in p.stdout else None
        if touched is None or not 2 <= int(touched) < 64:
            failures.append("memory huge: one byte written per rank in a huge-page-advised region: %s pages "
                            "touched (expected 1 a rank and a few of the C library's):\n%s%s" %
                            (touched, p.stdout[-2000:], p.stderr[-2000:]))
        # With THP turned back on under the launcher, the library refuses.
        thp_on = os.path.join(d, "thp_on_mpirun")
        with open(thp_on, "w") as f:
            f.write("#!%s\nimport ctypes, os, sys\nctypes.CDLL(None).prctl(41, 0, 0, 0, 0)  # PR_SET_THP_DISABLE\n"
                    "os.execvp('mpirun', ['mpirun'] + sys.argv[1:])\n" % sys.executable)
        os.chmod(thp_on, 0o755)
        p = run(os.path.join(d, "memory-thp-on"), "--mpi.program=" + memprog, "--mpi.args=huge", "--mpi.ranks=2",
                "--mpi.launcher=" + thp_on, expect=1)
        if "transparent huge pages are on" not in p.stderr:
            failures.append("memory with THP on: not refused:\n" + p.stderr[-2000:])
        # Fortran (README "Fortran"): the mpi module on 2 and 3 ranks, mpi_f08
        # on 3; every call reaches the simulation (each rank's count exact:
        # 16 calls, rank 2 skips the ping-pong's 2; mpi_f08's 6), none
        # untimed, every byte verified, MPI_Wtime simulated (the README's
        # figure).
        fortran_times = {}
        for prog, ranks, calls in (("mpi_fortran", "2", 32), ("mpi_fortran", "3", 46), ("mpi_fortran08", "3", 18)):
            out = os.path.join(d, "%s-%s" % (prog, ranks))
            p = run(out, "--mpi.program=" + os.path.join(a.programs, prog), "--mpi.ranks=" + ranks,
                    "--topology.nodes=4")
            word = prog[len("mpi_"):]
            s = summary(out)
            if word + ": ok" not in p.stdout:
                failures.append("%s on %s ranks: the program's checks did not pass:\n%s%s" %
                                (prog, ranks, p.stdout[-2000:], p.stderr[-2000:]))
            elif (s["mpi_calls"] != str(calls) or s["mpi_untimed_calls"] != "0" or s["transfer_errors"] != "0" or
                  s["data_mismatches"] != "0"):
                failures.append("%s on %s ranks: %s calls (%d expected), untimed calls, errors or mismatches: %s" %
                                (prog, ranks, s.get("mpi_calls"), calls, s))
            m = re.search(r"in +([0-9.]+) us", p.stdout)
            if m:
                fortran_times[prog, ranks] = m.group(1)
        with open(os.path.join(a.source, "workloads", "mpi", "README.md")) as f:
            readme = " ".join(f.read().split())
        for (prog, ranks), t in sorted(fortran_times.items()):
            if ranks == "2" and "%s us" % t not in readme:
                failures.append("workloads/mpi/README.md does not quote %s's measured %s us" % (prog, t))
        # The v-variants (README "What is timed"): gatherv, scatterv,
        # allgatherv and alltoallv with uneven counts, some empty, and
        # reduce_scatter and reduce_scatter_block, eager and
        # rendezvous sizes, on the world and on halves of it; the program
        # checks its data, vrdmasim every byte; every call timed.
        # Recorded (their blocks as vrdmasim::blocks) and replayed to the
        # same figures (README "Record, then replay").
        for ranks in ("3", "4"):
            out = os.path.join(d, "vectors" + ranks)
            rec = os.path.join(d, "t-vectors" + ranks)
            p = run(out, "--mpi.program=" + vectors, "--mpi.ranks=" + ranks, "--topology.nodes=4",
                    "--mpi.record=" + rec, timeout=120)
            replay(out + "-replayed", os.path.join(rec, "t-vectors%s.otf2" % ranks), "--topology.nodes=4")
            same_figures("vectors on %s ranks recorded and replayed" % ranks, out, out + "-replayed")
            s = summary(out)
            if "vectors: ok" not in p.stdout:
                failures.append("vectors on %s ranks: the program's checks did not pass:\n%s%s" %
                                (ranks, p.stdout[-2000:], p.stderr[-2000:]))
            elif (int(s["mpi_untimed_calls"]) != 0 or s["transfer_errors"] != "0" or s["data_mismatches"] != "0" or
                  int(s["mpi_calls"]) < 20):
                failures.append("vectors on %s ranks: untimed calls, transfer errors or mismatches: %s" % (ranks, s))
        # Reductions of the complex types (C's, C++'s), MPI_LONG_DOUBLE,
        # MPI_LONG_DOUBLE_INT, MPI_C_BOOL, MPI_AINT and the reduce-scatters
        # with MPI_IN_PLACE (README "What is timed"; Fortran's pair and
        # complex types: mpi_fortran above), each rank's 12 calls on 3 ranks;
        # MPI_Alltoallv and MPI_Ialltoallv with MPI_IN_PLACE, then
        # MPI_Allgather and MPI_Alltoall with it, 7 calls a rank on 4 ranks:
        # the program checks each result, vrdmasim every byte; every call
        # timed; recorded and replayed to the same figures. A predefined
        # operation on a derived datatype (MPI does not define it) is
        # untimed, named so.
        for name, args, ranks, calls, what in (
                ("types3", "types", "3", "36", "reduction types on 3 ranks"),
                ("alltoallv", "types alltoallv", "4", "28", "in-place alltoallv, alltoall and allgather")):
            out, rec = os.path.join(d, name), os.path.join(d, "t-" + name)
            p = run(out, "--mpi.program=" + vectors, "--mpi.args=" + args, "--mpi.ranks=" + ranks,
                    "--topology.nodes=4", "--mpi.record=" + rec, timeout=120)
            s = summary(out)
            if "types: ok" not in p.stdout:
                failures.append("%s: the program's checks did not pass:\n%s%s" % (what, p.stdout[-2000:],
                                                                                p.stderr[-2000:]))
            elif (s["mpi_calls"] != calls or s["mpi_untimed_calls"] != "0" or s["transfer_errors"] != "0" or
                  s["data_mismatches"] != "0" or s["bytes_verified"] == "0"):
                failures.append("%s: %s calls (%s expected), untimed calls or mismatches: %s" %
                                (what, s.get("mpi_calls"), calls, s))
            else:
                replay(out + "-replayed", os.path.join(rec, "t-%s.otf2" % name), "--topology.nodes=4")
                same_figures(what + " recorded and replayed", out, out + "-replayed")
        p = run(os.path.join(d, "derived"), "--mpi.program=" + vectors, "--mpi.args=types derived", "--mpi.ranks=2",
                "--topology.nodes=4", expect=2)
        if "MPI_Allreduce of a derived datatype, which the simulation does not time" not in p.stderr:
            failures.append("types derived: the refusal does not name the call:\n" + p.stderr[-2000:])
        # The 128-bit types left untimed (README "What is timed"): Open MPI
        # 4.1.4 has no MPI_INTEGER16, refuses MPI_MINLOC and MPI_MAXLOC on
        # MPI_2COMPLEX and MPI_2DOUBLE_COMPLEX, and sums MPI_REAL16 and
        # MPI_COMPLEX32 wrong (the README quotes the sum); each of the 4
        # reductions a rank is untimed, named so.
        p = run(os.path.join(d, "quad"), "--mpi.program=" + vectors, "--mpi.args=types quad", "--mpi.ranks=2",
                "--topology.nodes=4", "--mpi.untimed=count")
        m = re.search(r"quad: MPI_REAL16 sum of 1.5 and 2.5: ([-0-9.e+]+);", p.stdout)
        with open(os.path.join(a.source, "workloads", "mpi", "README.md")) as f:
            readme = " ".join(f.read().split())
        if "types: ok" not in p.stdout or not m:
            failures.append("types quad: the program's checks did not pass:\n%s%s" % (p.stdout[-2000:],
                                                                                     p.stderr[-2000:]))
        elif "a sum of `1.5_16` and `2.5_16` returns `%s`" % m.group(1) not in readme:
            failures.append("workloads/mpi/README.md does not quote Open MPI's MPI_REAL16 sum, %s" % m.group(1))
        if "MPI_Allreduce of a datatype the library has not 8" not in p.stdout + p.stderr:
            failures.append("types quad: the findings do not name 8 untimed reductions:\n" + p.stdout[-2000:])
        # Record, then replay (README "Record, then replay"): the ring (every
        # point-to-point call, tests, probes, any source, the collectives)
        # and the communicators (splits, a duplicate, a grid, a group),
        # recorded with their buffer addresses and replayed at them, give
        # the same figures as the program's run, under fault-tolerant and pin.
        for name, prog, args, strategies in (("ring", ring, "4096 3", ("fault-tolerant", "pin")),
                                             ("comms", comms, "4096", ("fault-tolerant",)),
                                             ("memory", memprog, "reuse", ("pin-cache",))):
            for strategy in strategies:
                out, rec = os.path.join(d, "rec-%s-%s" % (name, strategy)), os.path.join(d, "t-%s-%s" % (name, strategy))
                run(out, "--mpi.program=" + prog, "--mpi.args=" + args, "--mpi.ranks=4", "--topology.nodes=4",
                    "--rdma.strategy=" + strategy, "--mpi.record=" + rec)
                anchor = os.path.join(rec, os.path.basename(rec) + ".otf2")
                p = replay(out + "-replayed", anchor, "--topology.nodes=4", "--rdma.strategy=" + strategy)
                if "at the program's own buffer addresses" not in p.stdout + p.stderr:
                    failures.append("%s %s: the replay does not say it used the recorded buffers" % (name, strategy))
                same_figures("%s %s recorded and replayed" % (name, strategy), out, out + "-replayed")
        # A path that exists is never written to; trace.buffers = invented
        # replays a recorded trace by the rule (and says nothing of its
        # addresses).
        taken = os.path.join(d, "taken")
        os.mkdir(taken)
        p = run(os.path.join(d, "taken-out"), "--mpi.program=" + ring, "--mpi.record=" + taken, expect=2)
        if "exists" not in p.stderr or os.listdir(taken):
            failures.append("mpi.record to an existing folder: not refused, or written to:\n" + p.stderr[-2000:])
        p = replay(os.path.join(d, "invented"), os.path.join(d, "t-ring-pin", "t-ring-pin.otf2"), "--topology.nodes=4",
                   "--rdma.strategy=pin", "--trace.buffers=invented")
        if "own buffer addresses" in p.stdout + p.stderr:
            failures.append("trace.buffers = invented: the replay says it used the recorded addresses")
        # Fixed compute: deterministic too, and charged.
        outs = []
        for i in range(2):
            out = os.path.join(d, "fixed%d" % i)
            run(out, "--mpi.program=" + ring, "--mpi.args=1024 2", "--mpi.ranks=2", "--mpi.compute=fixed",
                "--mpi.compute-time=5us")
            outs.append(out)
        if all(os.path.exists(os.path.join(o, "stats.json")) for o in outs):
            if statistics(outs[0]) != statistics(outs[1]):
                failures.append("fixed compute: two runs give different stats.json")
            s = summary(outs[0])
            calls = int(s["mpi_calls"])
            if abs(float(s["mpi_compute_us"]) - 5 * calls) > 5 * 2 + 1e-6:
                failures.append("fixed compute: %s us of compute for %d calls of 5 us" % (s["mpi_compute_us"], calls))
        # A strategy that pins: the program's buffers are registered.
        out = os.path.join(d, "pin")
        run(out, "--mpi.program=" + ring, "--mpi.args=65536 2", "--mpi.ranks=2", "--rdma.strategy=pin-cache")
        if os.path.exists(os.path.join(out, "summary.csv")):
            s = summary(out)
            if int(s["pin_cache_misses"]) == 0:
                failures.append("pin-cache: no pin-down cache miss for the program's buffers")
        # The clocks: MPI_Wtime, clock_gettime and gettimeofday agree.
        p = run(os.path.join(d, "clock"), "--mpi.program=" + clock)
        m = re.search(r"clock: wtime ([0-9.]+) s, monotonic ([0-9.]+) s, gettimeofday ([0-9.]+) s, epoch (\d+)",
                      p.stdout)
        if not m:
            failures.append("clock: no line from the program:\n" + p.stdout + p.stderr)
        else:
            w, mono, tod, epoch = float(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4))
            if not (0 < w < 1e-3 and abs(mono - w) < 1e-9 and abs(tod - w) < 1.5e-6 and
                    1767225600 <= epoch < 1767225600 + 10):
                failures.append("clock: not simulated time: " + m.group(0))
        # NetPIPE (Debian's netpipe-openmpi, unmodified): its own one-way
        # times, read from its simulated gettimeofday, against the sendrecv
        # workload's latency test at the same sizes and settings
        # (workloads/mpi/README.md "Validation").
        netpipe = shutil.which("NPopenmpi")
        if not netpipe:
            failures.append("NPopenmpi not found: scripts/setup.sh installs netpipe-openmpi")
        else:
            out = os.path.join(d, "netpipe")
            p = run(out, "--mpi.program=" + netpipe, "--mpi.args=-n 50 -p 0 -u 65536 -o " + os.path.join(d, "np.out"))
            times = {int(m.group(1)): float(m.group(2)) for m in
                     re.finditer(r"^\s*\d+:\s+(\d+) bytes\s+\d+ times -->\s+[0-9.]+ Mbps in\s+([0-9.]+) usec", p.stderr,
                                 re.M)}
            for size in (1, 1024, 65536):
                ref_out = os.path.join(d, "sendrecv%d" % size)
                cmd = [a.exe, "run", "-q", "--out", ref_out, "--smmu.enabled=true", "--workload.kind=sendrecv",
                       "--workload.sendrecv-test=latency", "--workload.message-size=%dB" % size,
                       "--workload.iterations=50"]
                subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                ref = float(summary(ref_out)["latency_us_mean"]) if os.path.exists(
                    os.path.join(ref_out, "summary.csv")) else None
                got = times.get(size)
                if got is None or ref is None or abs(got - ref) > 0.02 * ref:
                    failures.append("NetPIPE %d B: %s us one way; the sendrecv workload's mean %s us (within 2 %%)" %
                                    (size, got, ref))
        # LAMMPS (Debian's lammps, unmodified), the Lennard-Jones melt of
        # lammps-examples on 2 ranks, every call timed: its physics (the
        # thermo table) is the same as without vrdmasim
        # (workloads/mpi/README.md "LAMMPS").
        lmp, melt = shutil.which("lmp"), "/usr/share/lammps/examples/melt/in.melt"
        if not lmp or not os.path.exists(melt):
            failures.append("lmp or %s not found: scripts/setup.sh installs lammps and lammps-examples" % melt)
        else:
            def thermo(log):
                with open(log) as f:
                    text = f.read()
                return re.findall(r"^\s*\d+\s+-?[0-9.]+\s+-?[0-9.]+\s+0\s+-?[0-9.]+\s+-?[0-9.]+\s*$", text, re.M)
            native = os.path.join(d, "native.lammps")
            subprocess.run(["mpirun", "-np", "2", "--oversubscribe", lmp, "-in", melt, "-log", native, "-screen",
                            "none"], capture_output=True, timeout=120, env=dict(runs.env, OMPI_ALLOW_RUN_AS_ROOT="1",
                                                                                OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
            # Each strategy of docs/experiments.md "A real application", with
            # its command's arguments (the program's addresses depend on
            # them): the loop time it quotes, and the physics of the run
            # without vrdmasim. Two runs of one command in one place give
            # the same stats.json (checked on the ring above).
            with open(os.path.join(a.source, "docs", "experiments.md")) as f:
                quoted = dict(re.findall(r"^\| ([a-z-]+) \| ([0-9.]+) ms \| [0-9.]+ µs \|", f.read(), re.M))
            if sorted(quoted) != ["fault-tolerant", "pin", "pin-cache", "prefault"]:
                failures.append("lammps: docs/experiments.md's strategy table not found: %s" % quoted)
            for strategy, ms in sorted(quoted.items()):
                where = os.path.join(d, "lammps-" + strategy)
                os.mkdir(where)
                # Fault-tolerant is recorded too, and replayed.
                record = ["--mpi.record=" + os.path.join(where, "melt")] if strategy == "fault-tolerant" else []
                run(os.path.join(where, "out"), "--mpi.program=lmp", "--mpi.ranks=2",
                    "--mpi.args=-in %s -log melt.log -screen none" % melt, "--rdma.strategy=" + strategy, *record,
                    cwd=where)
                if record:
                    replay(os.path.join(where, "replayed"), os.path.join(where, "melt", "melt.otf2"),
                           "--rdma.strategy=" + strategy)
                    same_figures("lammps %s recorded and replayed" % strategy, os.path.join(where, "out"),
                                 os.path.join(where, "replayed"))
                log = os.path.join(where, "melt.log")
                if not os.path.exists(log) or len(thermo(log)) != 6 or thermo(log) != thermo(native):
                    failures.append("lammps %s: the thermo table differs from a run without vrdmasim" % strategy)
                    continue
                with open(log) as f:
                    m = re.search(r"Loop time of ([0-9.]+) on 2 procs for 250 steps", f.read())
                # Within 2 %: the program's heap holds what the C library
                # allocates for Open MPI too, which follows the working folder
                # and TMPDIR (docs/experiments.md says so).
                if not m or abs(float(m.group(1)) * 1e3 - float(ms)) > 0.02 * float(ms):
                    failures.append("lammps %s: loop time %s s; docs/experiments.md says %s ms (within 2 %%)" %
                                    (strategy, m and m.group(1), ms))
        # HPCC (Debian's hpcc, unmodified) on 2 ranks, a small problem
        # (docs/experiments.md "HPC Challenge"): every call timed, every
        # byte verified, HPL's residual check passed, and its network
        # figures within the link's ceiling. Its STREAM waits for the clock
        # to move, so compute is measured: the figures vary from run to run.
        hpcc = shutil.which("hpcc")
        example = "/usr/share/doc/hpcc/examples/_hpccinf.txt"
        if not hpcc or not os.path.exists(example):
            failures.append("hpcc or %s not found: scripts/setup.sh installs hpcc" % example)
        else:
            where = os.path.join(d, "hpcc")
            os.mkdir(where)
            with open(example) as f:
                lines = f.read().split("\n")
            # N 200 (line 6), NB 40 (line 8), a 1 x 2 grid (lines 11-12).
            lines[5], lines[7], lines[10], lines[11] = "200 Ns", "40 NBs", "1 Ps", "2 Qs"
            with open(os.path.join(where, "hpccinf.txt"), "w") as f:
                f.write("\n".join(lines))
            out = os.path.join(where, "out")
            run(out, "--mpi.program=" + hpcc, "--mpi.ranks=2", "--mpi.compute=measured", cwd=where, timeout=300)
            text = open(os.path.join(where, "hpccoutf.txt")).read() if os.path.exists(
                os.path.join(where, "hpccoutf.txt")) else ""
            fig = {k: float(v) for k, v in re.findall(r"^(\w+)=([-0-9.e+]+)$", text, re.M)}
            link_gbytes = 16 / 8   # link.rate 16 Gb/s, per direction
            if "End of HPC Challenge tests" not in text or "PASSED" not in text or fig.get("Success") != 1:
                failures.append("hpcc: did not finish, or HPL's check failed:\n" + text[-2000:])
            elif summary(out).get("mpi_untimed_calls") != "0" or summary(out)["data_mismatches"] != "0":
                failures.append("hpcc: untimed calls or wrong data: %s" % (summary(out) or "no summary"))
            elif not (0.5 * link_gbytes < fig.get("MaxPingPongBandwidth_GBytes", 0) <= link_gbytes and
                      0 < fig.get("NaturallyOrderedRingBandwidth_GBytes", 0) <= 2 * link_gbytes and
                      0.5 < fig.get("MinPingPongLatency_usec", 0) < 20):
                failures.append("hpcc: network figures outside the link's ceiling or not simulated: %s" % {
                    k: fig.get(k) for k in ("MaxPingPongBandwidth_GBytes", "NaturallyOrderedRingBandwidth_GBytes",
                                            "MinPingPongLatency_usec")})
        # An untimed call: refused by default, naming it; counted when asked.
        p = run(os.path.join(d, "untimed"), "--mpi.program=" + clock, "--mpi.args=untimed", expect=2)
        if "MPI_Comm_split_type" not in p.stderr:
            failures.append("untimed: the error does not name MPI_Comm_split_type:\n" + p.stderr[-2000:])
        p = run(os.path.join(d, "counted"), "--mpi.program=" + clock, "--mpi.args=untimed", "--mpi.untimed=count")
        if not re.search(r"ran untimed.*MPI_Comm_split_type 2", p.stdout + p.stderr):
            failures.append("counted: no findings line naming MPI_Comm_split_type 2:\n" + p.stdout[-2000:])
        # A rank that crashes: the run says so, and nothing is left running.
        p = run(os.path.join(d, "crash"), "--mpi.program=" + clock, "--mpi.args=crash", expect=1)
        if "rank 1's process ended without MPI_Finalize" not in p.stderr:
            failures.append("crash: the error does not say rank 1 ended:\n" + p.stderr[-2000:])
        # MPI_Abort, and a deadlock in MPI (every rank in an MPI_Recv no
        # rank sends to, README "The processes", which quotes the latter):
        # the run stops saying so, in its error.txt too, naming the call.
        with open(os.path.join(a.source, "workloads", "mpi", "README.md")) as f:
            readme = " ".join(f.read().split())
        for mode, says in (("abort", "rank 1 called MPI_Abort (error code 3)"),
                           ("deadlock", "every rank still running waits in an MPI call (a deadlock, unless "
                                        "sim.time-limit cut a long one short): rank 0 in MPI_Recv since "
                                        "136.54933us; rank 1 in MPI_Recv since 134.24933us")):
            out = os.path.join(d, mode)
            p = run(out, "--mpi.program=" + clock, "--mpi.args=" + mode, expect=1)
            error = os.path.join(out, "error.txt")
            if says not in p.stderr or not os.path.exists(error) or says not in open(error).read():
                failures.append("%s: stderr and error.txt do not say %r:\n%s" % (mode, says, p.stderr[-2000:]))
            elif mode == "deadlock" and says not in readme:
                failures.append("workloads/mpi/README.md does not quote the deadlock's error: %r" % says)
        interrupted(d, a.exe, clock, runs, failures)
        # A program that does not exist.
        p = run(os.path.join(d, "none"), "--mpi.program=" + os.path.join(d, "no-such-program"), expect=1)
        time.sleep(1)
        left = runs.left_behind()
        if left:
            failures.append("processes left behind: %s" % left)
    return runs.finish("mpi_program")


def interrupted(d, exe, clock, runs, failures):
    """Ctrl-C (SIGINT), then SIGKILL, of a vrdmasim whose ranks ping-pong
    for ever (mpi_clock forever). After Ctrl-C no
    process of the run is left, nor its directories; after SIGKILL its
    shared-memory directory is left (named with its pid; the socket's went
    when the ranks connected), and the next run removes it, and only it:
    not a directory of that name without vrdmasim's lock file, nor one
    whose lock is held (README "The processes")."""
    def start(name):
        cmd = [exe, "run", "--out", os.path.join(d, name), "--workload.kind=mpi", "--smmu.enabled=true",
               "--mpi.program=" + clock, "--mpi.args=forever", "--sim.time-limit=100000s"]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=runs.env)
        # Started: mpirun and both ranks running.
        for _ in range(600):
            if len(runs.left_behind()) >= 3:
                break
            time.sleep(0.05)
        time.sleep(1)
        return p

    def gone(what):
        for _ in range(100):
            if not runs.left_behind():
                return
            time.sleep(0.1)
        failures.append("%s: processes left behind: %s" % (what, runs.left_behind()))

    p = start("interrupted")
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    gone("Ctrl-C")
    if os.listdir(runs.sockets):
        failures.append("Ctrl-C: directories left in TMPDIR: %s" % os.listdir(runs.sockets))
    p = start("killed")
    p.kill()
    p.wait(timeout=60)
    gone("SIGKILL")   # mpirun's parent-death signal
    # Open MPI's session directory (ompi.<host>.<uid>) is Open MPI's own:
    # mpirun, ended by its parent-death signal, may leave it.
    session = [n for n in os.listdir(runs.sockets) if n.startswith("ompi.")]
    left = sorted(n for n in os.listdir(runs.sockets) if n not in session)
    if len(left) != 1 or not re.match(r"vrdmasim-mpi-shm-%d-\w{6}$" % p.pid, left[0]):
        failures.append("SIGKILL: %s left in TMPDIR, the run's shared-memory directory expected" % left)
    unlocked = os.path.join(runs.sockets, "vrdmasim-mpi-shm-%d-nolock" % p.pid)
    held = os.path.join(runs.sockets, "vrdmasim-mpi-%d-inheld" % p.pid)
    os.mkdir(unlocked)
    os.mkdir(held)
    with open(os.path.join(held, "owner.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        runs.run(os.path.join(d, "after-kill"), "--mpi.program=" + clock)
        now = sorted(n for n in os.listdir(runs.sockets) if n not in session)
    if now != sorted(os.path.basename(x) for x in (unlocked, held)):
        failures.append("the run after SIGKILL: %s in TMPDIR, only the killed run's own should have gone" % now)
    for n in session + [unlocked, held]:
        shutil.rmtree(os.path.join(runs.sockets, n))


if __name__ == "__main__":
    sys.exit(main())
