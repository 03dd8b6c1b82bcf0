package conntrack

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"gvs/packet"
)

// ntFuzzTuples derives a connection's tuples from fuzz bytes: addresses of
// the family v6, any ports.
func ntFuzzTuples(b []byte, v6 bool) (orig, reply Tuple) {
	var buf [80]byte
	copy(buf[:], b)
	addr := func(i int) netip.Addr {
		if v6 {
			return netip.AddrFrom16([16]byte(buf[i*16 : i*16+16]))
		}
		return netip.AddrFrom4([4]byte(buf[i*4 : i*4+4]))
	}
	port := func(i int) uint16 { return binary.BigEndian.Uint16(buf[64+2*i:]) }
	orig = Tuple{Src: addr(0), Dst: addr(1), SrcPort: port(0), DstPort: port(1)}
	reply = Tuple{Src: addr(2), Dst: addr(3), SrcPort: port(2), DstPort: port(3)}
	return orig, reply
}

// FuzzNATPacket: any frame, any tuples, any direction: no panic, and
// never a write outside the frame.
func FuzzNATPacket(f *testing.F) {
	for _, c := range append(ntCases(), ntRelatedCases()...) {
		f.Add(ntFrame(c.in, false), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}, uint8(0))
	}
	f.Add([]byte{}, []byte{}, uint8(3))
	f.Fuzz(func(t *testing.T, frame, tuples []byte, sel uint8) {
		b := packet.NewBuffer(packet.DefaultHeadroom, 2048)
		if len(frame) > 2048 {
			frame = frame[:2048]
		}
		b.SetLen(len(frame))
		copy(b.Data(), frame)
		b.Parse()
		if sel&8 != 0 {
			b.HasVnet, b.Vnet.Flags = true, packet.VnetNeedsCsum
		}
		guard := b.Room()[len(frame):]
		for i := range guard {
			guard[i] = 0xa5
		}
		orig, reply := ntFuzzTuples(tuples, sel&16 != 0)
		kind := NATKind(sel % 3)
		natPacket(b, &orig, &reply, kind, sel&32 != 0, sel&64 != 0)
		if b.Len() != len(frame) {
			t.Fatalf("length changed: %d -> %d", len(frame), b.Len())
		}
		for i, g := range guard {
			if g != 0xa5 {
				t.Fatalf("wrote %d bytes past the frame", i)
			}
		}
	})
}

// FuzzNATRewriteValid: a well-formed packet (or ICMP error quoting one)
// built from fuzz fields, rewritten to fuzzed tuples, keeps every
// checksum valid and its key in step with its bytes.
func FuzzNATRewriteValid(f *testing.F) {
	f.Add(uint8(0), []byte("seed addresses and ports......................................................."), []byte("payload"), uint16(0))
	f.Add(uint8(0xff), []byte{9, 8, 7, 6, 5, 4, 3, 2, 1}, []byte{}, uint16(30))
	f.Add(uint8(0x5a), []byte{0xff, 0xff, 0, 0, 0xff}, []byte{0, 0, 0xff, 0xff}, uint16(7))
	f.Fuzz(func(t *testing.T, sel uint8, fields, payload []byte, cut uint16) {
		v6 := sel&1 != 0
		protos := []uint8{packet.ProtoTCP, packet.ProtoUDP, packet.ProtoSCTP, packet.ProtoICMP, packet.ProtoUDPLite, 47}
		proto := protos[int(sel>>1)%len(protos)]
		if proto == packet.ProtoICMP && v6 {
			proto = packet.ProtoICMPv6
		}
		related := sel&0x80 != 0
		kind := NATSrc
		if sel&0x40 != 0 {
			kind = NATDst
		}
		isReply := sel&0x20 != 0 && sel&0x10 != 0

		if len(payload) > 600 {
			payload = payload[:600]
		}
		var buf [96]byte
		copy(buf[:], fields)
		pktTuple, _ := ntFuzzTuples(buf[:], v6)
		orig, reply := ntFuzzTuples(buf[16:], v6)
		orig.Proto, reply.Proto = proto, proto
		p := ntPkt{src: pktTuple.Src, dst: pktTuple.Dst, proto: proto, sport: pktTuple.SrcPort, dport: pktTuple.DstPort,
			payload: payload, udpNoCsum: buf[90]&1 != 0}
		if proto == packet.ProtoICMP || proto == packet.ProtoICMPv6 {
			p.icmpType, p.icmpID = natICMPEchoRequest, pktTuple.SrcPort
			if v6 {
				p.icmpType = natICMP6EchoRequest
			}
		}
		ip := ntIP(p)
		if related {
			q := ip
			if c := int(cut); c > 0 && c < len(q) {
				q = q[:c]
			}
			e := ntPkt{src: pktTuple.Dst, dst: pktTuple.Src, proto: packet.ProtoICMP, icmpType: 11, quote: q}
			if v6 {
				e.proto, e.icmpType = packet.ProtoICMPv6, 3
			}
			ip = ntIP(e)
		}
		b := ntBuffer(ntFrame(ip, buf[91]&1 != 0))
		natPacket(b, &orig, &reply, kind, isReply, related)
		got := ntIPOf(b.Data())
		if err := ntCheckIP(got); err != nil {
			t.Fatalf("%v\nbefore %x\nafter  %x", err, ip, got)
		}
		var fresh packet.Key
		packet.Parse(b.Data(), &fresh)
		if fresh != b.Key {
			t.Fatalf("key out of step:\n key %+v\nbytes %+v", b.Key, fresh)
		}
	})
}
