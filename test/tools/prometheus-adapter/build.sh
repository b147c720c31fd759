#!/usr/bin/env bash
# Builds prometheus-adapter (the custom.metrics.k8s.io API server the
# autoscaling test registers through the aggregation layer) from the Go module
# pinned in this folder (go.mod/go.sum: sigs.k8s.io/prometheus-adapter as a
# `tool`). A module of its own: the adapter is built against k8s.io/* v0.30,
# and the control plane's module pins k8s.io/* v0.36.3 through replaces,
# which would force v0.36 on v0.30 code.
#
# The binary is a build output: it lives in a cache outside the repository,
# keyed on the pins and this script, so it is rebuilt only when those change.
# Prints the path of the adapter binary on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" | sha256sum | cut -c1-16)
bin="$cache_root/prometheus-adapter/$key/bin"

version=$(awk '$1 == "sigs.k8s.io/prometheus-adapter" { print $2; exit }' "$here/go.mod")
if [[ ! "$version" =~ ^v0\. ]]; then
  echo "build.sh: cannot read the sigs.k8s.io/prometheus-adapter version from go.mod" >&2
  exit 1
fi

if [[ -x "$bin/prometheus-adapter" ]]; then
  echo "$bin/prometheus-adapter"
  exit 0
fi

# One build at a time per machine: concurrent callers wait for the first.
mkdir -p "$cache_root/prometheus-adapter"
exec 9>"$cache_root/prometheus-adapter/.lock"
flock 9
if [[ -x "$bin/prometheus-adapter" ]]; then
  echo "$bin/prometheus-adapter"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go (1.26 or newer) is required to build prometheus-adapter" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
# The module says Go 1.26. An older go (1.21+) fetches that toolchain from
# the module proxy; a new enough one never downloads a toolchain.
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi

tmp="$bin.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
echo "building prometheus-adapter $version into $bin" >&2
(
  cd "$here"
  go build -trimpath -ldflags "-s -w" -o "$tmp/prometheus-adapter" sigs.k8s.io/prometheus-adapter/cmd/adapter
)
rm -rf "$bin"
mv "$tmp" "$bin"
echo "$bin/prometheus-adapter"
