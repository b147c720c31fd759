#!/usr/bin/env bash
# Try the Helm chart the way a platform team installs it, on this machine:
# the local control plane (test/controlplane/cluster.sh) with its real node
# (node.sh: a kubelet on Debian's containerd), the manager's image built from
# this tree (scripts/image.sh) and imported into that node, the chart
# installed with the committed values for this cluster
# (test/deploy/real-node.values.yaml), then a team's namespace with a
# Listener-intake RunnerSet against the GitHub simulator and a few jobs.
# Runner pods go to kwok's node (nothing real is pulled or run for them).
#   scripts/try-chart.sh [--keep] [JOBS]
#     JOBS    jobs to queue (default 5)
#     --keep  leave it all running at the end and print how to look around
#             (kubectl and helm on PATH after `source DIR/env`); Ctrl-C stops it
# Needs root (the real node's kubelet and containerd, and the image build).
# Everything it starts is stopped at the end (or on Ctrl-C).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

keep=0 jobs=5
while [[ $# -gt 0 ]]; do
  case $1 in
  --keep) keep=1; shift ;;
  -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
  *)
    [[ $1 =~ ^[1-9][0-9]*$ ]] || { echo "try-chart.sh: JOBS must be a positive number, not '$1'" >&2; exit 2; }
    jobs=$1
    shift
    ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "try-chart.sh: needs root (the real node's kubelet and containerd, the image)" >&2; exit 1; }

scripts/install-deps.sh
test/controlplane/build.sh >/dev/null
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target octorun github-simulator

work=$(mktemp -d /tmp/octorun-try-chart.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  test/controlplane/cluster.sh stop "$work/cluster" || true # stops the real node too
  rm -rf "$work"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# shellcheck source=../test/controlplane/free_port.sh
source test/controlplane/free_port.sh
# shellcheck source=waits.sh
source scripts/waits.sh

say "starting the control plane and its real node"
test/controlplane/cluster.sh start "$work/cluster" $$
# shellcheck disable=SC1091
source "$work/cluster/env" # kubectl and helm first on PATH
test/controlplane/node.sh up "$work/cluster"

say "building the manager's image and importing it into the node"
archive=$(scripts/image.sh --build-dir build --tag octorun:try --output "$work/octorun-try.oci.tar" | tail -1)
test/controlplane/node.sh import "$work/cluster" "$archive"

say "starting the GitHub simulator"
build/test/simulator/github-simulator --port 0 --org acme --auto-online --endpoints-file "$work/simulator.json" \
  >"$work/simulator.log" 2>&1 &
pids+=($!)
# Its address from its --endpoints-file (renamed into place whole once it listens).
wait_until 30 "the simulator's address" endpoint "$work/simulator.json" baseURL
sim=$(endpoint "$work/simulator.json" baseURL)
echo "GitHub (simulated) at $sim"

say "helm install octorun (namespace octorun-system)"
kubectl create namespace octorun-system >/dev/null
# What the root CA publisher would make (this cluster runs none).
kubectl -n octorun-system create configmap kube-root-ca.crt --from-file=ca.crt="$OCTORUN_TEST_CA" >/dev/null
api_port=${OCTORUN_TEST_APISERVER##*:}
cat >"$work/this-run.values.yaml" <<EOF
image: {tag: try}
admission: {port: $(free_port)}
metrics: {port: $(free_port)}
probes: {port: $(free_port)}
runnerClasses: {default: {servers: ["$sim"]}}  # the chart's default class, on the simulator's GitHub
extraEnv:
- {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}
- {name: KUBERNETES_SERVICE_PORT, value: "$api_port"}
EOF
helm install octorun deploy/chart/octorun -n octorun-system \
  -f test/deploy/real-node.values.yaml -f "$work/this-run.values.yaml" --wait --timeout 300s
kubectl -n octorun-system get pods -o wide
# Admission answers once the manager has put its CA into the webhooks.
wait_until 120 "the admission webhook's CA" kubectl get validatingwebhookconfigurations \
  -l app.kubernetes.io/instance=octorun -o 'jsonpath={.items[0].webhooks[0].clientConfig.caBundle}'

say "a team's namespace, admitted by the platform: credentials and a RunnerSet (Listener intake, max 3)"
kubectl create namespace team-a >/dev/null
# The manager writes only in namespaces labelled so (tenantNamespaces.selector).
kubectl label namespace team-a octorun.io/tenant=true >/dev/null
kubectl -n team-a create secret generic github --from-literal=github_token=ghp_simulator >/dev/null
kubectl -n team-a apply -f - <<EOF
apiVersion: octorun.io/v1alpha1
kind: RunnerSet
metadata:
  name: linux
spec:
  scopeURL: $sim/acme
  credentialsSecretName: github
  intake: Listener
  runnerLabels: [linux]
  minRunners: 0
  maxRunners: 3
  template:
    spec:
      nodeSelector: {type: kwok}
      containers:
      - name: runner
        image: ghcr.io/actions/actions-runner:2.330.0
EOF
wait_until 120 "the RunnerSet's scale set" kubectl -n team-a get runnerset linux -o 'jsonpath={.status.scaleSetId}'

say "queueing $jobs jobs of 4 s on acme/app"
started=$SECONDS
curl -fsS -X POST "$sim/_sim/jobs" \
  -d "{\"repository\":\"acme/app\",\"labels\":[\"self-hosted\",\"linux\"],\"duration_ms\":4000,\"count\":$jobs}" >/dev/null
deadline=$((SECONDS + 120 + jobs * 8))
done_jobs=0
while ((SECONDS < deadline)); do
  done_jobs=$( (curl -fsS "$sim/_sim/state" | grep -o '"state":"completed"' || true) | wc -l)
  count=$(kubectl -n team-a get runners -o name | wc -l)
  printf '%4ss  jobs done %2s/%s  runners %s\n' "$((SECONDS - started))" "$done_jobs" "$jobs" "$count"
  ((done_jobs == jobs && count == 0)) && break
  sleep 1
done
kubectl -n team-a get runnerset linux
kubectl -n team-a get events --sort-by=.lastTimestamp | tail -5
if ((done_jobs != jobs)); then
  echo "try-chart.sh: not every job completed; the manager's log:" >&2
  kubectl -n octorun-system logs -l app.kubernetes.io/instance=octorun --tail=40 >&2 || true
  exit 1
fi

if ((keep)); then
  say "running; look around, then Ctrl-C to stop everything"
  cat <<EOF
  source $work/cluster/env      # KUBECONFIG; kubectl and helm on PATH
  kubectl -n team-a get runnersets,runners,pods
  kubectl -n octorun-system logs deploy/octorun-manager
  helm -n octorun-system status octorun
  curl -fsS -X POST $sim/_sim/jobs -d '{"repository":"acme/app","labels":["self-hosted","linux"],"duration_ms":4000,"count":3}'
EOF
  while sleep 3600; do :; done
fi

say "helm uninstall octorun"
helm uninstall octorun -n octorun-system --wait --timeout 120s
echo "all $jobs jobs ran on runners the chart's manager made; uninstalled"
