#!/usr/bin/env bash
# Builds scaleset-conformance: our test driver (the *.go files here) linked
# with GitHub's own Go client of the runner scale-set protocol,
# github.com/actions/scaleset, unmodified, at the version pinned in go.mod /
# go.sum (the client actions-runner-controller uses).
#
# The binary is a build output: it lives in a cache outside the repository,
# keyed on the pins, the driver's sources and this script, so it is rebuilt
# only when one of those changes. Prints the binary's path on the last line
# of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../go-cache.sh"
scaleset_version=$(go_module_version "$here" github.com/actions/scaleset '^v[0-9]+\.')
go_cache_begin scaleset-conformance scaleset-conformance "$here/go.mod" "$here/go.sum" "$here"/*.go \
  "$here/build.sh" -- scaleset-conformance

echo "building scaleset-conformance with github.com/actions/scaleset $scaleset_version into $go_cache_bin" >&2
(cd "$here" && go build -trimpath -ldflags "-s -w" -o "$go_cache_tmp/scaleset-conformance" .)
go_cache_commit
