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
source "$here/../tools/go-cache.sh"
k8s_version=$(go_module_version "$here" k8s.io/kubernetes '^v1\.([0-9]+)\.')
k8s_minor=$(cut -d. -f2 <<<"$k8s_version")
go_cache_begin kubelet dir "$here/go.mod" "$here/go.sum" "$here/kubelet.sum" "$here/build-kubelet.sh" -- kubelet

tmp=$go_cache_tmp
mkdir -p "$tmp/mod"
cp "$here/go.mod" "$tmp/mod/kubelet.mod"
cat "$here/go.sum" "$here/kubelet.sum" >"$tmp/mod/kubelet.sum"
stamp="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
stamp+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
stamp+=" -X k8s.io/component-base/version.gitTreeState=clean"
echo "building the kubelet $k8s_version into $go_cache_bin" >&2
if ! (cd "$here" && go build -modfile="$tmp/mod/kubelet.mod" -trimpath -tags selinux,notest \
  -ldflags "$stamp" -o "$tmp/kubelet" k8s.io/kubernetes/cmd/kubelet); then
  echo "build-kubelet.sh: if go.sum entries are missing after a pin change, regenerate kubelet.sum:" >&2
  echo "  copy go.mod/go.sum elsewhere, run 'GOFLAGS=-mod=mod go list -deps k8s.io/kubernetes/cmd/kubelet'" >&2
  echo "  there, and keep the lines it added to go.sum" >&2
  exit 1
fi
rm -rf "$tmp/mod"
go_cache_commit
