#!/usr/bin/env bash
# The load test in one command: builds octorun-loadtest (in build/, with the
# project's CMake; nothing to do when it is up to date) and runs it with the
# arguments given. See bench/loadtest/README.md, or pass --help.
#   bench/loadtest/loadtest.sh --namespace ci --jobs 200 --max-runners 50 --max-queue-p99=5s
# OCTORUN_BUILD_DIR: another build tree (default: build/ in the checkout).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${OCTORUN_BUILD_DIR:-$root/build}
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || { echo "loadtest.sh: $tool is missing: run scripts/install-deps.sh" >&2; exit 2; }
done
# A tree configured already is used as it is, whatever its generator.
if [[ ! -f "$build/CMakeCache.txt" ]] &&
  ! out=$(cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo 2>&1); then
  echo "$out" >&2
  echo "loadtest.sh: configuring $build failed (scripts/install-deps.sh installs what the build needs)" >&2
  exit 2
fi
if ! out=$(cmake --build "$build" --target octorun-loadtest -j"$(nproc)" 2>&1); then
  echo "$out" >&2
  echo "loadtest.sh: building octorun-loadtest failed (scripts/install-deps.sh installs what the build needs)" >&2
  exit 2
fi
exec "$build/bench/loadtest/octorun-loadtest" "$@"
