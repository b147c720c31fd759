#!/usr/bin/env bash
# Builds the helm CLI from the Go module pinned in this folder (go.mod/go.sum:
# helm.sh/helm/v4 as a `tool`). Helm has a module of its own, apart from the
# control plane's: helm 4.3 is built against k8s.io/* v0.37 and the control
# plane's module pins k8s.io/* v0.36.3 through replaces, which would force
# helm's dependencies back a minor version.
#
# The binary is a build output: it lives in a cache outside the repository,
# keyed on the pins and this script (test/tools/go-cache.sh), so it is rebuilt
# only when those change.
# Prints the path of the helm binary on the last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../go-cache.sh"
helm_version=$(go_module_version "$here" helm.sh/helm/v4 '^v4\.')
go_cache_begin helm helm "$here/go.mod" "$here/go.sum" "$here/build.sh" -- helm

stamp="-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version"
stamp+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
echo "building helm $helm_version into $go_cache_bin" >&2
(cd "$here" && go build -trimpath -ldflags "$stamp" -o "$go_cache_tmp/helm" helm.sh/helm/v4/cmd/helm)
go_cache_commit
