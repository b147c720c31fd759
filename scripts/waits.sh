# Sourced by the scripts that start a manager or the GitHub simulator
# (demo-setup.sh, try-chart.sh): waits on state they expose (what they write
# to their --endpoints-file, the manager's /readyz), never on their logs.
#   source scripts/waits.sh

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
