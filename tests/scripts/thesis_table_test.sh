#!/usr/bin/env bash
# The thesis experiment against what docs/experiments.md quotes of it, from
# one fresh run of the whole experiment (scripts/thesis.sh, about two
# minutes on two cores): the page's two tables
# (scripts/thesis_table.py --check), then every figure the page's prose
# quotes (scripts/tutorial.py, given the same run with --have, so the
# experiment runs once). PAGE...: the pages checked in that pass,
# docs/experiments.md by default; the ctest adds those that run some of the
# page's other sweeps word for word, which then run once.
#   tests/scripts/thesis_table_test.sh VRDMASIM PYTHON [PAGE...]
set -euo pipefail
exe="$1"; python="$2"; shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
pages=("$root/docs/experiments.md")
[ $# -eq 0 ] || pages=("$@")
dir="$(mktemp -d "${TMPDIR:-/tmp}/vrdmasim-thesis-table-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
out="$dir/vrdmasim-out/thesis"
VRDMASIM="$exe" PYTHON="$python" "$root/scripts/thesis.sh" "$out" > "$dir/log" 2>&1 || { tail -20 "$dir/log"; exit 1; }
"$python" "$root/scripts/thesis_table.py" "$out/results.csv" --check
"$python" "$root/scripts/tutorial.py" --exe "$exe" --keep "$dir" --have vrdmasim-out/thesis "${pages[@]}"
