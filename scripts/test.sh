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
test/controlplane/build-kubelet.sh >/dev/null  # the real node's (node.sh), for the deploy tests
# helm for the chart tests (test/tools/helm: its own pinned Go module, cached like the control plane).
test/tools/helm/build.sh >/dev/null
# prometheus-adapter for the autoscaling test (test/tools/prometheus-adapter, cached the same way).
test/tools/prometheus-adapter/build.sh >/dev/null
# The scale-set conformance driver: GitHub's own Go client (actions/scaleset, pinned in
# test/tools/scaleset-conformance) against the simulator; cached the same way.
test/tools/scaleset-conformance/build.sh >/dev/null
# Karpenter's kwok provider and its CRDs for the real-shaped cluster (test/tools/karpenter,
# test/controlplane/karpenter.sh); cached the same way.
test/tools/karpenter/build.sh >/dev/null

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
# Sanitizers: every test that needs no cluster (unit tests, GitHub tests against the
# in-process simulator) again, under AddressSanitizer + UndefinedBehaviorSanitizer.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOCTORUN_SANITIZE=ON \
  -DOCTORUN_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs" --target octorun_cluster_free_tests
# Fuzzing: every parser of untrusted input under libFuzzer (clang, ASan+UBSan;
# test/fuzz/README.md), in a folder of its own so the g++ builds are untouched.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DOCTORUN_FUZZ=ON -DOCTORUN_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target octorun_fuzzers

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
ctest --test-dir build --output-on-failure -j"$jobs" "$@" || status=1
ctest --test-dir build-asan -L cluster_free --output-on-failure -j"$jobs" || status=1
# Bounded fuzz run: 15 s per target, side by side (new inputs go to
# build-fuzz/fuzz/corpus, the committed seeds are read only).
test/fuzz/run.sh build-fuzz 15 || status=1
exit $status
