#!/usr/bin/env bash
# Busy runners under Karpenter's consolidation, end to end (ctest karpenter.busy_runners;
# test/controlplane/karpenter.md, docs/runner-pods.md "Drains and autoscalers"):
# the octorun binary, the GitHub simulator binary and Karpenter's kwok provider on a
# control plane of their own. A RunnerSet's runner pods ask for 3 CPUs on the NodePool
# `runners` (one 8-CPU shape: two runners a node); the test queues jobs, plays the
# runner process (a pod Running brings its runner online) and ends each job itself:
#   1. six jobs: six busy runners on three nodes or more; an idle pod (Running, its
#      runner not yet online) carries no karpenter.sh/do-not-disrupt, a busy one "true";
#   2. every job on one node ends, and all but one on each other node: the emptied
#      node is consolidated away while the others, each with one busy runner and room
#      for another, would merge but stay (multi-node consolidation evaluated twice
#      more after their NodeClaims turned Consolidatable);
#   3. the last jobs end: every node is reclaimed.
# Throughout: no runner pod goes (deleted, deleting, or evicted by Karpenter) while
# its job runs on the simulator, and no Runner turns Failed. Every wait is on observed
# state with a deadline.
#   busy_runners_test.sh OCTORUN_BINARY GITHUB_SIMULATOR_BINARY CRDS_DIR
set -euo pipefail

[[ $# -eq 3 ]] || { sed -n '2,20p' "$0" >&2; exit 2; }
octorun=$1 simulator=$2 crds=$3

ns=busy-runners set=busy org=disrupt
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
step() { echo "busy_runners_test: $(date -u +%T) $*"; }
fail() {
  echo "busy_runners_test: FAIL: $*" >&2
  {
    echo "--- nodeclaims, nodes, pods, runners"
    kubectl get nodeclaims,nodes -o wide
    kubectl -n "$ns" get pods,runners -o wide
    kubectl get nodeclaims -o json | jq -c '.items[] | {name: .metadata.name, node: .status.nodeName,
      deleting: .metadata.deletionTimestamp, conditions: [.status.conditions[]? | "\(.type)=\(.status) \(.reason)"]}'
    echo "--- the simulator's jobs not completed"
    curl -fsS "$sim/_sim/state" | jq -c '.jobs[] | select(.state != "completed")'
    echo "--- events"
    kubectl get events -A --sort-by=.lastTimestamp | tail -n 40
    echo "--- manager log (tail)"
    tail -n 30 "$work/manager.log"
    echo "--- karpenter log (tail)"
    tail -n 30 "$dir/logs/karpenter.log"
  } >&2 2>&1 || true
  exit 1
}

# The delays this test runs with (karpenter.sh's settings): one shape, so each
# node holds two runners and a half-used node can only merge with another.
export KARPENTER_NODEPOOL=runners KARPENTER_NODE_REGISTRATION_DELAY=5s KARPENTER_CONSOLIDATE_AFTER=5s
export KARPENTER_INSTANCE_TYPES=c-8x-amd64-linux KARPENTER_CPU_LIMIT=48
export KARPENTER_BATCH_IDLE_DURATION=2s KARPENTER_BATCH_MAX_DURATION=5s
export KWOK_IMAGE_PULL_COLD_MS=2000 KWOK_IMAGE_PULL_COLD_MAX_MS=3000
export KWOK_SANDBOX_MS=500 KWOK_SANDBOX_MAX_MS=1000 KWOK_CONTAINER_START_MS=200 KWOK_CONTAINER_START_MAX_MS=500
jobs=6

# wait_until SECONDS DESCRIPTION COMMAND...: COMMAND succeeds before the deadline;
# each round first checks the invariants and plays the runner process (tick).
wait_until() {
  local within=$1 what=$2
  local deadline=$((SECONDS + within))
  shift 2
  until tick && "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after $within s waiting for $what"
    sleep 0.3
  done
}
tick() { [[ -z ${sim:-} ]] || observe; }
# What the test knows, refreshed by observe(): the set's pods and the simulator's state.
declare -A online=()
pods_json='{"items":[]}' state_json='{"jobs":[]}'
declare -A violations=()  # each said once, however often seen
violation() {
  [[ -z ${violations[$*]:-} ]] || return 0
  violations[$*]=1
  echo "busy_runners_test: VIOLATION: $*" >&2
}
observe() {
  # Pods first: a job running now ran then (only this test brings runners online).
  pods_json=$(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o json)
  state_json=$(curl -fsS "$sim/_sim/state")
  local name
  # A running job's pod is there and not going.
  while read -r name; do
    [[ -n $name ]] || continue
    jq -e --arg n "$name" '.items[] | select(.metadata.name == $n and (.metadata.deletionTimestamp | not))' \
      <<<"$pods_json" >/dev/null || violation "runner $name's pod is gone or going while its job runs"
  done < <(jq -r '.jobs[] | select(.state == "running") | .runner_name' <<<"$state_json")
  # A busy pod carries Karpenter's veto; an idle one must not.
  while read -r name; do
    violation "busy pod $name has no karpenter.sh/do-not-disrupt: \"true\""
  done < <(jq -r '.items[] | select(.metadata.labels["octorun.io/busy"] == "true")
      | select(.metadata.annotations["karpenter.sh/do-not-disrupt"] != "true") | .metadata.name' <<<"$pods_json")
  # The runner process: a pod that runs brings its runner online (it is idle until then).
  while read -r name; do
    [[ -n $name && -z ${online[$name]:-} ]] || continue
    if jq -e --arg n "$name" '.items[] | select(.metadata.name == $n)
        | .metadata.annotations["karpenter.sh/do-not-disrupt"] // empty' <<<"$pods_json" >/dev/null; then
      violation "idle pod $name carries karpenter.sh/do-not-disrupt"
    fi
    curl -fsS -X POST -d '{}' "$sim/_sim/runners/$name/online" >/dev/null || fail "bringing runner $name online"
    online[$name]=1
  done < <(jq -r '.items[] | select(.status.phase == "Running" and (.metadata.deletionTimestamp | not))
      | .metadata.labels["octorun.io/runner"]' <<<"$pods_json")
  return 0
}

running_jobs() { jq '[.jobs[] | select(.state == "running")] | length' <<<"$state_json"; }
busy_pods() {
  jq '[.items[] | select(.metadata.labels["octorun.io/busy"] == "true" and .status.phase == "Running")] | length' \
    <<<"$pods_json"
}
all_busy() { [[ $(running_jobs) -eq $1 && $(busy_pods) -eq $1 ]]; }
# "node runner" for each running job.
placement() {
  jq -r --argjson s "$state_json" '
    [$s.jobs[] | select(.state == "running") | .runner_name] as $busy
    | .items[] | select(.metadata.labels["octorun.io/runner"] as $r | $busy | index($r))
    | "\(.spec.nodeName) \(.metadata.labels["octorun.io/runner"])"' <<<"$pods_json" | sort
}
pool_nodes() { kubectl get nodes -l karpenter.sh/nodepool -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
node_gone() { ! kubectl get node "$1" >/dev/null 2>&1; }
nothing_left() {
  [[ -z $(pool_nodes) && -z $(kubectl get nodeclaims -o name) &&
    -z $(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o name) ]]
}
# end_job RUNNER: the job this runner runs completes (its pod checked just before).
end_job() {
  local id
  observe
  id=$(jq -r --arg n "$1" '.jobs[] | select(.state == "running" and .runner_name == $n) | .id' <<<"$state_json")
  [[ -n $id ]] || fail "runner $1 runs no job"
  curl -fsS -X POST -d '{}' "$sim/_sim/jobs/$id/complete" >/dev/null || fail "completing job $id"
}
consolidatable() {  # the NodeClaim of node $1 is Consolidatable
  [[ $(kubectl get nodeclaims -o json | jq -r --arg n "$1" '.items[] | select(.status.nodeName == $n)
      | .status.conditions[]? | select(.type == "Consolidatable") | .status') == True ]]
}
# How many times Karpenter has evaluated multi-node consolidation.
evaluations() {
  curl -fsS "http://127.0.0.1:$(sed -n 's/^metrics_port=//p' "$dir/karpenter/ports")/metrics" | awk '/^karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count/ &&
      /consolidation_type="multi"/ { n += $NF } END { print n + 0 }'
}
evaluated_since() { (($(evaluations) >= $1)); }

step "starting a control plane, Karpenter, the simulator and the manager"
start_stack busy-runners

# Everything that happens to runner pods, Runners and nodes, with the time it was seen.
watch_log() {  # watch_log FILE KUBECTL-ARGS...: one line per event: seconds, type, object
  local file=$1
  shift
  # $! is kubectl's: jq ends with its output.
  kubectl get "$@" --watch --output-watch-events -o json 2>>"$work/watch.err" \
    > >(jq --unbuffered -c '{t: now, type, o: .object}' >"$file") &
  pids+=($!)
}
watch_log "$work/pods.jsonl" -n "$ns" pods -l "octorun.io/runnerset=$set"
watch_log "$work/runners.jsonl" -n "$ns" runners
watch_log "$work/nodes.jsonl" nodes -l karpenter.sh/nodepool

apply_set

step "1. $jobs jobs: busy runners on Karpenter's nodes"
curl -fsS -X POST -d "{\"repository\":\"$org/app\",\"labels\":[\"self-hosted\",\"$set\"],\"duration_ms\":3600000,\"count\":$jobs}" \
  "$sim/_sim/jobs" >/dev/null
wait_until 180 "$jobs busy runners" all_busy "$jobs"
mapfile -t layout < <(placement)
mapfile -t nodes < <(printf '%s\n' "${layout[@]}" | cut -d' ' -f1 | uniq)
step "   busy runners by node: $(printf '%s\n' "${layout[@]}" | cut -d' ' -f1 | uniq -c | xargs)"
((${#nodes[@]} >= 3)) || fail "$jobs runners of 3 CPUs took ${#nodes[@]} nodes of 8 CPUs, not 3 or more"

step "2. one node emptied, one busy runner left on each other node"
emptied=${nodes[0]}
kept=("${nodes[@]:1}")
for line in "${layout[@]}"; do
  if [[ ${line% *} == "$emptied" ]]; then end_job "${line#* }"; fi
done
declare -A keeper=()
for line in "${layout[@]}"; do
  node=${line% *} runner=${line#* }
  if [[ $node == "$emptied" ]]; then continue; fi
  if [[ -z ${keeper[$node]:-} ]]; then keeper[$node]=$runner; else end_job "$runner"; fi
done
wait_until 60 "${#kept[@]} busy runners left" all_busy "${#kept[@]}"
wait_until 150 "consolidation to remove the emptied node $emptied" node_gone "$emptied"
for node in "${kept[@]}"; do
  wait_until 60 "node $node's NodeClaim to be Consolidatable" consolidatable "$node"
done
since=$(($(evaluations) + 2))
wait_until 90 "two more evaluations of multi-node consolidation" evaluated_since "$since"
for node in "${kept[@]}"; do
  kubectl get node "$node" >/dev/null 2>&1 || fail "node $node with busy runner ${keeper[$node]} was removed"
done
all_busy "${#kept[@]}" || fail "the busy runners on ${kept[*]} did not all stay busy"
step "   node $emptied reclaimed; ${kept[*]} kept with one busy runner each"

step "3. the last jobs end: every node is reclaimed"
for node in "${kept[@]}"; do end_job "${keeper[$node]}"; done
wait_until 180 "every runner pod, node and NodeClaim to be gone" nothing_left

# What the watches saw.
failed_runners=$(jq -r 'select(.o.status.phase == "Failed") | "\(.o.metadata.name) \(.o.status.reason)"' \
  "$work/runners.jsonl" | sort -u)
[[ -z $failed_runners ]] || violation "Runners turned Failed: $failed_runners"
# A pod seen going (deleting or deleted) before its job completed on the simulator.
final_state=$(curl -fsS "$sim/_sim/state")
early=$(jq -r --argjson s "$final_state" '
  select(.type == "DELETED" or .o.metadata.deletionTimestamp)
  | .o.metadata.labels["octorun.io/runner"] as $r | .t as $t
  | $s.jobs[] | select(.runner_name == $r and (.completed_at_ms == 0 or .completed_at_ms > $t * 1000))
  | $r' "$work/pods.jsonl" | sort -u)
[[ -z $early ]] || violation "pods went before their job completed: $early"
evicted=$(kubectl get events -A --field-selector reason=Evicted -o jsonpath='{.items[*].involvedObject.name}')
[[ -z $evicted ]] || violation "Karpenter evicted runner pods: $evicted"
runner_pods=$(jq -r '.o.metadata.name' "$work/pods.jsonl" | sort -u | wc -l)
launched=$(jq -r '.o.metadata.name' "$work/nodes.jsonl" | sort -u | wc -l)
terminating=$(kubectl get events -A --field-selector reason=DisruptionTerminating -o json |
  jq -r '[.items[] | select(.involvedObject.kind == "Node") | .message] | group_by(.) | map("\(length)× \(.[0])") | join("; ")')
blocked=$(kubectl get events -A --field-selector reason=DisruptionBlocked -o json |
  jq -r '[.items[] | select(.involvedObject.kind == "Node") | .message] | unique | join("; ")')
step "   measured: $runner_pods runner pods, $launched nodes launched, consolidations on nodes: ${terminating:-none}"
step "   DisruptionBlocked on nodes: ${blocked:-none}"
((${#violations[@]} == 0)) || fail "${#violations[@]} violation(s)"
step "passed in $((SECONDS - began)) s: 0 busy runners disrupted, $launched of $launched nodes reclaimed"
