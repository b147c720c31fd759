#!/usr/bin/env bash
# The test command: installs what is missing, builds everything (plain and
# ASan+UBSan), then runs every test against a real local control plane.
#   scripts/test.sh            all tests
#   scripts/test.sh -L unit    extra arguments go to ctest (plain build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=$(nproc)

scripts/install-deps.sh
test/controlplane/build.sh >/dev/null

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
# Sanitizers: the unit tests again, under AddressSanitizer + UndefinedBehaviorSanitizer.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOCTORUN_SANITIZE=ON \
  -DOCTORUN_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs" --target octorun_unit_tests

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
ctest --test-dir build --output-on-failure -j"$jobs" "$@" || status=1
ctest --test-dir build-asan -L unit --output-on-failure -j"$jobs" || status=1
exit $status
