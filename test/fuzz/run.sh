#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time on its committed seed corpus
# (corpus/<target>/, read only) plus a working corpus in the build folder, with
# its dictionary (<target>.dict) when there is one. Targets run side by side,
# at most FUZZ_JOBS at a time (default: the number of cores). Prints one line
# per target (executions, coverage, outcome); a crash, sanitizer report, leak
# or timeout fails the run, and the reproducer is kept in BUILD/fuzz/artifacts.
# FUZZ_MAX_LEN: the longest input libFuzzer makes. Unset: its default (the
# larger of 4 KiB and the largest seed; the deep-nesting seeds are ~100 KB).
# "limits": each target's body limit (common/json_parse.hpp), at most 16 MiB.
# A number: that, for every target.
#   test/fuzz/run.sh BUILD_DIR [SECONDS_PER_TARGET (15)] [TARGET...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: run.sh BUILD_DIR [SECONDS] [TARGET...]}
seconds=${2:-15}
shift $(($# >= 2 ? 2 : 1))
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(admission_review_fuzz workflow_job_fuzz scaleset_message_fuzz kube_watch_fuzz kubeconfig_fuzz
    github_rest_fuzz scaleset_session_fuzz actions_registration_fuzz)
fi
jobs=${FUZZ_JOBS:-$(nproc)}
out=$build/fuzz
mkdir -p "$out/artifacts"

max_len_of() {  # max_len_of TARGET: the limit of the bytes it reads, capped at 16 MiB
  case $1 in
    admission_review_fuzz) echo $((3 << 20)) ;;  # json::sources::admission_review
    *) echo $((16 << 20)) ;;                     # the webhook's 25 MiB and a watch line's 64 MiB, capped
  esac
}

run_one() {  # run_one TARGET: exit status of the fuzzer
  local t=$1 name=${1%_fuzz} dict=() max_len=()
  [[ -f "$here/$name.dict" ]] && dict=(-dict="$here/$name.dict")
  case ${FUZZ_MAX_LEN:-} in
    "") ;;
    limits) max_len=(-max_len="$(max_len_of "$t")") ;;
    *) max_len=(-max_len="$FUZZ_MAX_LEN") ;;
  esac
  mkdir -p "$out/corpus/$name"
  # -timeout: one input taking 10 s is a finding (a hang), as is 2 GiB of RSS.
  timeout $((seconds + 120)) "$build/test/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 "${dict[@]}" "${max_len[@]}" -artifact_prefix="$out/artifacts/$name-" \
    "$out/corpus/$name" "$here/corpus/$name" >"$out/$name.log" 2>&1
}
export -f run_one max_len_of
export here build seconds out FUZZ_MAX_LEN

printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}; echo $? >"$out/$(basename {} _fuzz).rc"' || true

status=0
for t in "${targets[@]}"; do
  name=${t%_fuzz}
  rc=$(cat "$out/$name.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$name.log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$out/$name.log" | tail -1 || true)
  if [[ "$rc" == 0 ]]; then
    echo "fuzz $name: ok, ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}"
  else
    echo "fuzz $name: FAILED (exit $rc) after ${execs:-?} executions; log $out/$name.log:"
    grep -E -A40 'ERROR: |runtime error|==[0-9]+==|Test unit written' "$out/$name.log" | head -60 || tail -40 "$out/$name.log"
    status=1
  fi
done
exit $status
