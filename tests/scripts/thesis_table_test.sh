#!/usr/bin/env bash
# The README's thesis table against a fresh run of the whole experiment
# (scripts/thesis.sh, about a minute on two cores).
#   tests/scripts/thesis_table_test.sh VRDMASIM PYTHON
set -euo pipefail
exe="$1"; python="$2"
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="$(mktemp -d "${TMPDIR:-/tmp}/vrdmasim-thesis-table-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
VRDMASIM="$exe" PYTHON="$python" "$root/scripts/thesis.sh" "$dir/out" > "$dir/log" 2>&1 || { tail -20 "$dir/log"; exit 1; }
"$python" "$root/scripts/thesis_table.py" "$dir/out/results.csv" --check
