#!/usr/bin/env bash
# A real-shaped node layer on a running test control plane (cluster.sh start DIR):
# Karpenter with its kwok cloud provider as the node autoscaler, and nodes that
# take time to do what a real node does to a pod (karpenter.md says what is
# modelled and where the default figures come from).
#
#   karpenter.sh up DIR [OWNER_PID]   install the CRDs, start Karpenter, a kwok for its
#                                     nodes and the node lifecycle controller; apply the
#                                     KWOKNodeClass and the NodePool
#   karpenter.sh down DIR             stop them (cluster.sh stop does it too)
#
# Settings (environment, read by `up`; defaults in karpenter.md):
#   KARPENTER_NODE_REGISTRATION_DELAY  a launched node's Node appears after this (60s)
#   KARPENTER_INSTANCE_TYPES           the NodePool's shapes, space separated
#                                      (c-4x-amd64-linux c-16x-amd64-linux)
#   KARPENTER_CPU_LIMIT                the NodePool's limits.cpu (64)
#   KARPENTER_CONSOLIDATE_AFTER        disruption.consolidateAfter (30s)
#   KARPENTER_BATCH_IDLE_DURATION      Karpenter's --batch-idle-duration (1s)
#   KARPENTER_BATCH_MAX_DURATION       Karpenter's --batch-max-duration (10s)
#   KWOK_SANDBOX_MS / _MAX_MS          bound to ContainerCreating (1000 / 2000)
#   KWOK_IMAGE_PULL_COLD_MS / _MAX_MS  image pull on a node without it (15000 / 25000)
#   KWOK_IMAGE_PULL_CACHED_MS / _MAX_MS  with it: the pod annotated
#                                      octorun.io/image-cached=true (0 / 500)
#   KWOK_CONTAINER_START_MS / _MAX_MS  image pulled to Running (500 / 1500)
#   KARPENTER_NODEPOOL                 the NodePool's name (runners)
#   KARPENTER_LOG_LEVEL                Karpenter's --log-level (info)
#
# Karpenter's nodes carry the label karpenter.sh/nodepool; the cluster's own
# kwok leaves them alone and a kwok of this script runs them with the slow pod
# stages above, so every other node and pod keeps the fast stages. Pods reach
# these nodes by a nodeSelector on karpenter.sh/nodepool=$KARPENTER_NODEPOOL.
# A reaper runs `down` when OWNER_PID (default: the caller) disappears.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
dir=${2:-}
usage() { sed -n '2,32p' "$0" >&2; exit 2; }
[[ -n "$cmd" && -n "$dir" ]] || usage

log() { echo "karpenter.sh: $*" >&2; }
# free_port, wait_for, launch, kill_named, start_reaper
source "$here/daemons.sh"

nodepool=${KARPENTER_NODEPOOL:-runners}
names=(karpenter karpenter-kwok karpenter-node-lifecycle)

ms() {  # ms NAME DEFAULT: a non-negative integer setting
  local v=${!1:-$2}
  [[ $v =~ ^[0-9]+$ ]] || { log "$1 must be milliseconds (a whole number), not '$v'"; exit 2; }
  echo "$v"
}

duration() {  # duration NAME DEFAULT: a Go/Kubernetes duration such as 60s or 1m30s
  local v=${!1:-$2}
  [[ $v =~ ^([0-9]+(ms|s|m|h))+$ ]] || { log "$1 must be a duration such as 30s or 1m, not '$v'"; exit 2; }
  echo "$v"
}

# Node stages and the pod stages that need no delay, from the fast stages that
# build.sh took from the pinned kwok module (one YAML document each).
fast_stages() {
  awk -v want=" $* " '
    /^---$/ { if (keep) printf "---\n%s", doc; doc = ""; keep = 0; next }
    { doc = doc $0 "\n" }
    /^  name: / && index(want, " " $2 " ") { keep = 1 }
    END { if (keep) printf "---\n%s", doc }
  ' "$bin/kwok-stages.yaml"
}

# A pod stage's delay: uniformly between MIN and MAX milliseconds, or exactly
# the pod's annotation KEY if set (a duration; as the jitter too, since kwok
# takes the jitter bound whenever it is below the duration).
delay() {  # delay MIN MAX KEY
  cat <<EOF
  delay:
    durationMilliseconds: $1
    jitterDurationMilliseconds: $2
    durationFrom:
      expressionFrom: '.metadata.annotations["$3"]'
    jitterDurationFrom:
      expressionFrom: '.metadata.annotations["$3"]'
EOF
}

# What a node does to a pod bound to it: create its sandbox (ContainerCreating),
# pull its images (cold, or cached on this node), start its containers.
pod_stages() {
  local sandbox=$1 sandbox_max=$2 cold=$3 cold_max=$4 cached=$5 cached_max=$6 start=$7 start_max=$8
  cat <<EOF
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: octorun-pod-sandbox
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.podIP', operator: DoesNotExist}
$(delay "$sandbox" "$sandbox_max" sandbox.stage.octorun.io/delay)
  next:
    event: {type: Normal, reason: Pulling, message: Pulling the pod's images (kwok stage)}
    statusTemplate: |
      {{ \$now := Now }}
      conditions:
      - {lastTransitionTime: {{ \$now | Quote }}, status: "True", type: PodReadyToStartContainers}
      - {lastTransitionTime: {{ \$now | Quote }}, status: "True", type: Initialized}
      - {lastTransitionTime: {{ \$now | Quote }}, status: "False", type: ContainersReady, reason: ContainersNotReady}
      - {lastTransitionTime: {{ \$now | Quote }}, status: "False", type: Ready, reason: ContainersNotReady}
      {{ if .spec.initContainers }}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state: {terminated: {exitCode: 0, reason: Completed, startedAt: {{ \$now | Quote }}, finishedAt: {{ \$now | Quote }}}}
      {{ end }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state: {waiting: {reason: ContainerCreating}}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Pending
      startTime: {{ \$now | Quote }}
EOF
  local kind
  for kind in cold cached; do
    if [[ $kind == cold ]]; then
      local match="{key: '.metadata.annotations[\"octorun.io/image-cached\"]', operator: DoesNotExist}"
      local min=$cold max=$cold_max
    else
      local match="{key: '.metadata.annotations[\"octorun.io/image-cached\"]', operator: In, values: ['true']}"
      local min=$cached max=$cached_max
    fi
    cat <<EOF
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: octorun-pod-image-pull-$kind
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.phase', operator: In, values: [Pending]}
    - {key: '.status.podIP', operator: Exists}
    - {key: '.status.conditions.[] | select( .type == "octorun.io/ImagesPulled" ) | .status', operator: DoesNotExist}
    - $match
$(delay "$min" "$max" image-pull.stage.octorun.io/delay)
  next:
    event: {type: Normal, reason: Pulled, message: Pulled the pod's images ($kind; kwok stage)}
    statusTemplate: |
      conditions:
      - {lastTransitionTime: {{ Now | Quote }}, status: "True", type: octorun.io/ImagesPulled, reason: $kind}
EOF
  done
  cat <<EOF
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: octorun-pod-container-start
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - {key: '.metadata.deletionTimestamp', operator: DoesNotExist}
    - {key: '.status.phase', operator: In, values: [Pending]}
    - {key: '.status.conditions.[] | select( .type == "octorun.io/ImagesPulled" ) | .status', operator: In, values: ['True']}
$(delay "$start" "$start_max" container-start.stage.octorun.io/delay)
  next:
    event: {type: Normal, reason: Started, message: Started the pod's containers (kwok stage)}
    statusTemplate: |
      {{ \$now := Now }}
      conditions:
      - {lastTransitionTime: {{ \$now | Quote }}, status: "True", type: ContainersReady}
      - {lastTransitionTime: {{ \$now | Quote }}, status: "True", type: Ready}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        started: true
        state: {running: {startedAt: {{ \$now | Quote }}}}
      {{ end }}
      phase: Running
EOF
}

write_stages() {
  local sandbox sandbox_max cold cold_max cached cached_max start start_max
  # One assignment a line: set -e sees only the last substitution of a line.
  sandbox=$(ms KWOK_SANDBOX_MS 1000)
  sandbox_max=$(ms KWOK_SANDBOX_MAX_MS 2000)
  cold=$(ms KWOK_IMAGE_PULL_COLD_MS 15000)
  cold_max=$(ms KWOK_IMAGE_PULL_COLD_MAX_MS 25000)
  cached=$(ms KWOK_IMAGE_PULL_CACHED_MS 0)
  cached_max=$(ms KWOK_IMAGE_PULL_CACHED_MAX_MS 500)
  start=$(ms KWOK_CONTAINER_START_MS 500)
  start_max=$(ms KWOK_CONTAINER_START_MAX_MS 1500)
  # kwok would take a maximum below the minimum as the delay.
  ((sandbox <= sandbox_max)) || { log "KWOK_SANDBOX_MAX_MS is below KWOK_SANDBOX_MS"; exit 2; }
  ((cold <= cold_max)) || { log "KWOK_IMAGE_PULL_COLD_MAX_MS is below KWOK_IMAGE_PULL_COLD_MS"; exit 2; }
  ((cached <= cached_max)) || { log "KWOK_IMAGE_PULL_CACHED_MAX_MS is below KWOK_IMAGE_PULL_CACHED_MS"; exit 2; }
  ((start <= start_max)) || { log "KWOK_CONTAINER_START_MAX_MS is below KWOK_CONTAINER_START_MS"; exit 2; }
  {
    fast_stages node-initialize node-heartbeat-with-lease pod-complete pod-delete
    pod_stages "$sandbox" "$sandbox_max" "$cold" "$cold_max" "$cached" "$cached_max" "$start" "$start_max"
  } >"$1"
  grep -q 'name: node-initialize' "$1" || { log "no node stages in $bin/kwok-stages.yaml"; exit 1; }
}

write_nodepool() {
  local delay consolidate limit types=() t
  delay=$(duration KARPENTER_NODE_REGISTRATION_DELAY 60s)
  consolidate=$(duration KARPENTER_CONSOLIDATE_AFTER 30s)
  limit=${KARPENTER_CPU_LIMIT:-64}
  [[ $limit =~ ^[0-9]+$ ]] || { log "KARPENTER_CPU_LIMIT must be a whole number of CPUs, not '$limit'"; exit 2; }
  read -ra types <<<"${KARPENTER_INSTANCE_TYPES:-c-4x-amd64-linux c-16x-amd64-linux}"
  ((${#types[@]})) || { log "KARPENTER_INSTANCE_TYPES names no instance type"; exit 2; }
  for t in "${types[@]}"; do
    grep -q "\"name\": \"$t\"" "$karpenter/instance_types.json" ||
      { log "$t is not an instance type of Karpenter's kwok provider ($karpenter/instance_types.json)"; exit 2; }
  done
  cat >"$1" <<EOF
apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: default
spec:
  nodeRegistrationDelay: $delay
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: $nodepool
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [$(IFS=,; echo "${types[*]}")]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: kubernetes.io/os, operator: In, values: [linux]}
  limits:
    cpu: "$limit"
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: $consolidate
EOF
}

case "$cmd" in
up)
  [[ -f "$dir/env" && -f "$dir/bin" ]] || { log "$dir holds no running cluster (cluster.sh start $dir)"; exit 1; }
  [[ ! -e "$dir/karpenter" ]] || { log "$dir already runs Karpenter (karpenter.sh down $dir first)"; exit 1; }
  dir=$(cd "$dir" && pwd)
  owner=${3:-$PPID}
  bin=$(cat "$dir/bin")
  karpenter=$("$here/../tools/karpenter/build.sh" | tail -n 1)
  kubectl() { "$bin/kubectl" --kubeconfig="$dir/kubeconfig" "$@"; }
  # Every setting is checked before anything starts.
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  write_stages "$staging/kwok-stages.yaml"
  write_nodepool "$staging/nodepool.yaml"
  batch_idle=$(duration KARPENTER_BATCH_IDLE_DURATION 1s)
  batch_max=$(duration KARPENTER_BATCH_MAX_DURATION 10s)
  mkdir "$dir/karpenter"
  mv "$staging"/* "$dir/karpenter/"
  start_reaper "$owner" "$dir/karpenter" "$here/karpenter.sh" down karpenter-reaper
  # A failed start leaves nothing running.
  trap 'status=$?; rm -rf "$staging"; ((status == 0)) || { log "up failed: stopping what it started"; "$here/karpenter.sh" down "$dir"; }' EXIT

  wait_for 60 "Karpenter's CRDs (apply)" kubectl apply --server-side -f "$karpenter/crds"
  # kubectl wait fails outright while a new CRD has no conditions yet: retried.
  wait_for 60 "Karpenter's CRDs (Established)" \
    kubectl wait --for=condition=Established --timeout=5s -f "$karpenter/crds"

  # Lifts the not-ready taint the apiserver puts on a new Node once kwok marks
  # it Ready (cluster.sh lifts it by hand for its one node), as on a real cluster.
  launch karpenter-node-lifecycle "$bin/kube-controller-manager" --kubeconfig="$dir/kubeconfig" \
    --leader-elect=false --secure-port=0 --controllers=node-lifecycle-controller
  launch karpenter-kwok "$bin/kwok" --kubeconfig="$dir/kubeconfig" -c "$dir/karpenter/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-label-selector=karpenter.sh/nodepool \
    --disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom \
    --server-address=127.0.0.1:0 --node-lease-duration-seconds=40

  metrics_port=$(free_port) health_port=$(free_port)
  printf 'metrics_port=%s\nhealth_port=%s\n' "$metrics_port" "$health_port" >"$dir/karpenter/ports"
  # Flags as sigs.k8s.io/karpenter pkg/operator/options reads them at the pinned
  # version; the kubeconfig comes from KUBECONFIG (controller-runtime).
  launch karpenter env KUBECONFIG="$dir/kubeconfig" "$karpenter/karpenter-kwok" \
    --disable-leader-election=true --metrics-port="$metrics_port" --health-probe-port="$health_port" \
    --batch-idle-duration="$batch_idle" --batch-max-duration="$batch_max" \
    --feature-gates="CapacityBuffer=${KARPENTER_CAPACITY_BUFFER:-true}" --log-level="${KARPENTER_LOG_LEVEL:-info}"
  deadline=$((SECONDS + 120))
  until curl -fsS "http://127.0.0.1:$health_port/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$dir/pids/karpenter")" 2>/dev/null; then
      log "Karpenter exited; the end of $dir/logs/karpenter.log:"
      tail -n 5 "$dir/logs/karpenter.log" >&2
      exit 1
    fi
    ((SECONDS < deadline)) || { log "timed out waiting for Karpenter /readyz (logs in $dir/logs)"; exit 1; }
    sleep 0.2
  done

  kubectl apply -f "$dir/karpenter/nodepool.yaml" >/dev/null
  wait_for 60 "the KWOKNodeClass to be Ready" kubectl wait --for=condition=Ready --timeout=1s kwoknodeclass/default
  wait_for 60 "the NodePool to be Ready" kubectl wait --for=condition=Ready --timeout=1s "nodepool/$nodepool"
  log "ready: NodePool $nodepool (metrics on 127.0.0.1:$metrics_port; logs in $dir/logs)"
  ;;
down)
  [[ -d "$dir/karpenter" ]] || exit 0
  for name in "${names[@]}"; do kill_named "$name"; done
  reaper_pid=$(cat "$dir/pids/karpenter-reaper" 2>/dev/null || true)
  rm -rf "$dir/karpenter"
  rm -f "$dir/pids/karpenter-reaper"
  [[ -z "$reaper_pid" || "$reaper_pid" == "$$" || "$reaper_pid" == "$PPID" ]] ||
    kill "$reaper_pid" 2>/dev/null || true
  ;;
*)
  usage
  ;;
esac
