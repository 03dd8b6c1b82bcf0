package conntrack

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"gvs/packet"
)

// Test frames: real bytes with valid checksums, parsed by packet.Buffer.

var (
	ipA  = netip.MustParseAddr("198.18.0.1")
	ipB  = netip.MustParseAddr("198.18.0.2")
	ipN  = netip.MustParseAddr("198.18.1.100") // a NAT address
	ip6A = netip.MustParseAddr("2001:2::1")
	ip6B = netip.MustParseAddr("2001:2::2")
	ipR  = netip.MustParseAddr("198.18.5.1") // a router sending ICMP errors
)

type seg struct {
	flags    uint16
	seq, ack uint32
	win      uint16
	wscale   int // -1: no option
	payload  int
}

func tcpHdr(sp, dp uint16, s seg) []byte {
	hl := 20
	if s.wscale >= 0 {
		hl = 24
	}
	h := make([]byte, hl+s.payload)
	binary.BigEndian.PutUint16(h[0:], sp)
	binary.BigEndian.PutUint16(h[2:], dp)
	binary.BigEndian.PutUint32(h[4:], s.seq)
	binary.BigEndian.PutUint32(h[8:], s.ack)
	binary.BigEndian.PutUint16(h[12:], uint16(hl/4)<<12|s.flags)
	binary.BigEndian.PutUint16(h[14:], s.win)
	if s.wscale >= 0 {
		copy(h[20:], []byte{1, 3, 3, byte(s.wscale)})
	}
	return h
}

func udpHdr(sp, dp uint16, payload int) []byte {
	h := make([]byte, 8+payload)
	binary.BigEndian.PutUint16(h[0:], sp)
	binary.BigEndian.PutUint16(h[2:], dp)
	binary.BigEndian.PutUint16(h[4:], uint16(8+payload))
	return h
}

func icmpHdr(typ, code uint8, id uint16, rest []byte) []byte {
	h := make([]byte, 8, 8+len(rest))
	h[0], h[1] = typ, code
	binary.BigEndian.PutUint16(h[4:], id)
	return append(h, rest...)
}

// ipPacket builds an IP packet (no Ethernet) with every checksum set.
func ipPacket(src, dst netip.Addr, proto uint8, l4 []byte) []byte {
	l4 = append([]byte(nil), l4...)
	var csumOff = -1
	switch proto {
	case packet.ProtoTCP:
		csumOff = 16
	case packet.ProtoUDP:
		csumOff = 6
	case packet.ProtoICMP, packet.ProtoICMPv6:
		csumOff = 2
	}
	if csumOff+2 > len(l4) {
		csumOff = -1
	}
	if src.Is4() {
		ip := make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(l4)))
		ip[8], ip[9] = 64, proto
		s, d := src.As4(), dst.As4()
		copy(ip[12:], s[:])
		copy(ip[16:], d[:])
		binary.BigEndian.PutUint16(ip[10:], ^packet.Checksum(ip, 0))
		if csumOff >= 0 {
			var ph uint16
			if proto != packet.ProtoICMP {
				ph = packet.PseudoHeaderSumV4(s, d, proto, uint16(len(l4)))
			}
			binary.BigEndian.PutUint16(l4[csumOff:], ^packet.Checksum(l4, ph))
		}
		return append(ip, l4...)
	}
	ip := make([]byte, 40)
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], uint16(len(l4)))
	ip[6], ip[7] = proto, 64
	s, d := src.As16(), dst.As16()
	copy(ip[8:], s[:])
	copy(ip[24:], d[:])
	if csumOff >= 0 {
		ph := packet.PseudoHeaderSumV6(s, d, proto, uint32(len(l4)))
		binary.BigEndian.PutUint16(l4[csumOff:], ^packet.Checksum(l4, ph))
	}
	return append(ip, l4...)
}

func frame(ip []byte) *packet.Buffer {
	b := packet.NewBuffer(64, 2048)
	eth := make([]byte, 14)
	copy(eth[0:], []byte{2, 0, 0, 0, 0, 2})
	copy(eth[6:], []byte{2, 0, 0, 0, 0, 1})
	if ip[0]>>4 == 4 {
		binary.BigEndian.PutUint16(eth[12:], packet.EtherTypeIPv4)
	} else {
		binary.BigEndian.PutUint16(eth[12:], packet.EtherTypeIPv6)
	}
	b.SetLen(14 + len(ip))
	copy(b.Data(), eth)
	copy(b.Data()[14:], ip)
	b.Parse()
	return b
}

func tcpPkt(src, dst netip.Addr, sp, dp uint16, s seg) *packet.Buffer {
	return frame(ipPacket(src, dst, packet.ProtoTCP, tcpHdr(sp, dp, s)))
}

func udpPkt(src, dst netip.Addr, sp, dp uint16) *packet.Buffer {
	return frame(ipPacket(src, dst, packet.ProtoUDP, udpHdr(sp, dp, 10)))
}

func icmpPkt(src, dst netip.Addr, typ uint8, id uint16) *packet.Buffer {
	proto := packet.ProtoICMP
	if src.Is6() {
		proto = packet.ProtoICMPv6
	}
	return frame(ipPacket(src, dst, proto, icmpHdr(typ, 0, id, make([]byte, 16))))
}

// fakeClock is an injectable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestTracker(t testing.TB, cfg Config) (*Tracker, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1700000000, 0)}
	if cfg.Now == nil {
		cfg.Now = clk.now
	}
	return New(cfg), clk
}

// run executes a fresh copy of the packet's state through ct and
// returns the state bits.
func run(ct *Tracker, b *packet.Buffer, req Request) uint32 {
	ct.Execute(b, &req)
	return b.Key.CTState
}

func stateString(s uint32) string {
	names := []string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}
	out := ""
	for i, n := range names {
		if s&(1<<i) != 0 {
			out += "+" + n
		}
	}
	if out == "" {
		return "0"
	}
	return out
}

func wantState(t *testing.T, what string, got, want uint32) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: ct_state %s, want %s", what, stateString(got), stateString(want))
	}
}

const (
	trk = StateTracked
	nw  = StateNew
	est = StateEstablished
	rel = StateRelated
	rpl = StateReply
	inv = StateInvalid
)

func dumpAll(ct Conntrack) []string {
	var out []string
	ct.Dump(AllZones, func(e *Entry) bool {
		out = append(out, FormatEntry(e, false))
		return true
	})
	return out
}
