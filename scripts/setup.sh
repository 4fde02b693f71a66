#!/usr/bin/env bash
# Installs what vrdmasim needs on Debian 12, through apt-get only. Safe to run
# again: it installs only what is missing.
#   scripts/setup.sh          everything: the simulator and the whole test suite
#                             (scripts/test.sh, CI's .ci/run)
#   scripts/setup.sh --demo   the simulator and the default experiment's plots
#                             only (scripts/demo.sh): about half the download
#                             of the full set (README.md, "Two commands")
#   scripts/setup.sh --fuzz   everything, and clang for scripts/fuzz.sh
#   --list after the mode prints the mode's packages, one a line, and installs
#   nothing (the ctest setup_sets checks the sets against each other).
set -euo pipefail

# What building the vrdmasim executable needs (CMakeLists.txt finds each one;
# none is optional), and what scripts/demo.sh runs after it.
demo_packages=(build-essential cmake pkg-config libsystemc-dev
          libboost-program-options-dev
          zlib1g-dev   # trace.json.gz (vrdmasim run --trace-gzip)
          libgoogle-perftools-dev   # tcmalloc, the vrdmasim executable's allocator
          libopen-trace-format2-dev    # trace replay reads OTF2 (workloads/trace_reader.cpp)
          libopenmpi-dev   # a run split across MPI ranks (src/cli/mpi_comm.cpp)
          python3 python3-matplotlib)   # the demo's table and plots (scripts/plot_results.py)

# What only the tests, the benchmarks and the cluster scripts use.
test_packages=(catch2   # the test programs (tests/main.cpp)
          nlohmann-json3-dev   # JSON in the tests (tests/json_check.hpp)
          valgrind   # bench --instructions (callgrind; vrdmasim's client requests need its header)
          openmpi-bin   # mpirun: partitioned runs and MPI sweeps
          munge slurmctld slurmd slurm-client   # the MPI and Slurm sweep tests
          chromium chromium-driver python3-selenium   # the report and trace-viewer browser tests
          python3-otf2 otf2-tools   # the OTF2 test traces (scripts/make_traces.py, otf2-print)
          clang-format)   # the sources' style (.clang-format; the ctest format)

# scripts/fuzz.sh's clang and libFuzzer runtime.
fuzz_packages=(clang libclang-rt-14-dev)

mode="${1:-}"
case "$mode" in
  --demo) packages=("${demo_packages[@]}") ;;
  "" | --list) packages=("${demo_packages[@]}" "${test_packages[@]}") ;;
  --fuzz) packages=("${demo_packages[@]}" "${test_packages[@]}" "${fuzz_packages[@]}") ;;
  *) echo "setup: unknown option '$mode' (scripts/setup.sh [--demo | --fuzz] [--list])" >&2; exit 2 ;;
esac
if [ "$mode" = "--list" ] || [ "${2:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  if [ "$mode" = "--demo" ]; then echo "setup: what the demo needs is present"
  else echo "setup: all dependencies are present"; fi
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
