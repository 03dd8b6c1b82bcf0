#!/bin/bash
# measure-rings.sh rss VSWITCHD [PORTS] [SOCKBUF]
# measure-rings.sh tcp VSWITCHD [RUNS] [SOCKBUF]
#
# Receive-ring memory and throughput of a gvs-vswitchd binary, driven by
# the real ovs-vsctl, in namespaces this script makes and deletes (names
# gvr<pid>..., addresses in 198.18.0.0/15; needs root):
#   rss: PORTS (default 200) idle veth ports added in one transaction;
#        prints the daemon's VmRSS 5 s later (and memory/show); with
#        SOCKBUF, sets userspace-sock-buf-size then and prints both again
#        $WAIT (default 5) s later.
#   tcp: two system ports between two namespaces; RUNS (default 3) iperf3
#        TCP runs of $DURATION (default 5) s; with SOCKBUF,
#        other_config:userspace-sock-buf-size is set first. Prints the
#        receive ring status of both ports at the end.
set -eu
mode=$1 bin=$(realpath "$2")
p=gvr$$
dir=$(mktemp -d)
export OVS_RUNDIR=$dir OVS_DBDIR=$dir OVS_LOGDIR=$dir
cleanup() {
	if [ -f "$dir/ovs-vswitchd.pid" ]; then
		pid=$(cat "$dir/ovs-vswitchd.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
	for ns in $(ip netns list | awk -v p="$p" 'index($1, p) == 1 {print $1}'); do ip netns del "$ns"; done
	ip -o link show | awk -F': ' -v p="$p" 'index($2, p) == 1 {sub(/@.*/, "", $2); print $2}' |
		while read -r l; do ip link del "$l" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
"$bin" --pidfile --log-file --detach --no-chdir -vconsole:off
ovs-vsctl --no-wait init
pid=$(cat "$dir/ovs-vswitchd.pid")

case $mode in
rss)
	ports=${3:-200}
	ip netns add "${p}ns"
	batch=$(mktemp)
	for i in $(seq "$ports"); do
		echo "link add $p$i type veth peer name ${p}p$i netns ${p}ns"
		echo "link set $p$i up"
	done >"$batch"
	ip -batch "$batch"
	rm "$batch"
	args=(add-br "${p}br")
	for i in $(seq "$ports"); do args+=(-- add-port "${p}br" "$p$i"); done
	start=$(date +%s.%N)
	ovs-vsctl --timeout=300 "${args[@]}"
	end=$(date +%s.%N)
	sleep 5
	echo "ports=$ports add_s=$(echo "$end - $start" | bc) rss_kB=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")"
	ovs-appctl -t ovs-vswitchd memory/show | tr ' ' '\n' | grep -E '^(rx-ring|go-heap|ports)' | tr '\n' ' '
	echo
	if [ -n "${4:-}" ]; then
		ovs-vsctl set Open_vSwitch . "other_config:userspace-sock-buf-size=$4"
		sleep "${WAIT:-5}"
		echo "sockbuf=$4 rss_kB=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")"
		ovs-appctl -t ovs-vswitchd memory/show | tr ' ' '\n' | grep -E '^(rx-ring-kB:|rx-ring-reserved|rx-ring-budget)' | tr '\n' ' '
		echo
	fi
	;;
tcp)
	runs=${3:-3} sockbuf=${4:-}
	for s in a b; do
		ip netns add "${p}$s"
		ip link add "${p}$s" type veth peer name eth0 netns "${p}$s"
		ip link set "${p}$s" up
		ip -n "${p}$s" link set lo up
		ip -n "${p}$s" link set eth0 up
	done
	ip -n "${p}a" addr add 198.18.99.1/24 dev eth0
	ip -n "${p}b" addr add 198.18.99.2/24 dev eth0
	[ -n "$sockbuf" ] && ovs-vsctl set Open_vSwitch . "other_config:userspace-sock-buf-size=$sockbuf"
	ovs-vsctl add-br "${p}br" -- add-port "${p}br" "${p}a" -- add-port "${p}br" "${p}b"
	for r in $(seq "$runs"); do
		ip netns exec "${p}b" iperf3 -s -1 -B 198.18.99.2 >/dev/null &
		sleep 0.5
		gbps=$(ip netns exec "${p}a" iperf3 -c 198.18.99.2 -t "${DURATION:-5}" -J | python3 -c 'import json,sys; d=json.load(sys.stdin)["end"]; print("%.2f %d" % (d["sum_received"]["bits_per_second"]/1e9, d["sum_sent"].get("retransmits", 0)))')
		wait
		echo "run=$r gbit_s_retransmits=$gbps"
	done
	ovs-appctl -t ovs-vswitchd memory/show | tr ' ' '\n' | grep -E '^rx-ring' | tr '\n' ' ' || true
	echo
	for s in a b; do
		echo "${p}$s: $(ovs-vsctl --no-wait get Interface "${p}$s" status | tr ',' '\n' | grep rx_ring | tr -d ' {}' | tr '\n' ' ')"
	done
	;;
esac
