#!/usr/bin/env bash
# The chaos harness's command (README.md): builds the manager and the harness
# in BUILD_DIR (default: build/ of this checkout, RelWithDebInfo) and runs it,
# niced, with the arguments given:
#   bench/chaos/run.sh --profile short                 # the ctest profile, about 4 minutes
#   bench/chaos/run.sh --profile soak --duration 3600  # the soak
#   bench/chaos/run.sh --profile soak --seed 42        # replay a printed schedule
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/test/controlplane/build.sh" >/dev/null
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target chaos -j"${JOBS:-2}"
exec nice -n "${NICE:-10}" "$build/bench/chaos/chaos" "$@"
