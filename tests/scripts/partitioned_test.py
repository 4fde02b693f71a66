#!/usr/bin/env python3
"""ctest: a run split across MPI ranks prints what one process prints.

For every shipped config of more than one QFDB (configs/torus-cluster.ini
with the halo and with the alltoall), `mpirun -np N --oversubscribe vrdmasim run` at
N = 2 and N = 3 (where the boards allow) must write stats.json byte for byte
as the one-process run does, and summary.csv equal apart from the host's
own figures (scripts/same_results.py's HOST_COLUMNS), with `ranks` = N and
the partition in config.ini. In exact time order, the default, a
partitioned run needs no setting of its own: the same command both ways. In
the approximate time order (the approx-* cases) it needs the settings its
identical results rest on (docs/scaling.md), and both runs get them. The cases
in TRACED run with --trace --log both ways, and events.log and trace.json
must be byte for byte the one process's too (docs/trace.md "Order and
numbering"), with steps numbered 1, 2, ... in the order written and each
`after #N` naming an earlier line. Then what it refuses: a single QFDB, a
setting the identity needs left out or set otherwise (call-order links), a
workload whose ranks would share state, --report; each once, exit status
2, nothing written.
"""
import re
import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from same_results import HOST_COLUMNS  # noqa: E402

# In exact time order, the default, a partitioned run needs no setting: the
# same command as one process's, in SystemC's own order of same-time events.
SETTINGS = []
# In the approximate time order it needs two (docs/scaling.md "Running across
# ranks"): the cases named approx-* run with them, both ways.
APPROX = ["--router.link-order=time-approximate", "--board-link.handoff=message", "--sim.event-order=keyed"]

# (name, config, extra settings, rank counts)
CASES = [
    ("exanest-prototype", "exanest-prototype.ini", [], [2]),
    ("collective", "collective.ini", [], [2]),
    ("torus-stream", "torus.ini", [], [2, 3]),
    ("torus-halo", "torus-cluster.ini", ["--workload.message-size=16KiB", "--workload.iterations=2"], [2, 3]),
    ("torus-alltoall", "torus-cluster.ini", ["--workload.kind=alltoall", "--workload.message-size=4KiB",
                                             "--workload.iterations=1"], [2, 3]),
    # Synthetic traffic: each message measured on its source's rank from the
    # notes its destination leaves; the window's figures added at the end.
    ("synthetic", "synthetic.ini", [], [2, 3]),
    ("synthetic-hotspot", "synthetic.ini", ["--synthetic.pattern=hotspot", "--synthetic.load=0.3"], [2]),
    ("synthetic-tornado", "synthetic.ini", ["--synthetic.pattern=tornado", "--synthetic.load=0.5",
                                            "--synthetic.arrivals=poisson"], [2]),
    # The read form: each request's arrival reaches its requester's rank as a
    # note (the sources left as they are: the harness's fill is refused across ranks).
    ("synthetic-reads", "synthetic.ini", ["--workload.operation=read", "--workload.fill-source=false",
                                          "--synthetic.pattern=tornado", "--synthetic.load=0.3",
                                          "--synthetic.measure=20us", "--synthetic.drain=10us"], [2]),
]
# The mechanisms across ranks (each a library policy every workload gets):
# every rdma.strategy, SMMU faults ending in retransmission, two jobs,
# adaptive routing, the read form, two-sided messages; on a 3 x 2 x 1 torus's
# halo (cold buffers: faults), 2 ranks.
HALO = ["--topology.x=3", "--topology.y=2", "--topology.z=1", "--workload.kind=halo", "--workload.message-size=16KiB",
        "--workload.iterations=2", "--workload.populate=false"]
for strategy in ["fault-tolerant", "pin", "pin-cache", "prefault", "pipeline", "netvm", "pin-static", "pin-deferred"]:
    CASES.append(("halo-" + strategy, "torus-cluster.ini", HALO + ["--rdma.strategy=" + strategy], [2]))
CASES += [
    # 1,296 MPSoCs, cold buffers and faults: a cut of 216 board links
    # (where a near end's wait for a credit woke otherwise than one
    # process's until it always woke through one event).
    ("torus-1296-halo", "torus-cluster.ini", ["--topology.x=9", "--topology.y=6", "--topology.z=6",
                                              "--workload.kind=halo", "--workload.message-size=16KiB",
                                              "--workload.iterations=1", "--workload.populate=false",
                                              "--smmu-driver.fault-mode=terminate", "--dma.fault-tolerant=true"], [2]),
    ("halo-retransmit", "torus-cluster.ini", HALO + ["--smmu-driver.fault-mode=terminate",
                                                     "--dma.fault-tolerant=true"], [2]),
    # Two programs a node, faulting and retransmitting: their same-time
    # acts take turns (src/core/software_turns.hpp) on each rank as in one
    # process.
    ("halo-two-jobs", "torus-cluster.ini", HALO + ["--node.processes=2", "--smmu-driver.fault-mode=terminate",
                                                   "--dma.fault-tolerant=true"], [2]),
    ("halo-adaptive", "torus-cluster.ini", HALO + ["--router.routing=adaptive", "--router.vcs=3"], [2]),
    ("halo-read", "torus-cluster.ini", HALO + ["--workload.operation=read", "--workload.fill-source=false"], [2]),
    ("sendrecv-across", "torus-cluster.ini", HALO + ["--workload.kind=sendrecv", "--workload.src-node=0",
                                                     "--workload.dst-node=20"], [2]),
    # The approximate time order: every board link a cut link (its message
    # handoff), same-time events keyed.
    ("approx-collective", "collective.ini", [], [2]),
    ("approx-torus-halo", "torus-cluster.ini", ["--workload.kind=halo", "--workload.message-size=16KiB",
                                                "--workload.iterations=2"], [2, 3]),
    ("approx-halo-retransmit", "torus-cluster.ini", HALO + ["--smmu-driver.fault-mode=terminate",
                                                            "--dma.fault-tolerant=true"], [2]),
    ("approx-halo-adaptive", "torus-cluster.ini", HALO + ["--router.routing=adaptive", "--router.vcs=3"], [2]),
]


# The cases also traced and logged (small ones: every shipped multi-board
# config, and a story crossing a cut link through SMMU faults and
# retransmission).
TRACED = {"exanest-prototype", "collective", "torus-stream", "torus-halo", "torus-alltoall", "synthetic",
          "halo-retransmit", "approx-torus-halo", "approx-halo-retransmit"}
TRACE_FILES = ["events.log", "trace.json"]
LINE = re.compile(r"^ *[0-9.]+ us  .+?  #(\d+) .*?(?: \(after #(\d+)\))?$")


def log_problems(path):
    """Steps numbered 1, 2, ... in the order written; each cause an earlier line."""
    with open(path) as f:
        for k, line in enumerate(f, 1):
            m = LINE.match(line.rstrip("\n"))
            if not m:
                return "line %d is not a numbered step: %r" % (k, line[:120])
            if int(m.group(1)) != k:
                return "line %d is numbered #%s" % (k, m.group(1))
            if m.group(2) and int(m.group(2)) >= k:
                return "line %d follows #%s, not an earlier line" % (k, m.group(2))
    return None


def summary(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return rows[0] if rows else {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--only", help="one case by name")
    args = ap.parse_args()
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("FAIL: no mpirun (scripts/setup.sh installs Debian's openmpi-bin)")
        return 1
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")   # CI containers run as root
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_plm_rsh_agent", "")   # one machine: no ssh
    # The pml Open MPI 4.1.4 chooses on this machine anyway, named: no rank
    # loads and probes cm's MTLs (psm, psm2) at MPI_Init, about 40 ms of CPU
    # a 2-rank mpirun (167 against 205 ms, perf stat, 2026-11-29; the MPI
    # workload's launcher does the same, workloads/mpi/README.md).
    env.setdefault("OMPI_MCA_pml", "ob1")
    for v in [k for k in env if k.startswith(("SLURM_ARRAY", "OMPI_COMM_WORLD", "PMI_"))]:
        del env[v]
    failures = []

    def run(cmd, cwd, timeout=900):
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        return p

    with tempfile.TemporaryDirectory(prefix="vrdmasim_ranks_") as d:
        # Open MPI's session directory under this test's own folder: in
        # /tmp, each mpirun makes /tmp/ompi.<host>.<uid> and the last one out
        # removes it, and an mpirun of another test started at that moment
        # fails ("mkdir ... File exists", orte_init).
        env["OMPI_MCA_orte_tmpdir_base"] = d
        for name, config, extra, counts in CASES:
            if args.only and name != args.only:
                continue
            cfg = os.path.join(args.source, "configs", config)
            settings = APPROX if name.startswith("approx-") else SETTINGS
            one = os.path.join(d, name + "-1")
            traced = ["--trace", "--log"] if name in TRACED else []
            p = run([args.exe, "run", cfg] + settings + extra + traced + ["--quiet", "--out", one], d)
            if p.returncode != 0:
                failures.append("%s in one process: exit %d\n%s" % (name, p.returncode, p.stdout[-2000:]))
                continue
            with open(os.path.join(one, "stats.json"), "rb") as f:
                want_stats = f.read()
            want = {k: v for k, v in summary(os.path.join(one, "summary.csv")).items() if k not in HOST_COLUMNS}
            want_trace = {}
            if traced:
                problem = log_problems(os.path.join(one, "events.log"))
                if problem:
                    failures.append("%s in one process: events.log: %s" % (name, problem))
                for t in TRACE_FILES:
                    with open(os.path.join(one, t), "rb") as f:
                        want_trace[t] = f.read()
            for n in counts:
                out = os.path.join(d, "%s-%d" % (name, n))
                p = run([mpirun, "-np", str(n), "--oversubscribe", args.exe, "run", cfg] + settings + extra + traced +
                        ["--quiet", "--out", out], d)
                if p.returncode != 0 or not os.path.exists(os.path.join(out, "summary.csv")):
                    failures.append("%s on %d ranks: exit %d\n%s" % (name, n, p.returncode, p.stdout[-3000:]))
                    continue
                with open(os.path.join(out, "stats.json"), "rb") as f:
                    if f.read() != want_stats:
                        failures.append("%s on %d ranks: stats.json differs from one process's" % (name, n))
                got_all = summary(os.path.join(out, "summary.csv"))
                got = {k: v for k, v in got_all.items() if k not in HOST_COLUMNS}
                diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
                if diff:
                    failures.append("%s on %d ranks: summary.csv differs in %s" %
                                    (name, n, ", ".join("%s (%s against %s)" % (k, got.get(k), want.get(k))
                                                        for k in diff[:8])))
                if got_all.get("ranks") != str(n) or int(got_all.get("host_windows", "0")) <= 0:
                    failures.append("%s on %d ranks: ranks = %s, host_windows = %s" %
                                    (name, n, got_all.get("ranks"), got_all.get("host_windows")))
                for t, want_bytes in want_trace.items():
                    path = os.path.join(out, t)
                    got_bytes = open(path, "rb").read() if os.path.exists(path) else None
                    if got_bytes != want_bytes:
                        failures.append("%s on %d ranks: %s differs from one process's (%s)" %
                                        (name, n, t, "missing" if got_bytes is None else "%d against %d B" %
                                         (len(got_bytes), len(want_bytes))))
                with open(os.path.join(out, "config.ini")) as f:
                    if "partition = " not in f.read():
                        failures.append("%s on %d ranks: config.ini does not record the partition" % (name, n))
                print("ok: %s on %d ranks: %s windows, %s B exchanged%s" %
                      (name, n, got_all.get("host_windows"), got_all.get("host_exchanged_bytes"),
                       ", trace and log identical" if want_trace else ""))
        if not args.only:
            # What a partitioned run refuses: once, exit status 2, nothing written.
            refusals = [
                ("one QFDB", [os.path.join(args.source, "configs", "halo.ini")] + SETTINGS,
                 "a rank simulates whole boards"),
                ("call-order links", [os.path.join(args.source, "configs", "exanest-prototype.ini"),
                                      "--router.link-order=call-approximate", "--board-link.handoff=message",
                                      "--sim.event-order=keyed"],
                 "router.link-order = call-approximate (from command line): must be exact or time-approximate in a "
                 "partitioned run"),
                ("the approximate time order with its handoff by call",
                 [os.path.join(args.source, "configs", "exanest-prototype.ini"), "--router.link-order=time-approximate"],
                 "board-link.handoff = call (from default): must be message in a partitioned run"),
                ("board-link.handoff = message in exact time order",
                 [os.path.join(args.source, "configs", "exanest-prototype.ini"), "--board-link.handoff=message"],
                 "applies to router.link-order = time-approximate and call-approximate"),
                ("--report", [os.path.join(args.source, "configs", "exanest-prototype.ini"), "--report"] + SETTINGS,
                 "--report is not built for a run split across MPI ranks yet"),
                ("a workload sharing state across boards",
                 [os.path.join(args.source, "configs", "torus.ini"), "--workload.kind=alltoall",
                  "--workload.two-sided=true"] + SETTINGS,
                 "is not built for a run split across MPI ranks"),
            ]
            for what, cmd, says in refusals:
                out = os.path.join(d, "refused")
                p = run([mpirun, "-np", "2", "--oversubscribe", args.exe, "run"] + cmd + ["--out", out], d)
                if p.returncode == 0 or p.stdout.count(says) != 1 or os.path.exists(out):
                    failures.append("%s on 2 ranks: exit %d, said %d times %r, %s\n%s" %
                                    (what, p.returncode, p.stdout.count(says), says,
                                     "wrote --out" if os.path.exists(out) else "nothing written", p.stdout[-1500:]))
                else:
                    print("ok: refused %s" % what)
        if not args.only:
            # One rank cannot write its output (a file-size limit: 64 MiB of
            # trace, where MPI's own shared memory still fits): every rank
            # ends at once with the error, exit 1, nothing left at --out. It
            # once hung (rank 0 unwound into MPI_Finalize, rank 1 waited in
            # a collective for ever).
            out = os.path.join(d, "full")
            cmd = ("ulimit -f 65536; exec '%s' run '%s' --workload.kind=halo --workload.iterations=3 %s --trace "
                   "--quiet --out '%s'" % (args.exe, os.path.join(args.source, "configs", "torus-cluster.ini"),
                                           " ".join(SETTINGS), out))
            try:
                p = run([mpirun, "-np", "2", "--oversubscribe", "/bin/bash", "-c", cmd], d, timeout=120)
                if (p.returncode != 1 or "cannot write trace file" not in p.stdout or "File too large" not in p.stdout
                        or os.path.exists(out) or any(n.startswith(".full.") for n in os.listdir(d))):
                    failures.append("a rank that cannot write its trace: exit %d, %s\n%s" %
                                    (p.returncode, sorted(os.listdir(d)), p.stdout[-1500:]))
                else:
                    print("ok: a rank that cannot write its trace ends every rank")
            except subprocess.TimeoutExpired:
                failures.append("a rank that cannot write its trace: the ranks hung")
        if not args.only:
            # Ctrl-C to mpirun (it sends SIGCONT to its ranks, SIGTERM
            # odls_base_sigkill_timeout later, then SIGKILL): rank 0 says so once, each
            # rank removes what it had begun as it stops, and whatever a
            # SIGKILL left (rank 0's staged outputs, another rank's trace
            # spools in the temporary directory) the next traced run across
            # ranks removes. It used to end with mpirun's exit 1 and no word,
            # and leave both for ever. The timeout is 10 s here, not
            # mpirun's 1 s: the SIGKILL then comes 8 s after the SIGTERM
            # (strace of Open MPI 4.1.4's mpirun, 2026-11-28), where with 1 s
            # a rank on a loaded machine could be killed before it said
            # anything (a fresh clone's CI, 2026-11-27); what a killed rank
            # leaves is planted below instead.
            # The ranks' temporary directory is this case's own: another
            # test running meanwhile (ctest -j2) may put files there, one of
            # them named like a spool (trace_test's mapping file did, and a
            # fresh clone's CI counted it as left behind, 2026-11-27). Only
            # a rank's spool's name counts (vrdmasim-trace-<pid>-rank<r>).
            out = os.path.join(d, "stopped")
            tmp = os.path.join(d, "tmp")
            os.mkdir(tmp)

            def spool_names():
                return set(n for n in os.listdir(tmp) if re.match(r"vrdmasim-trace-\d+-rank\d", n))
            spools = spool_names()
            cfg = os.path.join(args.source, "configs", "exanest-prototype.ini")
            patient = dict(env, OMPI_MCA_odls_base_sigkill_timeout="10", TMPDIR=tmp)
            # Open MPI 4.1 sends SIGCONT at once and SIGTERM only the
            # sigkill timeout later (strace of mpirun, 2026-11-28), so the
            # run must outlast it by far: 100,000 iterations took 8.8 s on
            # 2026-11-28's build and ended, published whole, before the
            # SIGTERM came (the check below then failed 3 times in 5). A
            # million take some 90 s; recorded for their first 1 ms only, so
            # that the spools exist but stay small.
            p = subprocess.Popen([mpirun, "-np", "2", "--oversubscribe", args.exe, "run", cfg] + SETTINGS +
                                 ["--workload.iterations=1000000", "--trace", "--trace-window=0us,1ms", "--out", out],
                                 env=patient, cwd=d,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            begun = time.time()
            while time.time() - begun < 60 and not any(n.startswith(".stopped.partial-") for n in os.listdir(d)):
                time.sleep(0.05)
            time.sleep(1.0)   # simulating
            p.send_signal(signal.SIGINT)
            said = p.communicate(timeout=120)[0]
            # mpirun does not wait for its ranks' last steps: let the pids
            # named by what they left end first (a live one's are kept).
            def left_pids():
                names = [n for n in os.listdir(d) if n.startswith(".stopped.partial-")]
                names += [n for n in spool_names() if n not in spools]
                return set(int(m.group(1)) for m in (re.search(r"(?:partial-|trace-)(\d+)", n) for n in names) if m)
            waited = time.time()
            while time.time() - waited < 20 and any(os.path.exists("/proc/%d" % pid) for pid in left_pids()):
                time.sleep(0.05)
            # A trace spool of a rank that was killed (its pid gone), as
            # mpirun's SIGKILL leaves one: the next run removes it.
            gone = subprocess.Popen(["true"])
            gone.wait()
            with open(os.path.join(tmp, "vrdmasim-trace-%d-rank1.events" % gone.pid), "w") as f:
                f.write("left by a killed rank\n")
            again = subprocess.run([mpirun, "-np", "2", "--oversubscribe", args.exe, "run", cfg] + SETTINGS +
                                   ["--trace", "--quiet", "--out", out], env=dict(env, TMPDIR=tmp), cwd=d,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
            left = sorted(n for n in os.listdir(d) if n.startswith((".stopped", "stopped")))
            new_spools = spool_names() - spools
            if (said.count("vrdmasim: interrupted by SIGTERM") != 1 or "no output written to --out" not in said
                    or again.returncode != 0 or left != ["stopped"] or new_spools):
                failures.append("Ctrl-C to mpirun, then a run into the same --out: exit %d then %d, left %s and "
                                "spools %s\n%s" % (p.returncode, again.returncode, left, sorted(new_spools),
                                                   said[-1500:] + again.stdout[-1500:]))
            else:
                print("ok: Ctrl-C to mpirun: every rank stops, says so once; nothing is left after the next run")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
