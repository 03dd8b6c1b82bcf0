package mf

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gvs/ofproto/ofperr"
	"gvs/packet"
)

// randomFixedMatch returns random ofp10_match (version 1) or standard
// ofp11_match (version 2) bytes: random wildcards, values biased to the
// interesting ones (IPv4/ARP/IPv6, TCP/UDP/ICMP, VLAN none/any, bad
// VLANs, TOS and ICMP values out of range).
func randomFixedMatch(r *rand.Rand, version uint8) []byte {
	pick16 := func(vs ...uint16) uint16 { return vs[r.IntN(len(vs))] }
	pick8 := func(vs ...uint8) uint8 { return vs[r.IntN(len(vs))] }
	dlType := pick16(packet.EtherTypeIPv4, packet.EtherTypeIPv4, packet.EtherTypeARP, packet.EtherTypeIPv6, packet.EtherTypeRARP, 0x88cc, 0x05ff)
	proto := pick8(packet.ProtoTCP, packet.ProtoUDP, packet.ProtoICMP, packet.ProtoSCTP, packet.ProtoICMPv6, 1, 2, 47)
	vlan := pick16(5, 0xffff, 0xfffe, 4095, 4096, uint16(r.Uint32()))
	tp := func() uint16 { return pick16(80, 0, 8, 255, 256, uint16(r.Uint32())) }
	if version == 1 {
		b := make([]byte, OFP10MatchLen)
		binary.BigEndian.PutUint32(b, r.Uint32()&ofpfw10All)
		binary.BigEndian.PutUint16(b[4:], pick16(1, 0xfffe, 0xfffd, 0xff00, uint16(r.Uint32())))
		for i := 6; i < 18; i++ {
			b[i] = byte(r.Uint32())
		}
		binary.BigEndian.PutUint16(b[18:], vlan)
		b[20] = pick8(0, 3, 7, 8, uint8(r.Uint32()))
		binary.BigEndian.PutUint16(b[22:], dlType)
		b[24] = pick8(0, 0xfc, 3, uint8(r.Uint32()))
		b[25] = proto
		for i := 28; i < 36; i++ {
			b[i] = byte(r.Uint32())
		}
		binary.BigEndian.PutUint16(b[36:], tp())
		binary.BigEndian.PutUint16(b[38:], tp())
		return b
	}
	b := make([]byte, OFP11MatchLen)
	binary.BigEndian.PutUint16(b[0:], 0)
	binary.BigEndian.PutUint16(b[2:], OFP11MatchLen)
	binary.BigEndian.PutUint32(b[4:], [...]uint32{1, 0xfffffffe, 0xfffffffd, 0xff00, 0xfffeff00, r.Uint32()}[r.IntN(6)])
	binary.BigEndian.PutUint32(b[8:], r.Uint32()&0x3ff)
	for i := 12; i < 36; i++ {
		b[i] = byte(r.Uint32())
		if r.IntN(3) == 0 && (i >= 18 && i < 24 || i >= 30) {
			b[i] = 0 // exact bytes of the MAC masks
		}
		if r.IntN(3) == 0 && (i >= 18 && i < 24 || i >= 30) {
			b[i] = 0xff
		}
	}
	binary.BigEndian.PutUint16(b[36:], vlan)
	b[38] = pick8(0, 3, 7, 8, uint8(r.Uint32()))
	binary.BigEndian.PutUint16(b[40:], dlType)
	b[42] = pick8(0, 0xfc, 3, uint8(r.Uint32()))
	b[43] = proto
	for i := 44; i < 60; i++ {
		b[i] = byte(r.Uint32())
	}
	for _, at := range []int{48, 56} {
		binary.BigEndian.PutUint32(b[at:], [...]uint32{0, 0xff, 0xffffffff, r.Uint32()}[r.IntN(4)])
	}
	binary.BigEndian.PutUint16(b[60:], tp())
	binary.BigEndian.PutUint16(b[62:], tp())
	for i := 64; i < 88; i++ {
		b[i] = byte(r.Uint32())
	}
	binary.BigEndian.PutUint64(b[80:], [...]uint64{0, ^uint64(0), r.Uint64()}[r.IntN(3)])
	return b
}

// Random (often odd) OpenFlow 1.0 and 1.1 fixed matches in FLOW_MODs
// decode as ovs-ofctl decodes them: the same printed match, or the same
// error.
func TestRandomFixedMatchesAgainstOVS(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, v := range []struct {
		version uint8
		label   string
	}{{1, ""}, {2, " (OF1.1)"}} {
		var msgs [][]byte
		var want []string
		for i := 0; i < 400; i++ {
			wire := randomFixedMatch(r, v.version)
			msgs = append(msgs, flowModMessage(v.version, uint32(i), DefaultPriority, wire))
			prefix := fmt.Sprintf("OFPT_FLOW_MOD%s (xid=%#x): ", v.label, i)
			m, _, err := PullMatch(wire, v.version)
			if err == ofperr.OFPBMC_BAD_VALUE && v.version == 1 {
				// ICMP type/code above 255: Open vSwitch accepts them
				// in OpenFlow 1.0 (see pendingL34.checkICMP).
				msgs = msgs[:len(msgs)-1]
				continue
			}
			if err != nil {
				want = append(want, prefix+"***decode error: "+err.Error()+"***")
				continue
			}
			text := m.Format(DefaultPriority)
			if text != "" {
				text += " "
			}
			want = append(want, prefix+"ADD "+text+"actions=drop")
		}
		var got []string
		for _, l := range ofpParse(t, msgs) {
			if strings.HasPrefix(l, "OFPT_FLOW_MOD") {
				got = append(got, l)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("version %d: %d messages printed for %d", v.version, len(got), len(want))
		}
		bad := 0
		for i := range want {
			if got[i] != want[i] {
				bad++
				if bad <= 10 {
					t.Errorf("version %d match %x:\n ours %s\n ovs  %s", v.version, msgs[i][8:], want[i], got[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("version %d: %d of %d differ", v.version, bad, len(want))
		}
	}
}
