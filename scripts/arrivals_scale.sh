#!/usr/bin/env bash
# Arrival detection against the number of nodes: the sweeps
# configs/netvm/arrivals-{4,16,64,324,1296}.ini (ring, counter and per-peer
# flags on alltoall and incast), two points at a time, merged into
# OUT/results.csv, then the table docs/workloads.md "Arrival detection"
# quotes (state bytes per node, polling, wait, throughput).
#   scripts/arrivals_scale.sh [OUT] [SIZES...]   (OUT defaults to vrdmasim-out/arrivals;
#                                                 SIZES to 4 16 64 324 1296)
# Resumable: run it again on the same OUT and done points are skipped.
# Exit status: 0 all points ok; 1 some point failed (the rest still ran and
# are merged); 2 a sweep file is bad or nothing could be merged.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-vrdmasim-out/arrivals}"
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(4 16 64 324 1296)
exe="${VRDMASIM:-$root/build/vrdmasim}"
python="${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}"
if [ ! -x "$exe" ]; then
  echo "arrivals: $exe not found: build first (cmake --build build)" >&2
  exit 2
fi
mkdir -p "$out"
status=0
results=()
for n in "${sizes[@]}"; do
  cfg="$root/configs/netvm/arrivals-$n.ini"
  if [ ! -f "$cfg" ]; then
    echo "arrivals: no sweep for $n nodes ($cfg)" >&2
    exit 2
  fi
  echo "arrivals: $n nodes"
  "$exe" sweep "$cfg" --jobs 2 --out "$out/n$n"
  rc=$?
  if [ "$rc" -eq 2 ]; then
    echo "arrivals: sweep for $n nodes could not run (exit 2)" >&2
    status=2
  elif [ "$rc" -ne 0 ]; then
    [ "$status" -eq 0 ] && status=1
  fi
  [ -f "$out/n$n/results.csv" ] && results+=("$out/n$n/results.csv")
done
if [ ${#results[@]} -eq 0 ]; then
  echo "arrivals: no results to merge" >&2
  exit 2
fi
"$exe" merge "$out/results.csv" "${results[@]}" || exit 2
"$python" "$root/scripts/arrivals_table.py" "$out/results.csv" || status=2
exit "$status"
