package ovn

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestLoadBalancer: OVN load balancers on the client's logical switch
// (VIPs 198.18.6.100:80 and [2001:2:0:6::100]:80, three backends on
// another switch behind a logical router, as OVN's own system tests set
// one up) spread TCP connections: every backend gets some, and every
// exchange of one connection is answered by the same backend.
func TestLoadBalancer(t *testing.T) {
	scenario(t, "lb", func(t *testing.T, c *chassis) {
		c.nbctl("ls-add", "ls4")
		c.nbctl("ls-add", "ls5")
		c.nbctl("lr-add", "lr4")
		c.nbctl("lrp-add", "lr4", "lr4-ls4", "0a:00:00:00:04:fe", "198.18.4.254/24", "2001:2:0:4::fe/64")
		c.nbctl("lrp-add", "lr4", "lr4-ls5", "0a:00:00:00:05:fe", "198.18.5.254/24", "2001:2:0:5::fe/64")
		for _, ls := range []string{"ls4", "ls5"} {
			c.nbctl("lsp-add", ls, ls+"-lr4", "--", "lsp-set-type", ls+"-lr4", "router",
				"--", "lsp-set-addresses", ls+"-lr4", "router",
				"--", "lsp-set-options", ls+"-lr4", "router-port=lr4-"+ls)
		}
		c.nbctl("lsp-add", "ls4", "client", "--", "lsp-set-addresses", "client", "0a:00:00:00:04:01 198.18.4.1 2001:2:0:4::1")
		client := c.addHost(hostConfig{name: "client", lsp: "client", mac: "0a:00:00:00:04:01", ip4: "198.18.4.1/24", gw: "198.18.4.254",
			ip6: "2001:2:0:4::1/64", gw6: "2001:2:0:4::fe"})
		var backends, backends6 []string
		for i := 1; i <= 3; i++ {
			name := fmt.Sprintf("be%d", i)
			mac := fmt.Sprintf("0a:00:00:00:05:%02x", 0x10+i)
			ip := fmt.Sprintf("198.18.5.%d", 10+i)
			ip6 := fmt.Sprintf("2001:2:0:5::%d", 10+i)
			c.nbctl("lsp-add", "ls5", name, "--", "lsp-set-addresses", name, mac+" "+ip+" "+ip6)
			h := c.addHost(hostConfig{name: name, lsp: name, mac: mac, ip4: ip + "/24", gw: "198.18.5.254",
				ip6: ip6 + "/64", gw6: "2001:2:0:5::fe"})
			h.serveEcho(":8080", name+":")
			backends = append(backends, ip+":8080")
			backends6 = append(backends6, "["+ip6+"]:8080")
		}
		c.nbctl("lb-add", "lb0", "198.18.6.100:80", strings.Join(backends, ","), "tcp")
		c.nbctl("lb-add", "lb6", "[2001:2:0:6::100]:80", strings.Join(backends6, ","), "tcp")
		c.nbctl("ls-lb-add", "ls4", "lb0")
		c.nbctl("ls-lb-add", "ls4", "lb6")
		c.waitUp("ports up")

		// Each backend directly (routed), then through the VIPs.
		for i := range backends {
			client.mustTCP(fmt.Sprintf("tcp client->backend %d", i+1), backends[i])
		}
		spreadOverVIP(t, c, client, "", "198.18.6.100:80")
		spreadOverVIP(t, c, client, "IPv6 ", "[2001:2:0:6::100]:80")
	})
}

// spreadOverVIP opens connections from client to vip, three exchanges
// each: every connection must stick to one backend, and all three
// backends must get some.
func spreadOverVIP(t *testing.T, c *chassis, client *host, what, vip string) {
	t.Helper()
	const conns, rounds = 30, 3
	count := map[string]int{}
	var problems []string
	for i := range conns {
		conn, err := client.dialTCP(vip, 3*time.Second)
		if err != nil {
			problems = append(problems, fmt.Sprintf("connection %d: %v", i, err))
			continue
		}
		first := ""
		for r := range rounds {
			tag, err := exchange(conn, fmt.Sprintf("c%d-r%d;", i, r), 3*time.Second)
			if err != nil {
				problems = append(problems, fmt.Sprintf("connection %d round %d: %v", i, r, err))
				break
			}
			if first == "" {
				first = tag
			} else if tag != first {
				problems = append(problems, fmt.Sprintf("connection %d: answered by %s, then by %s", i, first, tag))
			}
		}
		conn.Close()
		if first != "" {
			count[first]++
		}
	}
	var spread []string
	for tag, n := range count {
		spread = append(spread, fmt.Sprintf("%s%d", tag, n))
	}
	sort.Strings(spread)
	t.Logf("%d connections to %s: %s", conns, vip, strings.Join(spread, " "))
	got := "every connection stuck to one backend"
	if len(problems) > 0 {
		got = strings.Join(problems, "; ")
		t.Errorf("through %s: %s", vip, got)
	}
	c.outcome(what+"VIP connections", got)
	all := len(count) == 3
	c.outcome(what+"every backend got connections", fmt.Sprint(all))
	if !all {
		t.Errorf("%d connections to %s spread over %d backends (%s), want all 3", conns, vip, len(count), strings.Join(spread, " "))
	}
}
