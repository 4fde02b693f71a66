#!/usr/bin/env bash
# Set-up, build, and the default experiment: what a new user runs first.
#   scripts/demo.sh            (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target vrdmasim
# The default experiment: the thesis comparison, small (configs/thesis/quick.ini,
# 60 short runs): fault-tolerant RDMA (touch-one, touch-ahead) against pinning
# and pre-faulting, THP never and always, cold buffers; then its table and plots.
rm -rf vrdmasim-out/quick
build/vrdmasim sweep configs/thesis/quick.ini --jobs 2 --out vrdmasim-out/quick
/usr/bin/python3 scripts/plot_results.py vrdmasim-out/quick/results.csv vrdmasim-out/quick/plots
echo "table: vrdmasim-out/quick/plots/table.md; plots: vrdmasim-out/quick/plots/{latency,bandwidth}.{png,svg}"
