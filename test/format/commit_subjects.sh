#!/usr/bin/env bash
# The history check (ctest `format.commit_subjects`): every commit since the rule was set
# (CONTRIBUTING.md, "Commits") has a subject `area: what changed` of at most 72 characters.
# Older commits are left as they are. Prints each subject that breaks the rule.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

first_under_rule=28b6b49  # common: move the pure foundation out of adapters/
limit=72

if ! git rev-parse -q --verify "$first_under_rule^{commit}" >/dev/null 2>&1; then
  # A shallow or foreign checkout: the commits before the rule are not here to tell apart.
  echo "commit subjects: $first_under_rule is not in this checkout; checking HEAD alone"
  range=(-1 HEAD)
else
  range=("$first_under_rule^..HEAD")
fi

bad=0
while IFS=$'\t' read -r hash subject; do
  problem=""
  if ((${#subject} > limit)); then
    problem="${#subject} characters (at most $limit)"
  elif [[ ! $subject =~ ^[A-Za-z0-9_./+-]+(,\ ?[A-Za-z0-9_./+-]+)*:\ [^[:space:]] ]]; then
    problem="not 'area: what changed'"
  fi
  if [[ -n $problem ]]; then
    echo "$hash: $problem: $subject" >&2
    bad=$((bad + 1))
  fi
done < <(git log --no-merges --format=$'%h\t%s' "${range[@]}")

if ((bad > 0)); then
  echo "commit subjects: $bad commit(s) break the rule in CONTRIBUTING.md (fix with git rebase -i, reword)" >&2
  exit 1
fi
echo "commit subjects: every subject since $first_under_rule is 'area: what changed' within $limit characters"
