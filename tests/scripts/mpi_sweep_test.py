#!/usr/bin/env python3
"""ctest: a sweep under a real `mpirun` gives what the same sweep gives locally.

    mpi_sweep_test.py --exe VRDMASIM --source SOURCE_DIR

Runs a 6-point sweep three ways: `vrdmasim sweep --jobs 2` on one output
directory; `mpirun -np 2 --oversubscribe vrdmasim sweep --jobs 1` (Debian's
Open MPI, which scripts/setup.sh installs), whose two ranks take their shards
from OMPI_COMM_WORLD_RANK/SIZE and share one output directory; and
`mpirun -np 3` into a third. Each MPI run's results.csv must equal the local
one (host time and memory aside), every rank must have run only its own
points, and `vrdmasim merge` of the ranks' shard files must say the sweep is
whole, and refuse when one is left out. And that `mpirun -np 2 vrdmasim run`
refuses on every rank, writing nothing (one simulation split across ranks
is not built), while `mpirun -np 1` runs.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_runs import SWEEP, table  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("FAIL: no mpirun (scripts/setup.sh installs Debian's openmpi-bin)")
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="vrdmasim_mpi_") as d:
        sweep = os.path.join(d, "s.ini")
        with open(sweep, "w") as f:
            f.write(SWEEP.format(base=os.path.join(args.source, "configs", "tutorial", "01-one-write.ini")))
        env = dict(os.environ)
        # Open MPI refuses root unless told; CI containers run as root.
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        env.setdefault("OMPI_MCA_plm_rsh_agent", "")   # one machine: no ssh
        # Open MPI's session directory under this test's own folder: in
        # /tmp, each mpirun makes /tmp/ompi.<host>.<uid> and the last one out
        # removes it, and an mpirun of another test started at that moment
        # fails ("mkdir ... File exists", orte_init).
        env["OMPI_MCA_orte_tmpdir_base"] = d
        for v in [k for k in env if k.startswith(("SLURM_ARRAY", "OMPI_COMM_WORLD", "PMI_"))]:
            del env[v]

        def run(cmd, what):
            p = subprocess.run(cmd, env=env, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=600)
            print("$ " + " ".join(cmd) + "\n" + p.stdout.strip())
            return p

        local = run([args.exe, "sweep", sweep, "--jobs", "2", "--out", "local"], "local")
        if local.returncode != 0:
            failures.append("the local sweep exited %d" % local.returncode)
            for line in failures:
                print("FAIL: " + line)
            return 1
        want = table(os.path.join(d, "local", "results.csv"))
        # A Slurm array task whose environment cannot name its shard: exit 2, nothing written.
        bad = dict(env, SLURM_ARRAY_TASK_ID="3")
        p = subprocess.run([args.exe, "sweep", sweep, "--out", "bad"], env=bad, cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print("$ SLURM_ARRAY_TASK_ID=3 vrdmasim sweep ...\n" + p.stdout.strip())
        if p.returncode != 2 or "SLURM_ARRAY_TASK_COUNT" not in p.stdout or os.path.exists(os.path.join(d, "bad")):
            failures.append("a sweep with SLURM_ARRAY_TASK_ID alone: exit %d, expected 2 naming the variables and "
                            "nothing written" % p.returncode)
        # An explicit --shard wins over the environment.
        p = subprocess.run([args.exe, "sweep", sweep, "--shard", "0/1", "--out", "explicit"], env=bad, cwd=d,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0 or table(os.path.join(d, "explicit", "results.csv")) != want:
            failures.append("--shard 0/1 beside SLURM_ARRAY_TASK_ID: exit %d, expected the whole sweep" % p.returncode)
        if len(want) != 7:
            failures.append("the local sweep has %d rows, not 6" % (len(want) - 1))
        for np in (2, 3):
            out = "mpi%d" % np
            p = run([mpirun, "-np", str(np), "--oversubscribe", args.exe, "sweep", sweep, "--jobs", "1", "--out", out],
                    out)
            if p.returncode != 0:
                failures.append("mpirun -np %d exited %d" % (np, p.returncode))
                continue
            for r in range(np):
                if "sweep: shard %d/%d (from OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE)" % (r, np) not in p.stdout:
                    failures.append("mpirun -np %d: rank %d did not say it took shard %d/%d from Open MPI"
                                    % (np, r, r, np))
                shard = os.path.join(d, out, "shards", "results-%d-of-%d.csv" % (r, np))
                rows = table(shard) if os.path.exists(shard) else []
                got = sorted(row[0] for row in rows[1:])
                expected = sorted(row[0] for row in want[1:] if int(row[0][1:5]) % np == r)
                if got != expected:
                    failures.append("mpirun -np %d: rank %d ran %s, its shard is %s" % (np, r, got, expected))
            results = os.path.join(d, out, "results.csv")
            if not os.path.exists(results) or table(results) != want:
                failures.append("mpirun -np %d: results.csv differs from the local sweep's" % np)
            shards = [os.path.join(out, "shards", "results-%d-of-%d.csv" % (r, np)) for r in range(np)]
            m = run([args.exe, "merge", "merged%d.csv" % np] + shards, "merge")
            if m.returncode != 0 or "all 6 points, from %d input(s)" % np not in m.stdout:
                failures.append("merge of the %d ranks' shards: exit %d, not whole" % (np, m.returncode))
            elif table(os.path.join(d, "merged%d.csv" % np)) != want:
                failures.append("merge of the %d ranks' shards differs from the local sweep" % np)
            m = run([args.exe, "merge", "part%d.csv" % np] + shards[1:], "merge")
            if m.returncode != 2 or "points are in none" not in m.stdout or os.path.exists(os.path.join(d, "part%d.csv" % np)):
                failures.append("merge without rank 0's shard: exit %d, expected 2 naming the missing points"
                                % m.returncode)
        # `vrdmasim run` under mpirun: one rank runs as one process; several
        # split one simulation (tests/scripts/partitioned_test.py), which a
        # system of one QFDB cannot be: refused once, nothing written.
        one = os.path.join(args.source, "configs", "tutorial", "01-one-write.ini")
        p = run([mpirun, "-np", "1", args.exe, "run", one, "--out", "run1"], "run1")
        if p.returncode != 0 or not os.path.exists(os.path.join(d, "run1", "summary.csv")):
            failures.append("mpirun -np 1 vrdmasim run: exit %d, expected the run" % p.returncode)
        p = run([mpirun, "-np", "2", "--oversubscribe", args.exe, "run", one, "--out", "run2"], "run2")
        said = p.stdout.count("a rank simulates whole boards")
        if p.returncode == 0 or said != 1 or os.path.exists(os.path.join(d, "run2")):
            failures.append("mpirun -np 2 vrdmasim run: exit %d, refusal said %d times, %s: expected one refusal "
                            "and nothing written" % (p.returncode, said,
                                                     "run2 written" if os.path.exists(os.path.join(d, "run2"))
                                                     else "nothing written"))
    for line in failures:
        print("FAIL: " + line)
    if not failures:
        print("ok: mpirun -np 2 and -np 3 sweeps equal the local sweep; merge refuses a missing shard; "
              "vrdmasim run of one board refuses two ranks once")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
