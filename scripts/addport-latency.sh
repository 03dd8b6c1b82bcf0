#!/bin/bash
# addport-latency.sh BINDIR [N] [K]: times `ovs-vsctl add-port` of one veth
# (waiting for cur_cfg, as ovs-vsctl does by default) against the real
# BINDIR/gvs-vswitchd (its embedded database) that already has N (default
# 100) veth ports: K (default 10) ports added one call each, back to back.
# Prints the time of the bulk add, each single add's and their median. With STRACE=FILE, the daemon is
# traced (strace -f -T) during the first of them, into FILE.
# The switch-side ends are in the root namespace, their peers in one
# namespace of the script's own; everything is made under a prefix of the
# script's pid and deleted on exit, also on failure. Needs root. Sends no
# traffic.
set -u
BIN=$(cd "${1:?usage: addport-latency.sh BINDIR [N] [K]}" && pwd)
N=${2:-100}
K=${3:-10}
P=gl$$
NS=${P}ns
RUN=$(mktemp -d /tmp/gvs-addport-XXXXXX)
export OVS_RUNDIR=$RUN OVS_DBDIR=$RUN OVS_LOGDIR=$RUN
DAEMON=

now() { date +%s%N; }

cleanup() {
	if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
		ovs-appctl -t ovs-vswitchd exit >/dev/null 2>&1
		for _ in $(seq 100); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
		kill "$DAEMON" 2>/dev/null
	fi
	ip netns del "$NS" 2>/dev/null # takes the veth pairs with it
	for i in $(seq 0 $((N + K - 1))); do ip link del "${P}v$i" 2>/dev/null; done
	rm -rf "$RUN"
}
trap cleanup EXIT

ip netns add "$NS" || exit 1
for i in $(seq 0 $((N + K - 1))); do
	ip link add "${P}v$i" type veth peer name "${P}p$i" netns "$NS" || exit 1
	ip link set "${P}v$i" up
	ip -n "$NS" link set "${P}p$i" up
done

"$BIN/gvs-vswitchd" --pidfile --log-file >/dev/null 2>&1 &
DAEMON=$!
for _ in $(seq 200); do
	ovs-vsctl --timeout=1 --no-wait show >/dev/null 2>&1 && break
	sleep 0.05
done
ovs-vsctl --no-wait init
ovs-vsctl add-br br0
args=()
for i in $(seq 0 $((N - 1))); do args+=(-- add-port br0 "${P}v$i"); done
t0=$(now)
ovs-vsctl --timeout=120 "${args[@]:1}" || exit 1
echo "$N ports in one transaction: $((($(now) - t0) / 1000000)) ms"
sleep 2 # let the bulk add settle

times=()
for i in $(seq "$N" $((N + K - 1))); do
	tracer=
	if [ -n "${STRACE:-}" ] && [ "$i" = "$N" ]; then
		strace -f -T -tt -p "$DAEMON" -o "$STRACE" 2>/dev/null &
		tracer=$!
		sleep 1
	fi
	t0=$(now)
	ovs-vsctl --timeout=30 add-port br0 "${P}v$i" || exit 1
	t=$((($(now) - t0) / 1000))
	if [ -n "$tracer" ]; then
		sleep 0.2
		kill "$tracer"
		wait "$tracer" 2>/dev/null
	fi
	times+=("$t")
done
ms() { awk '{ printf "%.1f", $1 / 1000 }' <<<"$1"; }
for t in "${times[@]}"; do printf '%s ' "$(ms "$t")"; done
echo
med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((K + 1) / 2))p")
echo "add-port at $N ports: median $(ms "$med") ms of $K"
