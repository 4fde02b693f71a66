#!/usr/bin/env bash
# Build everything with AddressSanitizer and UndefinedBehaviorSanitizer in its
# own build directory (build-asan) and run the whole test suite under them:
# any leak, out-of-bounds access, use after free or undefined behaviour fails
# the test that hit it.
#   scripts/sanitize.sh              (from the repository root)
#   scripts/sanitize.sh -R cli_tests (extra arguments go to ctest)
# Slow: several times the normal build's test time.
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVRDMASIM_LTO=OFF -DVRDMASIM_TCMALLOC=OFF \
  -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j2
cd build-asan
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest -j2 --output-on-failure "$@"
