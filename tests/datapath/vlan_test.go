package datapathtest

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestVLANIsolation: access ports tagged 10, 10 and 20 and a trunk
// carrying both. The two VLAN 10 hosts reach each other; the VLAN 20 host
// reaches neither, even with static ARP entries (so unicast frames to its
// MAC really are sent), and never even sees their echo requests. The
// trunk host (raw 802.1Q frames: this kernel may lack VLAN devices)
// reaches each VLAN with its tag, and its replies come back tagged.
func TestVLANIsolation(t *testing.T) {
	for _, v := range []portVariant{
		{name: "system", typ: "system"},
		{name: "afxdp-generic", typ: "afxdp", xdpMode: "generic"},
	} {
		t.Run(v.name, func(t *testing.T) { testVLANIsolation(t, v) })
	}
}

func testVLANIsolation(t *testing.T, v portVariant) {
	if v.typ == "afxdp" {
		needAFXDP(t)
	}
	tp := newTopo(t)
	swNS := tp.ns("sw")
	sub := tp.subnet(0)
	h1 := tp.host(swNS, "h1", "p1", sub+".1/24", 0)
	h2 := tp.host(swNS, "h2", "p2", sub+".2/24", 0)
	h3 := tp.host(swNS, "h3", "p3", sub+".3/24", 0)
	h4 := tp.host(swNS, "h4", "p4", "", 0) // trunk: raw frames only
	trunkIP := sub + ".4"
	// Static neighbours between h1 and h3: their pings go out as
	// unicast frames to each other's MAC, so only the switch can stop
	// them (h2 -> h3 relies on ARP, a broadcast, instead). h1 and h3
	// answer the trunk host without ARP.
	neigh := func(h *host, ip string, mac string) {
		tp.run("ip", "-n", h.NS, "neigh", "replace", ip, "lladdr", mac, "dev", "eth0", "nud", "permanent")
	}
	neigh(h1, h3.IP, h3.MAC.String())
	neigh(h3, h1.IP, h1.MAC.String())
	neigh(h1, trunkIP, h4.MAC.String())
	neigh(h3, trunkIP, h4.MAC.String())

	spec := switchSpec{Ports: []portSpec{
		{Name: "p1", Type: v.typ, XDPMode: v.xdpMode, Tag: 10},
		{Name: "p2", Type: v.typ, XDPMode: v.xdpMode, Tag: 10},
		{Name: "p3", Type: v.typ, XDPMode: v.xdpMode, Tag: 20},
		{Name: "p4", Type: v.typ, XDPMode: v.xdpMode, Trunks: []uint16{10, 20}, VLANMode: "trunk"},
	}}
	sw, err := startSwitch(t, swNS, spec)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2, p3 := newPinger(t, h1.NS), newPinger(t, h2.NS), newPinger(t, h3.NS)

	// Positive controls first: the switch forwards within a VLAN.
	if _, err := p1.reach(h2.IP, 56, 5*time.Second); err != nil {
		t.Errorf("h1 -> h2 (access 10 -> access 10): %v", err)
	}
	if _, err := p2.reach(h1.IP, 56, 2*time.Second); err != nil {
		t.Errorf("h2 -> h1 (access 10 -> access 10): %v", err)
	}
	trunk := openRaw(t, h4.NS, "eth0")
	for _, c := range []struct {
		what string
		dst  *host
		vid  int
	}{
		{"trunk VLAN 10 -> h1 (access 10)", h1, 10},
		{"trunk VLAN 20 -> h3 (access 20)", h3, 20},
	} {
		if err := trunkPing(trunk, h4, trunkIP, c.dst, c.vid, true, 5*time.Second); err != nil {
			t.Errorf("%s: %v", c.what, err)
		}
	}

	echos := func(h *host) int64 {
		c, err := snmp(h.NS, "Icmp")
		if err != nil {
			t.Fatal(err)
		}
		return c["InEchos"]
	}
	h1Echos, h3Echos := echos(h1), echos(h3)
	const tries = 3
	for _, c := range []struct {
		what string
		p    *pinger
		dst  string
	}{
		{"h1 -> h3 (10 -> 20, static ARP)", p1, h3.IP},
		{"h2 -> h3 (10 -> 20, ARP)", p2, h3.IP},
		{"h3 -> h1 (20 -> 10, static ARP)", p3, h1.IP},
		{"h3 -> h2 (20 -> 10, ARP)", p3, h2.IP},
	} {
		if n := c.p.replies(c.dst, tries, 300*time.Millisecond); n != 0 {
			t.Errorf("%s: %d of %d echo requests answered across VLANs", c.what, n, tries)
		}
	}
	// The trunk host tags a request for h1 with the wrong VLAN.
	if err := trunkPing(trunk, h4, trunkIP, h1, 20, false, 500*time.Millisecond); err != nil {
		t.Errorf("trunk VLAN 20 -> h1 (access 10): %v", err)
	}
	if d := echos(h3) - h3Echos; d != 0 {
		t.Errorf("h3 (VLAN 20) received %d echo requests from VLAN 10", d)
	}
	if d := echos(h1) - h1Echos; d != 0 {
		t.Errorf("h1 (VLAN 10) received %d echo requests from VLAN 20", d)
	}
	// Both VLANs still work afterwards.
	if _, err := p1.reach(h2.IP, 56, 2*time.Second); err != nil {
		t.Errorf("h1 -> h2 afterwards: %v", err)
	}
	if err := trunkPing(trunk, h4, trunkIP, h3, 20, true, 2*time.Second); err != nil {
		t.Errorf("trunk VLAN 20 -> h3 afterwards: %v", err)
	}
	logSwitch(t, sw.stats())
}

// trunkPing sends ICMP echo requests tagged vid from the trunk host to
// dst until a reply tagged vid arrives (want) or for the whole timeout
// (!want: then any reply is an error).
func trunkPing(s *rawSock, from *host, fromIP string, dst *host, vid int, want bool, timeout time.Duration) error {
	id := uint16(os.Getpid())
	end := time.Now().Add(timeout)
	for seq := uint16(1); ; seq++ {
		req := ethFrame(dst.MAC, from.MAC, vid, unix.ETH_P_IP, ipv4Packet(fromIP, dst.IP, unix.IPPROTO_ICMP, icmpEcho(id, seq, 56)))
		s.drain()
		if err := s.send(req); err != nil {
			return err
		}
		wait := min(300*time.Millisecond, time.Until(end))
		_, gotVID, err := s.recv(wait, func(f []byte, _ int) bool { return isEchoReply(f, dst.IP, id, seq) })
		switch {
		case err == nil && !want:
			return errorf("echo reply (VLAN %d) across VLANs", gotVID)
		case err == nil && gotVID != vid:
			return errorf("echo reply came back with VLAN %d, want %d", gotVID, vid)
		case err == nil:
			return nil
		case time.Now().After(end) && want:
			return errorf("no echo reply tagged %d within %v", vid, timeout)
		case time.Now().After(end):
			return nil
		}
	}
}
