# Sourced by the scripts that pick a port for a daemon they start later
# (daemons.sh, node.sh, scripts/try-chart.sh).
#
# free_port [ADDRESS]: a TCP port free on ADDRESS (127.0.0.1) now, below the
# kernel's ephemeral range. A port from bind(0) comes from that range, which
# is also where every outgoing connection takes its local port: a test's
# long-lived watch could hold the port picked for an apiserver by the time
# the apiserver binds it. Below the range only listeners compete, and the
# bind test sees those. Where the range starts too low to leave room, bind(0).
free_port() {
  python3 - "${1:-127.0.0.1}" <<'PY'
import random, socket, sys

address = sys.argv[1]
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])

def free(port):
    s = socket.socket()
    try:
        s.bind((address, port))
        return True
    except OSError:
        return False
    finally:
        s.close()

if low > 2048:
    for port in random.sample(range(max(1024, low - 12000), low), 200):
        if free(port):
            print(port)
            sys.exit(0)
s = socket.socket()
s.bind((address, 0))
print(s.getsockname()[1])
s.close()
PY
}
