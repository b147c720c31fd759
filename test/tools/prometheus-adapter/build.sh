#!/usr/bin/env bash
# Builds prometheus-adapter (the custom.metrics.k8s.io API server the
# autoscaling test registers through the aggregation layer) from the Go module
# pinned in this folder (go.mod/go.sum: sigs.k8s.io/prometheus-adapter as a
# `tool`). A module of its own: the adapter is built against k8s.io/* v0.30,
# and the control plane's module pins k8s.io/* v0.36.3 through replaces,
# which would force v0.36 on v0.30 code.
#
# The binary is a build output: it lives in a cache outside the repository,
# keyed on the pins and this script (test/tools/go-cache.sh), so it is rebuilt
# only when those change.
# Prints the path of the adapter binary on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../go-cache.sh"
version=$(go_module_version "$here" sigs.k8s.io/prometheus-adapter '^v0\.')
go_cache_begin prometheus-adapter prometheus-adapter "$here/go.mod" "$here/go.sum" "$here/build.sh" \
  -- prometheus-adapter

echo "building prometheus-adapter $version into $go_cache_bin" >&2
(cd "$here" && go build -trimpath -ldflags "-s -w" -o "$go_cache_tmp/prometheus-adapter" \
  sigs.k8s.io/prometheus-adapter/cmd/adapter)
go_cache_commit
