#!/usr/bin/env bash
# ctest setup_sets: scripts/setup.sh's package sets (issue #57). The demo's
# (--demo, what scripts/demo.sh installs) is part of the full set
# (scripts/test.sh, CI), which is part of --fuzz's; the demo's has every
# package the vrdmasim executable is built from and the demo's plots need,
# and none of what only the tests use, and is --build's and --plots' sets
# together; scripts/demo.sh installs both and builds the executable alone.
#   setup_sets_test.sh <source dir>
set -euo pipefail
src=$1
fail=0
demo=$(bash "$src/scripts/setup.sh" --demo --list | sort)
parts=$(cat <(bash "$src/scripts/setup.sh" --build --list) <(bash "$src/scripts/setup.sh" --plots --list) | sort)
if [ "$demo" != "$parts" ]; then echo "FAIL: --demo's set is not --build's and --plots' together"; fail=1; fi
full=$(bash "$src/scripts/setup.sh" --list | sort)
fuzz=$(bash "$src/scripts/setup.sh" --fuzz --list | sort)
extra=$(comm -23 <(echo "$demo") <(echo "$full"))
if [ -n "$extra" ]; then echo "FAIL: in the demo's set, not in the full set: $extra"; fail=1; fi
extra=$(comm -23 <(echo "$full") <(echo "$fuzz"))
if [ -n "$extra" ]; then echo "FAIL: in the full set, not in --fuzz's: $extra"; fail=1; fi
# What CMakeLists.txt finds for the vrdmasim target (pkg_check_modules,
# find_package outside VRDMASIM_TESTS) and scripts/plot_results.py imports.
for p in build-essential cmake pkg-config libsystemc-dev libboost-program-options-dev zlib1g-dev \
         libgoogle-perftools-dev libopen-trace-format2-dev libopenmpi-dev python3 python3-matplotlib \
         python3-munkres; do
  if ! grep -qx "$p" <<<"$demo"; then echo "FAIL: the demo's set lacks $p"; fail=1; fi
done
for p in catch2 nlohmann-json3-dev valgrind openmpi-bin munge slurmctld slurmd slurm-client chromium \
         chromium-driver python3-selenium python3-otf2 otf2-tools clang-format; do
  if grep -qx "$p" <<<"$demo"; then echo "FAIL: the demo's set has $p, which only the tests use"; fail=1; fi
  if ! grep -qx "$p" <<<"$full"; then echo "FAIL: the full set lacks $p"; fail=1; fi
done
for needle in 'scripts/setup.sh --build' 'scripts/setup.sh --plots' '--target vrdmasim' '-DVRDMASIM_TESTS=$tests' \
              'tests=OFF' 'wait $build'; do
  if ! grep -qF -- "$needle" "$src/scripts/demo.sh"; then echo "FAIL: scripts/demo.sh has no '$needle'"; fail=1; fi
done
if ! grep -qF -- '-DVRDMASIM_TESTS=ON' "$src/scripts/test.sh"; then
  echo "FAIL: scripts/test.sh does not configure with -DVRDMASIM_TESTS=ON"; fail=1
fi
if ! grep -qx 'scripts/setup.sh' "$src/scripts/test.sh"; then
  echo "FAIL: scripts/test.sh does not install the full set (scripts/setup.sh with no option)"; fail=1
fi
if bash "$src/scripts/setup.sh" --no-such-option >/dev/null 2>&1; then
  echo "FAIL: scripts/setup.sh accepted an unknown option"; fail=1
fi
[ $fail -eq 0 ] && echo "setup_sets: $(wc -l <<<"$demo") demo packages, $(wc -l <<<"$full") in all: ok"
exit $fail
