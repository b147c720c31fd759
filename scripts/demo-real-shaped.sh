#!/usr/bin/env bash
# The demo on the real-shaped cluster (test/controlplane/karpenter.md): the
# manager against a local control plane whose nodes behave like a cloud's.
# Karpenter's kwok provider launches a node for runner pods that fit nowhere
# (its Node appears 60 s later), a node pulls the runner image cold the first
# time (15-25 s) and cached after, and a runner process takes 2-5 s to come
# online. A RunnerSet with a start-time target of 5 s takes Poisson arrivals
# for a few minutes; the load-test tool plays GitHub and the runner processes
# and prints where each job's wait went and what idle capacity it cost.
#   scripts/demo.sh --real-shaped [MINUTES]    (default 5; or this script)
# The first run builds Karpenter (minutes; cached under ~/.cache/octorun).
# Everything it starts is stopped at the end (or on Ctrl-C).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
minutes=${1:-5}
[[ $minutes =~ ^[1-9][0-9]*$ ]] || { echo "MINUTES must be a whole number of minutes, not $minutes" >&2; exit 2; }

# shellcheck source=demo-setup.sh
source scripts/demo-setup.sh octorun octorun-loadtest

say "starting the control plane and Karpenter (node registration 60 s, cold image pulls 15-25 s)"
test/controlplane/cluster.sh start "$work/cluster" $$
test/controlplane/karpenter.sh up "$work/cluster" $$
# shellcheck disable=SC1091
source "$work/cluster/env"
kubectl apply -f crds/ >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd/runnersets.octorun.io crd/runners.octorun.io >/dev/null

say "starting the manager"
# The load-test tool declares its own RunnerSet with its credentials beside
# it and no RunnerClass, as before classes: hence --allow-sets-without-class
# (docs/runner-classes.md; a platform's install keeps it off).
OCTORUN_WEBHOOK_SECRET=unused build/cmd/octorun --kubeconfig="$KUBECONFIG" --log-format=text \
  --lease-namespace=default --identity=demo --webhook-bind=127.0.0.1 --webhook-port=0 \
  --health-bind=127.0.0.1 --health-port=0 --metrics-bind=127.0.0.1 --metrics-port=0 \
  --github-http-hosts=127.0.0.1 --allow-sets-without-class --endpoints-file="$work/endpoints.json" \
  >"$work/manager.log" 2>&1 &
pids+=($!)
wait_until 60 "the manager to lead" leading "$work/endpoints.json" || { tail -20 "$work/manager.log" >&2; exit 1; }
metrics=$(endpoint "$work/endpoints.json" metrics)

say "Poisson arrivals, 6 jobs a minute for $minutes min; a RunnerSet with startTimeTarget.p95Seconds 5, maxRunners 10"
# Runner pods ask for 3 CPUs and 4 GiB, so a 4-CPU node takes one and a
# 16-CPU node five: the first jobs wait for nodes, then the set keeps warm
# runners (and asks Karpenter for warm nodes through a CapacityBuffer).
build/bench/loadtest/octorun-loadtest --kubeconfig "$KUBECONFIG" \
  --profile poisson --rate 0.1 --duration "${minutes}m" --job-duration lognormal:1m:0.6 \
  --start-time-target 5 --max-runners 10 --runner-cpu 3 --runner-memory 4Gi \
  --node-selector karpenter.sh/nodepool=runners --runner-start uniform:2s:5s \
  --manager-metrics "$metrics" --manager-pid "${pids[0]}" --timeout 15m \
  --report "$work/report" --no-plots || status=$?

say "summary"
cat "$work/report/summary.txt" 2>/dev/null || { echo "no report; manager log:" >&2; tail -30 "$work/manager.log" >&2; }
exit "${status:-0}"
