#!/usr/bin/env bash
# The demo: the manager against a real local control plane (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kwok) and the
# GitHub simulator. It applies a RunnerSet, queues a burst of jobs on the
# simulated GitHub, and shows runners scaling up, taking jobs and scaling
# back to zero, then prints a summary. Everything it starts is stopped at
# the end (or on Ctrl-C).
#   scripts/demo.sh [JOBS] [JOB_SECONDS] [Webhook|Listener]
#   scripts/demo.sh --real-shaped [MINUTES]
# The third argument is the RunnerSet's intake: GitHub's workflow_job
# webhooks (the default), or the runner scale-set protocol's listener.
# --real-shaped runs scripts/demo-real-shaped.sh instead: nodes from
# Karpenter that take a minute to come, image pulls and runner start-up.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[[ ${1:-} != --real-shaped ]] || exec scripts/demo-real-shaped.sh "${@:2}"
jobs=${1:-8}
job_seconds=${2:-4}
set_intake=${3:-Webhook}
case $set_intake in Webhook | Listener) ;; *) echo "intake must be Webhook or Listener, not $set_intake" >&2; exit 2 ;; esac

# shellcheck source=demo-setup.sh
source scripts/demo-setup.sh octorun github-simulator

say "starting the control plane"
test/controlplane/cluster.sh start "$work/cluster" $$
# shellcheck disable=SC1091
source "$work/cluster/env"
kubectl() { "$OCTORUN_TEST_BIN/kubectl" "$@"; }
kubectl apply -f crds/ >/dev/null
# kubectl wait fails outright while a new CRD has no conditions yet: retry.
for attempt in $(seq 1 100); do
  kubectl wait --for=condition=Established crd/runnersets.octorun.io crd/runners.octorun.io \
    crd/runnerclasses.octorun.io --timeout=60s \
    >/dev/null 2>&1 && break
  ((attempt < 100)) || { echo "the CRDs never became Established" >&2; exit 1; }
  sleep 0.2
done

say "starting the GitHub simulator"
build/test/simulator/github-simulator --port 0 --org acme --auto-online --endpoints-file "$work/simulator.json" \
  >"$work/simulator.log" 2>&1 &
pids+=($!)
wait_until 30 "the simulator's address in $work/simulator.json" endpoint "$work/simulator.json" baseURL ||
  { tail -20 "$work/simulator.log" >&2; exit 1; }
sim=$(endpoint "$work/simulator.json" baseURL)
echo "GitHub (simulated, GHES-style) at $sim"

say "starting the manager"
secret=$(openssl rand -hex 20)
OCTORUN_WEBHOOK_SECRET=$secret build/cmd/octorun --kubeconfig="$KUBECONFIG" --log-format=text \
  --webhook-bind=127.0.0.1 --webhook-port=0 --health-bind=127.0.0.1 --health-port=0 --metrics-bind=127.0.0.1 --metrics-port=0 \
  --lease-namespace=default --github-http-hosts=127.0.0.1 --platform-namespace=octorun-system \
  --endpoints-file="$work/endpoints.json" >"$work/manager.log" 2>&1 &
pids+=($!)
wait_until 60 "the manager to lead" leading "$work/endpoints.json" || { tail -20 "$work/manager.log" >&2; exit 1; }
intake=$(endpoint "$work/endpoints.json" webhookIntake)
echo "manager is leading; GitHub webhooks go to $intake"
curl -fsS -X POST "$sim/_sim/webhook" -d "{\"url\":\"$intake\",\"secret\":\"$secret\"}" >/dev/null

say "declaring a RunnerClass (the platform's) and a RunnerSet (min 0, max 5, intake $set_intake) for acme"
# The platform decides: the class admits the namespace demo on this GitHub,
# with credentials kept in the platform's namespace (docs/runner-classes.md).
kubectl create namespace octorun-system >/dev/null
kubectl -n octorun-system create secret generic github --from-literal=github_token=ghp_simulator >/dev/null
kubectl create namespace demo >/dev/null
kubectl apply -f - >/dev/null <<EOF
apiVersion: octorun.io/v1alpha1
kind: RunnerClass
metadata:
  name: demo
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: demo}}
  github:
    servers: [$sim]
    scopes: [$sim/acme]
    credentialsSecretName: github
EOF
# The tenant declares: the class, the organisation, labels, counts, template.
kubectl -n demo apply -f - <<EOF
apiVersion: octorun.io/v1alpha1
kind: RunnerSet
metadata:
  name: linux
spec:
  runnerClassName: demo
  scopeURL: $sim/acme
  intake: $set_intake
  runnerLabels: [linux]
  minRunners: 0
  maxRunners: 5
  template:
    spec:
      containers:
      - name: runner
        image: ghcr.io/actions/actions-runner:2.330.0
EOF

# Deliveries that come before the manager knows the set are turned away (no
# RunnerSet serves the repository yet): wait for its first status.
for attempt in $(seq 1 300); do
  [[ -n $(kubectl -n demo get runnerset linux -o jsonpath='{.status.selector}' 2>/dev/null) ]] && break
  ((attempt < 300)) || { echo "the RunnerSet got no status" >&2; exit 1; }
  sleep 0.2
done

# maxRunners is a bound on the Runners that are not terminal (starting,
# idle or running), at every instant: a watch sees every change of every
# Runner, and the summary reports the most that were not terminal at once.
kubectl -n demo get runners --watch --output-watch-events \
  -o jsonpath='{.type} {.object.metadata.name} {.object.status.phase}{"\n"}' >"$work/runners.watch" 2>/dev/null &
pids+=($!)

say "queueing $jobs jobs of ${job_seconds}s on acme/app"
started=$SECONDS
curl -fsS -X POST "$sim/_sim/jobs" \
  -d "{\"repository\":\"acme/app\",\"labels\":[\"self-hosted\",\"linux\"],\"duration_ms\":$((job_seconds * 1000)),\"count\":$jobs}" >/dev/null

peak=0
deadline=$((SECONDS + 60 + jobs * job_seconds * 2))
while ((SECONDS < deadline)); do
  state=$(curl -fsS "$sim/_sim/state")
  done_jobs=$( (grep -o '"state":"completed"' <<<"$state" || true) | wc -l)
  phases=$(kubectl -n demo get runners -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | sort | uniq -c | tr '\n' ' ')
  count=$(kubectl -n demo get runners -o name | wc -l)
  ((count > peak)) && peak=$count
  printf '%4ss  jobs done %2s/%s  runners %s  [%s]\n' "$((SECONDS - started))" "$done_jobs" "$jobs" "$count" "${phases:-none}"
  if ((done_jobs == jobs && count == 0)); then break; fi
  sleep 1
done

say "summary"
kubectl -n demo get runnerset linux
calls=$(curl -fsS "$sim/_sim/calls")
not_terminal=$(awk '$1 == "DELETED" || $3 == "Succeeded" || $3 == "Failed" || $3 == "Outdated" { delete live[$2]; next }
  { live[$2] = 1; n = length(live); if (n > most) most = n } END { print most + 0 }' "$work/runners.watch")
echo "jobs completed:      $done_jobs of $jobs in $((SECONDS - started)) s"
echo "peak runners:        $peak (sampled each second; maxRunners 5)"
echo "peak not terminal:   $not_terminal (every watch event; maxRunners 5)"
echo "runners left:        $(kubectl -n demo get runners -o name | wc -l), pods left: $(kubectl -n demo get pods -o name | wc -l)"
echo "GitHub calls:        $calls"
# Per job: every GitHub call but webhook deliveries and the simulator's own API.
python3 - "$calls" "$jobs" <<'PY'
import json, sys
calls, jobs = json.loads(sys.argv[1]), int(sys.argv[2])
github = {k: v for k, v in calls.items() if k.startswith(("rest.", "scaleset.")) and not k.startswith("webhook.")}
jit = calls.get("rest.generate_jitconfig", 0) + calls.get("scaleset.generate_jitconfig", 0)
print(f"JIT configurations:  {jit} for {jobs} jobs ({jit / jobs:.2f} per job)")
print(f"GitHub calls/job:    {sum(github.values()) / jobs:.2f} (" +
      ", ".join(f"{k} {v / jobs:.2f}" for k, v in sorted(github.items())) + ")")
PY
if ((done_jobs != jobs)); then
  echo "not every job completed; manager log: $work/manager.log" >&2
  tail -30 "$work/manager.log" >&2
  exit 1
fi
