#!/usr/bin/env bash
# The conformance test as ctest runs it: builds the driver if its pins or
# sources changed (build.sh, cached), then drives the github-simulator
# executable given as the only argument.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
driver=$("$here/build.sh" | tail -1)
exec "$driver" -simulator "$1"
