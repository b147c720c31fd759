#!/usr/bin/env bash
# Start-time targets against static warm pools, on the real-shaped cluster
# (issue 34; README.md beside this script says what it measures and how to
# read it). For each trace: the RunnerSet with minRunners M for each M given,
# smallest first, until one meets the p95 target on the median of its
# repetitions; then the set with startTimeTarget instead (minRunners 0), with
# Karpenter's CapacityBuffer on (warm nodes) and off. Every run starts from
# no runner node: the NodeClaims of the previous one are deleted first.
#
#   bench/starttime/compare.sh [--out DIR] [--reps N] [--traces "poisson workday bursts"]
#                              [--target S] [--static-poisson "0 2 4 6"] [--static-workday ...]
#                              [--static-workday-poisson ...] [--static-bursts ...]
#                              [--load-poisson "LOAD-TEST FLAGS"] [--load-workday ...]
#                              [--load-workday-poisson ...] [--load-bursts ...] [--no-cold]
#                              [--modes "static target target-no-warm-nodes"] [--first-rep N]
#
# OCTORUN_BUILD_DIR: the build tree with cmd/octorun and the load-test tool
# (default build/). KARPENTER_* and KWOK_* as test/controlplane/karpenter.md
# lists them (node registration 60 s and cold pulls of 15-25 s by default).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${OCTORUN_BUILD_DIR:-$root/build}
controlplane=$root/test/controlplane

out=starttime-$(date -u +%Y%m%dT%H%M%SZ) reps=3 traces="poisson workday bursts" target=5 cold=1
modes="static target target-no-warm-nodes" first=1
declare -A static=([poisson]="0 2 4 6 8 12" [workday]="0 4 6 8 12 16" [workday-poisson]="0 4 6 8 12 16"
  [bursts]="0 50 100 150 200")
# The traces: arrivals, job durations and the set's bounds. Runner pods ask
# for real resources so runners fill nodes (a 4-CPU node takes one 3-CPU
# runner, a 16-CPU node five); maxRunners x CPU, and the warm nodes beside
# them, stay within the NodePool's CPU limit (KARPENTER_CPU_LIMIT, 200 here).
# The working day peaks at about 21 busy runners: maxRunners 40 leaves room
# for a warm pool in either mode. workday-poisson is the same day with its
# arrivals a Poisson process (workday spreads each hour's share evenly, which
# real demand does not): not in the default traces, so that a default
# comparison stays the one of the README's older figures.
declare -A load=(
  [poisson]="--profile poisson --rate 0.1 --duration 20m --job-duration lognormal:2m:0.6 --max-runners 30 --runner-cpu 3 --runner-memory 4Gi"
  [workday]="--profile workday --jobs 300 --duration 30m --job-duration lognormal:1m:0.6 --max-runners 40 --runner-cpu 3 --runner-memory 4Gi"
  [workday-poisson]="--profile workday-poisson --jobs 300 --duration 30m --job-duration lognormal:1m:0.6 --max-runners 40 --runner-cpu 3 --runner-memory 4Gi"
  [bursts]="--profile bursts --jobs 200 --every 8m --duration 24m --job-duration lognormal:1m:0.6 --max-runners 200 --runner-cpu 500m --runner-memory 1Gi"
)
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --traces) traces=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --static-poisson | --static-workday | --static-workday-poisson | --static-bursts)
      static[${1#--static-}]=$2; shift 2 ;;
    --load-poisson | --load-workday | --load-workday-poisson | --load-bursts) load[${1#--load-}]=$2; shift 2 ;;
    --no-cold) cold=0; shift ;;
    --modes) modes=$2; shift 2 ;;
    --first-rep) first=$2; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for t in $traces; do
  [[ -n ${load[$t]:-} ]] || { echo "compare.sh: unknown trace $t (poisson, workday, workday-poisson, bursts)" >&2; exit 2; }
done
[[ -x $build/cmd/octorun && -x $build/bench/loadtest/octorun-loadtest ]] || {
  echo "compare.sh: build octorun and octorun-loadtest in $build first" >&2
  exit 2
}
mkdir -p "$out"
out=$(cd "$out" && pwd)
results=$out/results.tsv
[[ -f $results ]] || printf 'trace\tmode\tvalue\trep\tjobs\tqueue_p50_s\tqueue_p95_s\tidle_runner_s_per_job\tidle_node_s_per_job\treport\n' >"$results"
log() { printf '%s compare.sh: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

cluster=$out/cluster pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  "$controlplane/cluster.sh" stop "$cluster" >/dev/null 2>&1 || true
}
trap stop_all EXIT

# start_stack CAPACITY_BUFFER: a control plane, Karpenter (its CapacityBuffer
# gate as given), the CRDs and the manager watching every namespace.
start_stack() {
  stop_all
  pids=()
  "$controlplane/cluster.sh" start "$cluster" $$ >/dev/null
  KARPENTER_CPU_LIMIT=${KARPENTER_CPU_LIMIT:-200} KARPENTER_CAPACITY_BUFFER=$1 \
    "$controlplane/karpenter.sh" up "$cluster" $$ >/dev/null
  kc apply -f "$root/crds" >/dev/null
  kc wait --for=condition=Established --timeout=60s crd/runnersets.octorun.io crd/runners.octorun.io >/dev/null
  rm -f "$out/endpoints.json"
  OCTORUN_WEBHOOK_SECRET=unused "$build/cmd/octorun" --kubeconfig="$cluster/kubeconfig" \
    --lease-namespace=default --identity=starttime --webhook-bind=127.0.0.1 --webhook-port=0 \
    --health-bind=127.0.0.1 --health-port=0 --metrics-bind=127.0.0.1 --metrics-port=0 --log-format=text \
    --github-http-hosts=127.0.0.1 --allow-sets-without-class --endpoints-file="$out/endpoints.json" \
    >>"$out/manager.log" 2>&1 &
  pids+=($!)
  local deadline=$((SECONDS + 60)) health
  until health=$(jq -r '.health // empty' "$out/endpoints.json" 2>/dev/null) && [[ -n $health ]] &&
    [[ $(curl -fsS "$health/readyz" 2>/dev/null) == leading ]]; do
    ((SECONDS < deadline)) || { log "the manager did not lead within 60 s ($out/manager.log)"; exit 1; }
    sleep 1
  done
}
kc() { "$cluster/path/kubectl" --kubeconfig="$cluster/kubeconfig" "$@"; }
metrics_url() { jq -r '.metrics' "$out/endpoints.json"; }

# No runner node left: the previous run's NodeClaims (warm ones included) go.
cold_start() {
  kc delete nodeclaims --all --wait=false >/dev/null 2>&1 || true
  local deadline=$((SECONDS + 300))
  while [[ -n $(kc get nodes -l karpenter.sh/nodepool -o name 2>/dev/null) ]]; do
    ((SECONDS < deadline)) || { log "runner nodes still there after 300 s"; exit 1; }
    sleep 2
  done
}

# run TRACE MODE VALUE REP: one load-test run; its line in results.tsv.
run() {
  local trace=$1 mode=$2 value=$3 rep=$4 report set_flags
  report=$out/$trace-$mode-$value-$rep
  case $mode in
    static) set_flags="--min-runners $value" ;;
    target | target-no-warm-nodes) set_flags="--start-time-target $value" ;;
  esac
  ((cold)) && cold_start
  log "$trace $mode $value, repetition $rep"
  # shellcheck disable=SC2086 # the trace's flags are words
  "$build/bench/loadtest/octorun-loadtest" --kubeconfig "$cluster/kubeconfig" ${load[$trace]} $set_flags \
    --node-selector karpenter.sh/nodepool=runners --runner-start uniform:2s:5s --seed "$rep" \
    --manager-metrics "$(metrics_url)" --manager-pid "${pids[0]}" --timeout 20m --no-plots \
    --report "$report" >"$report.log" 2>&1 || log "$trace $mode $value $rep: the run failed or missed a target ($report.log)"
  [[ -f $report/summary.json ]] || { log "no summary in $report"; return; }
  jq -r --arg t "$trace" --arg m "$mode" --arg v "$value" --arg r "$rep" --arg d "$report" \
    '[$t, $m, $v, $r, .jobs.completed, .queueSeconds.p50, .queueSeconds.p95,
      (.idleRunnerSecondsPerJob // "nan"), .idleNodeSecondsPerJob, $d] | @tsv' \
    "$report/summary.json" >>"$results"
}

# The median over a trace's repetitions of one column (7: p95, 8: idle runner-s per job).
median() {
  awk -F'\t' -v t="$1" -v m="$2" -v v="$3" -v c="$4" '$1 == t && $2 == m && $3 == v { print $c }' "$results" |
    sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}

has_mode() { [[ " $modes " == *" $1 "* ]]; }
for m in $modes; do
  [[ $m == static || $m == target || $m == target-no-warm-nodes ]] ||
    { echo "compare.sh: unknown mode $m (static, target, target-no-warm-nodes)" >&2; exit 2; }
done

if has_mode static || has_mode target; then
  start_stack true
  for trace in $traces; do
    if has_mode static; then
      best=""
      for m in ${static[$trace]}; do
        for ((rep = first; rep < first + reps; rep++)); do run "$trace" static "$m" "$rep"; done
        p95=$(median "$trace" static "$m" 7)
        log "$trace minRunners $m: median p95 ${p95:-?} s"
        if [[ -n $p95 ]] && awk -v p="$p95" -v t="$target" 'BEGIN { exit !(p <= t) }'; then best=$m; break; fi
      done
      [[ -n $best ]] || log "$trace: no static minRunners in \"${static[$trace]}\" met p95 <= $target s"
    fi
    if has_mode target; then
      for ((rep = first; rep < first + reps; rep++)); do run "$trace" target "$target" "$rep"; done
    fi
  done
fi
# The same target where the node autoscaler ignores CapacityBuffers: what
# warm runners alone cost and achieve.
if has_mode target-no-warm-nodes; then
  start_stack false
  for trace in $traces; do
    for ((rep = first; rep < first + reps; rep++)); do run "$trace" target-no-warm-nodes "$target" "$rep"; done
  done
fi

# The table: per trace and setting, medians of the repetitions.
{
  printf '| trace | setting | median p95 queued -> started | median idle runner-s per job | median idle node-s per job |\n'
  printf '| --- | --- | --- | --- | --- |\n'
  cut -f1-3 "$results" | tail -n +2 | awk '!seen[$0]++' | while IFS=$'\t' read -r t m v; do
    printf '| %s | %s %s | %s s | %s | %s |\n' "$t" "$m" "$v" "$(median "$t" "$m" "$v" 7)" \
      "$(median "$t" "$m" "$v" 8)" "$(median "$t" "$m" "$v" 9)"
  done
} | tee "$out/table.md"
