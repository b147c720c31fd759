#!/usr/bin/env bash
# Warm nodes on Karpenter, end to end (ctest karpenter.warm_nodes; docs/scaling.md
# "Warm nodes"): the octorun binary, the GitHub simulator binary and Karpenter's kwok
# provider (feature gate CapacityBuffer=true) on a control plane of their own. A
# RunnerSet with a 5 s start-time target whose runner pods ask for 3 CPUs on the
# NodePool `runners` (one 4-CPU shape: a runner a node; nodes register 20 s after
# launch):
#   1. a job: its runner pod waits for a node (a node start-up the set observes);
#      the set applies a PodTemplate shaped like its runner and a CapacityBuffer of
#      chunks of it (WarmNodesReady True, status.startTime.warmNodes);
#   2. Karpenter launches nodes for the buffer: once the set's pods run, pool nodes
#      stand empty beside them;
#   3. another job: the runner pod the set makes next binds to a node that was there
#      before the pod, within seconds, not after the registration delay.
# Every wait is on observed state with a deadline.
#   warm_nodes_test.sh OCTORUN_BINARY GITHUB_SIMULATOR_BINARY CRDS_DIR
set -euo pipefail

[[ $# -eq 3 ]] || { sed -n '2,17p' "$0" >&2; exit 2; }
octorun=$1 simulator=$2 crds=$3

ns=warm-nodes set=warm org=warmnodes
# shellcheck source=harness.sh
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
registration=20
step() { echo "warm_nodes_test: $(date -u +%T) $*"; }
fail() {
  echo "warm_nodes_test: FAIL: $*" >&2
  {
    echo "--- nodeclaims, nodes, pods, runners, buffers"
    kubectl get nodeclaims,nodes -o wide
    kubectl -n "$ns" get pods,runners,podtemplates,capacitybuffers -o wide
    kubectl -n "$ns" get capacitybuffers -o yaml | tail -n 30
    kubectl -n "$ns" get runnerset "$set" -o jsonpath='{.status.startTime}{"\n"}{.status.conditions}{"\n"}'
    echo "--- manager log (tail)"
    tail -n 30 "$work/manager.log"
    echo "--- karpenter log (tail)"
    tail -n 30 "$dir/logs/karpenter.log"
  } >&2 2>&1 || true
  exit 1
}

export KARPENTER_NODEPOOL=runners KARPENTER_NODE_REGISTRATION_DELAY=${registration}s KARPENTER_CONSOLIDATE_AFTER=30s
export KARPENTER_INSTANCE_TYPES=c-4x-amd64-linux KARPENTER_CPU_LIMIT=48
export KARPENTER_BATCH_IDLE_DURATION=1s KARPENTER_BATCH_MAX_DURATION=5s
export KWOK_IMAGE_PULL_COLD_MS=1000 KWOK_IMAGE_PULL_COLD_MAX_MS=2000
export KWOK_SANDBOX_MS=200 KWOK_SANDBOX_MAX_MS=500 KWOK_CONTAINER_START_MS=100 KWOK_CONTAINER_START_MAX_MS=300

wait_until() {  # wait_until SECONDS DESCRIPTION COMMAND...: each round plays the runner process first
  local within=$1 what=$2
  local deadline=$((SECONDS + within))
  shift 2
  until bring_online && "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after $within s waiting for $what"
    sleep 0.5
  done
}
declare -A online=()
# The runner process: a pod that runs brings its runner online.
bring_online() {
  [[ -n ${sim:-} ]] || return 0
  local name
  while read -r name; do
    [[ -n $name && -z ${online[$name]:-} ]] || continue
    curl -fsS -X POST -d '{}' "$sim/_sim/runners/$name/online" >/dev/null || fail "bringing runner $name online"
    online[$name]=1
  done < <(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o json |
    jq -r '.items[] | select(.status.phase == "Running" and (.metadata.deletionTimestamp | not))
      | .metadata.labels["octorun.io/runner"]')
  return 0
}
buffer_asks() {  # the CapacityBuffer asks for one chunk or more, of the set's PodTemplate
  kubectl -n "$ns" get podtemplate "octorun-warm-$set" >/dev/null &&
    (($(kubectl -n "$ns" get capacitybuffer "octorun-warm-$set" -o jsonpath='{.spec.replicas}') >= 1))
}
warm_nodes_said() {
  [[ $(kubectl -n "$ns" get runnerset "$set" \
    -o jsonpath='{.status.conditions[?(@.type=="WarmNodesReady")].status}') == True ]] &&
    (($(kubectl -n "$ns" get runnerset "$set" -o jsonpath='{.status.startTime.warmNodes}') >= 1))
}
runner_pods_running() {
  local pods
  pods=$(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o json)
  (($(jq '.items | length' <<<"$pods") >= 2)) &&
    (($(jq '[.items[] | select(.status.phase != "Running")] | length' <<<"$pods") == 0))
}
# Ready pool nodes that hold none of the set's pods.
spare_nodes() {
  local used
  used=$(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}')
  kubectl get nodes -l karpenter.sh/nodepool -o json | jq -r --arg used "$used" '
    ($used | split("\n")) as $u | .items[]
    | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))
    | .metadata.name | select(. as $n | $u | index($n) | not)'
}
has_spare_nodes() { [[ -n $(spare_nodes) ]]; }
new_pod_scheduled() {  # a runner pod not in $before is scheduled
  kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o json | jq -e --arg before "$before" '
    ($before | split(" ")) as $b | [.items[] | select(.metadata.name as $n | $b | index($n) | not)
      | select(.spec.nodeName)] | length > 0'
}

step "starting a control plane, Karpenter, the simulator and the manager"
start_stack warm-nodes
kubectl wait --for=condition=Established --timeout=60s crd/capacitybuffers.autoscaling.x-k8s.io >/dev/null

apply_set "startTimeTarget: {p95Seconds: 5}"
queue_job() {
  curl -fsS -X POST -d "{\"repository\":\"$org/app\",\"labels\":[\"self-hosted\",\"$set\"],\"duration_ms\":3600000,\"count\":1}" \
    "$sim/_sim/jobs" >/dev/null
}

step "1. a job: its runner waits for a node; the set asks for warm nodes"
queue_job
wait_until 120 "a PodTemplate and a CapacityBuffer asking for chunks" buffer_asks
wait_until 60 "WarmNodesReady True and status.startTime.warmNodes" warm_nodes_said
step "   buffer: $(kubectl -n "$ns" get capacitybuffer "octorun-warm-$set" -o jsonpath='{.spec.replicas}') chunks;" \
  "startTime $(kubectl -n "$ns" get runnerset "$set" -o jsonpath='{.status.startTime}')"

step "2. Karpenter launches nodes for the buffer"
wait_until 180 "the set's runner pods to run" runner_pods_running
wait_until 120 "a Ready pool node that holds no runner pod" has_spare_nodes
wait_until 60 "the set's runner pods to run" runner_pods_running
step "   spare nodes: $(spare_nodes | xargs)"

step "3. another job: the next runner pod binds to a node that was there"
before=$(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o jsonpath='{.items[*].metadata.name}')
queue_job
wait_until 60 "the next runner pod to be scheduled" new_pod_scheduled
pod=$(kubectl -n "$ns" get pods -l "octorun.io/runnerset=$set" -o json | jq -c --arg before "$before" '
  ($before | split(" ")) as $b | [.items[] | select(.metadata.name as $n | $b | index($n) | not)
    | select(.spec.nodeName)][0]')
name=$(jq -r '.metadata.name' <<<"$pod") node=$(jq -r '.spec.nodeName' <<<"$pod")
created=$(jq -r '.metadata.creationTimestamp | fromdateiso8601' <<<"$pod")
scheduled=$(jq -r '.status.conditions[] | select(.type == "PodScheduled") | .lastTransitionTime | fromdateiso8601' <<<"$pod")
node_created=$(kubectl get node "$node" -o json | jq -r '.metadata.creationTimestamp | fromdateiso8601')
waited=$((scheduled - created))
step "   pod $name scheduled on $node ${waited} s after its creation (node made $((created - node_created)) s before it)"
((node_created <= created)) || fail "pod $name bound to node $node, made after it: it waited for a node"
((waited < registration / 2)) || fail "pod $name waited $waited s to be scheduled (registration delay $registration s)"
step "passed in $((SECONDS - began)) s"
