package conntrack

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Ports of the firewall scenario's servers (below ephemeralPortMin).
const (
	fwTCPPort       = 5001 // B's TCP echo server
	fwUDPPort       = 5003 // B's UDP echo server
	fwClosedUDPPort = 5004 // nothing listens on B: port unreachable
	fwBackTCPPort   = 5005 // A's TCP server B must not reach
	fwBackUDPPort   = 5006 // A's UDP socket B must not reach
)

// firewallFlows: port 1 (A1) and 2 (B1) are pair 1, tracked in zone 1
// (immediate); ports 3 (A2) and 4 (B2) are pair 2, tracked in zone 2 taken
// from reg0. reg1 holds the peer's port, reg2 is 1 on A's side. ARP and
// IPv6 neighbour discovery pass before the ct stage; A may open
// connections (commit, setting ct_mark 1 in zone 1, ct_mark 2 and a
// ct_label in zone 2), established packets pass when the connection's
// zone, mark and label are right, related packets pass, nothing else.
const firewallFlows = `
table=0,priority=10,in_port=1,actions=load:1->NXM_NX_REG0[0..15],load:2->NXM_NX_REG1[],load:1->NXM_NX_REG2[],resubmit(,1)
table=0,priority=10,in_port=2,actions=load:1->NXM_NX_REG0[0..15],load:1->NXM_NX_REG1[],load:0->NXM_NX_REG2[],resubmit(,1)
table=0,priority=10,in_port=3,actions=load:2->NXM_NX_REG0[0..15],load:4->NXM_NX_REG1[],load:1->NXM_NX_REG2[],resubmit(,1)
table=0,priority=10,in_port=4,actions=load:2->NXM_NX_REG0[0..15],load:3->NXM_NX_REG1[],load:0->NXM_NX_REG2[],resubmit(,1)
table=0,priority=1,actions=drop
table=1,priority=100,arp,actions=output:NXM_NX_REG1[]
table=1,priority=100,icmp6,icmp_type=135,actions=output:NXM_NX_REG1[]
table=1,priority=100,icmp6,icmp_type=136,actions=output:NXM_NX_REG1[]
table=1,priority=90,ipv6,ipv6_dst=ff00::/8,actions=drop
table=1,priority=50,reg0=1,ip,actions=ct(table=2,zone=1)
table=1,priority=50,reg0=1,ipv6,actions=ct(table=2,zone=1)
table=1,priority=50,reg0=2,ip,actions=ct(table=2,zone=NXM_NX_REG0[0..15])
table=1,priority=50,reg0=2,ipv6,actions=ct(table=2,zone=NXM_NX_REG0[0..15])
table=1,priority=1,actions=drop
table=2,priority=100,ct_state=+trk+new-est-rel-inv,reg2=1,reg0=1,ip,actions=ct(commit,zone=1,exec(set_field:0x1->ct_mark)),output:NXM_NX_REG1[]
table=2,priority=100,ct_state=+trk+new-est-rel-inv,reg2=1,reg0=1,ipv6,actions=ct(commit,zone=1,exec(set_field:0x1->ct_mark)),output:NXM_NX_REG1[]
table=2,priority=100,ct_state=+trk+new-est-rel-inv,reg2=1,reg0=2,ip,actions=ct(commit,zone=NXM_NX_REG0[0..15],exec(set_field:0x2->ct_mark,set_field:0x1234->ct_label)),output:NXM_NX_REG1[]
table=2,priority=100,ct_state=+trk+new-est-rel-inv,reg2=1,reg0=2,ipv6,actions=ct(commit,zone=NXM_NX_REG0[0..15],exec(set_field:0x2->ct_mark,set_field:0x1234->ct_label)),output:NXM_NX_REG1[]
table=2,priority=100,ct_state=+trk+est-new-inv,ct_mark=0x1,ct_zone=1,reg0=1,actions=output:NXM_NX_REG1[]
table=2,priority=100,ct_state=+trk+est-new-inv,ct_mark=0x2,ct_label=0x1234,ct_zone=2,reg0=2,actions=output:NXM_NX_REG1[]
table=2,priority=100,ct_state=+trk+rel-new-inv,actions=output:NXM_NX_REG1[]
table=2,priority=1,actions=drop
`

// TestFirewall is the classic stateful firewall, in two zones at once: A
// may open TCP, UDP and ICMP to B, replies pass as +est, B may not open
// anything to A, and the ICMP port unreachable B sends for UDP to a
// closed port reaches A as +rel (A's connected socket gets
// ECONNREFUSED). The two pairs have the same addresses: only the zone
// keeps their connections apart. IPv4, then IPv6.
func TestFirewall(t *testing.T) {
	scenario(t, "fw", func(t *testing.T, e *env) {
		var a, b [2]*host
		for i := range 2 {
			a[i] = e.addHost(hostConfig{name: fmt.Sprintf("a%d", i+1), mac: fmt.Sprintf("02:00:00:00:%02x:01", i+1),
				ip4: "198.18.0.1/24", ip6: "2001:2:0:1::1/64"}, 2*i+1)
			b[i] = e.addHost(hostConfig{name: fmt.Sprintf("b%d", i+1), mac: fmt.Sprintf("02:00:00:00:%02x:02", i+1),
				ip4: "198.18.0.2/24", ip6: "2001:2:0:1::2/64"}, 2*i+2)
		}
		e.addFlows(firewallFlows)
		e.traces = append(e.traces,
			"in_port=1,tcp,dl_src=02:00:00:00:01:01,dl_dst=02:00:00:00:01:02,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=40000,tp_dst=5001,tcp_flags=syn",
			"in_port=2,tcp,dl_src=02:00:00:00:01:02,dl_dst=02:00:00:00:01:01,nw_src=198.18.0.2,nw_dst=198.18.0.1,tp_src=5001,tp_dst=40000,tcp_flags=syn|ack")
		for _, v6 := range []bool{false, true} {
			family := "v4"
			if v6 {
				family = "v6"
			}
			e.flushConntrack()
			firewallRound(e, a, b, v6)
			time.Sleep(300 * time.Millisecond) // the last ACKs of the closes
			raw := e.checkpoint("firewall-" + family)
			expectEntries(e, raw, family, map[string]int{
				// per zone: TCP, UDP echo, UDP to the closed port, ICMP echo
				"tcp zone=1": 1, "tcp zone=2": 1, "udp zone=1": 2, "udp zone=2": 2,
				icmpName(v6) + " zone=1": 1, icmpName(v6) + " zone=2": 1,
			})
			if n, want := len(markedRE.FindAllString(raw, -1)), 8; n != want {
				t.Errorf("%s: %d entries carry their zone's mark and label, want %d:\n%s", family, n, want, raw)
			}
		}
		// ovs-ofctl ct-flush-zone empties one zone, dpctl/flush-conntrack
		// zone=N another.
		e.ofctl("ct-flush-zone", "1")
		raw := e.checkpoint("firewall-after-ct-flush-zone-1")
		expectEntries(e, raw, "after ct-flush-zone 1", map[string]int{"tcp zone=1": 0, "udp zone=1": 0, "tcp zone=2": 1, "udp zone=2": 2})
		if out, err := e.appctlErr("dpctl/flush-conntrack", "zone=2"); err != nil {
			t.Errorf("dpctl/flush-conntrack zone=2: %v\n%s", err, out)
		}
		if raw := e.checkpoint("firewall-after-flush-zone-2"); strings.TrimSpace(raw) != "" {
			t.Errorf("after flushing zones 1 and 2 the table still holds:\n%s", raw)
		}
	})
}

// markedRE matches an entry carrying its zone's mark (and label).
var markedRE = regexp.MustCompile(`(?m)(,zone=1,mark=1|,zone=2,mark=2,labels=0x1234)(,|$)`)

func icmpName(v6 bool) string {
	if v6 {
		return "icmpv6"
	}
	return "icmp"
}

// firewallRound sends the scenario's traffic in both pairs at once.
func firewallRound(e *env, a, b [2]*host, v6 bool) {
	t := e.t
	var conns [2]net.Conn
	for i := range 2 {
		bip, aip := b[i].ip(v6), a[i].ip(v6)
		l := b[i].listenTCP(hostPort(bip, fwTCPPort))
		serveEcho(l, "")
		u := b[i].listenUDP(hostPort(bip, fwUDPPort))
		go func() {
			buf := make([]byte, 1500)
			for {
				n, from, err := u.ReadFrom(buf)
				if err != nil {
					return
				}
				u.WriteTo(buf[:n], from)
			}
		}()
		// A's own servers, which B must not reach.
		back := a[i].listenTCP(hostPort(aip, fwBackTCPPort))
		serveEcho(back, "")
		_ = a[i].listenUDP(hostPort(aip, fwBackUDPPort))
		c, err := a[i].dialTCP("", hostPort(bip, fwTCPPort), 3*time.Second)
		if err != nil {
			t.Errorf("pair %d: A -> B TCP: %v", i+1, err)
			return
		}
		conns[i] = c
	}
	// Both pairs' connections are open at once, each exchanging data.
	for round := range 3 {
		for i, c := range conns {
			msg := fmt.Sprintf("pair %d round %d\n", i+1, round)
			if got, err := exchange(c, msg, 3*time.Second); err != nil || got != msg {
				t.Errorf("pair %d: TCP echo through the firewall: got %q, %v", i+1, got, err)
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	for i := range 2 {
		bip, aip := b[i].ip(v6), a[i].ip(v6)
		// UDP A -> B and the reply.
		u := a[i].dialUDP(hostPort(bip, fwUDPPort))
		u.SetDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 100)
		if _, err := u.Write([]byte("udp hello")); err != nil {
			t.Errorf("pair %d: UDP write: %v", i+1, err)
		} else if n, err := u.Read(buf); err != nil || string(buf[:n]) != "udp hello" {
			t.Errorf("pair %d: UDP reply through the firewall: %q, %v", i+1, buf[:n], err)
		}
		// ICMP echo A -> B.
		a[i].mustPing(bip)
		// UDP to a closed port: the port unreachable comes back as
		// +rel and the connected socket reports it.
		closed := a[i].dialUDP(hostPort(bip, fwClosedUDPPort))
		closed.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := closed.Write([]byte("anyone?")); err != nil {
			t.Errorf("pair %d: UDP write to the closed port: %v", i+1, err)
		} else if _, err := closed.Read(buf); !isRefused(err) {
			t.Errorf("pair %d: UDP to a closed port on B: read gave %v, want ECONNREFUSED (the related ICMP error did not reach A)", i+1, err)
		}
		// B may not open anything towards A.
		if c, err := b[i].dialTCP("", hostPort(aip, fwBackTCPPort), 500*time.Millisecond); err == nil {
			c.Close()
			t.Errorf("pair %d: B opened a TCP connection to A through the firewall", i+1)
		}
		bu := b[i].dialUDP(hostPort(aip, fwBackUDPPort))
		bu.SetDeadline(time.Now().Add(500 * time.Millisecond))
		bu.Write([]byte("let me in"))
		if n, err := bu.Read(buf); err == nil {
			t.Errorf("pair %d: B's UDP to A got %q back", i+1, buf[:n])
		} else if isRefused(err) {
			t.Errorf("pair %d: B's UDP to A reached A (A's socket is open, yet B got port unreachable)", i+1)
		}
		b[i].mustNotPing(aip)
	}
}

// expectEntries checks the dump holds want[k] entries for each "proto
// zone=N" key.
func expectEntries(e *env, dump, what string, want map[string]int) {
	e.t.Helper()
	got := map[string]int{}
	for _, l := range strings.Split(dump, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		proto, _, _ := strings.Cut(l, ",")
		zone := "0"
		if _, z, ok := strings.Cut(l, ",zone="); ok {
			zone, _, _ = strings.Cut(z, ",")
		}
		got[proto+" zone="+zone]++
	}
	for k, n := range want {
		if got[k] != n {
			e.t.Errorf("%s: dump-conntrack has %d %s entries, want %d:\n%s", what, got[k], k, n, dump)
		}
	}
}
