#!/usr/bin/env bash
# Builds the test control plane from the Go modules pinned in this folder:
#   go.mod       etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#   kwok/go.mod  kwok (fake nodes, so scheduled pods reach Running without a kubelet)
# plus kwok-stages.yaml, kwok's "fast" node and pod stages from the same module.
#
# The binaries are build outputs: they live in a cache outside the repository,
# keyed on the pins and this script (../tools/go-cache.sh), so they are rebuilt
# only when those change.
# Prints the folder holding them on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../tools/go-cache.sh"
k8s_version=$(go_module_version "$here" k8s.io/kubernetes '^v1\.([0-9]+)\.')
k8s_minor=$(cut -d. -f2 <<<"$k8s_version")
go_cache_begin controlplane dir "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum" \
  "$here/build.sh" -- etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwok-stages.yaml

tmp=$go_cache_tmp
stamp="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version"
stamp+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor"
stamp+=" -X k8s.io/component-base/version.gitTreeState=clean"
echo "building the control plane $k8s_version into $go_cache_bin (the first build on a machine takes a while)" >&2
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
go_cache_commit
