package conntrack

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	fragZone    = 13
	fragTCPPort = 5001
	fragUDPPort = 5002
	fragSmall   = 1000 // MTU of the router's link to the switch
	fragUDPSize = 3000 // datagrams larger than the 1280-byte MTU
)

// fragFlows: port 1 is router R's link (small MTU) and port 2 host B;
// ports 3 and 4 are hosts X and Y (MTU 1280) for UDP. The left side may
// open connections, established traffic passes.
func fragFlows() string {
	return fmt.Sprintf(`
table=0,priority=1,actions=drop
table=0,priority=200,arp,actions=NORMAL
table=0,priority=200,icmp6,icmp_type=135,actions=NORMAL
table=0,priority=200,icmp6,icmp_type=136,actions=NORMAL
table=0,priority=190,ipv6,ipv6_dst=ff00::/8,actions=drop
table=0,priority=100,ip,actions=ct(table=1,zone=%[1]d)
table=0,priority=100,ipv6,actions=ct(table=1,zone=%[1]d)
table=1,priority=100,in_port=1,ip,ct_state=+trk+new-inv,actions=ct(commit,zone=%[1]d),output:2
table=1,priority=100,in_port=3,ip,ct_state=+trk+new-inv,actions=ct(commit,zone=%[1]d),output:4
table=1,priority=100,in_port=3,ipv6,ct_state=+trk+new-inv,actions=ct(commit,zone=%[1]d),output:4
table=1,priority=90,in_port=1,ct_state=+trk+est-inv,actions=output:2
table=1,priority=90,in_port=2,ct_state=+trk+est-inv,actions=output:1
table=1,priority=90,in_port=3,ct_state=+trk+est-inv,actions=output:4
table=1,priority=90,in_port=4,ct_state=+trk+est-inv,actions=output:3
table=1,priority=1,actions=drop
`, fragZone)
}

// TestFragments: with ipf on, fragmented traffic goes through the
// firewall: the datapath reassembles fragments before conntrack and
// refragments them on output.
//   - TCP over IPv4 fragments: A (MTU 1500, path MTU discovery off)
//     sends to B through router R, whose link to the switch has MTU 1000:
//     R fragments A's full-size segments (B's segments fit: A advertises
//     a small MSS). 1 MB goes A -> B, B answers with its SHA-256.
//   - UDP and ICMP echo over IPv4 and IPv6 fragments: X and Y (MTU
//     1280) exchange 3000-byte datagrams and echoes, which their kernels
//     send as fragments.
//
// TCP over IPv6 fragments cannot be produced with Linux endpoints (TCP
// sizes segments to the path MTU, IPv6 routers never fragment), so IPv6
// is covered by UDP.
func TestFragments(t *testing.T) {
	scenario(t, "frag", func(t *testing.T, e *env) {
		r := e.addHost(hostConfig{name: "r", mac: "02:00:00:00:04:fe", ip4: "198.18.6.254/24", mtu: fragSmall}, 1)
		b := e.addHost(hostConfig{name: "b", mac: "02:00:00:00:04:02", ip4: "198.18.6.2/24"}, 2)
		x := e.addHost(hostConfig{name: "x", mac: "02:00:00:00:04:11", ip4: "198.18.7.1/24", ip6: "2001:2:0:6::1/64", mtu: 1280}, 3)
		y := e.addHost(hostConfig{name: "y", mac: "02:00:00:00:04:12", ip4: "198.18.7.2/24", ip6: "2001:2:0:6::2/64", mtu: 1280}, 4)
		// A hangs off R, outside the switch.
		aNS := e.newNS("a")
		e.run(ipPath, "link", "add", "name", "ra", "netns", r.ns, "type", "veth", "peer", "name", "eth0", "netns", aNS)
		e.run(ipPath, "netns", "exec", aNS, ethtoolPath, "-K", "eth0", "tx", "off")
		e.run(ipPath, "-n", aNS, "addr", "add", "198.18.5.1/24", "dev", "eth0")
		e.run(ipPath, "-n", r.ns, "addr", "add", "198.18.5.254/24", "dev", "ra")
		e.run(ipPath, "-n", aNS, "link", "set", "dev", "eth0", "up")
		e.run(ipPath, "-n", r.ns, "link", "set", "dev", "ra", "up")
		e.run(ipPath, "netns", "exec", r.ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		e.run(ipPath, "netns", "exec", aNS, "sysctl", "-qw", "net.ipv4.ip_no_pmtu_disc=1")
		e.run(ipPath, "-n", aNS, "route", "add", "198.18.6.0/24", "via", "198.18.5.254", "advmss", "900")
		e.run(ipPath, "-n", b.ns, "route", "add", "198.18.5.0/24", "via", "198.18.6.254")
		a := &host{e: e, name: "a", ns: aNS, dev: "eth0", ip4: "198.18.5.1"}

		e.addFlows(fragFlows())
		for _, cmd := range [][]string{
			{"dpctl/ipf-set-enabled", "v4"}, {"dpctl/ipf-set-enabled", "v6"},
			// R's first fragments are under the default minimum (1200).
			{"dpctl/ipf-set-min-frag", "v4", "400"},
		} {
			if out, err := e.appctlErr(cmd...); err != nil {
				e.t.Errorf("ovs-appctl %s: %v\n%s", strings.Join(cmd, " "), err, out)
			}
		}
		e.traces = append(e.traces,
			"in_port=1,tcp,dl_src=02:00:00:00:04:fe,dl_dst=02:00:00:00:04:02,nw_src=198.18.5.1,nw_dst=198.18.6.2,nw_frag=first,tp_src=40000,tp_dst=5001",
			"in_port=3,udp6,dl_src=02:00:00:00:04:11,dl_dst=02:00:00:00:04:12,ipv6_src=2001:2:0:6::1,ipv6_dst=2001:2:0:6::2,nw_frag=first,tp_src=40000,tp_dst=5002")

		// IPv4: TCP through R's fragments, and UDP fragments.
		e.flushConntrack()
		reasm := reasmOKs(e, b.ns, false)
		if !fragTCP(e, a, b) {
			// Reported.
		} else if got := reasmOKs(e, b.ns, false) - reasm; got == 0 {
			t.Errorf("B reassembled no IPv4 datagram: the TCP data did not arrive as fragments")
		} else {
			t.Logf("v4: B reassembled %d datagrams of the TCP transfer", got)
		}
		fragUDP(e, x, y, false)
		fragPing(e, x, y, false)
		time.Sleep(300 * time.Millisecond) // the last ACKs of the closes
		raw := e.checkpoint("frag-v4")
		expectEntries(e, raw, "frag-v4", map[string]int{"tcp zone=13": 1, "udp zone=13": 1, "icmp zone=13": 1})
		// IPv6: UDP and ICMPv6 echo fragments.
		e.flushConntrack()
		fragUDP(e, x, y, true)
		fragPing(e, x, y, true)
		raw = e.checkpoint("frag-v6")
		expectEntries(e, raw, "frag-v6", map[string]int{"udp zone=13": 1, "icmpv6 zone=13": 1})
		status, err := e.appctlErr("dpctl/ipf-get-status")
		if err != nil {
			t.Fatalf("ovs-appctl dpctl/ipf-get-status: %v\n%s", err, status)
		}
		t.Logf("ipf-get-status:\n%s", status)
		for _, family := range []string{"v4", "v6"} {
			if n := ipfCounter(status, family+" frags accepted"); n <= 0 {
				t.Errorf("ipf-get-status: %s frags accepted is %d, want > 0:\n%s", family, n, status)
			}
		}
	})
}

// fragTCP sends 1 MB from a to b's TCP server and checks b's SHA-256;
// it reports whether the transfer went through.
func fragTCP(e *env, a, b *host) bool {
	t := e.t
	l := b.listenTCP(hostPort(b.ip4, fragTCPPort))
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		h := sha256.New()
		io.Copy(h, c)
		io.WriteString(c, hex.EncodeToString(h.Sum(nil)))
	}()
	data := bytes.Repeat([]byte("fragmented tcp through conntrack "), 32*1024) // ~1 MB
	want := sha256.Sum256(data)
	c, err := a.dialTCP("", hostPort(b.ip4, fragTCPPort), 3*time.Second)
	if err != nil {
		t.Errorf("TCP A -> B through R: %v", err)
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(data); err != nil {
		t.Errorf("TCP A -> B: writing %d bytes: %v", len(data), err)
		return false
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != hex.EncodeToString(want[:]) {
		t.Errorf("TCP A -> B over fragments: B's SHA-256 %q (%v), want %x", got, err, want)
		return false
	}
	return true
}

// fragPing sends fragUDPSize-byte echo requests from x to y: fragments
// both ways.
func fragPing(e *env, x, y *host, v6 bool) {
	ok, err := x.pingSize(y.ip(v6), fragUDPSize, 3, time.Second)
	if err != nil || !ok {
		e.t.Errorf("ping (v6=%v) with %d bytes over fragments: no reply (%v)", v6, fragUDPSize, err)
	}
}

// fragUDP sends a fragUDPSize datagram from x to y and y echoes it.
func fragUDP(e *env, x, y *host, v6 bool) {
	t := e.t
	u := y.listenUDP(hostPort(y.ip(v6), fragUDPPort))
	go func() {
		buf := make([]byte, 65536)
		u.SetDeadline(time.Now().Add(10 * time.Second))
		n, from, err := u.ReadFrom(buf)
		if err == nil {
			u.WriteTo(buf[:n], from)
		}
	}()
	c := x.dialUDP(hostPort(y.ip(v6), fragUDPPort))
	msg := bytes.Repeat([]byte{0x5a}, fragUDPSize)
	c.SetDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 65536)
	if _, err := c.Write(msg); err != nil {
		t.Errorf("UDP (v6=%v) X -> Y: %v", v6, err)
		return
	}
	n, err := c.Read(buf)
	if err != nil || !bytes.Equal(buf[:n], msg) {
		t.Errorf("UDP (v6=%v) over fragments: the %d-byte echo came back as %d bytes, %v", v6, len(msg), n, err)
	}
}

// reasmOKs reads the namespace's count of reassembled datagrams
// (/proc/net/snmp Ip: ReasmOKs, or /proc/net/snmp6 Ip6ReasmOKs).
func reasmOKs(e *env, ns string, v6 bool) int {
	e.t.Helper()
	file := "/proc/net/snmp"
	if v6 {
		file = "/proc/net/snmp6"
	}
	out, err := exec.Command(ipPath, "netns", "exec", ns, "cat", file).Output()
	if err != nil {
		e.t.Fatalf("%s: %v", file, err)
	}
	lines := strings.Split(string(out), "\n")
	if v6 {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "Ip6ReasmOKs" {
				n, _ := strconv.Atoi(f[1])
				return n
			}
		}
		return 0
	}
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], "Ip:") && strings.HasPrefix(lines[i+1], "Ip:") {
			names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			for j, name := range names {
				if name == "ReasmOKs" && j < len(values) {
					n, _ := strconv.Atoi(values[j])
					return n
				}
			}
		}
	}
	return 0
}

// ipfCounter reads "name: N" from ipf-get-status; -1 when absent.
func ipfCounter(status, name string) int {
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `:\s*(\d+)`).FindStringSubmatch(status)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
