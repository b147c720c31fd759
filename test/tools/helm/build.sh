#!/usr/bin/env bash
# Builds the helm CLI from the Go module pinned in this folder (go.mod/go.sum:
# helm.sh/helm/v4 as a `tool`). Helm has a module of its own, apart from the
# control plane's: helm 4.3 is built against k8s.io/* v0.37 and the control
# plane's module pins k8s.io/* v0.36.3 through replaces, which would force
# helm's dependencies back a minor version.
#
# The binary is a build output: it lives in a cache outside the repository,
# keyed on the pins and this script, so it is rebuilt only when those change.
# Prints the path of the helm binary on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" | sha256sum | cut -c1-16)
bin="$cache_root/helm/$key/bin"

helm_version=$(awk '$1 == "helm.sh/helm/v4" { print $2; exit }' "$here/go.mod")
if [[ ! "$helm_version" =~ ^v4\. ]]; then
  echo "build.sh: cannot read the helm.sh/helm/v4 version from go.mod" >&2
  exit 1
fi

if [[ -x "$bin/helm" ]]; then
  echo "$bin/helm"
  exit 0
fi

# One build at a time per machine: concurrent callers wait for the first.
mkdir -p "$cache_root/helm"
exec 9>"$cache_root/helm/.lock"
flock 9
if [[ -x "$bin/helm" ]]; then
  echo "$bin/helm"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go (1.26 or newer) is required to build helm" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
# The module needs Go 1.26. An older go (1.21+) fetches that toolchain from
# the module proxy; a new enough one never downloads a toolchain.
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi

tmp="$bin.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
stamp="-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version"
stamp+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
echo "building helm $helm_version into $bin" >&2
(
  cd "$here"
  go build -trimpath -ldflags "$stamp" -o "$tmp/helm" helm.sh/helm/v4/cmd/helm
)
rm -rf "$bin"
mv "$tmp" "$bin"
echo "$bin/helm"
