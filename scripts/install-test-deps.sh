#!/usr/bin/env bash
# Installs what gvs's tests run against, only when missing: Open vSwitch's
# own tools (ovs-vsctl, ovsdb-client, ovsdb-tool, ovs-appctl, ovsdb-server
# as a reference), OVN's (ovn-central, ovn-host: northd and
# ovn-controller for scripts/ovn-two-port-flows.sh and tests/ovn), busybox
# (udhcpc, the DHCP client of tests/ovn), the Python IDL, iperf3, prometheus (promtool and a real
# scraper for the metrics tests), ethtool and iproute2 for the namespace
# tests, and a C compiler for `go test -race`. No packaged service may
# start: a policy-rc.d that answers 101 ("action forbidden") is in place
# while apt runs, and any packaged ovsdb-server or ovs-vswitchd found
# or OVN daemon found running afterwards is stopped by pid.
set -euo pipefail

packages=(openvswitch-common openvswitch-switch python3-openvswitch ovn-central ovn-host busybox iperf3 prometheus ethtool iproute2)
command -v gcc >/dev/null 2>&1 || packages+=(gcc libc6-dev)

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "install-test-deps: need root to run: $*" >&2
        exit 1
    fi
}

if [ "${#missing[@]}" -gt 0 ]; then
    echo "install-test-deps: installing ${missing[*]}"
    policy=/usr/sbin/policy-rc.d
    created_policy=no
    if [ ! -e "$policy" ]; then
        as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
        created_policy=yes
    fi
    cleanup_policy() {
        if [ "$created_policy" = yes ]; then as_root rm -f "$policy"; fi
    }
    trap cleanup_policy EXIT
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    echo "install-test-deps: all present (${packages[*]})"
fi

# A packaged daemon left running (for example where systemd ignores
# policy-rc.d) would hold /var/run/openvswitch or /var/run/ovn; stop
# exactly that process: each pidfile with the program it must belong to.
for entry in \
    /var/run/openvswitch/ovsdb-server.pid:/usr/sbin/ovsdb-server \
    /var/run/openvswitch/ovs-vswitchd.pid:/usr/sbin/ovs-vswitchd \
    /var/run/ovn/ovnnb_db.pid:/usr/sbin/ovsdb-server \
    /var/run/ovn/ovnsb_db.pid:/usr/sbin/ovsdb-server \
    /var/run/ovn/ovn-northd.pid:/usr/bin/ovn-northd \
    /var/run/ovn/ovn-controller.pid:/usr/bin/ovn-controller; do
    pidfile=${entry%%:*}
    exe=${entry#*:}
    [ -r "$pidfile" ] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    case "$pid" in ''|*[!0-9]*) continue ;; esac
    if [ "$(readlink "/proc/$pid/exe" 2>/dev/null || true)" = "$exe" ]; then
        echo "install-test-deps: stopping packaged $(basename "$exe") (pid $pid)"
        as_root kill "$pid" || true
    fi
done
