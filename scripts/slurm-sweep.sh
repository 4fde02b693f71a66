#!/usr/bin/env bash
# Submit a sweep to Slurm: a job array whose tasks each run their shard of
# the sweep into one shared output directory, and a merge job that runs when
# the array has ended and checks that every point is there.
#
#   scripts/slurm-sweep.sh SWEEP.ini OUT [sbatch options ...]
#
# TASKS=N sets the number of array tasks (default: one per point, at most 64).
# Each task runs `vrdmasim sweep SWEEP.ini --out OUT --jobs C`, C being the
# task's CPUs (--cpus-per-task, default 1); vrdmasim takes its shard from
# SLURM_ARRAY_TASK_ID/MIN/MAX. The tasks share OUT (each writes its rows to
# OUT/shards/results-I-of-N.csv and refreshes OUT/results.csv); the merge job
# rewrites OUT/results.csv with `vrdmasim merge`, which fails, naming the
# missing points, if a task did not finish. Slurm's own logs go to OUT.slurm/.
# The sbatch options (partition, time, account, ...) apply to both jobs.
# VRDMASIM=path overrides the simulator (default: build/vrdmasim here); it,
# the sweep file and OUT must be on a file system the compute nodes share.
#
# Exit status: 0 submitted (prints both job ids); 2 bad arguments or a sweep
# file vrdmasim rejects; sbatch's status if it refuses a job.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: scripts/slurm-sweep.sh SWEEP.ini OUT [sbatch options ...]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
exe="$(realpath "${VRDMASIM:-$root/build/vrdmasim}")"
sweep="$(realpath "$1")"
out="$(realpath -m "$2")"
shift 2
if [ ! -x "$exe" ]; then
  echo "slurm-sweep: $exe not found: build first (scripts/test.sh or cmake --build build)" >&2
  exit 2
fi
command -v sbatch >/dev/null || { echo "slurm-sweep: sbatch not found: not a Slurm submit host" >&2; exit 2; }

# The plan: a bad sweep file fails here, not in 64 tasks.
points=$("$exe" sweep "$sweep" --list-points) || exit 2
points=$(printf '%s\n' "$points" | grep -c .)
tasks="${TASKS:-$(( points < 64 ? points : 64 ))}"
case "$tasks" in ''|*[!0-9]*) echo "slurm-sweep: TASKS=$tasks: expected a whole number" >&2; exit 2;; esac
if [ "$tasks" -lt 1 ] || [ "$tasks" -gt "$points" ]; then
  echo "slurm-sweep: TASKS=$tasks: expected 1 to $points (the sweep's points)" >&2
  exit 2
fi
logs="$out.slurm"
mkdir -p "$logs"

q() { printf '%q' "$1"; }
run_cmd="$(q "$exe") sweep $(q "$sweep") --out $(q "$out") --jobs \${SLURM_CPUS_PER_TASK:-1}"
array=$(sbatch --parsable --job-name=vrdmasim-sweep --array="0-$((tasks - 1))" \
          --output="$logs/task-%a.out" "$@" --wrap "$run_cmd")
array="${array%%;*}"
merge_cmd="$(q "$exe") merge $(q "$out/results.csv") $(q "$out")/shards/results-*-of-$tasks.csv"
merge=$(sbatch --parsable --job-name=vrdmasim-merge --dependency="afterany:$array" \
          --output="$logs/merge.out" "$@" --wrap "$merge_cmd")
merge="${merge%%;*}"
echo "slurm-sweep: $points points in $tasks array tasks: job $array; merge: job $merge"
echo "slurm-sweep: results in $out/results.csv; Slurm logs in $logs/ (merge.out says whether the sweep is whole)"
