#!/usr/bin/env bash
# Builds the test control plane from the Go modules pinned in this folder:
#   go.mod       etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#   kwok/go.mod  kwok (fake nodes, so scheduled pods reach Running without a kubelet)
# plus kwok-stages.yaml, kwok's "fast" node and pod stages from the same module.
#
# The binaries are build outputs: they live in a cache outside the repository,
# keyed on the pins and this script, so they are rebuilt only when those change.
# Prints the folder holding them on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum" "$here/build.sh" |
  sha256sum | cut -c1-16)
bin="$cache_root/controlplane/$key/bin"

k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
if [[ ! "$k8s_version" =~ ^v1\.([0-9]+)\. ]]; then
  echo "build.sh: cannot read the k8s.io/kubernetes version from go.mod" >&2
  exit 1
fi
k8s_minor=${BASH_REMATCH[1]}

outputs=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwok-stages.yaml)
built() {
  for f in "${outputs[@]}"; do [[ -s "$bin/$f" ]] || return 1; done
}
if built; then
  echo "$bin"
  exit 0
fi

# One build at a time per machine: concurrent callers wait for the first.
mkdir -p "$cache_root/controlplane"
exec 9>"$cache_root/controlplane/.lock"
flock 9
if built; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go (1.26 or newer) is required to build the test control plane" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
# The modules need Go 1.26. An older go (1.21+) fetches that toolchain from
# the module proxy; a new enough one never downloads a toolchain.
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi

tmp="$bin.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
stamp="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
stamp+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
stamp+=" -X k8s.io/component-base/version.gitTreeState=clean"
echo "building the control plane $k8s_version into $bin (the first build on a machine takes a while)" >&2
(
  cd "$here"
  go build -trimpath -tags selinux,notest -ldflags "$stamp" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl
  go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
)
(
  cd "$here/kwok"
  go build -trimpath -ldflags "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok
  stages="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)/kustomize/stage"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    echo "---"
    cat "$stages/$f"
  done >"$tmp/kwok-stages.yaml"
)
rm -rf "$bin"
mv "$tmp" "$bin"
echo "$bin"
