#!/usr/bin/env bash
# Set-up, build everything, and run the whole test suite (one process per
# Catch2 case, through ctest).
#   scripts/test.sh            (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# VRDMASIM_TESTS=ON explicitly: a build/ that scripts/demo.sh configured
# without the tests keeps that choice in its cache otherwise.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DVRDMASIM_TESTS=ON >/dev/null
cmake --build build -j2
cd build
ctest -j2 --output-on-failure
