#!/usr/bin/env bash
# A real local control plane on loopback for tests and the demo:
# etcd + kube-apiserver (with the aggregation layer's front proxy) +
# kube-controller-manager (garbage collector, namespace, service-account,
# deployment, endpointslice, disruption and HPA controllers) + kube-scheduler + kwok with one fake node
# ("kwok-node-0"), so pods are scheduled and reach Running without a kubelet.
# node.sh adds an optional real node (kubelet + containerd) to a running one.
# Everything listens on free loopback ports; certificates and tokens are
# generated into the cluster folder.
#
# kwok drives pod status (Running, and deletion of pods with a nodeName).
# A test that wants to drive a pod's status itself annotates the pod
# kwok.x-k8s.io/status=custom and patches /status.
#
#   cluster.sh start DIR [OWNER_PID]   start; write DIR/env and DIR/kubeconfig
#   cluster.sh stop DIR                stop every process and remove DIR
#   cluster.sh restart-apiserver DIR   kill -9 kube-apiserver, start it again on the same port
#   cluster.sh stop-apiserver DIR      kill -9 kube-apiserver only
#   cluster.sh start-apiserver DIR     start a stopped kube-apiserver on the same port
#
# A reaper process watches OWNER_PID (default: the caller) and tears the
# cluster down when the owner disappears, so a crashed or killed test run
# leaks no process. DIR/env is a shell file: source it for KUBECONFIG,
# OCTORUN_TEST_APISERVER, OCTORUN_TEST_TOKEN, OCTORUN_TEST_CA and friends,
# with this cluster's kubectl and the pinned helm first on PATH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { sed -n '2,17p' "$0" >&2; exit 2; }

log() { echo "cluster.sh: $*" >&2; }
# free_port, wait_for, launch, kill_named, start_reaper
source "$here/daemons.sh"


make_certs() {
  local d=$dir/pki
  mkdir -p "$d"
  (
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=octorun-test-ca \
      -keyout ca.key -out ca.crt -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key \
      -out apiserver.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -out apiserver.crt -extfile apiserver.ext 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin" -keyout admin.key \
      -out admin.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -out admin.crt -extfile client.ext 2>/dev/null
    # The apiserver's identity towards kubelets (logs, exec, port-forward on a
    # real node, node.sh); bound to system:kubelet-api-admin once it runs.
    openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver-kubelet-client \
      -keyout apiserver-kubelet-client.key -out apiserver-kubelet-client.csr 2>/dev/null
    openssl x509 -req -in apiserver-kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -days 3650 -out apiserver-kubelet-client.crt -extfile client.ext 2>/dev/null
    # The aggregation layer: the apiserver proxies to aggregated API servers
    # (prometheus-adapter's custom.metrics.k8s.io) with this client
    # certificate, from a CA of its own that those servers trust for the
    # X-Remote-User/-Group headers (requestheader). EC keys: cheap to make.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
      -subj /CN=octorun-test-front-proxy-ca -keyout front-proxy-ca.key -out front-proxy-ca.crt \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=front-proxy-client \
      -keyout front-proxy-client.key -out front-proxy-client.csr 2>/dev/null
    openssl x509 -req -in front-proxy-client.csr -CA front-proxy-ca.crt -CAkey front-proxy-ca.key \
      -CAcreateserial -days 3650 -out front-proxy-client.crt -extfile client.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    # An admin token, and a user with no roles (tests bind roles to it to see
    # RBAC answers).
    admin=$(openssl rand -hex 32) user=$(openssl rand -hex 32)
    {
      printf '%s,admin,admin-uid,"system:masters"\n' "$admin"
      printf '%s,octorun-test-user,user-uid\n' "$user"
    } >tokens.csv
    printf '%s' "$admin" >admin.token
    printf '%s' "$user" >user.token
    rm -f ./*.csr ./*.ext
  )
}

write_kubeconfig() {  # write_kubeconfig FILE TOKEN_FILE
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: octorun-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $dir/pki/ca.crt
users:
- name: user
  user:
    token: $(cat "$2")
contexts:
- name: octorun-test
  context:
    cluster: octorun-test
    user: user
current-context: octorun-test
EOF
}

port_free() {
  python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1"
}

start_apiserver() {
  # shellcheck disable=SC1091
  source "$dir/ports"
  # After a restart's kill, a zombie apiserver may still hold its port while
  # its other threads exit.
  wait_for 30 "port $api_port to be free" port_free "$api_port"
  # Towards a real node (node.sh): the apiserver calls its kubelet with a
  # client certificate, checks the kubelet's serving certificate, and dials its
  # InternalIP only (never a DNS lookup of the node name). There is no
  # kube-proxy: webhook and aggregated API Services are called at their
  # EndpointSlices' addresses (aggregator routing), not at the ClusterIP.
  launch kube-apiserver "$bin/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --cert-dir="$dir/pki" --tls-cert-file="$dir/pki/apiserver.crt" \
    --tls-private-key-file="$dir/pki/apiserver.key" --client-ca-file="$dir/pki/ca.crt" \
    --token-auth-file="$dir/pki/tokens.csv" --authorization-mode=RBAC \
    --service-account-issuer="https://127.0.0.1:$api_port" \
    --service-account-key-file="$dir/pki/sa.pub" \
    --service-account-signing-key-file="$dir/pki/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins=ServiceAccount \
    --endpoint-reconciler-type=none \
    --kubelet-client-certificate="$dir/pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$dir/pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$dir/pki/ca.crt" \
    --kubelet-preferred-address-types=InternalIP \
    --enable-aggregator-routing=true \
    --requestheader-client-ca-file="$dir/pki/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$dir/pki/front-proxy-client.crt" \
    --proxy-client-key-file="$dir/pki/front-proxy-client.key"
  wait_for 120 "kube-apiserver /readyz" \
    curl -fsS --cacert "$dir/pki/ca.crt" "https://127.0.0.1:$api_port/readyz"
}

create_fake_node() {
  "$bin/kubectl" --kubeconfig="$dir/kubeconfig" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    type: kwok
    kubernetes.io/hostname: $1
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
status:
  allocatable: {cpu: "1000", memory: 4Ti, pods: "10000"}
  capacity: {cpu: "1000", memory: 4Ti, pods: "10000"}
EOF
  # The apiserver taints new nodes not-ready; the node lifecycle controller
  # that would lift it is not running here.
  "$bin/kubectl" --kubeconfig="$dir/kubeconfig" taint node "$1" node.kubernetes.io/not-ready:NoSchedule- >/dev/null
}

case "$cmd" in
start)
  owner=${3:-$PPID}
  bin=$("$here/build.sh" | tail -n 1)
  [[ ! -e "$dir/env" ]] || { log "$dir already holds a cluster"; exit 1; }
  mkdir -p "$dir/logs" "$dir/pids" "$dir/etcd"
  dir=$(cd "$dir" && pwd)
  echo "$bin" >"$dir/bin"
  start_reaper "$owner" "$dir" "$here/cluster.sh" stop reaper
  make_certs
  etcd_port=$(free_port) peer_port=$(free_port) api_port=$(free_port)
  printf 'etcd_port=%s\npeer_port=%s\napi_port=%s\n' "$etcd_port" "$peer_port" "$api_port" >"$dir/ports"

  launch etcd "$bin/etcd" --data-dir="$dir/etcd" --name=octorun-test \
    --listen-client-urls="http://127.0.0.1:$etcd_port" \
    --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="octorun-test=http://127.0.0.1:$peer_port" \
    --unsafe-no-fsync --quota-backend-bytes=$((2 * 1024 * 1024 * 1024))
  wait_for 60 "etcd" curl -fsS "http://127.0.0.1:$etcd_port/health"
  start_apiserver

  write_kubeconfig "$dir/kubeconfig" "$dir/pki/admin.token"
  # Besides GC, namespaces and ServiceAccounts: Deployments get their pods,
  # Services their EndpointSlices (where the apiserver calls a webhook Service),
  # PodDisruptionBudgets their status (the Eviction API decides on it),
  # HorizontalPodAutoscalers scale their targets (every second: the
  # autoscaling test waits on it; idle without HPAs).
  # Not the root CA publisher: tests count the ConfigMaps of a namespace.
  controllers=garbage-collector-controller,namespace-controller,serviceaccount-controller
  controllers+=,deployment-controller,replicaset-controller,endpointslice-controller,disruption-controller
  controllers+=,horizontal-pod-autoscaler-controller
  # Pod GC: pods bound to a node that is gone are deleted (bench/chaos deletes the node).
  controllers+=,pod-garbage-collector-controller
  # Octorun's CRDs before the controller manager: its garbage collector
  # follows the resources discovery shows when it starts (one added later
  # only after its 30 s discovery resync), and a deleted Runner's Pod and
  # JIT Secret go by garbage collection. As on a real cluster, where the
  # CRDs are installed long before any Runner is deleted.
  wait_for 60 "the CRDs (apply)" "$bin/kubectl" --kubeconfig="$dir/kubeconfig" apply -f "$here/../../crds"
  wait_for 60 "the CRDs (Established)" "$bin/kubectl" --kubeconfig="$dir/kubeconfig" \
    wait --for=condition=Established crd/runners.octorun.io crd/runnersets.octorun.io --timeout=5s
  launch kube-controller-manager "$bin/kube-controller-manager" \
    --kubeconfig="$dir/kubeconfig" --leader-elect=false --secure-port=0 \
    --controllers="$controllers" --horizontal-pod-autoscaler-sync-period=1s
  # The namespace controller needs discovery; the garbage collector starts
  # once it has synced. Both are ready when the default ServiceAccount appears.
  wait_for 120 "kube-controller-manager (default ServiceAccount)" \
    "$bin/kubectl" --kubeconfig="$dir/kubeconfig" -n default get serviceaccount default

  launch kube-scheduler "$bin/kube-scheduler" --kubeconfig="$dir/kubeconfig" \
    --leader-elect=false --secure-port=0
  # Karpenter's nodes (karpenter.sh, label karpenter.sh/nodepool) carry kwok's
  # annotation too: the kwok of karpenter.sh runs them, with slow pod stages.
  launch kwok "$bin/kwok" --kubeconfig="$dir/kubeconfig" -c "$bin/kwok-stages.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --manage-nodes-with-label-selector='!karpenter.sh/nodepool' \
    --disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom \
    --server-address=127.0.0.1:0 --node-lease-duration-seconds=40
  create_fake_node kwok-node-0
  wait_for 60 "kwok to mark the fake node Ready" \
    "$bin/kubectl" --kubeconfig="$dir/kubeconfig" wait --for=condition=Ready node/kwok-node-0 --timeout=1s

  # kubectl and helm first on PATH for whoever sources env: this cluster's
  # kubectl, and the pinned helm (built into its cache on first use).
  mkdir -p "$dir/path"
  ln -sf "$bin/kubectl" "$dir/path/kubectl"
  printf '#!/usr/bin/env bash\nset -euo pipefail\nhelm=$(%q | tail -n 1)\nexec "$helm" "$@"\n' \
    "$here/../tools/helm/build.sh" >"$dir/path/helm"
  chmod +x "$dir/path/helm"
  cat >"$dir/env" <<EOF
export PATH=$dir/path:\$PATH
export KUBECONFIG=$dir/kubeconfig
export OCTORUN_TEST_CLUSTER=$dir
export OCTORUN_TEST_APISERVER=https://127.0.0.1:$api_port
export OCTORUN_TEST_CA=$dir/pki/ca.crt
export OCTORUN_TEST_TOKEN=$(cat "$dir/pki/admin.token")
export OCTORUN_TEST_USER_TOKEN=$(cat "$dir/pki/user.token")
export OCTORUN_TEST_CLIENT_CERT=$dir/pki/admin.crt
export OCTORUN_TEST_CLIENT_KEY=$dir/pki/admin.key
export OCTORUN_TEST_ETCD=http://127.0.0.1:$etcd_port
export OCTORUN_TEST_BIN=$bin
EOF
  log "ready: https://127.0.0.1:$api_port (source $dir/env)"
  ;;
stop)
  [[ -d "$dir" ]] || exit 0
  # A real node first, while the apiserver still answers.
  [[ ! -d "$dir/node" ]] || "$here/node.sh" down "$dir" || log "node.sh down failed"
  [[ ! -d "$dir/karpenter" ]] || "$here/karpenter.sh" down "$dir" || log "karpenter.sh down failed"
  # The data is thrown away: no need for graceful shutdowns.
  for name in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do kill_named "$name" KILL; done
  reaper_pid=$(cat "$dir/pids/reaper" 2>/dev/null || true)
  rm -rf "$dir"
  # The reaper exits on its own once DIR is gone; don't kill the caller if it is the reaper.
  [[ -z "$reaper_pid" || "$reaper_pid" == "$$" || "$reaper_pid" == "$PPID" ]] ||
    kill "$reaper_pid" 2>/dev/null || true
  ;;
stop-apiserver)
  kill_named kube-apiserver KILL
  ;;
start-apiserver)
  bin=$(cat "$dir/bin")
  start_apiserver
  ;;
restart-apiserver)
  kill_named kube-apiserver KILL
  bin=$(cat "$dir/bin")
  start_apiserver
  ;;
*)
  sed -n '2,17p' "$0" >&2
  exit 2
  ;;
esac
