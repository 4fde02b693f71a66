#!/usr/bin/env bash
# The thesis experiment: every sweep under configs/thesis (three buffer
# states x fault-tolerant / pin / prefault / pin-static / pin-deferred, and
# the pin-down cache sweep),
# two points at a time, merged into OUT/results.csv, then tables and plots
# in OUT/plots (scripts/plot_results.py, whose figures scripts/plot.py's
# library draws; any other metric: scripts/plot.py OUT/results.csv METRIC ...).
#   scripts/thesis.sh [OUT]        (from anywhere; OUT defaults to vrdmasim-out/thesis)
# Resumable: run it again on the same OUT and done points are skipped.
# Exit status: 0 all points ok; 1 some point failed (the rest still ran, are
# merged and plotted); 2 a sweep file is bad or nothing could be merged.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-vrdmasim-out/thesis}"
exe="${VRDMASIM:-$root/build/vrdmasim}"
# The Debian interpreter, for which apt-get installs python3-matplotlib.
python="${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}"
if [ ! -x "$exe" ]; then
  echo "thesis: $exe not found: build first (scripts/demo.sh or cmake --build build)" >&2
  exit 2
fi

sweeps=(cold-fault-tolerant cold-pin-prefault
        warm-fault-tolerant warm-pin-prefault
        pressure-fault-tolerant pressure-pin-prefault
        cold-prefetch pressure-prefetch
        pin-cache)
mkdir -p "$out"
status=0
results=()
for s in "${sweeps[@]}"; do
  echo "thesis: sweep $s"
  "$exe" sweep "$root/configs/thesis/$s.ini" --jobs 2 --out "$out/$s"
  rc=$?
  if [ "$rc" -eq 2 ]; then
    echo "thesis: sweep $s could not run (exit 2)" >&2
    status=2
  elif [ "$rc" -ne 0 ]; then
    [ "$status" -eq 0 ] && status=1
  fi
  [ -f "$out/$s/results.csv" ] && results+=("$out/$s/results.csv")
done

if [ ${#results[@]} -eq 0 ]; then
  echo "thesis: no results to merge" >&2
  exit 2
fi
"$exe" merge "$out/results.csv" "${results[@]}" || exit 2
echo "thesis: merged ${#results[@]} sweeps into $out/results.csv"
"$python" "$root/scripts/plot_results.py" "$out/results.csv" "$out/plots" || status=2
exit "$status"
