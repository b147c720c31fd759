#!/usr/bin/env bash
# Builds Karpenter's kwok provider (the main package sigs.k8s.io/karpenter/kwok:
# Karpenter's full controller set over a cloud provider whose "instances" are
# Node objects that kwok then runs) from the Go module pinned in this folder
# (go.mod/go.sum: sigs.k8s.io/karpenter as a `tool`), and copies the CRDs it
# needs out of that module: karpenter.sh NodePools, NodeClaims, NodeOverlays,
# karpenter.kwok.sh KWOKNodeClasses and autoscaling.x-k8s.io CapacityBuffers.
# A module of its own: Karpenter is built against k8s.io/* v0.35 and
# controller-runtime, and the control plane's module pins k8s.io/* v0.36.3
# through replaces. test/controlplane/karpenter.sh runs it on a test cluster.
#
# The binary and the CRDs are build outputs: they live in a cache outside the
# repository, keyed on the pins and this script (test/tools/go-cache.sh), so
# they are rebuilt only when those change. The CRDs are taken from the very
# module version the binary is built from, never from a committed copy that
# could drift from it.
# Prints the folder holding karpenter-kwok and crds/ on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../go-cache.sh"
version=$(go_module_version "$here" sigs.k8s.io/karpenter '^v1\.')
crds=(karpenter.sh_nodepools.yaml karpenter.sh_nodeclaims.yaml karpenter.sh_nodeoverlays.yaml
  autoscaling.x-k8s.io_capacitybuffers.yaml karpenter.kwok.sh_kwoknodeclasses.yaml)
go_cache_begin karpenter dir "$here/go.mod" "$here/go.sum" "$here/build.sh" \
  -- karpenter-kwok instance_types.json "${crds[@]/#/crds/}"

echo "building Karpenter's kwok provider $version into $go_cache_bin (the first build on a machine takes a while)" >&2
(
  cd "$here"
  go build -trimpath -ldflags "-s -w" -o "$go_cache_tmp/karpenter-kwok" sigs.k8s.io/karpenter/kwok
  src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
  mkdir "$go_cache_tmp/crds"
  for f in "${crds[@]}"; do
    if [[ -f "$src/kwok/charts/crds/$f" ]]; then
      cp "$src/kwok/charts/crds/$f" "$go_cache_tmp/crds/"
    else
      cp "$src/kwok/apis/crds/$f" "$go_cache_tmp/crds/"
    fi
  done
  # The instance shapes the provider offers (names, cpu, memory, prices), for
  # NodePools to pick from and for readers.
  cp "$src/kwok/cloudprovider/instance_types.json" "$go_cache_tmp/"
  chmod u+w "$go_cache_tmp"/crds/* "$go_cache_tmp/instance_types.json"
)
go_cache_commit
