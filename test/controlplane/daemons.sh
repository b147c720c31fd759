# Sourced by cluster.sh and karpenter.sh: how a test-cluster script runs its
# daemons. The caller defines log() and sets $dir (the cluster folder, with
# logs/ and pids/).

# shellcheck source=free_port.sh
source "$(dirname "${BASH_SOURCE[0]}")/free_port.sh"

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "timed out waiting for $what (logs in $dir/logs)"
      return 1
    fi
    sleep 0.2
  done
}

launch() {  # launch NAME COMMAND...: a daemon in a session of its own, pid in DIR/pids/NAME
  local name=$1
  shift
  setsid "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}

kill_named() {  # kill_named NAME [SIGNAL]: SIGNAL (TERM), then KILL after 5 s
  local name=$1 sig=${2:-TERM} pid state
  [[ -f "$dir/pids/$name" ]] || return 0
  pid=$(cat "$dir/pids/$name")
  kill -s "$sig" "$pid" 2>/dev/null || true
  # A zombie counts as gone: PID 1 in a container may not reap it promptly.
  for _ in $(seq 1 50); do
    state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
    [[ -n "$state" && "$state" != Z* ]] || break
    sleep 0.1
  done
  kill -s KILL "$pid" 2>/dev/null || true
  rm -f "$dir/pids/$name"
}

# start_reaper OWNER WATCHED SCRIPT VERB PIDNAME: while OWNER lives and the
# folder WATCHED exists, nothing; when OWNER is gone, `SCRIPT VERB $dir`.
# The reaper outlives a SIGKILLed owner: it runs in a session of its own.
start_reaper() {
  setsid bash -c '
    owner=$1 watched=$2 script=$3 verb=$4 dir=$5
    while kill -0 "$owner" 2>/dev/null && [[ -d "$watched" ]]; do sleep 1; done
    [[ -d "$watched" ]] && "$script" "$verb" "$dir"
  ' reaper "$1" "$2" "$3" "$4" "$dir" >/dev/null 2>&1 </dev/null &
  echo $! >"$dir/pids/$5"
}
