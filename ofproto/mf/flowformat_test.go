package mf

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"gvs/packet"
)

// frameBuilder assembles test frames.
type frameBuilder struct{ b []byte }

func (fb *frameBuilder) bytes(p ...byte) *frameBuilder { fb.b = append(fb.b, p...); return fb }
func (fb *frameBuilder) u16(v uint16) *frameBuilder {
	fb.b = binary.BigEndian.AppendUint16(fb.b, v)
	return fb
}
func (fb *frameBuilder) u32(v uint32) *frameBuilder {
	fb.b = binary.BigEndian.AppendUint32(fb.b, v)
	return fb
}

// randomFrame builds an Ethernet frame with random addresses, 0-2 VLAN
// tags and an IPv4/IPv6/ARP/other payload with TCP/UDP/SCTP/ICMP/ND.
func randomFrame(r *rand.Rand) []byte {
	fb := &frameBuilder{}
	mac := func() []byte {
		m := make([]byte, 6)
		for i := range m {
			m[i] = byte(r.Uint32())
		}
		m[0] &^= 1
		return m
	}
	fb.bytes(mac()...).bytes(mac()...)
	for n := r.IntN(3); n > 0; n-- {
		tpid := []uint16{packet.EtherTypeVLAN, packet.EtherTypeQinQ}[r.IntN(2)]
		fb.u16(tpid).u16(uint16(r.Uint32()) &^ 0x1000)
	}
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	l4 := func(proto uint8, v6 bool) []byte {
		l := &frameBuilder{}
		switch proto {
		case packet.ProtoTCP:
			l.u16(uint16(r.Uint32())).u16(uint16(r.Uint32())).u32(r.Uint32()).u32(r.Uint32())
			l.u16(0x5000 | uint16(r.Uint32())&0x1ff).u16(0x2000).u16(0).u16(0)
		case packet.ProtoUDP:
			l.u16(uint16(r.Uint32())).u16(uint16(r.Uint32())).u16(8).u16(0)
		case packet.ProtoSCTP:
			l.u16(uint16(r.Uint32())).u16(uint16(r.Uint32())).u32(0).u32(0)
		case packet.ProtoICMP:
			l.bytes(byte(r.IntN(20)), byte(r.IntN(5))).u16(0).u32(0)
		case packet.ProtoICMPv6:
			typ := []byte{128, 129, 135, 136, 1}[r.IntN(5)]
			l.bytes(typ, 0).u16(0)
			if typ == 135 || typ == 136 {
				l.u32(r.Uint32() & 0xe0000000).bytes(rnd(16)...)
				if r.IntN(2) == 0 {
					l.bytes([]byte{1, 2}[r.IntN(2)], 1).bytes(mac()...)
				}
			} else {
				l.u32(0)
			}
		}
		return l.b
	}
	protos := []uint8{packet.ProtoTCP, packet.ProtoUDP, packet.ProtoSCTP, packet.ProtoICMP, packet.ProtoICMPv6, 47}
	switch r.IntN(5) {
	case 0, 1:
		proto := protos[r.IntN(len(protos))]
		if proto == packet.ProtoICMPv6 {
			proto = packet.ProtoICMP
		}
		body := l4(proto, false)
		frag := uint16(0)
		switch r.IntN(6) {
		case 0:
			frag = 0x2000 // first fragment
		case 1:
			frag = 0x0010 // later fragment
		}
		fb.u16(packet.EtherTypeIPv4).bytes(0x45, byte(r.Uint32())).u16(uint16(20 + len(body))).u16(1).u16(frag)
		fb.bytes(byte(r.Uint32()), proto).u16(0).bytes(rnd(8)...).bytes(body...)
	case 2, 3:
		proto := protos[r.IntN(len(protos))]
		if proto == packet.ProtoICMP {
			proto = packet.ProtoICMPv6
		}
		body := l4(proto, true)
		tc := uint32(r.Uint32() & 0xff)
		fb.u16(packet.EtherTypeIPv6).u32(6<<28 | tc<<20 | r.Uint32()&0xfffff).u16(uint16(len(body)))
		fb.bytes(proto, byte(r.Uint32())).bytes(rnd(32)...).bytes(body...)
	case 4:
		fb.u16(packet.EtherTypeARP).u16(1).u16(packet.EtherTypeIPv4).bytes(6, 4).u16(uint16(r.IntN(3)))
		fb.bytes(mac()...).bytes(rnd(4)...).bytes(mac()...).bytes(rnd(4)...)
	}
	return fb.b
}

// packetInMessage is an OpenFlow 1.0 PACKET_IN carrying frame.
func packetInMessage(xid uint32, frame []byte) []byte {
	b := []byte{1, 10, 0, 0}
	b = binary.BigEndian.AppendUint32(b, xid)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = binary.BigEndian.AppendUint16(b, uint16(len(frame)))
	b = binary.BigEndian.AppendUint16(b, 1)
	b = append(b, 0, 0)
	b = append(b, frame...)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// Flow.Format of a parsed frame is what ovs-ofctl prints for the same
// frame in a packet-in (flow_format of its own parse), for random frames
// with VLANs, fragments, TCP/UDP/SCTP/ICMP/ND and ARP.
func TestFlowFormatAgainstOVS(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	var msgs [][]byte
	var want []string
	for i := 0; i < 300; i++ {
		frame := randomFrame(r)
		var k packet.Key
		packet.Parse(frame, &k)
		f := Flow{Key: k}
		msgs = append(msgs, packetInMessage(uint32(len(msgs)), frame))
		want = append(want, f.Format())
	}
	out := ofpParse(t, msgs)
	var got []string
	for i, l := range out {
		if strings.HasPrefix(l, "OFPT_PACKET_IN") && i+1 < len(out) {
			flow, _, _ := strings.Cut(out[i+1], " ")
			got = append(got, flow)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d packet-ins printed for %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			bad++
			if bad < 10 {
				t.Errorf("frame %x:\n ours %s\n ovs  %s", msgs[i][18:], want[i], got[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, len(want))
	}
}

// Packet-in metadata as OVN receives it: reg0 and reg1 set, the rest
// zero, in OpenFlow 1.5 as OXM_OF_PKT_REG0; decodes (pipeline fields
// only) back to the same flow values.
func TestFlowMetadata(t *testing.T) {
	var f Flow
	f.InPort = 5
	f.Metadata = 0x10
	f.Regs[0] = 0x1234
	f.Regs[3] = 0xff
	f.EtherType = packet.EtherTypeIPv4
	f.CTState = CTStateTracked | CTStateEstablished
	f.CTNwProto = 6
	f.CTNwSrc = [4]byte{10, 0, 0, 1}
	m := FlowMetadata(&f)
	b, _ := AppendNXMatch(nil, &m, 0x06, 0, 0)
	want := "OXM_OF_IN_PORT(00000005), OXM_OF_ETH_TYPE(0800), OXM_OF_PKT_REG0_W(0000123400000000/ffffffff00000000), " +
		"OXM_OF_PKT_REG1_W(00000000000000ff/00000000ffffffff), NXM_NX_CT_STATE_W(00000022/000000ff), " +
		"NXM_NX_CT_NW_SRC(0a000001), NXM_NX_CT_NW_DST(00000000), NXM_NX_CT_NW_PROTO(06), NXM_NX_CT_TP_SRC(0000), NXM_NX_CT_TP_DST(0000), " +
		"OXM_OF_METADATA(0000000000000010)"
	if got := FormatNXMatch(b); got != want {
		t.Fatalf("metadata encodes as\n %s\nwant\n %s", got, want)
	}
	// What ovs-ofctl makes of the same entries is the same.
	if out := ovsOfctl(t, want+"\n", "--strict", "parse-oxm", "OpenFlow15"); out[0] != want {
		t.Fatalf("ovs-ofctl: %s", out[0])
	}
	dm, _, _, err := DecodeNXMatch(b, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var g Flow
	dm.ApplyTo(&g)
	if g.InPort != 5 || g.Metadata != 0x10 || g.Regs[0] != 0x1234 || g.Regs[3] != 0xff || g.CTState != f.CTState || g.CTNwSrc != f.CTNwSrc {
		t.Fatalf("applied metadata %+v", g)
	}
}
