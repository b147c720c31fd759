#!/usr/bin/env bash
# docs/flags.md from `octorun --help`: the flag reference is the binary's own help, as a table.
#   scripts/flags-doc.sh BINARY            rewrite docs/flags.md
#   scripts/flags-doc.sh BINARY --check    fail (and show the difference) when it is out of date
# The test `docs.flags` runs the check, so a flag added without its page fails the test command.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${1:?usage: scripts/flags-doc.sh BINARY [--check]}
mode=${2:-write}
page="$root/docs/flags.md"

render() {
  cat <<'HEAD'
# Manager flags

Generated from `octorun --help` by `scripts/flags-doc.sh`; the test `docs.flags` fails when
this page and the binary disagree. A flag is given as `--flag=value` or `--flag value`; a bad
one stops the manager with one sentence naming it and exit status 2. The chart sets these from
its values ([the chart's README](../deploy/chart/octorun/README.md)); what the manager does with
them is in [manager.md](manager.md).

| flag | default | what it does |
| --- | --- | --- |
HEAD
  "$binary" --help | awk '
    function flush() {
      if (name != "") {
        gsub(/\|/, "\\|", text)
        printf "| `%s` | %s | %s |\n", name, (def == "" ? "" : "`" def "`"), text
      }
      name = ""; def = ""; text = ""
    }
    /^Flags:/ { inflags = 1; next }
    inflags && /^  --/ {
      flush()
      line = substr($0, 3)
      if (match(line, / \(default: .*\)$/)) {
        def = substr(line, RSTART + 11, RLENGTH - 12)
        line = substr(line, 1, RSTART - 1)
      }
      name = line
      next
    }
    inflags && /^      / { sub(/^ +/, ""); text = (text == "" ? $0 : text " " $0); next }
    inflags && /^$/ { flush(); inflags = 0; tail = 1; next }
    tail { rest = rest $0 "\n" }
    END { flush(); if (rest != "") printf "\n%s", rest }
  '
}

if [[ $mode == --check ]]; then
  if ! diff -u "$page" <(render); then
    echo "docs/flags.md is out of date: run scripts/flags-doc.sh $binary" >&2
    exit 1
  fi
  echo "docs/flags.md matches $binary --help"
else
  render >"$page"
fi
