package conntrack

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The SNAT scenario: a private host P (198.19.1.2, 2001:2:0:12::2) behind
// the switch acting as a NAT router reaches server S (198.18.1.3,
// 2001:2:0:2::3) as natAddr with ports allocated from natPortMin-natPortMax.
const (
	snatServerPort  = 80
	snatClients     = 200
	snatClientPort0 = 40000 // P's connections bind 40000..40199
	natPortMin      = 20000
	natPortMax      = 20255
	routerMAC       = "02:00:00:00:00:fe" // the switch's MAC as a router
	snatZone        = 7
)

var natAddr = map[bool]string{false: "198.18.1.100", true: "2001:2:0:2::100"}

// snatFlows: whatever P sends is committed with source NAT; what S sends
// goes through ct(nat) (undoing the NAT) and passes only when it belongs to
// a connection. The switch rewrites the MACs like a router.
func snatFlows(pMAC, sMAC string) string {
	return fmt.Sprintf(`
table=0,priority=1,actions=drop
table=0,priority=200,in_port=1,icmp6,icmp_type=135,actions=output:2
table=0,priority=200,in_port=1,icmp6,icmp_type=136,actions=output:2
table=0,priority=200,in_port=2,icmp6,icmp_type=135,actions=output:1
table=0,priority=200,in_port=2,icmp6,icmp_type=136,actions=output:1
table=0,priority=190,ipv6,ipv6_dst=ff00::/8,actions=drop
table=0,priority=100,in_port=1,ip,actions=ct(commit,zone=%[3]d,nat(src=%[4]s:%[6]d-%[7]d)),mod_dl_src:%[8]s,mod_dl_dst:%[2]s,output:2
table=0,priority=100,in_port=1,ipv6,actions=ct(commit,zone=%[3]d,nat(src=[%[5]s]:%[6]d-%[7]d)),mod_dl_src:%[8]s,mod_dl_dst:%[2]s,output:2
table=0,priority=100,in_port=2,ip,actions=ct(table=1,zone=%[3]d,nat)
table=0,priority=100,in_port=2,ipv6,actions=ct(table=1,zone=%[3]d,nat)
table=1,priority=100,in_port=2,ct_state=+trk+est-inv,ip,actions=mod_dl_src:%[8]s,mod_dl_dst:%[1]s,output:1
table=1,priority=100,in_port=2,ct_state=+trk+est-inv,ipv6,actions=mod_dl_src:%[8]s,mod_dl_dst:%[1]s,output:1
table=1,priority=1,actions=drop
`, pMAC, sMAC, snatZone, natAddr[false], natAddr[true], natPortMin, natPortMax, routerMAC)
}

// TestSNAT: 200 concurrent TCP connections from P, from source ports
// 40000-40199, all reach S through source NAT to one address; S sees them
// come from the NAT address with ports in the NAT range, and
// dump-conntrack shows 200 connections with distinct reply ports in that
// range. IPv4, then IPv6.
func TestSNAT(t *testing.T) {
	scenario(t, "snat", func(t *testing.T, e *env) {
		p := e.addHost(hostConfig{name: "p", mac: "02:00:00:00:01:01", ip4: "198.19.1.2/24", ip6: "2001:2:0:12::2/64"}, 1)
		s := e.addHost(hostConfig{name: "s", mac: "02:00:00:00:01:02", ip4: "198.18.1.3/24", ip6: "2001:2:0:2::3/64"}, 2)
		// P routes everything through the switch (its gateway); S knows
		// the NAT address on its link. Fixed neighbours: no ARP needed.
		p.neigh("198.19.1.1", routerMAC)
		p.neigh("2001:2:0:12::1", routerMAC)
		e.run(ipPath, "-n", p.ns, "route", "add", "default", "via", "198.19.1.1")
		e.run(ipPath, "-n", p.ns, "-6", "route", "add", "default", "via", "2001:2:0:12::1")
		s.neigh(natAddr[false], routerMAC)
		s.neigh(natAddr[true], routerMAC)
		e.addFlows(snatFlows(p.mac, s.mac))
		e.traces = append(e.traces,
			"in_port=1,tcp,dl_src=02:00:00:00:01:01,dl_dst="+routerMAC+",nw_src=198.19.1.2,nw_dst=198.18.1.3,tp_src=40000,tp_dst=80,tcp_flags=syn")
		for _, v6 := range []bool{false, true} {
			family := "v4"
			if v6 {
				family = "v6"
			}
			e.flushConntrack()
			snatRound(e, p, s, v6, family)
		}
	})
}

var replyDportRE = regexp.MustCompile(`reply=\(src=([^,]+),dst=([^,]+),sport=(\d+),dport=(\d+)\)`)

func snatRound(e *env, p, s *host, v6 bool, family string) {
	t := e.t
	l := s.listenTCP(hostPort(s.ip(v6), snatServerPort))
	// The server records where each connection came from, then echoes.
	var mu sync.Mutex
	peers := map[string]bool{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			peers[c.RemoteAddr().String()] = true
			mu.Unlock()
			go func() {
				defer c.Close()
				buf := make([]byte, 512)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					c.Write(buf[:n])
				}
			}()
		}
	}()
	conns := make([]net.Conn, snatClients)
	errs := make([]error, snatClients)
	// One connection first: when even it fails, 200 would only wait
	// for 200 timeouts.
	probe, err := p.dialTCP("", hostPort(s.ip(v6), snatServerPort), 3*time.Second)
	if err != nil {
		t.Errorf("%s: the first connection through SNAT failed: %v", family, err)
		return
	}
	probe.Close()
	time.Sleep(200 * time.Millisecond)
	e.flushConntrack()
	mu.Lock()
	clear(peers) // the probe's
	mu.Unlock()
	var wg sync.WaitGroup
	const workers = 20
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < snatClients; i += workers {
				c, err := p.dialTCP(hostPort(p.ip(v6), snatClientPort0+i), hostPort(s.ip(v6), snatServerPort), 5*time.Second)
				if err == nil {
					msg := fmt.Sprintf("connection %d\n", i)
					var got string
					if got, err = exchange(c, msg, 5*time.Second); err == nil && got != msg {
						err = fmt.Errorf("echo %q, want %q", got, msg)
					}
				}
				conns[i], errs[i] = c, err
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		// Let the closes finish before the next round flushes the
		// table: a late FIN would be committed again as a new entry.
		time.Sleep(500 * time.Millisecond)
	}()
	failed := 0
	for i, err := range errs {
		if err != nil {
			if failed < 5 {
				t.Errorf("%s: connection %d from port %d: %v", family, i, snatClientPort0+i, err)
			}
			failed++
		}
	}
	if failed > 0 {
		t.Errorf("%s: %d of %d concurrent connections through SNAT failed", family, failed, snatClients)
	}
	// What S saw: every connection from the NAT address, ports in range.
	mu.Lock()
	for peer := range peers {
		ap := netip.MustParseAddrPort(peer)
		if ap.Addr().Unmap().String() != natAddr[v6] || ap.Port() < natPortMin || ap.Port() > natPortMax {
			t.Errorf("%s: S accepted a connection from %s, want %s:%d-%d", family, peer, natAddr[v6], natPortMin, natPortMax)
		}
	}
	if len(peers) != snatClients-failed {
		t.Errorf("%s: S saw %d distinct peers, want %d", family, len(peers), snatClients-failed)
	}
	mu.Unlock()

	// All 200 connections are open: the table holds them, each with its
	// own reply port from the range.
	raw := e.checkpoint("snat-" + family + "-open")
	ports := map[int]bool{}
	n := 0
	for _, line := range strings.Split(raw, "\n") {
		if !strings.HasPrefix(line, "tcp,") {
			continue
		}
		n++
		m := replyDportRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s: unexpected entry %s", family, line)
			continue
		}
		port, _ := strconv.Atoi(m[4])
		if m[2] != natAddr[v6] || port < natPortMin || port > natPortMax {
			t.Errorf("%s: reply direction %s:%s, want %s:%d-%d: %s", family, m[2], m[4], natAddr[v6], natPortMin, natPortMax, line)
		}
		if ports[port] {
			t.Errorf("%s: reply port %d used twice", family, port)
		}
		ports[port] = true
	}
	if n != snatClients {
		t.Errorf("%s: dump-conntrack lists %d TCP connections, want %d", family, n, snatClients)
	}
	t.Logf("%s: %d connections, %d distinct reply ports", family, n, len(ports))
}
