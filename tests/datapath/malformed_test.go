package datapathtest

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// jumboMTU is the MTU of the jumbo links.
const jumboMTU = 9000

// TestMalformedFrames injects, from h1 with an AF_PACKET socket,
// truncated and malformed headers, frames larger than the output port's
// MTU, jumbo frames and random garbage, and checks that the datapath
// counts them by parse status and drop counter, passes the valid large
// ones, and keeps forwarding with no PMD lost. h1 and h2 have MTU 9000
// links, h3 a 1500 one; in the "internal" variant h3 is the switch's
// internal port (MTU 1500) and h1, h2 are on system ports.
func TestMalformedFrames(t *testing.T) {
	for _, v := range portVariants {
		t.Run(v.name, func(t *testing.T) { testMalformed(t, v) })
	}
}

// injected is one kind of bad frame and the parse status it must get.
type injected struct {
	what   string
	frame  []byte
	status packet.Status
	count  int
}

func testMalformed(t *testing.T, v portVariant) {
	if v.typ == "afxdp" {
		needAFXDP(t)
	}
	tp := newTopo(t)
	swNS := tp.ns("sw")
	sub := tp.subnet(0)
	h1 := tp.host(swNS, "h1", "p1", sub+".1/24", jumboMTU)
	h2 := tp.host(swNS, "h2", "p2", sub+".2/24", jumboMTU)
	spec := switchSpec{}
	for _, p := range []string{"p1", "p2"} {
		// The injection below is a burst of ~460 frames at once into
		// an idle port: every one must be counted, so p1's ring is
		// sized for it beforehand (a ring sized from need drops most
		// of a first burst that large while it grows).
		spec.Ports = append(spec.Ports, portSpec{Name: p, Type: v.typ, XDPMode: v.xdpMode, MinRingSize: 16 << 20})
	}
	var h3 *host
	if v.internal {
		h3 = &host{NS: swNS, Dev: "gvsint0", Port: "gvsint0", IP: sub + ".3"}
		spec.Ports = append(spec.Ports, portSpec{Name: h3.Port, Type: "internal"})
	} else {
		h3 = tp.host(swNS, "h3", "p3", sub+".3/24", 0)
		spec.Ports = append(spec.Ports, portSpec{Name: h3.Port, Type: v.typ, XDPMode: v.xdpMode})
	}
	sw, err := startSwitch(t, swNS, spec)
	if v.xdpMode == "native" {
		skipNativeUnsupported(t, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if v.internal {
		tp.run("ip", "-n", swNS, "addr", "add", h3.IP+"/24", "dev", h3.Dev)
		tp.run("ip", "-n", swNS, "link", "set", h3.Dev, "up")
		h3.MAC = tp.mac(swNS, h3.Dev)
	}
	p3 := h3.Port
	p1, p2 := newPinger(t, h1.NS), newPinger(t, h2.NS)
	// The switch learns every MAC; jumbo frames pass end to end.
	for _, c := range []struct {
		p        *pinger
		dst      string
		size     int
		what     string
		required bool
	}{
		{p1, h2.IP, 56, "h1 -> h2", true},
		{p1, h3.IP, 56, "h1 -> h3", true},
		{p2, h3.IP, 56, "h2 -> h3", true},
		{p1, h2.IP, jumboMTU - 28, "h1 -> h2 jumbo (9000-byte IP packet, DF)", true},
		{p2, h1.IP, jumboMTU - 28, "h2 -> h1 jumbo (9000-byte IP packet, DF)", true},
	} {
		if _, err := c.p.reach(c.dst, c.size, 5*time.Second); err != nil {
			t.Fatalf("before injection: %s: %v", c.what, err)
		}
	}

	bad := badFrames(h1, h2, sub)
	big := []struct {
		what   string
		frame  []byte
		to     *host
		passes bool
	}{
		{"4000-byte frame to h3 (output MTU 1500)", udpFrame(h3.MAC, h1.MAC, h1.IP, h3.IP, 4000), h3, false},
		{"4000-byte frame to h2 (output MTU 9000)", udpFrame(h2.MAC, h1.MAC, h1.IP, h2.IP, 4000), h2, true},
		{"9014-byte jumbo frame to h2", udpFrame(h2.MAC, h1.MAC, h1.IP, h2.IP, jumboMTU+14), h2, true},
	}
	const bigCount = 20
	const garbage = 300

	raw1, raw2 := openRaw(t, h1.NS, "eth0"), openRaw(t, h2.NS, "eth0")
	raw2.drain()
	// A tap on the switch side of h1's link shows what the kernel hands
	// to AF_PACKET sockets at all: it discards some frames (a VLAN tag
	// cut short fails skb_vlan_untag) before any socket sees them, so a
	// "system" port cannot count those. XDP runs before that.
	swTap := openRaw(t, swNS, "p1")
	swTap.drain()
	before := sw.stats()
	p3Before := before.port(p3).Stats
	for _, b := range bad {
		for range b.count {
			if err := raw1.send(b.frame); err != nil {
				t.Fatalf("inject %s: %v", b.what, err)
			}
		}
	}
	for _, b := range big {
		for range bigCount {
			if err := raw1.send(b.frame); err != nil {
				t.Fatalf("inject %s: %v", b.what, err)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range garbage {
		f := make([]byte, 14+rng.IntN(1500))
		for i := range f {
			f[i] = byte(rng.Uint32())
		}
		if err := raw1.send(f); err != nil {
			t.Fatalf("inject garbage: %v", err)
		}
	}

	// What reached h2: the valid large frames must; count the malformed
	// ones too (the acceptance says they are dropped; Open vSwitch's
	// NORMAL forwards them).
	passed := map[string]int{}
	badSeen := map[string]int{}
	deadline := time.Now().Add(3 * time.Second)
	for {
		f, _, err := raw2.recv(time.Until(deadline), func(f []byte, _ int) bool { return bytes.Equal(f[6:12], h1.MAC) })
		if err != nil {
			break
		}
		for _, b := range big {
			if b.to == h2 && bytes.Equal(f, b.frame) {
				passed[b.what]++
			}
		}
		for _, b := range bad {
			if bytes.Equal(f, b.frame) {
				badSeen[b.what]++
			}
		}
		if passed[big[1].what] == bigCount && passed[big[2].what] == bigCount && time.Until(deadline) > 500*time.Millisecond {
			deadline = time.Now().Add(500 * time.Millisecond) // stragglers of the bad ones
		}
	}
	for _, b := range big {
		if b.passes && passed[b.what] != bigCount {
			t.Errorf("%s: %d of %d arrived at h2", b.what, passed[b.what], bigCount)
		}
	}
	for _, b := range bad {
		t.Logf("%s: injected %d, forwarded to h2 %d", b.what, b.count, badSeen[b.what])
	}

	// The counters: every bad frame by parse status; the oversized
	// frames as transmit drops on p3, which must not wedge.
	want := [packet.NumStatus]uint64{}
	for _, b := range bad {
		want[b.status] += uint64(b.count)
	}
	if v.typ == "system" {
		seen := 0
		for {
			if _, _, err := swTap.recv(100*time.Millisecond, func(f []byte, _ int) bool { return bytes.Equal(f, bad[0].frame) }); err != nil {
				break
			}
			seen++
		}
		t.Logf("%s: the kernel delivered %d of %d to AF_PACKET sockets on p1", bad[0].what, seen, bad[0].count)
		want[packet.StatusTruncatedL2] = uint64(seen)
	}
	var after switchState
	counted := waitFor(5*time.Second, func() bool {
		after = sw.stats()
		got := parseDelta(before, after)
		for s := packet.StatusTruncatedL2; s < packet.NumStatus; s++ {
			if got[s] < want[s] {
				return false
			}
		}
		return after.port(p3).Stats.TxDrops-p3Before.TxDrops >= bigCount
	})
	got := parseDelta(before, after)
	for s := packet.StatusTruncatedL2; s < packet.NumStatus; s++ {
		t.Logf("parse status %s: +%d (injected %d, plus any garbage)", s, got[s], want[s])
	}
	t.Logf("drops while injecting: %s", dropsBetween(before, after))
	if !counted {
		for s := packet.StatusTruncatedL2; s < packet.NumStatus; s++ {
			if got[s] < want[s] {
				t.Errorf("parse status %s counted %d times, want at least %d", s, got[s], want[s])
			}
		}
		if d := after.port(p3).Stats.TxDrops - p3Before.TxDrops; d < bigCount {
			t.Errorf("%s (MTU 1500) counted %d transmit drops for %d oversized frames", p3, d, bigCount)
		}
	}

	// Still forwarding, jumbo included; the PMDs still run.
	for _, c := range []struct {
		p    *pinger
		dst  string
		size int
		what string
	}{
		{p1, h2.IP, 56, "h1 -> h2"},
		{p1, h3.IP, 56, "h1 -> h3 (after oversized frames to it)"},
		{p2, h3.IP, 56, "h2 -> h3"},
		{p1, h2.IP, jumboMTU - 28, "h1 -> h2 jumbo"},
	} {
		if _, err := c.p.reach(c.dst, c.size, 3*time.Second); err != nil {
			t.Errorf("after injection: %s: %v", c.what, err)
		}
	}
	final := sw.stats()
	for i, p := range final.PMDs {
		if i < len(after.PMDs) && p.Iterations <= after.PMDs[i].Iterations && p.Packets <= after.PMDs[i].Packets {
			t.Errorf("PMD %d made no progress after the injection (iterations %d)", p.PMD, p.Iterations)
		}
	}
	logSwitch(t, final)
}

// badFrames are the truncated and malformed frames from h1 to h2, each
// with the parse status the datapath must count for it.
func badFrames(h1, h2 *host, sub string) []injected {
	eth := func(payload []byte) []byte { return ethFrame(h2.MAC, h1.MAC, -1, unix.ETH_P_IP, payload) }
	echo := ipv4Packet(h1.IP, h2.IP, unix.IPPROTO_ICMP, icmpEcho(1, 1, 16))
	withByte := func(b []byte, i int, v byte) []byte {
		c := append([]byte(nil), b...)
		c[i] = v
		return c
	}
	tcp := make([]byte, 20)
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 9)
	tcp[12] = 5 << 4
	tcp[13] = 0x02 // SYN
	tcpPkt := ipv4Packet(h1.IP, h2.IP, unix.IPPROTO_TCP, tcp)
	totalLen := func(n uint16) []byte {
		c := append([]byte(nil), echo...)
		binary.BigEndian.PutUint16(c[2:], n)
		return c
	}
	// The statuses are the parser's (packet/parse_ip.go): a header or
	// length that points past the frame is "truncated", one that cannot
	// be right whatever follows is "malformed".
	return []injected{
		{"VLAN tag cut short (16 bytes)", append(append([]byte(nil), h2.MAC...), append(h1.MAC, 0x81, 0x00, 0x00, 0x0a)...), packet.StatusTruncatedL2, 10},
		{"IPv4 header cut to 10 bytes", eth(echo[:10]), packet.StatusTruncatedL3, 10},
		{"Ethernet header only, type IPv4", eth(nil), packet.StatusTruncatedL3, 10},
		{"IPv4 IHL 15 beyond the packet", eth(withByte(echo, 0, 0x4f)), packet.StatusTruncatedL3, 10},
		{"IPv4 total length beyond the frame", eth(totalLen(1000)), packet.StatusTruncatedL3, 10},
		{"IPv4 IHL 3", eth(withByte(echo, 0, 0x43)), packet.StatusMalformedL3, 10},
		{"IPv4 total length below the header", eth(totalLen(12)), packet.StatusMalformedL3, 10},
		{"IP version 7 in an IPv4 frame", eth(withByte(echo, 0, 0x75)), packet.StatusMalformedL3, 10},
		{"TCP header cut to 8 bytes", eth(ipv4Packet(h1.IP, h2.IP, unix.IPPROTO_TCP, tcp[:8])), packet.StatusTruncatedL4, 10},
		{"TCP data offset 2 words", eth(withByte(tcpPkt, 20+12, 2<<4)), packet.StatusMalformedL4, 10},
	}
}

// udpFrame builds a valid IPv4/UDP frame of exactly size bytes.
func udpFrame(dst, src net.HardwareAddr, srcIP, dstIP string, size int) []byte {
	data := make([]byte, size-14-20)
	binary.BigEndian.PutUint16(data[0:], 40001)
	binary.BigEndian.PutUint16(data[2:], 9) // discard
	binary.BigEndian.PutUint16(data[4:], uint16(len(data)))
	for i := 8; i < len(data); i++ {
		data[i] = byte(i)
	}
	return ethFrame(dst, src, -1, unix.ETH_P_IP, ipv4Packet(srcIP, dstIP, unix.IPPROTO_UDP, data))
}

// parseDelta sums, over PMDs, how much each parse status counter moved.
func parseDelta(before, after switchState) [packet.NumStatus]uint64 {
	var d [packet.NumStatus]uint64
	for _, p := range after.PMDs {
		for s := range p.Parse {
			d[s] += p.Parse[s]
		}
	}
	for _, p := range before.PMDs {
		for s := range p.Parse {
			d[s] -= p.Parse[s]
		}
	}
	return d
}
