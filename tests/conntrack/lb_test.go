package conntrack

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The load-balancing scenario: client C reaches the virtual IP vip:8080;
// a select group picks one of three backends, each bucket committing the
// connection with DNAT to its backend's port 80.
const (
	lbVIPPort     = 8080
	lbBackendPort = 80
	lbZone        = 9
	lbVIPMAC      = "02:00:00:00:02:64"
	lbShort       = 30 // short connections, to see them spread
	lbLongRounds  = 6  // exchanges of the long connection
)

var lbVIP = map[bool]string{false: "198.18.2.100", true: "2001:2:0:3::100"}

func lbBackendIP(i int, v6 bool) string {
	if v6 {
		return fmt.Sprintf("2001:2:0:3::%d", 11+i)
	}
	return fmt.Sprintf("198.18.2.%d", 11+i)
}

// lbGroup is the select group of one family: a bucket per backend, each
// ct(commit,nat(dst=...)) recirculating into table 2.
func lbGroup(id int, v6 bool) string {
	g := fmt.Sprintf("group_id=%d,type=select", id)
	for i := range 3 {
		ip := lbBackendIP(i, v6)
		if v6 {
			ip = "[" + ip + "]"
		}
		g += fmt.Sprintf(",bucket=bucket_id=%d,actions=ct(commit,table=2,zone=%d,nat(dst=%s:%d))", i, lbZone, ip, lbBackendPort)
	}
	return g
}

// lbFlows: table 0 sends IP through ct(nat) (established connections get
// their binding applied both ways), table 1 hands new connections to the
// VIP to the group and established ones on, table 2 delivers by the
// (translated) destination address.
func lbFlows(c *host, backends []*host) string {
	f := fmt.Sprintf(`
table=0,priority=1,actions=drop
table=0,priority=200,arp,actions=NORMAL
table=0,priority=200,icmp6,icmp_type=135,actions=NORMAL
table=0,priority=200,icmp6,icmp_type=136,actions=NORMAL
table=0,priority=190,ipv6,ipv6_dst=ff00::/8,actions=drop
table=0,priority=100,ip,actions=ct(table=1,zone=%[1]d,nat)
table=0,priority=100,ipv6,actions=ct(table=1,zone=%[1]d,nat)
table=1,priority=100,in_port=1,ct_state=+trk+new-est-inv,tcp,nw_dst=%[2]s,tp_dst=%[4]d,actions=group:1
table=1,priority=100,in_port=1,ct_state=+trk+new-est-inv,tcp6,ipv6_dst=%[3]s,tp_dst=%[4]d,actions=group:2
table=1,priority=100,ct_state=+trk+est-inv,actions=resubmit(,2)
table=1,priority=1,actions=drop
table=2,priority=100,ip,nw_dst=%[5]s,actions=mod_dl_src:%[7]s,mod_dl_dst:%[8]s,output:1
table=2,priority=100,ipv6,ipv6_dst=%[6]s,actions=mod_dl_src:%[7]s,mod_dl_dst:%[8]s,output:1
table=2,priority=1,actions=drop
`, lbZone, lbVIP[false], lbVIP[true], lbVIPPort, c.ip4, c.ip6, lbVIPMAC, c.mac)
	for _, b := range backends {
		f += fmt.Sprintf("table=2,priority=100,ip,nw_dst=%s,actions=mod_dl_dst:%s,output:%d\n", b.ip4, b.mac, b.ofport)
		f += fmt.Sprintf("table=2,priority=100,ipv6,ipv6_dst=%s,actions=mod_dl_dst:%s,output:%d\n", b.ip6, b.mac, b.ofport)
	}
	return f
}

// lbBackendRE matches a backend's address in the reply direction, which
// depends on the group's choice: lbNormalise replaces it (and the count
// of connections per backend is checked separately).
var lbBackendRE = regexp.MustCompile(`reply=\(src=(198\.18\.2\.1[123]|2001:2:0:3::1[123]),`)

func lbNormalise(dump string) string {
	return lbBackendRE.ReplaceAllString(dump, "reply=(src=BACKEND,")
}

// TestLoadBalancer: DNAT load balancing to three backends through a select
// group whose buckets do ct(commit,nat(dst=...)): short connections spread
// over every backend, and a long connection exchanging data several times
// stays with its backend. IPv4, then IPv6.
func TestLoadBalancer(t *testing.T) {
	scenario(t, "lb", func(t *testing.T, e *env) {
		c := e.addHost(hostConfig{name: "c", mac: "02:00:00:00:02:01", ip4: "198.18.2.2/24", ip6: "2001:2:0:3::2/64"}, 1)
		var backends []*host
		for i := range 3 {
			b := e.addHost(hostConfig{name: fmt.Sprintf("b%d", i+1), mac: fmt.Sprintf("02:00:00:00:02:%02x", 0x11+i),
				ip4: lbBackendIP(i, false) + "/24", ip6: lbBackendIP(i, true) + "/64"}, i+2)
			backends = append(backends, b)
			b.neigh(c.ip4, lbVIPMAC)
			b.neigh(c.ip6, lbVIPMAC)
		}
		c.neigh(lbVIP[false], lbVIPMAC)
		c.neigh(lbVIP[true], lbVIPMAC)
		e.ofctl("add-group", lbGroup(1, false))
		e.ofctl("add-group", lbGroup(2, true))
		e.addFlows(lbFlows(c, backends))
		e.traces = append(e.traces,
			fmt.Sprintf("in_port=1,tcp,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,tp_src=40000,tp_dst=%d,tcp_flags=syn", c.mac, lbVIPMAC, c.ip4, lbVIP[false], lbVIPPort))
		for _, v6 := range []bool{false, true} {
			family := "v4"
			if v6 {
				family = "v6"
			}
			e.flushConntrack()
			for i, b := range backends {
				serveEcho(b.listenTCP(hostPort(b.ip(v6), lbBackendPort)), fmt.Sprintf("b%d:", i+1))
			}
			lbRound(e, c, v6, family)
		}
	})
}

func lbRound(e *env, c *host, v6 bool, family string) {
	t := e.t
	vip := hostPort(lbVIP[v6], lbVIPPort)
	// backendOf reads which backend answered an echo ("bN:msg").
	backendOf := func(reply, msg string) string {
		tag, rest, ok := strings.Cut(reply, ":")
		if !ok || rest != msg {
			return ""
		}
		return tag
	}
	// The long connection opens first and stays open through the short
	// ones.
	long, err := c.dialTCP("", vip, 3*time.Second)
	if err != nil {
		t.Errorf("%s: long connection to the VIP: %v", family, err)
		return
	}
	longBackend := ""
	exchangeLong := func(round int) {
		msg := fmt.Sprintf("long %d\n", round)
		reply, err := exchange(long, msg, 3*time.Second)
		b := backendOf(reply, msg)
		switch {
		case err != nil || b == "":
			t.Errorf("%s: long connection, exchange %d: %q, %v", family, round, reply, err)
		case longBackend == "":
			longBackend = b
		case b != longBackend:
			t.Errorf("%s: long connection moved from %s to %s at exchange %d", family, longBackend, b, round)
		}
	}
	exchangeLong(0)
	spread := map[string]int{}
	for i := range lbShort {
		if i%(lbShort/(lbLongRounds-1)) == 0 {
			exchangeLong(1 + i/(lbShort/(lbLongRounds-1)))
		}
		s, err := c.dialTCP("", vip, 3*time.Second)
		if err != nil {
			t.Errorf("%s: short connection %d to the VIP: %v", family, i, err)
			continue
		}
		msg := fmt.Sprintf("short %d\n", i)
		reply, err := exchange(s, msg, 3*time.Second)
		s.Close()
		if b := backendOf(reply, msg); err != nil || b == "" {
			t.Errorf("%s: short connection %d: %q, %v", family, i, reply, err)
		} else {
			spread[b]++
		}
	}
	exchangeLong(lbLongRounds)
	long.Close()
	t.Logf("%s: short connections per backend %v; the long one stayed on %s", family, spread, longBackend)
	for i := range 3 {
		if spread[fmt.Sprintf("b%d", i+1)] == 0 {
			t.Errorf("%s: backend b%d got none of %d connections: %v", family, i+1, lbShort, spread)
		}
	}
	time.Sleep(300 * time.Millisecond) // the last ACKs of the closes
	raw := e.checkpoint("lb-"+family, lbNormalise)
	// Every connection is in the table, to the VIP, translated to a
	// backend, with the per-backend counts the clients saw.
	perBackend := map[string]int{}
	n := 0
	for _, line := range strings.Split(raw, "\n") {
		if !strings.HasPrefix(line, "tcp,") {
			continue
		}
		n++
		if !strings.Contains(line, fmt.Sprintf("dst=%s,sport=", lbVIP[v6])) || !strings.Contains(line, fmt.Sprintf("dport=%d),reply", lbVIPPort)) {
			t.Errorf("%s: entry not to the VIP: %s", family, line)
		}
		if m := lbBackendRE.FindStringSubmatch(line); m != nil {
			perBackend[m[1]]++
		} else {
			t.Errorf("%s: entry not translated to a backend: %s", family, line)
		}
	}
	if n != lbShort+1 {
		t.Errorf("%s: dump-conntrack lists %d TCP connections, want %d", family, n, lbShort+1)
	}
	for i := range 3 {
		want := spread[fmt.Sprintf("b%d", i+1)]
		if fmt.Sprintf("b%d", i+1) == longBackend {
			want++
		}
		if got := perBackend[lbBackendIP(i, v6)]; got != want {
			t.Errorf("%s: dump-conntrack has %d connections to backend %s, the clients saw %d", family, got, lbBackendIP(i, v6), want)
		}
	}
}
