#!/usr/bin/env bash
# The real-shaped cluster end to end (ctest karpenter.nodes; test/controlplane/karpenter.md):
# on a control plane of its own with Karpenter's kwok provider (karpenter.sh up),
#   1. a pod with real requests that fits no node makes Karpenter launch a NodeClaim
#      of the small shape; its Node appears only after the registration delay, turns
#      Ready, the pod binds there and is Running only after the cold image pull;
#   2. deleting the pod lets consolidation remove the empty node;
#   3. a pod annotated karpenter.sh/do-not-disrupt=true keeps its underutilized
#      node (Karpenter reports the block), and once the annotation is gone
#      consolidation replaces that node (so the block was the annotation's).
# Every wait is on observed state with a deadline; delays are shortened here.
#   karpenter_test.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
controlplane=$here/../controlplane
work=$(mktemp -d)
dir=$work/cluster
cleanup() {
  "$controlplane/cluster.sh" stop "$dir" || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "karpenter_test: FAIL: $*" >&2
  {
    echo "--- nodeclaims, nodes, pods"
    kubectl get nodeclaims,nodes -o wide
    kubectl get pods -A -o wide
    echo "--- events"
    kubectl get events -A --sort-by=.lastTimestamp | tail -n 40
    echo "--- karpenter log (tail)"
    tail -n 40 "$dir/logs/karpenter.log"
  } >&2 2>&1 || true
  exit 1
}
step() { echo "karpenter_test: $(date -u +%T) $*"; }

# wait_until SECONDS DESCRIPTION COMMAND...: COMMAND succeeds before the deadline.
wait_until() {
  local within=$1 what=$2
  local deadline=$((SECONDS + within))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after $within s waiting for $what"
    sleep 0.2
  done
}

# The delays this test runs with (karpenter.sh's settings).
export KARPENTER_NODEPOOL=runners KARPENTER_NODE_REGISTRATION_DELAY=5s KARPENTER_CONSOLIDATE_AFTER=5s
export KARPENTER_INSTANCE_TYPES="c-4x-amd64-linux c-16x-amd64-linux" KARPENTER_CPU_LIMIT=40
export KARPENTER_BATCH_IDLE_DURATION=2s KARPENTER_BATCH_MAX_DURATION=5s
export KWOK_IMAGE_PULL_COLD_MS=4000 KWOK_IMAGE_PULL_COLD_MAX_MS=5000
export KWOK_IMAGE_PULL_CACHED_MS=0 KWOK_IMAGE_PULL_CACHED_MAX_MS=200
export KWOK_SANDBOX_MS=1000 KWOK_SANDBOX_MAX_MS=2000 KWOK_CONTAINER_START_MS=500 KWOK_CONTAINER_START_MAX_MS=1500
registration_s=5 cold_pull_s=4

step "starting a control plane and Karpenter"
"$controlplane/cluster.sh" start "$dir" $$
# shellcheck disable=SC1091
source "$dir/env"
kubectl() { "$OCTORUN_TEST_BIN/kubectl" "$@"; }
"$controlplane/karpenter.sh" up "$dir" $$
ns=karpenter-test
kubectl create namespace "$ns" >/dev/null
wait_until 60 "the default ServiceAccount in $ns" kubectl -n "$ns" get serviceaccount default

# pod NAME CPU [ANNOTATIONS...]: a runner-like pod that only a NodePool node
# takes, as YAML (several go to one `kubectl apply`: one batch for Karpenter).
pod() {
  local name=$1 cpu=$2 annotations=""
  shift 2
  for a in "$@"; do annotations+="    ${a%%=*}: \"${a#*=}\""$'\n'; done
  cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $name
  annotations:
    octorun.io/test: karpenter
$annotations
spec:
  nodeSelector: {karpenter.sh/nodepool: runners}
  terminationGracePeriodSeconds: 0
  containers:
  - name: runner
    image: ghcr.io/actions/actions-runner:latest
    resources:
      requests: {cpu: "$cpu", memory: 2Gi}
EOF
}

podfield() { kubectl -n "$ns" get pod "$1" -o jsonpath="$2"; }
is_running() { [[ $(podfield "$1" '{.status.phase}') == Running ]]; }
nodeclaims() { kubectl get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
pool_nodes() { kubectl get nodes -l karpenter.sh/nodepool -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
one_nodeclaim() { [[ $(nodeclaims | wc -l) -eq 1 ]]; }
one_pool_node() { [[ $(pool_nodes | wc -l) -eq 1 ]]; }
no_pool_node() { [[ -z $(pool_nodes) && -z $(nodeclaims) ]]; }
node_ready() { [[ $(kubectl get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]; }
node_gone() { ! kubectl get node "$1" >/dev/null 2>&1; }
epoch() { date -u -d "$1" +%s; }
condition_time() { epoch "$(podfield "$1" "{.status.conditions[?(@.type==\"$2\")].lastTransitionTime}")"; }
blocked_by_annotation() {
  kubectl get events -A --field-selector "reason=DisruptionBlocked,involvedObject.name=$1" \
    -o jsonpath='{.items[*].message}' | grep -q 'karpenter.sh/do-not-disrupt'
}

step "1. a pod that fits no node makes Karpenter launch one"
pod first 3 | kubectl -n "$ns" apply -f - >/dev/null
wait_until 60 "a NodeClaim for the pending pod" one_nodeclaim
claim=$(nodeclaims)
wait_until 60 "the NodeClaim's Node" one_pool_node
node=$(pool_nodes)
claimed=$(epoch "$(kubectl get nodeclaim "$claim" -o jsonpath='{.metadata.creationTimestamp}')")
registered=$(epoch "$(kubectl get node "$node" -o jsonpath='{.metadata.creationTimestamp}')")
# Timestamps have whole seconds: allow one for rounding.
((registered - claimed >= registration_s - 1)) ||
  fail "node $node appeared $((registered - claimed)) s after its NodeClaim, before the ${registration_s} s registration delay"
shape=$(kubectl get node "$node" -o jsonpath='{.metadata.labels.node\.kubernetes\.io/instance-type}')
[[ $shape == c-4x-amd64-linux ]] || fail "a 3-CPU pod got a $shape node, not the small shape c-4x-amd64-linux"
wait_until 60 "node $node Ready" node_ready "$node"
wait_until 60 "pod first Running" is_running first
[[ $(podfield first '{.spec.nodeName}') == "$node" ]] || fail "pod first is not on the new node $node"
sandbox=$(condition_time first PodReadyToStartContainers)
pulled=$(condition_time first octorun.io/ImagesPulled)
ready=$(condition_time first Ready)
((pulled - sandbox >= cold_pull_s - 1)) || fail "the cold image pull took $((pulled - sandbox)) s, not >= ${cold_pull_s} s"
((ready >= pulled)) || fail "pod first was Ready before its images were pulled"
step "   node $node ($shape) registered $((registered - claimed)) s after NodeClaim $claim; pull $((pulled - sandbox)) s"

step "2. the empty node is consolidated away"
kubectl -n "$ns" delete pod first --wait=true --timeout=60s >/dev/null
wait_until 120 "consolidation to remove the empty node $node" no_pool_node

step "3. do-not-disrupt keeps an underutilized node"
# Launched together, one large node takes both; without the big pod the small
# one leaves it underutilized: a cheaper small node would do.
{
  pod keeper 1 karpenter.sh/do-not-disrupt=true octorun.io/image-cached=true
  pod big 12
} | kubectl -n "$ns" apply -f - >/dev/null
both_running() { is_running keeper && is_running big; }
wait_until 60 "pods keeper and big Running" both_running
node=$(podfield keeper '{.spec.nodeName}')
[[ $(podfield big '{.spec.nodeName}') == "$node" ]] || fail "pods keeper and big were not launched onto one node"
shape=$(kubectl get node "$node" -o jsonpath='{.metadata.labels.node\.kubernetes\.io/instance-type}')
[[ $shape == c-16x-amd64-linux ]] || fail "13 CPUs of pods got a $shape node, not the large shape"
pull=$(($(condition_time keeper octorun.io/ImagesPulled) - $(condition_time keeper PodReadyToStartContainers)))
((pull < cold_pull_s - 1)) || fail "the cached image pull took $pull s, as long as a cold one"
kubectl -n "$ns" delete pod big --wait=true --timeout=60s >/dev/null
wait_until 120 "Karpenter to report node $node's disruption blocked by do-not-disrupt" blocked_by_annotation "$node"
[[ $(pool_nodes) == "$node" ]] || fail "node $node did not keep its place (nodes: $(pool_nodes | xargs))"
is_running keeper || fail "pod keeper is no longer Running"
step "   node $node kept; now without the annotation"
kubectl -n "$ns" annotate pod keeper karpenter.sh/do-not-disrupt- >/dev/null
wait_until 150 "consolidation to replace the underutilized node $node" node_gone "$node"
step "passed"
