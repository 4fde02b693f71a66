#!/usr/bin/env bash
# Installs what vrdmasim needs on Debian 12, through apt-get only. Safe to run
# again: it installs only what is missing.
#   scripts/setup.sh          everything: the simulator and the whole test suite
#                             (scripts/test.sh, CI's .ci/run)
#   scripts/setup.sh --demo   what scripts/demo.sh needs: the simulator's build
#                             and the default experiment's plots, under half the
#                             download of the full set (README.md, "Two commands")
#   scripts/setup.sh --build  of those, the vrdmasim executable's build only
#   scripts/setup.sh --plots  of those, the plots' only (scripts/demo.sh installs
#                             them while the simulator compiles)
#   scripts/setup.sh --fuzz   everything, and clang for scripts/fuzz.sh
#   --list after the mode prints the mode's packages, one a line, and installs
#   nothing (the ctest setup_sets checks the sets against each other).
set -euo pipefail

# What building the vrdmasim executable needs (CMakeLists.txt finds each one;
# none is optional).
build_packages=(build-essential cmake pkg-config libsystemc-dev
          libboost-program-options-dev
          zlib1g-dev   # trace.json.gz (vrdmasim run --trace-gzip)
          libgoogle-perftools-dev   # tcmalloc, the vrdmasim executable's allocator
          libopen-trace-format2-dev    # trace replay reads OTF2 (workloads/trace_reader.cpp)
          libopenmpi-dev   # a run split across MPI ranks (src/cli/mpi_comm.cpp)
          python3)
# The demo's table and plots (scripts/plot_results.py, scripts/plot.py).
# python3-munkres: python3-fonttools, which matplotlib needs, needs SciPy or
# munkres; named, apt takes it (60 KB) instead of SciPy and its BLAS (24
# packages, 35 MB that nothing here uses).
plot_packages=(python3-matplotlib python3-munkres)

# What only the tests, the benchmarks and the cluster scripts use.
test_packages=(catch2   # the test programs (tests/main.cpp)
          nlohmann-json3-dev   # JSON in the tests (tests/json_check.hpp)
          valgrind   # bench --instructions (callgrind; vrdmasim's client requests need its header)
          openmpi-bin   # mpirun: partitioned runs, MPI sweeps, the MPI programs of workload.kind = mpi
          netpipe-openmpi   # a real MPI program in the tests (workloads/mpi/tests: NetPIPE)
          lammps lammps-examples   # a real MPI application in the tests (workloads/mpi/tests: the LJ melt)
          hpcc   # the HPC Challenge suite, unmodified, in the tests (workloads/mpi/tests)
          gfortran   # a Fortran MPI program in the tests (workloads/mpi/tests/mpi_fortran.f90, mpifort)
          munge slurmctld slurmd slurm-client   # the MPI and Slurm sweep tests
          chromium chromium-driver python3-selenium   # the report and trace-viewer browser tests
          python3-otf2 otf2-tools   # the OTF2 test traces (scripts/make_traces.py, otf2-print)
          clang-format)   # the sources' style (.clang-format; the ctest format)

# scripts/fuzz.sh's clang and libFuzzer runtime.
fuzz_packages=(clang libclang-rt-14-dev)

mode="${1:-}"
case "$mode" in
  --build) packages=("${build_packages[@]}") ;;
  --plots) packages=("${plot_packages[@]}") ;;
  --demo) packages=("${build_packages[@]}" "${plot_packages[@]}") ;;
  "" | --list) packages=("${build_packages[@]}" "${plot_packages[@]}" "${test_packages[@]}") ;;
  --fuzz) packages=("${build_packages[@]}" "${plot_packages[@]}" "${test_packages[@]}" "${fuzz_packages[@]}") ;;
  *) echo "setup: unknown option '$mode' (scripts/setup.sh [--demo | --build | --plots | --fuzz] [--list])" >&2
     exit 2 ;;
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
  echo "setup: all the packages${mode:+ of $mode} are present"
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
# Package lists fetched in the last hour (scripts/demo.sh's second call, a
# scripts/test.sh after it) are fresh enough.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null)" ]; then
  $SUDO apt-get update -qq
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
