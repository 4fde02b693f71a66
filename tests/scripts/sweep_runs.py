"""The sweep that the MPI and Slurm sweep tests (mpi_sweep_test.py,
slurm_sweep_test.py) run, and its results compared without the host's own
figures."""
import csv

HOST_COLUMNS = {"host_seconds", "peak_rss_mib", "host_huge_pages_mib", "host_build_seconds", "host_output_seconds",
                "ranks", "host_windows", "host_exchanged_bytes", "host_peak_rss_mib_max"}

# Six points on the base config named by {base}.
SWEEP = """[sweep]
base = {base}
[workload]
message-size = 1KiB, 4KiB, 16KiB
window = 1, 4
total-bytes = 64KiB
"""


def table(path):
    """A results or summary CSV's rows without the host columns."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, h in enumerate(rows[0]) if h not in HOST_COLUMNS]
    return [[r[i] for i in keep] for r in rows]
