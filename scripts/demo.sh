#!/usr/bin/env bash
# Set-up, build, and the default experiment: what a new user runs first.
#   scripts/demo.sh            (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target vrdmasim
build/vrdmasim run configs/default.ini --out vrdmasim-out/default
