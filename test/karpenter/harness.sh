# The stack the Karpenter end-to-end tests run on (sourced by busy_runners_test.sh
# and warm_nodes_test.sh): a control plane of its own, Karpenter's kwok provider
# (karpenter.sh, with the KARPENTER_* and KWOK_* settings the test exported), the
# octorun CRDs, the GitHub simulator and the octorun binary as host processes.
#
# Before sourcing, the test sets octorun, simulator, crds, ns (the namespace the
# manager serves) and defines wait_until SECONDS DESCRIPTION COMMAND... and fail.
# It sets here, controlplane, work, dir, pids, began; start_stack IDENTITY starts
# everything (kubectl, sim and sim_url are defined then), apply_set makes the
# tests' RunnerSet (set and org set by the test), and cleanup, on exit, stops it.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
controlplane=$here/../controlplane
work=$(mktemp -d)
dir=$work/cluster
pids=()
cleanup() {
  local p
  # Killed, as the binary tests' harness does (a manager's orderly stop may wait
  # on a long poll), and reaped before the cluster goes.
  for p in "${pids[@]}"; do
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  "$controlplane/cluster.sh" stop "$dir" || true
  rm -rf "$work"
}
trap cleanup EXIT
began=$SECONDS

# The simulator's address, from its --endpoints-file (renamed into place
# whole once it listens): empty until then.
sim_url() { jq -r '.baseURL // empty' "$work/simulator.json" 2>/dev/null || true; }
listening() { [[ -n $(sim_url) ]]; }

# start_stack IDENTITY: the control plane, Karpenter, the CRDs, the simulator
# (its URL in sim), the namespace with a credentials Secret `github`, and the
# manager leading as IDENTITY.
start_stack() {
  "$controlplane/cluster.sh" start "$dir" $$
  # shellcheck disable=SC1091
  source "$dir/env"
  kubectl() { "$OCTORUN_TEST_BIN/kubectl" "$@"; }
  "$controlplane/karpenter.sh" up "$dir" $$
  kubectl apply -f "$crds" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s crd/runnersets.octorun.io crd/runners.octorun.io >/dev/null

  "$simulator" --port 0 --bind 127.0.0.1 --org "$org" --endpoints-file "$work/simulator.json" \
    >"$work/simulator.log" 2>&1 &
  pids+=($!)
  wait_until 30 "the simulator to listen" listening
  sim=$(sim_url)

  kubectl create namespace "$ns" >/dev/null
  kubectl -n "$ns" create secret generic github --from-literal=github_token=ghp_simulator >/dev/null
  OCTORUN_WEBHOOK_SECRET=unused "$octorun" --kubeconfig="$dir/kubeconfig" --namespace="$ns" \
    --lease-namespace="$ns" --identity="$1" --webhook-bind=127.0.0.1 --webhook-port=0 \
    --health-bind=127.0.0.1 --health-port=0 --metrics-bind=127.0.0.1 --metrics-port=0 --log-format=text \
    --scheduler.max-threads=2 --github-http-hosts=127.0.0.1 --allow-sets-without-class \
    --endpoints-file="$work/endpoints.json" >"$work/manager.log" 2>&1 &
  pids+=($!)
  wait_until 60 "the manager to lead" leading
}

# The manager's /readyz says it leads (its URL from --endpoints-file).
leading() {
  local health
  health=$(jq -r '.health // empty' "$work/endpoints.json" 2>/dev/null) || return 1
  [[ -n $health && $(curl -fsS "$health/readyz" 2>/dev/null) == leading ]]
}

# apply_set [SPEC-LINE]: the Listener RunnerSet `set` of organisation `org`,
# maxRunners 10, whose runner pods ask for 3 CPUs and 2 GiB on the NodePool
# `runners` (SPEC-LINE, e.g. "startTimeTarget: {p95Seconds: 5}", added to
# its spec); returns once the manager has its message session open.
apply_set() {
  kubectl -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: octorun.io/v1alpha1
kind: RunnerSet
metadata:
  name: $set
spec:
  scopeURL: $sim/$org
  credentialsSecretName: github
  intake: Listener
  runnerLabels: [$set]
  maxRunners: 10
  ${1:-}
  template:
    spec:
      nodeSelector: {karpenter.sh/nodepool: runners}
      containers:
      - name: runner
        image: ghcr.io/actions/actions-runner:2.330.0
        resources:
          requests: {cpu: "3", memory: 2Gi}
EOF
  wait_until 60 "the manager's message session with the simulator" sessions
}
sessions() { curl -fsS "$sim/_sim/state" | jq -e '.sessions >= 1' >/dev/null; }
