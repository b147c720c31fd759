#!/usr/bin/env bash
# Builds the kubelet of the optional real test node (node.sh) from the same
# pinned k8s.io/kubernetes module as the control plane (go.mod/go.sum here).
#
# go.sum holds the checksums the control plane binaries need; the kubelet needs
# four more (cri-streaming, otelrestful), kept in kubelet.sum so that adding
# the kubelet leaves build.sh's cache key, and its cached binaries, untouched.
# The build reads go.mod through -modfile with go.sum + kubelet.sum beside it.
#
# Cached outside the repository under its own key (go.mod, go.sum, kubelet.sum,
# this script). Prints the folder holding `kubelet` on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/kubelet.sum" "$here/build-kubelet.sh" |
  sha256sum | cut -c1-16)
bin="$cache_root/kubelet/$key/bin"

if [[ -s "$bin/kubelet" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache_root/kubelet"
exec 9>"$cache_root/kubelet/.lock"
flock 9
if [[ -s "$bin/kubelet" ]]; then
  echo "$bin"
  exit 0
fi

k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
if [[ ! "$k8s_version" =~ ^v1\.([0-9]+)\. ]]; then
  echo "build-kubelet.sh: cannot read the k8s.io/kubernetes version from go.mod" >&2
  exit 1
fi
k8s_minor=${BASH_REMATCH[1]}

command -v go >/dev/null || { echo "build-kubelet.sh: Go (1.26 or newer) is required to build the kubelet" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi

tmp="$bin.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/mod"
cp "$here/go.mod" "$tmp/mod/kubelet.mod"
cat "$here/go.sum" "$here/kubelet.sum" >"$tmp/mod/kubelet.sum"
stamp="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
stamp+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
stamp+=" -X k8s.io/component-base/version.gitTreeState=clean"
echo "building the kubelet $k8s_version into $bin" >&2
if ! (cd "$here" && go build -modfile="$tmp/mod/kubelet.mod" -trimpath -tags selinux,notest \
  -ldflags "$stamp" -o "$tmp/kubelet" k8s.io/kubernetes/cmd/kubelet); then
  echo "build-kubelet.sh: if go.sum entries are missing after a pin change, regenerate kubelet.sum:" >&2
  echo "  copy go.mod/go.sum elsewhere, run 'GOFLAGS=-mod=mod go list -deps k8s.io/kubernetes/cmd/kubelet'" >&2
  echo "  there, and keep the lines it added to go.sum" >&2
  exit 1
fi
rm -rf "$tmp/mod"
rm -rf "$bin"
mv "$tmp" "$bin"
echo "$bin"
