package ovn

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// udhcpcScript is the script busybox udhcpc runs on its events: on a lease
// it configures the address and default route as a distribution's script
// does, and writes what it got into $GVS_LEASE_FILE for the test.
const udhcpcScript = `#!/bin/sh
case "$1" in
deconfig) ip -4 addr flush dev "$interface" ;;
bound|renew)
	ip addr add "$ip/$mask" dev "$interface"
	for r in $router; do ip route add default via "$r" dev "$interface"; break; done
	echo "ip=$ip mask=$mask router=$router lease=$lease serverid=$serverid" >"$GVS_LEASE_FILE"
	;;
esac
`

// TestNativeDHCP: OVN answers DHCPv4 itself (ovn-controller's pinctrl,
// through packet-in and resume): busybox udhcpc in a namespace gets the
// address, router and lease OVN's DHCP_Options give its port, and then
// reaches the router. IPv6: the router port sends router advertisements
// (address_mode=slaac) in answer to the namespace's router solicitation,
// the kernel configures its SLAAC address and default route, and the host
// pings the router's IPv6 address.
func TestNativeDHCP(t *testing.T) {
	scenario(t, "dhcp", func(t *testing.T, c *chassis) {
		c.nbctl("ls-add", "ls3")
		c.nbctl("lr-add", "lr3")
		c.nbctl("lrp-add", "lr3", "lr3-ls3", "0a:00:00:00:03:fe", "198.18.3.254/24", "2001:2:0:3::1/64")
		c.nbctl("set", "logical_router_port", "lr3-ls3", "ipv6_ra_configs:address_mode=slaac")
		c.nbctl("lsp-add", "ls3", "ls3-lr3", "--", "lsp-set-type", "ls3-lr3", "router",
			"--", "lsp-set-addresses", "ls3-lr3", "router",
			"--", "lsp-set-options", "ls3-lr3", "router-port=lr3-ls3")
		uuid := strings.TrimSpace(c.nbctl("create", "dhcp_options", "cidr=198.18.3.0/24",
			`options={lease_time="3600", router="198.18.3.254", server_id="198.18.3.254", server_mac="0a:00:00:00:03:fe"}`))
		c.nbctl("lsp-add", "ls3", "vm3", "--", "lsp-set-addresses", "vm3", "0a:00:00:00:03:03 198.18.3.3 2001:2:0:3:800:ff:fe00:303")
		c.nbctl("lsp-set-dhcpv4-options", "vm3", uuid)
		vm3 := c.addHost(hostConfig{name: "vm3", lsp: "vm3", mac: "0a:00:00:00:03:03"})
		c.waitUp("ports up")

		c.traces = append(c.traces, "in_port="+vm3.port+",udp,dl_src=0a:00:00:00:03:03,dl_dst=ff:ff:ff:ff:ff:ff,nw_src=0.0.0.0,nw_dst=255.255.255.255,tp_src=68,tp_dst=67")
		// DHCPv4 with busybox udhcpc: -n exits when no lease came.
		script, lease := c.path("udhcpc.sh"), c.path("lease")
		if err := os.WriteFile(script, []byte(udhcpcScript), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ipPath, "netns", "exec", vm3.ns, busyboxPath, "udhcpc", "-f", "-q", "-n", "-t", "5", "-T", "1",
			"-i", vm3.dev, "-s", script)
		cmd.Env = append(os.Environ(), "GVS_LEASE_FILE="+lease)
		out, err := cmd.CombinedOutput()
		got, _ := os.ReadFile(lease)
		c.outcome("DHCPv4 lease", strings.TrimSpace(string(got)))
		if err != nil || len(got) == 0 {
			t.Errorf("udhcpc: %v, no lease\n%s", err, out)
		} else if want := "ip=198.18.3.3 mask=24 router=198.18.3.254 lease=3600 serverid=198.18.3.254"; strings.TrimSpace(string(got)) != want {
			t.Errorf("udhcpc lease: %s, want %s", got, want)
		}
		vm3.mustPing("ping vm3->router (DHCP address)", "198.18.3.254")

		// IPv6: solicit a router advertisement by taking the link down
		// and up with router solicitations enabled.
		c.run(ipPath, "netns", "exec", vm3.ns, "sysctl", "-qw", "net.ipv6.conf."+vm3.dev+".router_solicitations=3",
			"net.ipv6.conf."+vm3.dev+".router_solicitation_interval=1", "net.ipv6.conf."+vm3.dev+".accept_ra=2")
		c.run(ipPath, "-n", vm3.ns, "link", "set", vm3.dev, "down")
		c.run(ipPath, "-n", vm3.ns, "link", "set", vm3.dev, "up")
		slaac := "2001:2:0:3:800:ff:fe00:303"
		var addrs string
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			addrs = c.run(ipPath, "-n", vm3.ns, "-6", "addr", "show", "dev", vm3.dev, "scope", "global")
			if strings.Contains(addrs, slaac+"/64") && !strings.Contains(addrs, "tentative") {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		has := strings.Contains(addrs, slaac+"/64")
		route := strings.TrimSpace(c.run(ipPath, "-n", vm3.ns, "-6", "route", "show", "default"))
		c.outcome("SLAAC address from RA", map[bool]string{true: "configured", false: "missing"}[has])
		if !has {
			t.Errorf("no SLAAC address %s/64 after a router solicitation:\n%s", slaac, addrs)
		}
		if !strings.Contains(route, "via fe80::") {
			t.Errorf("no default route from the router advertisement: %q", route)
		}
		vm3.mustPing("ping6 vm3->router", "2001:2:0:3::1")
	}, busyboxPath)
}
