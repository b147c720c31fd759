#!/usr/bin/env bash
# An optional real node for the test cluster of cluster.sh: "real-node-0", the
# kubelet of build-kubelet.sh on Debian's containerd and runc, joined to the
# loopback apiserver. Host networking only: a loopback-only CNI network makes
# the node Ready, and only hostNetwork pods run on it. Images come from
# archives imported into its containerd; nothing is pulled.
#
#   node.sh up DIR            add the node to the running cluster in DIR (as root)
#   node.sh import DIR FILE   import an image archive (docker-archive or OCI)
#   node.sh down DIR          stop it, undo its host changes (cluster.sh stop calls it)
#
# The node is tainted octorun.io/real-node=true:NoSchedule, so only pods that
# tolerate it (and ask for it, nodeSelector kubernetes.io/hostname=real-node-0)
# land there. Images: registry.k8s.io/pause:3.6 (the sandbox, from pause.c) and
# localhost/octorun/busybox:test (Debian's static busybox, for tests).
#
# The kubelet keeps global host state (/var/lib/kubelet/device-plugins, the
# kubepods cgroups, three sysctls; containerd's /run/containerd/s shim
# sockets): one real node per machine at a time, so `up` waits for a host-wide
# lock that the node holds until `down`. `down` restores what `up` changed,
# and says so when iptables differ from before (they should not:
# makeIPTablesUtilChains is off and the CNI network is loopback only).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { sed -n '2,10p' "$0" >&2; exit 2; }
node=real-node-0
lock=/run/octorun-real-node.lock
run=/run/octorun-real-node # sockets (short paths), containerd's state
sock=$run/containerd.sock
# Host paths the kubelet creates whatever its configuration says (removed by
# down unless they were there before), and paths other containerds on the
# machine may share (only emptied of what is ours, removed when empty).
kubelet_paths=(/var/lib/kubelet /var/log/containers /var/log/pods)
shared_paths=(/run/containerd/s /run/containerd /run/netns)

log() { echo "node.sh: $*" >&2; }
fail() { echo "node.sh: error: $*" >&2; exit 1; }

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { log "timed out waiting for $what"; return 1; }
    sleep 0.2
  done
}

# shellcheck source=free_port.sh
source "$here/free_port.sh"

# A docker-archive ("docker save" layout: manifest.json with RepoTags, a config,
# one uncompressed layer) of ROOTFS, which `ctr images import` names REF.
docker_archive() { # docker_archive OUT REF ROOTFS ENTRYPOINT_JSON
  local out=$1 ref=$2 rootfs=$3 entry=$4 w diff cfg
  w=$(mktemp -d)
  tar -C "$rootfs" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$w/layer.tar" .
  diff=$(sha256sum "$w/layer.tar" | cut -d' ' -f1)
  mkdir "$w/$diff"
  mv "$w/layer.tar" "$w/$diff/layer.tar"
  printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/bin"],"Entrypoint":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$entry" "$diff" >"$w/config.json"
  cfg=$(sha256sum "$w/config.json" | cut -d' ' -f1)
  mv "$w/config.json" "$w/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]\n' "$cfg" "$ref" "$diff" >"$w/manifest.json"
  tar -C "$w" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$out" manifest.json "$cfg.json" "$diff"
  rm -rf "$w"
}

build_images() { # build_images OUTDIR
  local out=$1 w
  w=$(mktemp -d)
  mkdir -p "$w/pause" "$w/busybox/bin" "$w/busybox/etc" "$w/busybox/tmp"
  gcc -static -O2 -s -o "$w/pause/pause" "$here/node/pause.c"
  docker_archive "$out/pause.tar" registry.k8s.io/pause:3.6 "$w/pause" '["/pause"]'
  cp "$(command -v busybox)" "$w/busybox/bin/busybox"
  for a in sh cat echo hostname httpd id kill ls mkdir sleep test wget; do ln -s busybox "$w/busybox/bin/$a"; done
  echo 'root:x:0:0:root:/:/bin/sh' >"$w/busybox/etc/passwd"
  echo 'root:x:0:' >"$w/busybox/etc/group"
  chmod 1777 "$w/busybox/tmp"
  docker_archive "$out/busybox.tar" localhost/octorun/busybox:test "$w/busybox" '["/bin/sh"]'
  rm -rf "$w"
}

write_containerd_config() { # write_containerd_config N
  local n=$1
  mkdir -p "$n/cni"
  echo '{"cniVersion": "0.4.0", "name": "octorun-lo", "plugins": [{"type": "loopback"}]}' \
    >"$n/cni/10-octorun-lo.conflist"
  cat >"$n/containerd.toml" <<EOF
version = 2
root = "$n/containerd"
state = "$run/state"
oom_score = 0
[grpc]
  address = "$sock"
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    # Imported from pause.tar: there is no registry to pull it from.
    sandbox_image = "registry.k8s.io/pause:3.6"
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    enable_selinux = false
    # The host may lack CAP_SYS_RESOURCE in its bounding set: then runc cannot
    # lower oom_score_adj (-998 for sandboxes) and every sandbox fails with
    # "can't get final child's PID from pipe: EOF".
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          BinaryName = "$(command -v runc)"
          Root = "$run/runc"
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "$n/cni"
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = "$n/opt"
EOF
}

write_certs() { # write_certs N NODE_IP  (signed by the cluster's CA)
  local n=$1 ip=$2 ca=$dir/pki
  mkdir -p "$n/pki"
  sign() { # sign NAME SUBJECT EXTENSIONS
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$n/pki/$1.key" -out "$n/pki/$1.csr" 2>/dev/null
    printf '%b' "$3" >"$n/pki/$1.ext"
    openssl x509 -req -in "$n/pki/$1.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -CAcreateserial \
      -CAserial "$n/pki/ca.srl" -days 365 -out "$n/pki/$1.crt" -extfile "$n/pki/$1.ext" 2>/dev/null
    rm -f "$n/pki/$1.csr" "$n/pki/$1.ext"
  }
  # The node's identity towards the apiserver, and its serving certificate
  # (the apiserver checks it with --kubelet-certificate-authority).
  sign kubelet-client "/O=system:nodes/CN=system:node:$node" 'extendedKeyUsage=clientAuth\n'
  sign kubelet-serving "/O=system:nodes/CN=system:node:$node" \
    "subjectAltName=IP:$ip,DNS:$node\nextendedKeyUsage=serverAuth\n"
  cat >"$n/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: octorun-test
  cluster: {server: "$OCTORUN_TEST_APISERVER", certificate-authority: "$ca/ca.crt"}
users:
- name: $node
  user: {client-certificate: "$n/pki/kubelet-client.crt", client-key: "$n/pki/kubelet-client.key"}
contexts:
- name: $node
  context: {cluster: octorun-test, user: $node}
current-context: $node
EOF
}

write_kubelet_config() { # write_kubelet_config N NODE_IP PORT
  local n=$1 ip=$2 port=$3
  mkdir -p "$n/kubelet" "$n/pod-logs" "$n/volume-plugins"
  cat >"$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# A cgroup v1 (or hybrid) host: 1.36 refuses it unless told otherwise.
failCgroupV1: false
# containerd 1.6 cannot report its driver (no RuntimeConfig RPC); SystemdCgroup = false.
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$sock
imageServiceEndpoint: unix://$sock
# Else the kubelet adds KUBE-FIREWALL, KUBE-KUBELET-CANARY and KUBE-IPTABLES-HINT chains.
makeIPTablesUtilChains: false
volumePluginDir: $n/volume-plugins
podLogsDir: $n/pod-logs
address: $ip
port: $port
readOnlyPort: 0
healthzPort: 0
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
failSwapOn: false
# The imported images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%"}
maxPods: 20
registerWithTaints:
- {key: octorun.io/real-node, value: "true", effect: NoSchedule}
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $dir/pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $n/pki/kubelet-serving.crt
tlsPrivateKeyFile: $n/pki/kubelet-serving.key
EOF
}

# Runs a daemon in a session of its own, without the lock's descriptor.
launch() { # launch N NAME COMMAND...
  local n=$1 name=$2
  shift 2
  setsid "$@" >>"$n/logs/$name.log" 2>&1 </dev/null 9>&- &
  echo $! >"$n/pids/$name"
}

stop_pid() { # stop_pid PIDFILE
  [[ -f $1 ]] || return 0
  local pid
  pid=$(cat "$1")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    local state
    state=$(ps -o stat= -p "$pid" 2>/dev/null || true)
    [[ -n "$state" && "$state" != Z* ]] || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$1"
}

up() {
  [[ $(id -u) -eq 0 ]] || fail "the real node needs root (containerd, the kubelet, mounts, cgroups)"
  [[ -f "$dir/env" ]] || fail "no cluster in $dir (cluster.sh start first)"
  dir=$(cd "$dir" && pwd)
  local n=$dir/node
  [[ ! -e $n ]] || fail "$n exists: node.sh down first"
  # shellcheck disable=SC1091
  source "$dir/env"
  for tool in containerd ctr runc busybox gcc openssl; do
    command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh installs it)"
  done
  [[ -x /usr/lib/cni/loopback ]] || fail "/usr/lib/cni/loopback is missing (containernetworking-plugins)"
  local ip
  # The node's InternalIP: the kubelet refuses loopback, so the machine's own
  # NIC address (traffic to it stays on this machine).
  ip=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -n1)
  [[ -n $ip ]] || fail "no non-loopback IPv4 address on this machine for the node's InternalIP"
  local kubelet
  kubelet=$("$here/build-kubelet.sh" | tail -n 1)/kubelet

  exec 9>"$lock"
  if ! flock -n 9; then
    log "another real node runs on this machine ($(cat "$lock.owner" 2>/dev/null || echo '?')); waiting"
    flock -w 1800 9 || fail "the other real node did not go away within 30 minutes"
  fi
  echo "$dir" >"$lock.owner"
  mkdir -p "$n/logs" "$n/pids" "$n/host" "$n/images" "$run"
  # The lock stays held by a holder process until down.
  setsid sleep infinity >/dev/null 2>&1 </dev/null &
  echo $! >"$n/pids/lock-holder"
  exec 9>&-

  # The host state down restores.
  sysctl -n vm.overcommit_memory kernel.panic kernel.panic_on_oops >"$n/host/sysctl"
  for p in "${kubelet_paths[@]}"; do [[ -e $p ]] && echo "$p" >>"$n/host/preexisting"; done
  touch "$n/host/preexisting"
  iptables-save 2>/dev/null | grep -v '^#' >"$n/host/iptables" || true

  build_images "$n/images"
  write_containerd_config "$n"
  launch "$n" containerd containerd --config "$n/containerd.toml"
  wait_for 30 "containerd" ctr -a "$sock" version
  for image in "$n"/images/*.tar; do ctr -a "$sock" -n k8s.io images import "$image" >/dev/null; done

  local k=("$OCTORUN_TEST_BIN/kubectl" --kubeconfig="$KUBECONFIG")
  write_certs "$n" "$ip"
  # RBAC only (no Node authorizer), and system:node is bound to nobody by default.
  "${k[@]}" create clusterrolebinding "octorun-$node" --clusterrole=system:node \
    --user="system:node:$node" --dry-run=client -o yaml | "${k[@]}" apply -f - >/dev/null
  "${k[@]}" create clusterrolebinding octorun-apiserver-kubelet-client \
    --clusterrole=system:kubelet-api-admin --user=kube-apiserver-kubelet-client \
    --dry-run=client -o yaml | "${k[@]}" apply -f - >/dev/null

  write_kubelet_config "$n" "$ip" "$(free_port "$ip")"
  launch "$n" kubelet "$kubelet" --config="$n/kubelet.yaml" --kubeconfig="$n/kubeconfig" \
    --root-dir="$n/kubelet" --cert-dir="$n/pki" --hostname-override="$node" --node-ip="$ip" --v=2
  wait_for 120 "$node to be Ready" \
    "${k[@]}" wait --for=condition=Ready "node/$node" --timeout=1s ||
    { tail -n 30 "$n/logs/kubelet.log" >&2; exit 1; }
  # The apiserver taints a new node not-ready; the node lifecycle controller
  # that would lift it is not running here.
  "${k[@]}" taint node "$node" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
  echo "$ip" >"$n/ip"
  log "$node ready at $ip (kubelet $(cat "$n/pids/kubelet"), containerd $(cat "$n/pids/containerd"))"
}

import() { # import FILE
  local file=${3:-}
  [[ -f $file ]] || fail "no image archive $file"
  ctr -a "$sock" -n k8s.io images import "$file"
}

down() {
  [[ -d $dir/node ]] || exit 0
  dir=$(cd "$dir" && pwd)
  local n=$dir/node
  if [[ -f $dir/env ]]; then
    # shellcheck disable=SC1091
    source "$dir/env"
    timeout 10 "$OCTORUN_TEST_BIN/kubectl" --kubeconfig="$KUBECONFIG" delete node "$node" \
      --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  stop_pid "$n/pids/kubelet"
  # Containers outlive containerd (their shims): stop them through it first.
  if [[ -S $sock ]]; then
    local id
    for id in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr -a "$sock" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1 || true
    done
    for id in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      timeout 10 ctr -a "$sock" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
    done
  fi
  stop_pid "$n/pids/containerd"
  # Any shim of this containerd still running (by pid, matched on our socket).
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q "containerd-shim-runc-v2 .*-address $sock" &&
      kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
  # The kubelet bind-mounts its root onto itself; sandboxes leave shm and
  # overlay mounts when they were not torn down.
  awk -v n="$n" -v r="$run" 'index($2, n) == 1 || index($2, r) == 1 {print $2}' /proc/self/mounts |
    sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  local c
  for c in /sys/fs/cgroup/*/kubepods; do
    [[ -d $c ]] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  if [[ -s $n/host/sysctl ]]; then
    local s
    mapfile -t s <"$n/host/sysctl"
    sysctl -q -w vm.overcommit_memory="${s[0]}" kernel.panic="${s[1]}" kernel.panic_on_oops="${s[2]}"
  fi
  for p in "${kubelet_paths[@]}"; do
    grep -qx "$p" "$n/host/preexisting" 2>/dev/null || rm -rf "$p"
  done
  # Shim sockets nobody listens on any more (ours, killed), then empty folders.
  if [[ -d /run/containerd/s ]]; then
    local listening
    listening=$(ss -xlH 2>/dev/null | awk '{print $5}')
    for p in /run/containerd/s/*; do
      [[ -S $p ]] && ! grep -qxF "$p" <<<"$listening" && rm -f "$p"
    done
  fi
  for p in "${shared_paths[@]}"; do rmdir "$p" 2>/dev/null || true; done
  rm -rf "$run"
  if [[ -f $n/host/iptables ]] && ! diff <(iptables-save 2>/dev/null | grep -v '^#') "$n/host/iptables" >/dev/null; then
    log "iptables differ from before the node:"
    iptables-save >&2
  fi
  if awk -v n="$n" 'index($2, n) == 1 {found = 1} END {exit !found}' /proc/self/mounts; then
    fail "mounts left under $n; not removing it"
  fi
  local holder
  holder=$(cat "$n/pids/lock-holder" 2>/dev/null || true)
  rm -rf "$n"
  rm -f "$lock.owner"
  [[ -n $holder ]] && kill "$holder" 2>/dev/null || true
}

case "$cmd" in
up) up ;;
import) import "$@" ;;
down) down ;;
*)
  sed -n '2,10p' "$0" >&2
  exit 2
  ;;
esac
