package ovn

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestGatewaySNAT: a gateway router bound to the chassis
// (options:chassis) joins an internal logical switch to an external
// network reached through a localnet port: ovn-controller patches br-int
// to the provider bridge br-phys (ovn-bridge-mappings), where a host
// outside OVN sits. The external host has no route to the internal
// network: ping and TCP from the internal host pass only through the
// router's SNAT, and the external server sees the router's address.
func TestGatewaySNAT(t *testing.T) {
	scenario(t, "gw", func(t *testing.T, c *chassis) { gatewaySNAT(t, c, true) })
}

// TestGatewaySNATOnSwitch is TestGatewaySNAT with the external host bound
// to a port of the external logical switch instead of reached through the
// localnet port: the gateway router, its SNAT and its ARP resolution
// (pinctrl) without the provider bridge.
func TestGatewaySNATOnSwitch(t *testing.T) {
	scenario(t, "gwvif", func(t *testing.T, c *chassis) { gatewaySNAT(t, c, false) })
}

func gatewaySNAT(t *testing.T, c *chassis, localnet bool) {
	{
		if localnet {
			c.vsctl("add-br", "br-phys", "--", "set", "bridge", "br-phys", "datapath_type=netdev")
			c.vsctl("set", "open_vswitch", ".", "external-ids:ovn-bridge-mappings=physnet1:br-phys")
		}
		c.nbctl("ls-add", "ls8")
		c.nbctl("ls-add", "ext")
		c.nbctl("lr-add", "gw0", "--", "set", "logical_router", "gw0", "options:chassis="+c.systemID)
		c.nbctl("lrp-add", "gw0", "gw0-ls8", "0a:00:00:00:08:fe", "198.18.8.254/24")
		c.nbctl("lrp-add", "gw0", "gw0-ext", "0a:00:00:00:07:fe", "198.18.7.1/24")
		for _, ls := range []string{"ls8", "ext"} {
			c.nbctl("lsp-add", ls, ls+"-gw0", "--", "lsp-set-type", ls+"-gw0", "router",
				"--", "lsp-set-addresses", ls+"-gw0", "router",
				"--", "lsp-set-options", ls+"-gw0", "router-port=gw0-"+ls)
		}
		if localnet {
			c.nbctl("lsp-add", "ext", "ext-localnet", "--", "lsp-set-type", "ext-localnet", "localnet",
				"--", "lsp-set-addresses", "ext-localnet", "unknown",
				"--", "lsp-set-options", "ext-localnet", "network_name=physnet1")
		} else {
			c.nbctl("lsp-add", "ext", "out", "--", "lsp-set-addresses", "out", "0a:00:00:00:07:64 198.18.7.100")
		}
		c.nbctl("lr-nat-add", "gw0", "snat", "198.18.7.1", "198.18.8.0/24")
		c.nbctl("lsp-add", "ls8", "vm8", "--", "lsp-set-addresses", "vm8", "0a:00:00:00:08:01 198.18.8.1")
		vm8 := c.addHost(hostConfig{name: "vm8", lsp: "vm8", mac: "0a:00:00:00:08:01", ip4: "198.18.8.1/24", gw: "198.18.8.254"})
		outCfg := hostConfig{name: "out", lsp: "out", mac: "0a:00:00:00:07:64", ip4: "198.18.7.100/24"}
		if localnet {
			outCfg.lsp, outCfg.bridge = "", "br-phys"
		}
		out := c.addHost(outCfg)
		c.waitUp("ports up")
		if localnet {
			// ovn-controller patched br-int to br-phys for the localnet port.
			c.waitFor("the patch ports of the localnet port", 15*time.Second, func() bool {
				ports, _ := c.tool(vsctlPath, "--db=unix:"+c.path("db.sock"), "list-ports", "br-phys")
				return strings.Contains(ports, "patch-")
			})
		}
		c.traces = append(c.traces, "in_port="+vm8.port+",icmp,dl_src=0a:00:00:00:08:01,dl_dst=0a:00:00:00:08:fe,nw_src=198.18.8.1,nw_dst=198.18.7.100,nw_ttl=64,icmp_type=8")

		out.serveEcho(":8080", "")
		out.mustPing("ping out->router", "198.18.7.1")
		vm8.mustPing("ping vm8->router (inside)", "198.18.8.254")
		vm8.mustPing("ping vm8->router (outside address)", "198.18.7.1")
		vm8.mustPing("ping vm8->out (SNAT)", out.ip4)
		conn, err := vm8.dialTCP(net.JoinHostPort(out.ip4, "8080"), 3*time.Second)
		got := ""
		if err == nil {
			got, err = exchange(conn, "gvs-ovn", 3*time.Second)
			conn.Close()
		}
		if err != nil {
			got = "error: " + err.Error()
		}
		c.outcome("tcp vm8->out: the server sees", got)
		if got != "198.18.7.1:" {
			t.Errorf("tcp vm8->out through SNAT: the server sees %q, want 198.18.7.1:", got)
		}
	}
}
