#!/usr/bin/env bash
# Installs what vrdmasim needs to build and test on Debian 12, through apt-get
# only. Safe to run again: it installs only what is missing.
set -euo pipefail

packages=(build-essential cmake pkg-config libsystemc-dev
          libboost-program-options-dev catch2 python3
          zlib1g-dev   # trace.json.gz (vrdmasim run --trace-gzip)
          libgoogle-perftools-dev   # tcmalloc, the vrdmasim executable's allocator
          python3-matplotlib openmpi-bin valgrind
          libopenmpi-dev   # a run split across MPI ranks (src/cli/mpi_comm.cpp)
          munge slurmctld slurmd slurm-client   # the MPI and Slurm sweep tests
          chromium chromium-driver python3-selenium   # the report and trace-viewer browser tests
          libopen-trace-format2-dev    # trace replay reads OTF2 (workloads/trace_reader.cpp)
          python3-otf2 otf2-tools   # the OTF2 test traces (scripts/make_traces.py, otf2-print)
          nlohmann-json3-dev   # JSON in the tests (tests/json_check.hpp)
          clang-format)   # the sources' style (.clang-format; the ctest format)

# scripts/fuzz.sh's clang and libFuzzer runtime: only with --fuzz.
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build dependencies are present"
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
