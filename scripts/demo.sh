#!/usr/bin/env bash
# Set-up, build, and the default experiment: what a new user runs first.
#   scripts/demo.sh            (from the repository root)
# It installs and builds only what the experiment needs: the packages of
# `scripts/setup.sh --demo` (not the test suite's browser, Slurm, valgrind,
# OTF2 tools, clang-format, Catch2) and the vrdmasim executable alone
# (-DVRDMASIM_TESTS=OFF: no test program, no Catch2 needed to configure).
# scripts/test.sh installs the rest and builds everything in the same build/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build
# A build/ that scripts/test.sh configured keeps its tests.
tests=OFF
if grep -q '^VRDMASIM_TESTS:BOOL=ON$' build/CMakeCache.txt 2>/dev/null; then tests=ON; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DVRDMASIM_TESTS=$tests >/dev/null
# The plots' packages (matplotlib: about 60 packages on a fresh machine)
# install while the simulator compiles (in its own process group, stopped if
# this script stops); the compiler's output follows once they are in.
log=build/demo-build.log
echo "demo: compiling build/vrdmasim in the background (log: $log)"
setsid cmake --build build -j2 --target vrdmasim >"$log" 2>&1 &
build=$!
trap 'kill -- -$build 2>/dev/null || true' EXIT
scripts/setup.sh --plots
tail -n +1 -f --pid=$build "$log"
if ! wait $build; then
  echo "demo: building vrdmasim failed (the log above, $log)" >&2
  exit 1
fi
trap - EXIT
# The default experiment: the thesis comparison, small (configs/thesis/quick.ini,
# 60 short runs): fault-tolerant RDMA (touch-one, touch-ahead) against pinning
# and pre-faulting, THP never and always, cold buffers; then its table and plots.
rm -rf vrdmasim-out/quick
build/vrdmasim sweep configs/thesis/quick.ini --jobs 2 --out vrdmasim-out/quick
/usr/bin/python3 scripts/plot_results.py vrdmasim-out/quick/results.csv vrdmasim-out/quick/plots
echo "table: vrdmasim-out/quick/plots/table.md; plots: vrdmasim-out/quick/plots/{latency,bandwidth}.{png,svg}"
