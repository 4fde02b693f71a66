#!/usr/bin/env python3
"""ctest: scripts/slurm-sweep.sh on a real Slurm gives what a local sweep gives.

    slurm_sweep_test.py --exe VRDMASIM --source SOURCE_DIR

Starts Debian's munged, slurmctld and slurmd on this machine, in a scratch
directory with their own ports and configuration (SLURM_CONF), as root (the
only way slurmd launches jobs; exit 77, skipped, otherwise). Submits a
6-point sweep with scripts/slurm-sweep.sh as an array of 3 tasks and its
merge job, waits for both, and checks: each task ran its shard (taken from
SLURM_ARRAY_TASK_ID/MIN/MAX), the merge job succeeded and said the sweep is
whole, and OUT/results.csv equals the same sweep run locally with --jobs 2
(host time and memory aside). The daemons are stopped at the end, whatever
happens.
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sweep_runs import SWEEP, table  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: slurmd launches jobs only as root")
        return SKIP
    tools = {t: shutil.which(t, path="/usr/sbin:/usr/bin") for t in
             ("munged", "slurmctld", "slurmd", "sbatch", "scontrol")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        print("FAIL: %s not installed (scripts/setup.sh installs munge, slurmctld, slurmd and slurm-client)"
              % ", ".join(missing))
        return 1
    failures = []
    d = tempfile.mkdtemp(prefix="vrdmasim_slurm_")
    os.chmod(d, 0o755)   # munged wants its socket's directories searchable by all
    pids = []
    env = dict(os.environ)
    for v in [k for k in env if k.startswith(("SLURM_", "OMPI_", "PMI_"))]:
        del env[v]
    env["SLURM_CONF"] = os.path.join(d, "slurm.conf")
    try:
        host = socket.gethostname().split(".")[0]
        os.makedirs(os.path.join(d, "munge"))
        os.makedirs(os.path.join(d, "state"))
        os.makedirs(os.path.join(d, "spool"))
        key = os.path.join(d, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        sock = os.path.join(d, "munge", "socket")
        subprocess.run([tools["munged"], "--key-file=" + key, "--socket=" + sock,
                        "--pid-file=" + os.path.join(d, "munge", "pid"), "--log-file=" + os.path.join(d, "munge", "log"),
                        "--seed-file=" + os.path.join(d, "munge", "seed")], check=True)
        pids.append(os.path.join(d, "munge", "pid"))
        with open(env["SLURM_CONF"], "w") as f:
            f.write("\n".join([
                "ClusterName=vrdmasimtest", "SlurmctldHost=" + host, "SlurmUser=root", "SlurmdUser=root",
                "SlurmctldPort=%d" % free_port(), "SlurmdPort=%d" % free_port(),
                "AuthType=auth/munge", "AuthInfo=socket=" + sock, "CredType=cred/munge",
                "StateSaveLocation=" + os.path.join(d, "state"), "SlurmdSpoolDir=" + os.path.join(d, "spool"),
                "SlurmctldPidFile=" + os.path.join(d, "slurmctld.pid"), "SlurmdPidFile=" + os.path.join(d, "slurmd.pid"),
                "SlurmctldLogFile=" + os.path.join(d, "slurmctld.log"), "SlurmdLogFile=" + os.path.join(d, "slurmd.log"),
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "ReturnToService=2",
                "SchedulerType=sched/builtin",
                # Jobs scheduled as soon as they can run (batch jobs wait up
                # to 3 s by default, the main pass comes every 60 s).
                "SchedulerParameters=batch_sched_delay=0,sched_interval=1",
                "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
                "MpiDefault=none", "JobCompType=jobcomp/none", "AccountingStorageType=accounting_storage/none",
                "NodeName=%s CPUs=%d State=UNKNOWN" % (host, os.cpu_count() or 1),
                "PartitionName=test Nodes=%s Default=YES MaxTime=INFINITE State=UP" % host, ""]))
        subprocess.run([tools["slurmctld"], "-c"], env=env, check=True)
        pids.append(os.path.join(d, "slurmctld.pid"))
        subprocess.run([tools["slurmd"]], env=env, check=True)
        pids.append(os.path.join(d, "slurmd.pid"))
        deadline = time.time() + 60
        while time.time() < deadline:
            p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, stdout=subprocess.PIPE, text=True)
            if p.stdout.strip() == "idle":
                break
            time.sleep(0.1)
        else:
            failures.append("Slurm did not come up (sinfo: %r)" % p.stdout.strip())
            return 1

        sweep = os.path.join(d, "s.ini")
        with open(sweep, "w") as f:
            f.write(SWEEP.format(base=os.path.join(args.source, "configs", "tutorial", "01-one-write.ini")))
        p = subprocess.run([args.exe, "sweep", sweep, "--jobs", "2", "--out", os.path.join(d, "local")], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            failures.append("the local sweep exited %d:\n%s" % (p.returncode, p.stdout))
            return 1
        want = table(os.path.join(d, "local", "results.csv"))

        out = os.path.join(d, "cluster")
        env_submit = dict(env, TASKS="3", VRDMASIM=args.exe)
        p = subprocess.run([os.path.join(args.source, "scripts", "slurm-sweep.sh"), sweep, out], env=env_submit,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(p.stdout.strip())
        if p.returncode != 0:
            failures.append("slurm-sweep.sh exited %d" % p.returncode)
            return 1
        merge_job = p.stdout.split("merge: job ")[1].split()[0]
        deadline = time.time() + 300
        state = ""
        while time.time() < deadline:
            q = subprocess.run(["scontrol", "show", "job", merge_job], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            state = next((w.split("=", 1)[1] for w in q.stdout.split() if w.startswith("JobState=")), "")
            if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
                break
            time.sleep(0.2)
        if state != "COMPLETED":
            failures.append("the merge job ended %r" % state)
        logs = out + ".slurm"
        with open(os.path.join(logs, "merge.out")) as f:
            merge_log = f.read()
        print("merge.out:\n" + merge_log.strip())
        if "all 6 points, from 3 input(s)" not in merge_log:
            failures.append("merge.out does not say the sweep is whole")
        for t in range(3):
            with open(os.path.join(logs, "task-%d.out" % t)) as f:
                log = f.read()
            if "sweep: shard %d/3 (from SLURM_ARRAY_TASK_ID/MIN/MAX)" % t not in log:
                failures.append("task %d did not take shard %d/3 from Slurm:\n%s" % (t, t, log))
        if table(os.path.join(out, "results.csv")) != want:
            failures.append("the cluster's results.csv differs from the local sweep's")
    finally:
        stopped = []
        for pid_file in reversed(pids):
            try:
                with open(pid_file) as f:
                    pid = int(f.read().split()[0])
                os.kill(pid, signal.SIGTERM)
                stopped.append(pid)
            except (OSError, ValueError):
                pass
        # The daemons gone (or zombies) before their directory goes, at most 5 s.
        def alive(pid):
            try:
                with open("/proc/%d/stat" % pid) as f:
                    return f.read().rsplit(")", 1)[1].split()[0] != "Z"
            except (OSError, IndexError):
                return False
        deadline = time.time() + 5
        while time.time() < deadline and any(alive(pid) for pid in stopped):
            time.sleep(0.05)
        for line in failures:
            print("FAIL: " + line)
        # What the daemons said, for a failure that does not come again.
        for name in (("slurmctld.log", "slurmd.log") if failures else ()):
            try:
                with open(os.path.join(d, name)) as f:
                    print("%s (its end):\n%s" % (name, "".join(f.readlines()[-30:])))
            except OSError:
                print("%s: none" % name)
        shutil.rmtree(d, ignore_errors=True)
    if not failures:
        print("ok: a 3-task Slurm array and its merge job give the local sweep's results")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
