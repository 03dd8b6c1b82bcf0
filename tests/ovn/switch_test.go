package ovn

import (
	"net"
	"testing"
)

// TestLogicalSwitch: one logical switch with two ports bound to
// namespaces; ovn-nbctl --wait=hv sync returns, both ports are up (up=true,
// ovn-installed), ping and TCP pass both ways over IPv4, and over IPv6.
func TestLogicalSwitch(t *testing.T) {
	scenario(t, "ls", func(t *testing.T, c *chassis) {
		c.nbctl("ls-add", "ls0")
		c.nbctl("lsp-add", "ls0", "vm1", "--", "lsp-set-addresses", "vm1", "0a:00:00:00:00:01 198.18.0.1 2001:2::1")
		c.nbctl("lsp-add", "ls0", "vm2", "--", "lsp-set-addresses", "vm2", "0a:00:00:00:00:02 198.18.0.2 2001:2::2")
		vm1 := c.addHost(hostConfig{name: "vm1", lsp: "vm1", mac: "0a:00:00:00:00:01", ip4: "198.18.0.1/24", ip6: "2001:2::1/64"})
		vm2 := c.addHost(hostConfig{name: "vm2", lsp: "vm2", mac: "0a:00:00:00:00:02", ip4: "198.18.0.2/24", ip6: "2001:2::2/64"})
		c.waitUp("ports up")
		vm1.mustPing("ping vm1->vm2", vm2.ip4)
		vm2.mustPing("ping vm2->vm1", vm1.ip4)
		vm2.serveEcho(":8080", "vm2:")
		vm1.serveEcho(":8080", "vm1:")
		vm1.mustTCP("tcp vm1->vm2", net.JoinHostPort(vm2.ip4, "8080"))
		vm2.mustTCP("tcp vm2->vm1", net.JoinHostPort(vm1.ip4, "8080"))
		vm1.mustPing("ping6 vm1->vm2", vm2.ip6)
		vm1.mustTCP("tcp6 vm1->vm2", net.JoinHostPort(vm2.ip6, "8080"))
	})
}
