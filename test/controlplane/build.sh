#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl) from the Go modules pinned in this folder's go.mod/go.sum.
#
# The binaries are build outputs: they live in a cache outside the repository,
# keyed on the pins and this script, so they are rebuilt only when those change.
# Prints the folder holding the binaries on its last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
key=$(cat "$here/go.mod" "$here/go.sum" "$here/build.sh" | sha256sum | cut -c1-16)
bin="$cache_root/controlplane/$key/bin"

k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
k8s_version=${k8s_version:-$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$here/go.mod")}
if [[ ! "$k8s_version" =~ ^v1\.([0-9]+)\. ]]; then
  echo "build.sh: cannot read the k8s.io/kubernetes version from go.mod" >&2
  exit 1
fi
k8s_minor=${BASH_REMATCH[1]}

binaries=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl)
# One build at a time per machine: concurrent callers wait for the first.
mkdir -p "$cache_root/controlplane"
exec 9>"$cache_root/controlplane/.lock"
flock 9
complete=1
for b in "${binaries[@]}"; do [[ -x "$bin/$b" ]] || complete=0; done
if [[ $complete == 1 ]]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "build.sh: Go (1.26 or newer) is required to build the test control plane" >&2; exit 1; }
export CGO_ENABLED=0 GOFLAGS=-mod=readonly
# go.mod needs Go 1.26. An older go (1.21+) fetches that toolchain from the
# module proxy; otherwise never download one.
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi
mkdir -p "$bin.tmp"
stamp="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
stamp+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
stamp+=" -X k8s.io/component-base/version.gitTreeState=clean"
cd "$here"
echo "building the control plane $k8s_version into $bin (first run on a machine takes a while)" >&2
go build -trimpath -tags selinux,notest -ldflags "$stamp" -o "$bin.tmp/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  k8s.io/kubernetes/cmd/kubectl >&2
go build -trimpath -ldflags "-s -w" -o "$bin.tmp/etcd" go.etcd.io/etcd/server/v3 >&2
rm -rf "$bin"
mv "$bin.tmp" "$bin"
echo "$bin"
