# Sourced by the demos (demo.sh, demo-real-shaped.sh), from the checkout's
# root: installs what they need, builds the targets given, and makes the
# work folder $work, which goes when the demo ends (or on Ctrl-C) with the
# processes in `pids` and the cluster in it. It also defines the demos'
# waits: on what the manager and the simulator write to their
# --endpoints-file and on the manager's /readyz, never on their logs.
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

# wait_until SECONDS WHAT COMMAND...: until COMMAND prints something (a file
# or an endpoint offers no event to wait on: polled every 0.2 s).
wait_until() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until [[ -n $("$@" 2>/dev/null || true) ]]; do
    ((SECONDS < deadline)) || { echo "timed out waiting for $what" >&2; return 1; }
    sleep 0.2
  done
}
# endpoint FILE NAME: the URL named NAME in an --endpoints-file (the
# manager's: health, metrics, admission, webhookIntake; the simulator's:
# baseURL); empty until the file is there (each is renamed into place whole).
endpoint() { jq -r --arg name "$2" '.[$name] // empty' "$1" 2>/dev/null || true; }
# leading FILE: prints "leading" once the manager whose --endpoints-file is
# FILE leads (its /readyz says so).
leading() {
  local health
  health=$(endpoint "$1" health)
  [[ -n $health && $(curl -fsS "$health/readyz" 2>/dev/null) == leading ]] && echo leading
}
