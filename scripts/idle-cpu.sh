#!/bin/bash
# idle-cpu.sh N [SECONDS] [gvs|ovs|both] — idle CPU of gvs-vswitchd and of
# Debian's Open vSwitch (ovsdb-server + ovs-vswitchd, netdev datapath) with
# N idle veth ports, in the same run, on the same veths.
#
# Everything lives in two namespaces of this run's own (ic<pid>sw holds the
# switch and the ports, ic<pid>pe the veth peers, which carry no address and
# send nothing: IPv6 is off in both namespaces unless IPV6=1); the daemons run in
# a private temporary directory and are stopped by pid; the namespaces and
# the directory are deleted at the end, also on failure. Needs root and
# bin/gvs-vswitchd (make build).
#
# After all ports are up, each switch settles for SETTLE seconds (default
# 10), then its CPU (utime+stime from /proc/PID/stat) is read over SECONDS
# (default 30). Open vSwitch's figure is ovs-vswitchd's alone and with
# ovsdb-server (gvs-vswitchd hosts its database in the same process).
# GVS_BINS="DIR..." measures each DIR/gvs-vswitchd in turn (default: bin/);
# PROFILE=FILE records each gvs with perf afterwards, into FILE.1, ...;
# SYSCALLS=1 counts each gvs's system calls over 10 s afterwards (strace
# -c), to see per-port periodic calls (a socket per port per read, ...).
set -euo pipefail

N=${1:-200}
SECS=${2:-30}
WHICH=${3:-both}
SETTLE=${SETTLE:-10}
BIN=${BIN:-$(cd "$(dirname "$0")/.." && pwd)/bin}
P=ic$$
SW=${P}sw
PEER=${P}pe
DIR=$(mktemp -d /tmp/${P}.XXXX)
PIDS=()

cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	done
	ip netns del "$SW" 2>/dev/null || true
	ip netns del "$PEER" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT

ticks() { # utime+stime of pid, in clock ticks
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
hz=$(getconf CLK_TCK)

ip netns add "$SW"
ip netns add "$PEER"
if [ -z "${IPV6:-}" ]; then
	# No router solicitations, DAD or MLD reports from N new links, each
	# flooded to N-1 ports: the ports stay idle. IPV6=1 keeps them.
	for ns in "$SW" "$PEER"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	done
fi
{
	for i in $(seq "$N"); do
		echo "link add ${P}a$i netns $SW type veth peer name ${P}b$i netns $PEER"
	done
} | ip -batch -
ip -n "$SW" link set lo up
for i in $(seq "$N"); do echo "link set ${P}a$i up"; done | ip -n "$SW" -batch -
for i in $(seq "$N"); do echo "link set ${P}b$i up"; done | ip -n "$PEER" -batch -

addports() { # vsctl command prefix...
	local args=(--timeout=600 add-br br0 -- set bridge br0 datapath_type=netdev)
	for i in $(seq "$N"); do args+=(-- add-port br0 "${P}a$i"); done
	"$@" "${args[@]}"
}

measure() { # label pid...
	local label=$1; shift
	sleep "$SETTLE"
	local t0=0 t1=0 pid
	for pid in "$@"; do t0=$((t0 + $(ticks "$pid"))); done
	local w0; w0=$(date +%s.%N)
	sleep "$SECS"
	for pid in "$@"; do t1=$((t1 + $(ticks "$pid"))); done
	local w1; w1=$(date +%s.%N)
	awk -v l="$label" -v n="$N" -v t="$((t1 - t0))" -v hz="$hz" -v w0="$w0" -v w1="$w1" \
		'BEGIN { printf "%-28s ports=%d cpu=%.2f%% of one core (%d ticks in %.1f s)\n", l, n, 100*t/hz/(w1-w0), t, w1-w0 }'
}

stop() { # pid
	kill "$1" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$1" 2>/dev/null || true
}

if [ "$WHICH" = gvs ] || [ "$WHICH" = both ]; then
	k=0
	for bin in ${GVS_BINS:-$BIN}; do
		k=$((k + 1))
		G=$DIR/gvs$k
		mkdir -p "$G"
		OVS_RUNDIR=$G OVS_DBDIR=$G OVS_LOGDIR=$G ip netns exec "$SW" "$bin/gvs-vswitchd" \
			--unixctl="$G/ovs-vswitchd.ctl" --pidfile="$G/ovs-vswitchd.pid" --log-file="$G/ovs-vswitchd.log" \
			>"$G/out" 2>&1 &
		gpid=$!
		PIDS+=("$gpid")
		for _ in $(seq 100); do [ -S "$G/db.sock" ] && break; sleep 0.1; done
		vs=(ovs-vsctl --db="unix:$G/db.sock")
		"${vs[@]}" --no-wait init
		t0=$(date +%s.%N)
		addports "${vs[@]}"
		echo "gvs ($bin): $N ports added in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s"
		measure "gvs-vswitchd ($bin)" "$gpid"
		if [ -n "${SYSCALLS:-}" ]; then
			timeout -s INT 10 strace -c -f -p "$gpid" -o "$G/syscalls" >/dev/null 2>&1 || true
			echo "gvs ($bin): system calls in 10 s:"
			head -n 15 "$G/syscalls"
		fi
		if [ -n "${PROFILE:-}" ]; then
			perf record -F 499 -g -p "$gpid" -o "$PROFILE.$k" -- sleep "$SECS" >/dev/null 2>&1
		fi
		stop "$gpid"
	done
fi

if [ "$WHICH" = ovs ] || [ "$WHICH" = both ]; then
	O=$DIR/ovs
	mkdir -p "$O"
	export OVS_RUNDIR=$O OVS_DBDIR=$O OVS_LOGDIR=$O OVS_SYSCONFDIR=$O
	ovsdb-tool create "$O/conf.db" /usr/share/openvswitch/vswitch.ovsschema
	ovsdb-server "$O/conf.db" --remote="punix:$O/db.sock" --unixctl="$O/ovsdb-server.ctl" \
		--pidfile="$O/ovsdb-server.pid" --log-file="$O/ovsdb-server.log" >"$O/db.out" 2>&1 &
	dpid=$!
	PIDS+=("$dpid")
	for _ in $(seq 100); do [ -S "$O/db.sock" ] && break; sleep 0.1; done
	vs=(ovs-vsctl --db="unix:$O/db.sock")
	"${vs[@]}" --no-wait init
	ip netns exec "$SW" ovs-vswitchd "unix:$O/db.sock" --unixctl="$O/ovs-vswitchd.ctl" \
		--pidfile="$O/ovs-vswitchd.pid" --log-file="$O/ovs-vswitchd.log" >"$O/out" 2>&1 &
	opid=$!
	PIDS+=("$opid")
	for _ in $(seq 100); do [ -S "$O/ovs-vswitchd.ctl" ] && break; sleep 0.1; done
	t0=$(date +%s.%N)
	addports "${vs[@]}"
	echo "ovs: $N ports added in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}') s"
	measure "ovs-vswitchd + ovsdb-server" "$opid" "$dpid" &
	m1=$!
	measure "ovs-vswitchd" "$opid"
	wait "$m1"
	stop "$opid"
	stop "$dpid"
fi
