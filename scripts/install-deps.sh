#!/usr/bin/env bash
# Installs every build and test dependency from Debian packages, idempotently.
# Runs as root (CI, fresh machines) or through sudo when it is available.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl openssl
  libcaf-dev libcurl4-openssl-dev rapidjson-dev libcivetweb-dev prometheus-cpp-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libssl-dev zlib1g-dev
  libyaml-cpp-dev                        # the chart tests parse rendered manifests
  clang libclang-rt-14-dev clang-format  # libFuzzer for the fuzz targets; formatting
  python3                                # free ports for the test cluster; the layers check
  mmdebstrap umoci containerd runc       # the image (scripts/image.sh) and its test
  containernetworking-plugins busybox-static  # the real test node (test/controlplane/node.sh)
  prometheus                             # prometheus + promtool: the autoscaling and alert-rule tests
  gnuplot-nox                            # the load-test tool's plots (bench/loadtest)
  tinyproxy                              # a real proxy for the GitHub proxy tests (started by the tests)
  jq                                     # JSON in shell: the Karpenter tests, bench/starttime, the real-shaped demo
)

missing=()
for p in "${packages[@]}"; do
  if [[ $p == python3 ]] && command -v python3 >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
