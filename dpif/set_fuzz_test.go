package dpif

import (
	"encoding/binary"
	"testing"

	"gvs/packet"
)

// FuzzSetActions: a set action of any attribute, value and mask on any
// frame never panics, never changes the frame's length, leaves checksums
// that verified still verifying, and on a frame that parses cleanly
// leaves the buffer's key equal to what parsing the result gives.
func FuzzSetActions(f *testing.F) {
	target := ip6("2001:db8::2")
	base := []fspec{
		{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoTCP, sport: 1, dport: 2, payload: []byte("abc")},
		{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoUDP, sport: 1, dport: 2},
		{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoSCTP, sport: 1, dport: 2},
		{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoICMP, icmpType: 8},
		{v6: true, dst: mac(2), src: mac(1), src6: ip6("2001:db8::1"), dst6: ip6("2001:db8::2"), ttl: 64, proto: packet.ProtoUDP, sport: 1, dport: 2},
		{v6: true, dst: mac(2), src: mac(1), src6: ip6("2001:db8::1"), dst6: ip6("2001:db8::2"), ttl: 255, proto: packet.ProtoICMPv6, icmpType: 135,
			payload: append(target[:], 1, 1, 2, 0, 0, 0, 0, 1, 2, 1, 2, 0, 0, 0, 0, 2)},
		{dst: mac(2), src: mac(1), arp: &arpSpec{op: 1, sha: mac(1), spa: ip4("198.18.0.1"), tpa: ip4("198.18.0.2")}},
	}
	blob := make([]byte, 64)
	for i := range blob {
		blob[i] = byte(i * 37)
	}
	for _, s := range base {
		for attr := range uint8(12) {
			f.Add(buildFrame(s), attr, blob, attr%2 == 0)
		}
	}
	f.Fuzz(fuzzSetOne)
}

func fuzzSetOne(t *testing.T, frame []byte, attr uint8, blob []byte, masked bool) {
	{
		var v packet.Key
		var m packet.Mask
		vw, mw := words(&v), words((*packet.Key)(&m))
		for i := range vw {
			if len(blob) >= 8*(i+1) {
				vw[i] = binary.LittleEndian.Uint64(blob[8*i:])
				mw[i] = vw[i]*0x9e3779b97f4a7c15 ^ vw[i]
			}
		}
		a := Set(KeyAttr(attr%12+1), &v)
		if masked {
			a = SetMasked(KeyAttr(attr%12+1), &v, &m)
		}
		b := packet.NewBuffer(packet.DefaultHeadroom, len(frame))
		b.SetLen(copy(b.Room(), frame))
		st := b.Parse()
		before := checksumErrors(frame)
		applySet(b, a.Set)
		if b.Len() != len(frame) {
			t.Fatalf("length %d -> %d", len(frame), b.Len())
		}
		// An incremental update cannot tell one's complement +0 from -0:
		// a segment that became all zeros (checksum included) is the
		// one case it gets "wrong", and no real packet is one.
		if after := checksumErrors(b.Data()); len(before) == 0 && len(after) != 0 && !zeroL4(b) {
			t.Fatalf("%s broke checksums: %v\nframe %x\nafter %x", a, after, frame, b.Data())
		}
		if st == packet.StatusOK {
			k := b.Key
			packet.Parse(b.Data(), &k)
			if k != b.Key {
				t.Fatalf("%s: key\n got %+v\nwant %+v", a, b.Key, k)
			}
		}
	}
}

func zeroL4(b *packet.Buffer) bool {
	if b.Offsets.L4 == 0 {
		return false
	}
	for _, c := range b.Data()[b.Offsets.L4:] {
		if c != 0 {
			return false
		}
	}
	return true
}
