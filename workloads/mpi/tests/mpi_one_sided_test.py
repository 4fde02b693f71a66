#!/usr/bin/env python3
"""ctest mpi_one_sided: one-sided MPI (workloads/mpi/tests/mpi_windows.cpp,
built against Debian's Open MPI) run unmodified through `vrdmasim run`
with workload.kind = mpi (workloads/mpi/README.md "One-sided").

Checks: on 2 and 4 ranks, the program's own data checks pass (puts and a
get in fence epochs, a read-modify-write under an exclusive lock, an
accumulate, a fetch-and-op and a compare-and-swap), with every call timed
(mpi_untimed_calls 0), every put and get verified in the simulation
(data_mismatches 0, transfer_errors 0), the operations and the locks'
network atomics counted. The warm 64 KiB put epoch (the program's own
MPI_Wtime figure, between two fences) at 16 and at 8 Gb/s: no shorter than
the link's serialisation time, and the pingpong workload's one-way 64 KiB
RDMA write at the same link rate plus at most 5 us (its completion coming
back and the fence's barrier). The 16 Gb/s run recorded (mpi.record) and
replayed (workload.kind = trace) gives the same summary figures, one-sided
statistics and app time. Under pin, each put's origin is pinned and
unpinned (the epoch longer by two vm.pin-call at least). An accumulate no
network atomic does stops the run (exit 2) naming it. Generalized active
target (mode pscw, pscw() below): timed, its data right, its
notifications counted, each start no sooner than a message after its
targets' posts; recorded and replayed to the same figures.
MPI_Get_accumulate (mode getacc) of MPI_SUM and MPI_NO_OP timed, its
elements counted; MPI_Rput, MPI_Rget, MPI_Raccumulate and
MPI_Rget_accumulate (mode requests) timed, their requests ended by
MPI_Wait, MPI_Test and MPI_Waitall; both modes recorded (mpi.record) and
replayed with the same figures as above. In mode requests, an rget's
MPI_Wait ends no earlier than the same get's blocking MPI_Get and flush
take (within 0.1 us) and no later than 1 us after, at least the link's
serialisation time of its bytes after the call; a wait on an rget a flush
completed takes no network time (under 0.1 us); the three times are the
README's (4.312, 4.362, 0.000 us). Mode waitany: the
requests ended by MPI_Waitany, MPI_Testall and MPI_Testany, timed (0
untimed, the data right; MPI_Waitsome and MPI_Testsome too), recorded
and replayed with the same figures; then lists mixing them with receives
and an ibarrier (mixed() below). Mode wrong (wrong_epochs()): each
erroneous epoch refused (exit 2) or the deadlock named (exit 1), and no
file left in /dev/shm by those runs, whose ranks were killed. Open MPI
settings of the user's (USER_MCA): the btl overridden, said so; the
figures the same as without them.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import mpi_runs
from mpi_runs import statistics, summary

def pscw(d, exe, run, summary, stat, failures):
    """Generalized active target (mode pscw: four epochs on a ring of 4
    ranks, each rank posting to and starting on its two neighbours, two
    puts and a get each, MPI_Win_test once in the first, the third's post
    and start MPI_MODE_NOCHECK, the fourth's groups with the rank itself
    too and a put to itself; then an epoch of the rank alone, a put to
    itself, MPI_Win_test before and after its complete, and one of
    MPI_GROUP_EMPTY): the program's data checks pass, every call timed, 4
    notifications a rank an epoch (a post and a complete to each
    neighbour; none to itself, a local note) but 2 in the third (no post)
    and none alone or empty, the operations counted; each start returns
    no sooner than a message's latency (the pingpong workload's one-way
    8 B RDMA write) after its targets' later post, the start of the rank
    alone and the whole empty epoch in no simulated time (0.000 us);
    recorded and replayed: the same summary, statistics and app time."""
    out, rec, replayed = (os.path.join(d, n) for n in ("pscw", "pscw-rec", "pscw-replayed"))
    p = run(out, "--mpi.ranks=4", "--mpi.args=4096 1 pscw", "--mpi.record=" + rec)
    s = summary(out)
    if "windows: ok" not in p.stdout or not s or s["mpi_untimed_calls"] != "0" or s["data_mismatches"] != "0" or \
            s["transfer_errors"] != "0":
        failures.append("pscw: the program's checks did not pass, a call was untimed or a transfer wrong: %s\n%s%s" %
                        (s, p.stdout[-2000:], p.stderr[-2000:]))
        return
    if stat(out, "workload.mpi.pscw_notifications") != 4 * (3 * 4 + 2):
        failures.append("pscw: %s notifications, expected 56" % stat(out, "workload.mpi.pscw_notifications"))
    # A rank's: 3 in each ring epoch, a put to itself in the fourth and one alone.
    if stat(out, "workload.mpi.rma_operations") != 4 * 11 + 3 + 4 * (4 * 3 + 2):
        failures.append("pscw: %s one-sided operations, expected %d (14 more a rank)" %
                        (stat(out, "workload.mpi.rma_operations"), 4 * 11 + 3 + 4 * (4 * 3 + 2)))
    own = re.search(r"pscw alone: start ([0-9.]+) us after its post; pscw empty: ([0-9.]+) us", p.stdout)
    if not own or own.groups() != ("0.000", "0.000"):
        failures.append("pscw: the start of a rank alone and an empty epoch took %s us, not 0.000 (local, no "
                        "network)" % (own.groups() if own else "no time printed"))
    ping = os.path.join(d, "pingpong8")
    subprocess.run([exe, "run", "-q", "--out", ping, "--smmu.enabled=true", "--topology.nodes=4",
                    "--link.rate=16Gbps", "--workload.kind=pingpong", "--workload.message-size=8"],
                   capture_output=True, text=True, timeout=300)
    one_way = float(summary(ping).get("latency_us_p50", "inf"))
    after = [float(t) for t in re.findall(r"pscw epoch \d: start ([0-9.]+) us after the last post", p.stdout)]
    if len(after) != 3 or min(after) < one_way:
        failures.append("pscw: the starts returned %s us after their targets' later post, sooner than a message's "
                        "latency (%s us)" % (after, one_way))
    cmd = [exe, "run", "--out", replayed, "--workload.kind=trace", "--smmu.enabled=true", "--topology.nodes=4",
           "--link.rate=16Gbps", "--trace.file=" + os.path.join(rec, "pscw-rec.otf2")]
    q = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    y = summary(replayed)
    if q.returncode != 0 or not y:
        failures.append("pscw replay: exit %d\n%s" % (q.returncode, q.stderr[-2000:]))
        return
    own = ("host_", "peak_rss", "mpi_", "trace_", "workload")
    differ = [k for k in s if not k.startswith(own) and s[k] != y.get(k)]
    if float(s["mpi_app_time_us"]) != float(y["trace_app_time_us"]) or differ:
        failures.append("pscw replay: app time %s us run, %s us replayed; %s differ" %
                        (s["mpi_app_time_us"], y["trace_app_time_us"], differ))
    for name in ("rma_operations", "lock_atomics", "windows", "pscw_notifications"):
        if stat(out, "workload.mpi." + name) != stat(replayed, "workload.trace." + name):
            failures.append("pscw replay: %s %s run, %s replayed" % (name, stat(out, "workload.mpi." + name),
                                                                   stat(replayed, "workload.trace." + name)))


ALONE_US, MIXED_US = 1.665, 1.691   # README "One-sided" quotes them


def mixed(p, failures):
    """Mode waitany's lists mixing kinds (mpi_windows.cpp mixed_lists()):
    MPI_Waitany over a receive not yet sent and an rget returns the rget
    (index 1) when it is complete: no sooner than the same rget's MPI_Wait
    alone (each after a barrier), and within 0.1 us of it (the receive's
    message comes a barrier later); the two times are the README's
    (One-sided). The program checks
    the first listed of an rput and a receive complete at once, both
    orders, and its values (its "windows: ok")."""
    m = re.search(r"an rget and its wait: ([0-9.]+) us; a waitany over a receive and an rget: index (-?\d+) after "
                  r"([0-9.]+) us", p.stdout)
    if not m:
        failures.append("waitany: no mixed list's times printed:\n" + p.stdout[-2000:])
        return
    alone, index, mixed = float(m.group(1)), int(m.group(2)), float(m.group(3))
    if index != 1 or not alone <= mixed <= alone + 0.1:
        failures.append("waitany: a waitany over a receive and an rget returned index %d after %.3f us; the rget "
                        "alone takes %.3f us (expected index 1, within [it, it + 0.1 us])" % (index, mixed, alone))
    if (alone, mixed) != (ALONE_US, MIXED_US):
        failures.append("waitany: an rget and its wait %.3f us, the mixed waitany %.3f us; README \"One-sided\" "
                        "quotes %.3f, %.3f" % (alone, mixed, ALONE_US, MIXED_US))


# Open MPI settings a user may have in the environment: the transport (the
# launcher sets its own, btl = self,vader), the collectives and the
# one-sided component (kept: the simulation sees the MPI calls, not them).
USER_MCA = {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_coll": "basic,self,libnbc", "OMPI_MCA_osc": "pt2pt"}


def shm_files():
    """The entries of /dev/shm (none if there is none)."""
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def wrong_epochs(d, run, failures):
    """Erroneous generalized active target epochs (mode wrong, 2 ranks)
    stop the run naming the call and the error: a complete without a
    start, a wait without a post and a second start before the complete
    refused (exit 2, MPI 4.1 section 12.5.2); a start on a rank that never
    posts (it goes on to MPI_Win_free) a deadlock, the run ended at
    sim.time-limit (exit 1) naming both ranks' calls and the post waited
    for."""
    expected = {"complete": (2, "MPI_Win_complete without an MPI_Win_start (erroneous in MPI"),
                "wait": (2, "MPI_Win_wait without an MPI_Win_post (erroneous in MPI"),
                "restart": (2, "MPI_Win_start in an access epoch not ended by MPI_Win_complete (erroneous in MPI"),
                "start": (1, "every rank still running waits in an MPI call (a deadlock, unless sim.time-limit cut "
                             "a long one short): rank 0 in MPI_Win_start since 83.855333us, waiting for the "
                             "MPI_Win_post of rank 1 on window 1; rank 1 in MPI_Win_free since 83.855333us")}
    before = shm_files()
    for what, (status, says) in expected.items():
        p = run(os.path.join(d, "wrong-" + what), "--mpi.ranks=2", "--mpi.args=8 1 wrong " + what, expect=status)
        if says not in p.stderr:
            failures.append("wrong %s: the error does not say %r:\n%s" % (what, says, p.stderr[-2000:]))
    # The ranks were killed at each run's end: none left a file in
    # /dev/shm (their backing files were in the run's own directory, in
    # TMPDIR, removed: Runs.finish checks TMPDIR is empty). Another
    # program's files, there for a moment, are let go: a new one must
    # still be there 3 s later.
    new = shm_files() - before
    if new:
        time.sleep(3)
        new &= shm_files()
    if new:
        failures.append("files left in /dev/shm by runs whose ranks were killed: %s" % sorted(new))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--programs", required=True)
    a = ap.parse_args()
    failures = []
    runs = mpi_runs.Runs(a.exe, a.programs, ("mpi_windows",), "mos", failures)
    prog = runs.program["mpi_windows"]

    def run(out, *args, expect=0, rate=16, env=None):
        return runs.run(out, "--topology.nodes=4", "--link.rate=%dGbps" % rate, "--mpi.program=" + prog, *args,
                        expect=expect, env=env)

    def stat(out, name):
        return statistics(out).get(name)

    def epochs(p):
        return [float(t) for t in re.findall(r"put epoch \d+ of 65536 B: ([0-9.]+) us", p.stdout)]

    def pingpong(d, gbps):
        """The pingpong workload's one-way 64 KiB RDMA write, p50."""
        out = os.path.join(d, "pingpong%d" % gbps)
        subprocess.run([a.exe, "run", "-q", "--out", out, "--smmu.enabled=true", "--topology.nodes=4",
                        "--link.rate=%dGbps" % gbps, "--workload.kind=pingpong", "--workload.message-size=64KiB"],
                       capture_output=True, text=True, timeout=300)
        s = summary(out)
        return float(s["latency_us_p50"]) if s else None

    with tempfile.TemporaryDirectory() as d:
        for ranks in ("2", "4"):
            out = os.path.join(d, "windows" + ranks)
            # On 2 ranks under Open MPI settings of the user's: btl overridden
            # (said so), the others kept; the figures the same (epoch16 below).
            p = run(out, "--mpi.ranks=" + ranks, "--mpi.args=65536 3", env=USER_MCA if ranks == "2" else None)
            if ranks == "2" and "OMPI_MCA_btl=self,tcp in the environment is overridden" not in p.stderr:
                failures.append("OMPI_MCA_btl=self,tcp: no note that the launcher overrides it:\n" + p.stderr[-2000:])
            s = summary(out)
            if "windows: ok" not in p.stdout:
                failures.append("%s ranks: the program's checks did not pass:\n%s%s" %
                                (ranks, p.stdout[-2000:], p.stderr[-2000:]))
            elif not s or s["mpi_untimed_calls"] != "0" or s["data_mismatches"] != "0" or s["transfer_errors"] != "0":
                failures.append("%s ranks: untimed calls, mismatches or errors: %s" % (ranks, s))
            rma = stat(out, "workload.mpi.rma_operations")
            locks = stat(out, "workload.mpi.lock_atomics")
            verified = int(s.get("bytes_verified", 0) or 0) if s else 0
            n = int(ranks)
            # Per rank: 3 puts and a get of 64 KiB, 3 gets and 3 puts of 8 B,
            # 2 accumulated elements, a fetch-and-op; a compare-and-swap
            # but at rank 0.
            if rma != n * 13 + n - 1:
                failures.append("%s ranks: %s one-sided operations, expected %d" % (ranks, rma, n * 14 - 1))
            if not locks or locks < n * (2 * 3 + 2):
                failures.append("%s ranks: %s lock atomics, fewer than the locks take" % (ranks, locks))
            if verified < n * 4 * 65536:
                failures.append("%s ranks: %d bytes verified, fewer than the puts and gets moved" % (ranks, verified))
        # The warm put epoch (the last) against the link and the engine's
        # own RDMA write, at two link rates.
        warm = {}
        rec = os.path.join(d, "rec")
        for gbps in (16, 8):
            out = os.path.join(d, "epoch%d" % gbps)
            p = run(out, "--mpi.ranks=2", "--mpi.args=65536 3", rate=gbps,
                    *(["--mpi.record=" + rec] if gbps == 16 else []))
            times, ref = epochs(p), pingpong(d, gbps)
            wire = 65536 * 8 / (gbps * 1e3)
            if len(times) != 3 or ref is None or not (wire <= times[-1] and ref <= times[-1] <= ref + 5):
                failures.append("%d Gb/s: the warm 64 KiB put epoch took %s us; the link needs %.2f us, the "
                                "pingpong workload's one-way write %s us (expected within [it, it + 5 us])" %
                                (gbps, times[-1:] or None, wire, ref))
            warm[gbps] = times[-1] if times else None
        # Recorded (OTF2's RMA events) and replayed by the trace workload
        # through the same library: the same transfers, latencies, verified
        # bytes, statistics, and app time exactly (README "Record, then replay").
        def replay(label, out, rec, verified):
            replayed = os.path.join(d, label + "-replayed")
            runs.replay(replayed, os.path.join(rec, os.path.basename(rec) + ".otf2"), "--topology.nodes=4",
                        "--link.rate=16Gbps")
            y = summary(replayed)
            if not y:
                failures.append("%s replay: no summary" % label)
                return
            mpi_runs.same_figures(failures, label + " replay", out, replayed, all_statistics=False)
            if y["data_mismatches"] != "0" or int(y["bytes_verified"]) < verified:
                failures.append("%s replay: %s bytes verified, %s mismatches" % (label, y["bytes_verified"],
                                                                                y["data_mismatches"]))
            for name in ("rma_operations", "lock_atomics", "windows"):
                if stat(out, "workload.mpi." + name) is None or stat(out, "workload.mpi." + name) != stat(
                        replayed, "workload.trace." + name):
                    failures.append("%s replay: %s %s run, %s replayed" % (label, name, stat(
                        out, "workload.mpi." + name), stat(replayed, "workload.trace." + name)))

        replay("epoch16", os.path.join(d, "epoch16"), rec, 2 * 4 * 65536)
        x, y = statistics(os.path.join(d, "windows2")), statistics(os.path.join(d, "epoch16"))
        differ = [k for k in y if "host" not in k and x.get(k) != y[k]]
        if not y or differ:
            failures.append("%s: %d statistics differ from the same run without them (%s ...)" %
                            (" ".join("%s=%s" % kv for kv in USER_MCA.items()), len(differ), differ[:3]))
        # Under pin: each put's origin is pinned before the post and
        # unpinned after completion (two vm.pin-call at least).
        out = os.path.join(d, "pin")
        p = run(out, "--mpi.ranks=2", "--mpi.args=65536 3", "--rdma.strategy=pin")
        s, times = summary(out), epochs(p)
        if "windows: ok" not in p.stdout or not s or int(s.get("pages_pinned", 0) or 0) < 2 * 3 * 16:
            failures.append("pin: the program failed or its buffers were not pinned: %s\n%s" % (s, p.stderr[-2000:]))
        elif not times or not warm.get(16) or times[-1] < warm[16] + 2 * 20:
            failures.append("pin: the warm put epoch took %s us, fault-tolerant %s us: no pin and unpin of 20 us "
                            "each (vm.pin-call)" % (times[-1:] or None, warm.get(16)))
        # MPI_Get_accumulate (mode getacc): of MPI_SUM and of MPI_NO_OP, two
        # elements each, every one a fetching network atomic, timed; the
        # request-based operations (mode requests: an raccumulate, an
        # rget-accumulate, an rget and an rput a rank, ended by MPI_Wait,
        # MPI_Test and MPI_Waitall; then two gets and two rgets of 4 KiB a
        # rank), timed, 4 (8) operations more a rank; mode waitany: an rput,
        # an raccumulate, an rget-accumulate and six rgets a rank, ended by
        # MPI_Waitany, MPI_Testall, MPI_Testany, MPI_Waitsome and
        # MPI_Testsome, and two rputs to its own window complete at once,
        # MPI_Waitany returning the first listed (the program checks it);
        # then 3 rgets and 2 rputs to its own window a rank in lists mixed
        # with receives and an ibarrier (mixed()). Each recorded, and
        # replayed with the same figures.
        for mode, more in (("getacc", 4), ("requests", 8), ("waitany", 17)):
            out = os.path.join(d, mode)
            rec = os.path.join(d, mode + "-rec")
            p = run(out, "--mpi.ranks=4", "--mpi.args=4096 1 " + mode, "--mpi.record=" + rec)
            s = summary(out)
            rma = stat(out, "workload.mpi.rma_operations")
            if "windows: ok" not in p.stdout or not s or s["mpi_untimed_calls"] != "0" or \
                    s["data_mismatches"] != "0" or s["transfer_errors"] != "0":
                failures.append("%s: the program's checks did not pass, a call was untimed or a transfer wrong: "
                                "%s\n%s%s" % (mode, s, p.stdout[-2000:], p.stderr[-2000:]))
                continue
            if rma != 4 * 11 + 3 + 4 * more:
                failures.append("%s: %s one-sided operations, expected %d (%d more a rank)" %
                                (mode, rma, 4 * 11 + 3 + 4 * more, more))
            replay(mode, out, rec, 4096 * 4 * 4 if mode == "requests" else 4096 * 4)
            if mode == "waitany":
                mixed(p, failures)
            if mode != "requests":
                continue
            # When an rget's wait ends: after the same get's round trip (its
            # blocking MPI_Get and flush in the same run, warm buffers both),
            # at least the link's serialisation of its 4 KiB; a wait on an
            # rget a flush completed costs no network time.
            m = re.search(r"get and flush of 4096 B: ([0-9.]+) us; rget and wait: ([0-9.]+) us; "
                          r"wait after a flush: ([0-9.]+) us", p.stdout)
            wire = 4096 * 8 / 16e3
            if not m:
                failures.append("requests: no get/rget times printed:\n" + p.stdout[-2000:])
            else:
                get, rget, after = (float(v) for v in m.groups())
                if (get, rget, after) != (4.312, 4.362, 0.0):   # README "One-sided" quotes them
                    failures.append("requests: get and flush %.3f us, rget and wait %.3f us, wait after a flush "
                                    "%.3f us; README \"One-sided\" quotes 4.312, 4.362, 0.000" % (get, rget, after))
                if not (wire <= rget and get - 0.1 <= rget <= get + 1 and after < 0.1):
                    failures.append("requests: an rget and its wait took %.3f us, a get and its flush %.3f us "
                                    "(expected within [it - 0.1, it + 1], at least %.3f us on the link), a wait "
                                    "after a flush %.3f us (expected under 0.1 us)" % (rget, get, wire, after))
        # Not modelled: refused with exit 2, naming the call and why.
        p = run(os.path.join(d, "max"), "--mpi.ranks=2", "--mpi.args=4096 1 max", expect=2)
        if "MPI_Accumulate of an op or type no network atomic does" not in p.stderr:
            failures.append("max: the refusal does not name the accumulate and why:\n" + p.stderr[-2000:])
        pscw(d, a.exe, run, summary, stat, failures)
        wrong_epochs(d, run, failures)
    return runs.finish("mpi_one_sided")


if __name__ == "__main__":
    sys.exit(main())
