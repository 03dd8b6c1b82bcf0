#!/usr/bin/env bash
# Produces the OpenFlow pipeline OVN installs for one logical switch with
# two ports, with the real OVN (Debian's ovn-central and ovn-host, see
# scripts/install-test-deps.sh) against Debian's ovs-vswitchd on its dummy
# datapath, and saves it under tests/testdata:
#
#   ovn-two-port.flows    ovs-ofctl -O OpenFlow15 --no-stats dump-flows br-int
#                         (no durations or counters; sorted by table, then
#                         priority from high to low, then text, so that two
#                         runs compare; `ovs-ofctl add-flows` reads it)
#   ovn-two-port.groups   dump-groups, ovn-two-port.meters dump-meters,
#   ovn-two-port.tlv      dump-tlv-map (the Geneve option OVN maps to
#                         tun_metadata0, which its flows match on)
#   ovn-two-port.ports    each port: OVS interface, ofport, logical port,
#                         MAC, IPv4 address (198.18.0.0/15)
#
# Everything runs in a temporary directory (databases, sockets, pidfiles,
# logs) with OVS_RUNDIR/OVN_RUNDIR and friends pointing there; every daemon
# started is stopped by its pidfile on exit, and the directory removed.
# Usage: scripts/ovn-two-port-flows.sh [OUTDIR]   (default tests/testdata)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/tests/testdata}
mkdir -p "$out"

for tool in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-ofctl ovn-northd ovn-controller ovn-nbctl ovn-sbctl; do
    command -v "$tool" >/dev/null || { echo "ovn-two-port-flows: $tool missing: run scripts/install-test-deps.sh" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/ovn-two-port.XXXXXX)
export OVS_RUNDIR=$tmp OVS_LOGDIR=$tmp OVS_DBDIR=$tmp OVS_SYSCONFDIR=$tmp
export OVN_RUNDIR=$tmp OVN_LOGDIR=$tmp OVN_DBDIR=$tmp OVN_SYSCONFDIR=$tmp

# Daemons in the reverse order of their start: each by the pid in its own
# pidfile, and only if that pid is still the program we started.
pidfiles=()
cleanup() {
    local i pf pid
    for ((i = ${#pidfiles[@]} - 1; i >= 0; i--)); do
        pf=${pidfiles[i]}
        [ -r "$pf" ] || continue
        pid=$(cat "$pf" 2>/dev/null || true)
        case "$pid" in ''|*[!0-9]*) continue ;; esac
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done
    if [ "${KEEP_TMP:-}" = 1 ]; then echo "ovn-two-port-flows: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

start_db() { # NAME SCHEMA
    ovsdb-tool create "$tmp/$1.db" "$2"
    pidfiles+=("$tmp/$1.pid")
    ovsdb-server --detach --no-chdir --pidfile="$tmp/$1.pid" --unixctl="$tmp/$1.ctl" \
        -vconsole:off --log-file="$tmp/$1.log" --remote=punix:"$tmp/$1.sock" "$tmp/$1.db"
}

start_db conf /usr/share/openvswitch/vswitch.ovsschema
start_db nb /usr/share/ovn/ovn-nb.ovsschema
start_db sb /usr/share/ovn/ovn-sb.ovsschema
db=unix:$tmp/conf.sock
vsctl() { ovs-vsctl --db="$db" --timeout=30 "$@"; }
vsctl --no-wait init

# As Open vSwitch's own test suite starts it (tests/ofproto-macros.at).
pidfiles+=("$tmp/ovs-vswitchd.pid")
ovs-vswitchd --enable-dummy --disable-system --disable-system-route --detach --no-chdir \
    --pidfile="$tmp/ovs-vswitchd.pid" --unixctl="$tmp/ovs-vswitchd.ctl" -vconsole:off --log-file="$tmp/ovs-vswitchd.log" "$db"

pidfiles+=("$tmp/ovn-northd.pid")
ovn-northd --detach --no-chdir --pidfile="$tmp/ovn-northd.pid" --unixctl="$tmp/ovn-northd.ctl" \
    -vconsole:off --log-file="$tmp/ovn-northd.log" --ovnnb-db=unix:"$tmp/nb.sock" --ovnsb-db=unix:"$tmp/sb.sock"
nbctl() { ovn-nbctl --db=unix:"$tmp/nb.sock" --timeout=30 "$@"; }

# The chassis, as OVN's tests attach one (ovn_attach): integration bridge
# br-int on the dummy datapath, secure, Geneve encapsulation from an
# address of a dummy bridge.
vsctl add-br br-phys -- set bridge br-phys datapath_type=dummy fail-mode=secure
ovs-appctl -t "$tmp/ovs-vswitchd.ctl" netdev-dummy/ip4addr br-phys 198.18.255.1/24 >/dev/null
vsctl add-br br-int -- set bridge br-int datapath_type=dummy fail-mode=secure \
    other-config:disable-in-band=true other-config:datapath-id=0000000000000001
vsctl set open . external-ids:system-id=hv1 \
    external-ids:ovn-remote=unix:"$tmp/sb.sock" \
    external-ids:ovn-encap-type=geneve external-ids:ovn-encap-ip=198.18.255.1

pidfiles+=("$tmp/ovn-controller.pid")
ovn-controller --detach --no-chdir --pidfile="$tmp/ovn-controller.pid" \
    -vconsole:off --log-file="$tmp/ovn-controller.log" "$db"

# northd picks these MACs at random when unset; fixed, two runs give the
# same matches (the cookies, from the logical flows' UUIDs, still differ).
nbctl set NB_Global . options:mac_prefix=0a:00:00 options:svc_monitor_mac=0a:00:00:00:00:fe

# One logical switch, two ports, each bound to a dummy interface of br-int.
nbctl ls-add ls0
ports=(
    "vif1 1 lp1 00:00:00:00:01:01 198.18.0.1"
    "vif2 2 lp2 00:00:00:00:01:02 198.18.0.2"
)
for p in "${ports[@]}"; do
    read -r iface ofport lport mac ip <<<"$p"
    nbctl lsp-add ls0 "$lport" -- lsp-set-addresses "$lport" "$mac $ip"
    vsctl add-port br-int "$iface" -- set interface "$iface" type=dummy ofport_request="$ofport" \
        external-ids:iface-id="$lport"
done

# Wait until both ports are claimed and up, and the chassis has installed
# everything northd computed (nb_cfg reached the hypervisor).
for p in "${ports[@]}"; do
    read -r iface ofport lport mac ip <<<"$p"
    nbctl wait-until logical_switch_port "$lport" up=true
done
nbctl --wait=hv sync

ofctl() { ovs-ofctl -O OpenFlow15 "$@"; }
# Flows in a stable order: by table, then priority (high first), then text.
flows=$tmp/flows
ofctl --no-stats dump-flows br-int >"$flows"
n=$(grep -c 'actions=' "$flows" || true)
tables=$(sed -n 's/.*table=\([0-9]*\),.*/\1/p' "$flows" | sort -un | wc -l)
{
    echo "# OVN $(ovn-controller --version | sed -n 's/^ovn-controller //p' | head -1): one logical switch (ls0), two ports; see scripts/ovn-two-port-flows.sh"
    echo "# $n flows in $tables tables; ports in ovn-two-port.ports, groups/meters/tlv beside this file"
    awk '/actions=/ {
            t = 0; p = 32768
            if (match($0, /table=[0-9]+/)) t = substr($0, RSTART + 6, RLENGTH - 6)
            if (match($0, /priority=[0-9]+/)) p = substr($0, RSTART + 9, RLENGTH - 9)
            printf "%03d %05d %s\n", t, 65535 - p, $0
        }' "$flows" | LC_ALL=C sort | cut -d' ' -f3-
} >"$out/ovn-two-port.flows"
{ echo "# ovs-ofctl -O OpenFlow15 dump-groups br-int"; ofctl dump-groups br-int | sed 1d | LC_ALL=C sort; } >"$out/ovn-two-port.groups"
{ echo "# ovs-ofctl -O OpenFlow15 dump-meters br-int"; ofctl dump-meters br-int | sed 1d; } >"$out/ovn-two-port.meters"
ovs-ofctl dump-tlv-map br-int >"$out/ovn-two-port.tlv"
{
    echo "# iface ofport logical_port mac ipv4"
    for p in "${ports[@]}"; do
        read -r iface ofport lport mac ip <<<"$p"
        got=$(vsctl get interface "$iface" ofport)
        [ "$got" = "$ofport" ] || { echo "ovn-two-port-flows: $iface got ofport $got, not $ofport" >&2; exit 1; }
        echo "$iface $ofport $lport $mac $ip"
    done
} >"$out/ovn-two-port.ports"
echo "ovn-two-port-flows: $n flows in $tables tables, $(grep -vc "^#" "$out/ovn-two-port.groups" || true) groups -> $out"
