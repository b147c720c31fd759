#!/usr/bin/env bash
# Builds scaleset-conformance: our test driver (the *.go files here) linked
# with GitHub's own Go client of the runner scale-set protocol,
# github.com/actions/scaleset, unmodified, at the version pinned in go.mod /
# go.sum (the client actions-runner-controller uses).
#
# The binary is a build output: it lives in a cache outside the repository,
# keyed on the pins, the driver's sources and this script, so it is rebuilt
# only when one of those changes. Prints the binary's path on the last line
# of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
key=$(cat "$here/go.mod" "$here/go.sum" "$here"/*.go "$here/build.sh" | sha256sum | cut -c1-16)
bin="$cache_root/scaleset-conformance/$key/bin"

scaleset_version=$(awk '$1 == "github.com/actions/scaleset" { print $2; exit }' "$here/go.mod")
if [[ ! "$scaleset_version" =~ ^v[0-9]+\. ]]; then
  echo "build.sh: cannot read the github.com/actions/scaleset version from go.mod" >&2
  exit 1
fi

if [[ -x "$bin/scaleset-conformance" ]]; then
  echo "$bin/scaleset-conformance"
  exit 0
fi

# One build at a time per machine: concurrent callers wait for the first.
mkdir -p "$cache_root/scaleset-conformance"
exec 9>"$cache_root/scaleset-conformance/.lock"
flock 9
if [[ -x "$bin/scaleset-conformance" ]]; then
  echo "$bin/scaleset-conformance"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go (1.26 or newer) is required to build scaleset-conformance" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
# The module needs Go 1.26. An older go (1.21+) fetches that toolchain from
# the module proxy; a new enough one never downloads a toolchain.
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi

tmp="$bin.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "building scaleset-conformance with github.com/actions/scaleset $scaleset_version into $bin" >&2
(
  cd "$here"
  go build -trimpath -ldflags "-s -w" -o "$tmp/scaleset-conformance" .
)
rm -rf "$bin"
mv "$tmp" "$bin"
echo "$bin/scaleset-conformance"
