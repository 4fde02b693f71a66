#!/usr/bin/env bash
# Fuzz the parsers with libFuzzer: builds the fuzz targets (tests/fuzz) and the
# code they reach with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# in build-fuzz/, then runs each target for SECONDS (default 60) on a copy of
# its seed corpus, and prints the executions each reached. A broken property,
# a crash, a leak or undefined behaviour stops the target and leaves the
# input in build-fuzz/findings/<target>/ (replay it: build/fuzz_<target> FILE).
#   scripts/fuzz.sh [SECONDS] [TARGET ...]   (targets: config_ini sweep_file command_line csv
#   trace_check mapping_file)
# Installs clang and its runtimes first if missing (scripts/setup.sh --fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(config_ini sweep_file command_line csv trace_check mapping_file)
scripts/setup.sh --fuzz
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVRDMASIM_FUZZ=ON -DVRDMASIM_LTO=OFF \
  -DVRDMASIM_TCMALLOC=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Leaks inside the OTF2 library are its own, not ours (tests/fuzz/lsan.supp).
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp}"
status=0
for t in "${targets[@]}"; do
  corpus="build-fuzz/corpus/$t"
  findings="build-fuzz/findings/$t"
  mkdir -p "$corpus" "$findings"
  cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  log="build-fuzz/fuzz-$t.log"
  # trace_check: the OTF2 library (C) allocates sizes read from the anchor
  # file; one it cannot have fails there as in a real run (the archive is
  # refused), instead of ASan aborting. C++ allocations still throw.
  asan="$ASAN_OPTIONS"
  [ "$t" = trace_check ] && asan="$ASAN_OPTIONS:allocator_may_return_null=1"
  if ASAN_OPTIONS="$asan" build-fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
       -artifact_prefix="$findings/" "$corpus" >"$log" 2>&1; then
    result="clean"
  else
    result="FAILED (see $log; the input is in $findings/)"
    status=1
  fi
  execs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || true)
  [ -z "$execs" ] && execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  echo "fuzz: $t: ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) inputs: $result"
done
exit $status
