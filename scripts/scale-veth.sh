#!/bin/bash
# scale-veth.sh BINDIR [N]: times the real gvs-vswitchd (BINDIR/gvs-vswitchd,
# its embedded database) with N (default 200) veth ports, each one's peer
# in a network namespace of its own with an address in 198.18.0.0/15:
#   - N ports added by one ovs-vsctl transaction (waiting for cur_cfg);
#   - then until every namespace answers a ping from the first one;
#   - restart: `ovs-appctl exit` until the process is gone, start again,
#     until every Interface has an ofport, until every namespace answers.
# Everything (devices, namespaces, the daemon, its state directory) is made
# under a prefix of this script's own pid and deleted on exit, also on
# failure. Needs root. Sends traffic only between its own namespaces.
set -u
BIN=$(cd "${1:?usage: scale-veth.sh BINDIR [N]}" && pwd)
N=${2:-200}
P=gs$$ # prefix of every device and namespace name (<= 15 chars with suffixes)
RUN=$(mktemp -d /tmp/gvs-scale-XXXXXX)
export OVS_RUNDIR=$RUN OVS_DBDIR=$RUN OVS_LOGDIR=$RUN
DAEMON=

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
addr() { echo "198.18.$(($1 / 250)).$(($1 % 250 + 1))"; }

cleanup() {
	if [ -n "$DAEMON" ] && kill -0 "$DAEMON" 2>/dev/null; then
		ovs-appctl -t ovs-vswitchd exit >/dev/null 2>&1
		for _ in $(seq 100); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
		kill "$DAEMON" 2>/dev/null
	fi
	for i in $(seq 0 $((N - 1))); do
		ip netns del "${P}n$i" 2>/dev/null # takes the veth pair with it
		ip link del "${P}v$i" 2>/dev/null
	done
	[ -n "${KEEPLOG:-}" ] && cp "$RUN"/ovs-vswitchd.log "$KEEPLOG"
	rm -rf "$RUN"
}
trap cleanup EXIT
[ -n "${DEBUG:-}" ] && set -x

start() {
	"$BIN/gvs-vswitchd" --pidfile --log-file >/dev/null 2>&1 &
	DAEMON=$!
	for _ in $(seq 200); do
		ovs-vsctl --timeout=1 --no-wait show >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "daemon did not start" >&2
	exit 1
}

stop() {
	ovs-appctl -t ovs-vswitchd exit >/dev/null 2>&1
	while kill -0 "$DAEMON" 2>/dev/null; do sleep 0.02; done
	wait "$DAEMON" 2>/dev/null
	DAEMON=
}

# pingall: every namespace but the first answers an ICMP echo from the
# first (sent again every 200 ms to the ones that have not, for up to 20 s;
# no ping(1) needed); prints how many never did.
pingall() {
	local targets=()
	for i in $(seq 1 $((N - 1))); do targets+=("$(addr "$i")"); done
	ip netns exec "${P}n0" python3 - 20 "${targets[@]}" <<'PY'
import os, select, socket, struct, sys, time
deadline = time.time() + float(sys.argv[1])
pending = set(sys.argv[2:])
ident = os.getpid() & 0xFFFF
def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF
body = struct.pack("!HHHH", 8 << 8, 0, ident, 1) + b"gvs-scale"
body = body[:2] + struct.pack("!H", checksum(body + b"\0")) + body[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
while pending and time.time() < deadline:
    for a in list(pending):
        try:
            s.sendto(body, (a, 0))
        except OSError:
            pass
    end = time.time() + 0.2
    while pending and time.time() < end:
        r, _, _ = select.select([s], [], [], max(0, end - time.time()))
        if not r:
            continue
        data, (src, _) = s.recvfrom(2048)
        ihl = (data[0] & 15) * 4
        if data[ihl] == 0 and struct.unpack("!H", data[ihl + 4:ihl + 6])[0] == ident:
            pending.discard(src)
print(len(pending))
PY
}

echo "creating $N veth pairs and namespaces (prefix $P)"
for i in $(seq 0 $((N - 1))); do
	ip netns add "${P}n$i" || exit 1
	ip link add "${P}v$i" type veth peer name "${P}p$i" netns "${P}n$i" || exit 1
	ip link set "${P}v$i" up
	ip -n "${P}n$i" addr add "$(addr "$i")/15" dev "${P}p$i"
	ip -n "${P}n$i" link set "${P}p$i" up
done

start
ovs-vsctl --no-wait init
ovs-vsctl add-br br0
args=()
for i in $(seq 0 $((N - 1))); do args+=(-- add-port br0 "${P}v$i"); done
t0=$(now)
ovs-vsctl --timeout=120 "${args[@]:1}"
echo "add $N ports in one transaction: $(since "$t0") s"
t1=$(now)
echo "unreachable after add: $(pingall); all pinged in $(since "$t1") s more"

t0=$(now)
stop
echo "exit: $(since "$t0") s"
t1=$(now)
start
# The database still holds the old ofports: ask the datapath instead.
while [ "$(ovs-appctl -t ovs-vswitchd dpif/show 2>/dev/null | grep -c "${P}v")" -lt "$N" ]; do sleep 0.02; done
echo "restart: all $N ports in the datapath $(since "$t1") s after start"
echo "unreachable after restart: $(pingall); all forwarding $(since "$t1") s after start, outage $(since "$t0") s"
echo "RSS: $(ps -o rss= -p "$DAEMON") KiB"
