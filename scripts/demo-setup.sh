# Sourced by the demos (demo.sh, demo-real-shaped.sh), from the checkout's
# root: installs what they need, builds the targets given, and makes the
# work folder $work, which goes when the demo ends (or on Ctrl-C) with the
# processes in `pids` and the cluster in it. The demos' waits are
# scripts/waits.sh's.
#   source scripts/demo-setup.sh TARGET...
scripts/install-deps.sh
test/controlplane/build.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target "$@"

work=$(mktemp -d /tmp/octorun-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  test/controlplane/cluster.sh stop "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# shellcheck source=waits.sh
source scripts/waits.sh
