#!/usr/bin/env bash
# A real multi-host Ray cluster on one machine: three network namespaces ("hosts") on a private bridge,
# `ray start --head` in one and `ray start --address=…` in the two others, each on its own IP. A driver in
# the head's namespace runs tasks through tetrarch's public API (the code reaches the workers through
# Ray's runtime_env, not the shared disk) and prints which node ran each step. Everything is torn down on
# exit, also on error or Ctrl-C, and a leftover of an earlier run is removed first.
#
#   sudo benchmarks/cluster/netns_cluster.sh            # from the repo root; needs root (ip netns)
#   PYTHON=.venv/bin/python TASKS=6 sudo -E benchmarks/cluster/netns_cluster.sh
#
# Addresses: 10.77.0.0/24 inside our own namespaces only. The bridge lives in a fourth namespace, so the
# machine's own network is never touched.
set -euo pipefail

PYTHON=${PYTHON:-python}
PYTHON=$(command -v "$PYTHON")
RAY="$(dirname "$PYTHON")/ray"
TASKS=${TASKS:-4}
STEPS=${STEPS:-6}
SUBNET=10.77.0
SWITCH=tet-switch
NODES=(tet-head tet-w1 tet-w2)
IPS=("$SUBNET.1" "$SUBNET.2" "$SUBNET.3")
# Each node keeps its sessions under its own temp dir: `ray start --head` writes the cluster's address to
# <temp-dir>/ray_current_cluster, and in the default /tmp/ray every plain ray.init() on this machine would
# try to join this cluster.
TMP_ROOT=/tmp/tetrarch-netns
GCS_PORT=6379

log() { printf '[netns] %s\n' "$*"; }

stop_namespace() {
    local ns=$1 pids
    ip netns list | grep -qw "$ns" || return 0
    # Only processes inside our namespace: `ray stop` would kill every Ray process on the machine.
    pids=$(ip netns pids "$ns" || true)
    if [ -n "$pids" ]; then
        kill -TERM $pids 2>/dev/null || true
        for _ in $(seq 20); do
            pids=$(ip netns pids "$ns" || true)
            [ -z "$pids" ] && break
            sleep 0.25
        done
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    fi
    ip netns del "$ns" 2>/dev/null || true
}

cleanup() {
    # Every command here tolerates "already gone" itself: no `set +e`, which would outlive the first call.
    local status=$?
    for ns in "${NODES[@]}"; do stop_namespace "$ns"; done
    stop_namespace "$SWITCH"
    rm -rf "$TMP_ROOT"
    [ "$status" -ne 0 ] && log "failed (exit $status); cleaned up"
    return "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || { echo "run as root: ip netns needs it" >&2; exit 2; }
[ -x "$RAY" ] || { echo "no ray executable beside $PYTHON; set PYTHON to the venv's python" >&2; exit 2; }
cleanup  # idempotent: remove what an interrupted earlier run left

log "network: bridge in $SWITCH, ${#NODES[@]} hosts on $SUBNET.0/24"
ip netns add "$SWITCH"
ip -n "$SWITCH" link add br0 type bridge
ip -n "$SWITCH" link set br0 up
for i in "${!NODES[@]}"; do
    ns=${NODES[$i]}
    ip netns add "$ns"
    ip -n "$SWITCH" link add "port$i" type veth peer name eth0 netns "$ns"
    ip -n "$SWITCH" link set "port$i" master br0 up
    ip -n "$ns" addr add "${IPS[$i]}/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
done
ip netns exec tet-w2 "$PYTHON" - "${IPS[0]}" <<'EOF'
import socket, subprocess, sys
# The namespaces reach each other (and nothing else): a TCP connect to a closed port is refused, not unreachable.
s = socket.socket(); s.settimeout(2)
try:
    s.connect((sys.argv[1], 9))
except ConnectionRefusedError:
    print(f"[netns] {sys.argv[1]} reachable from tet-w2")
EOF

# Ray 2.60 turns on token authentication for `ray start --head` when ~/.ray/auth_token exists, and then
# every node and driver needs the token. This cluster gets its own token, handed to all of them.
mkdir -p "$TMP_ROOT"
"$PYTHON" -c 'import secrets; print(secrets.token_hex(32))' > "$TMP_ROOT/auth_token"
chmod 600 "$TMP_ROOT/auth_token"
export RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH="$TMP_ROOT/auth_token"

common=(--num-cpus=1 --object-store-memory=150000000 --disable-usage-stats)
log "ray start --head on ${IPS[0]}"
ip netns exec tet-head "$RAY" start --head --node-ip-address="${IPS[0]}" --port=$GCS_PORT \
    --resources='{"head": 1}' --include-dashboard=false --temp-dir="$TMP_ROOT/head" "${common[@]}" >/dev/null
for i in 1 2; do
    log "ray start --address=${IPS[0]}:$GCS_PORT on ${IPS[$i]}"
    ip netns exec "${NODES[$i]}" "$RAY" start --address="${IPS[0]}:$GCS_PORT" --node-ip-address="${IPS[$i]}" \
        --resources='{"exec": 2}' --temp-dir="$TMP_ROOT/w$i" "${common[@]}" >/dev/null
done

# The driver runs outside the checkout: Ray would put its working directory on every worker's sys.path,
# which on one machine makes the shared disk, not the runtime_env, deliver the code. From an empty
# directory the workers can import the project only from what the driver shipped.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$TMP_ROOT/driver"
log "driver in tet-head: $TASKS tasks of $STEPS steps"
(cd "$TMP_ROOT/driver" && ip netns exec tet-head env -u RAY_ADDRESS PYTHONPATH="$REPO" "$PYTHON" \
    -m benchmarks.cluster.netns_driver --address "${IPS[0]}:$GCS_PORT" --tasks "$TASKS" --steps "$STEPS")
log "done; tearing down"
