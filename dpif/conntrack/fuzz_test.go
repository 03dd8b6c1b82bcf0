package conntrack

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"gvs/packet"
)

// FuzzExecute feeds sequences of packets drawn from a small space of
// hosts, ports and flags (so they hit each other's connections), some
// with bytes cut or flipped, with commits, zones, NAT, force and clock
// steps. The tracker must never panic and its table must stay
// consistent.
func FuzzExecute(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("\x02\x00\x11\x00\x00\x10\x12\x01\x00\x11\x00\x00\x10\x12"))
	f.Add([]byte{0xff, 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00, 0x33, 0x66, 0x99, 0xcc})
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, data []byte) {
	{
		clk := &fakeClock{t: time.Unix(1700000000, 0)}
		ct := New(Config{Now: clk.now, MaxConns: 16})
		ct.SetZoneLimits([]ZoneLimit{{Zone: 1, Limit: 4}})
		hosts := []netip.Addr{ipA, ipB, ipN, ip6A, ip6B}
		if len(data) > 7*300 {
			data = data[:7*300] // longer sequences add time, not coverage
		}
		for len(data) >= 7 {
			op, x, y, z, w, v, u := data[0], data[1], data[2], data[3], data[4], data[5], data[6]
			data = data[7:]
			src, dst := hosts[int(x)%len(hosts)], hosts[int(y)%len(hosts)]
			if src.Is4() != dst.Is4() {
				dst = hosts[int(y)%3]
				if src.Is6() {
					dst = hosts[3+int(y)%2]
				}
			}
			sp, dp := uint16(z%4+1), uint16(w%4+1)
			var ip []byte
			switch op % 5 {
			case 0:
				s := seg{flags: uint16(v) & 0x3f, seq: uint32(u) * 1000, ack: uint32(v) * 977, win: uint16(u) << 4, wscale: int(u%16) - 2, payload: int(v % 3 * 100)}
				ip = ipPacket(src, dst, packet.ProtoTCP, tcpHdr(sp, dp, s))
			case 1:
				ip = ipPacket(src, dst, packet.ProtoUDP, udpHdr(sp, dp, int(v%8)))
			case 2:
				proto, typ := packet.ProtoICMP, []uint8{8, 0, 3, 11, 13}[v%5]
				if src.Is6() {
					proto, typ = packet.ProtoICMPv6, []uint8{128, 129, 1, 2, 3}[v%5]
				}
				inner := ipPacket(dst, src, packet.ProtoUDP, udpHdr(dp, sp, 4))
				if u&1 == 0 {
					inner = ipPacket(dst, src, packet.ProtoTCP, tcpHdr(dp, sp, seg{flags: tcpSYN, wscale: -1}))
				}
				ip = ipPacket(src, dst, proto, icmpHdr(typ, 0, uint16(z%3), inner))
			case 3:
				ip = ipPacket(src, dst, uint8(v), []byte{u, v, w, z})
			case 4:
				clk.advance(time.Duration(u) * time.Second * 10)
				if v&1 == 0 {
					ct.sweep(ct.now())
				}
				if v&6 == 6 {
					ct.Flush(int32(u%3), nil)
				}
				continue
			}
			// Damage some packets.
			if u&0xc0 == 0xc0 && len(ip) > 0 {
				ip = ip[:int(v)%len(ip)]
			} else if u&0xc0 == 0x80 && len(ip) > 0 {
				ip[int(v)%len(ip)] ^= w | 1
			}
			b := packet.NewBuffer(64, 2048)
			b.SetLen(14 + len(ip))
			et := packet.EtherTypeIPv4
			if src.Is6() {
				et = packet.EtherTypeIPv6
			}
			binary.BigEndian.PutUint16(b.Data()[12:], et)
			copy(b.Data()[14:], ip)
			b.Parse()
			req := Request{Zone: uint16(w % 3), Commit: z&0x10 != 0, Force: z&0x20 != 0}
			switch z >> 6 {
			case 1:
				req.NAT = &NAT{Kind: NATSrc, AddrMin: ipN}
				if src.Is6() {
					req.NAT.AddrMin = netip.MustParseAddr("2001:2::100")
				}
			case 2:
				req.NAT = &NAT{Kind: NATApply}
			}
			// Two cts in a row now and then, as pipelines do.
			ct.Execute(b, &req)
			if v&0x80 != 0 {
				req.Commit = true
				ct.Execute(b, &req)
			}
			st := b.Key.CTState
			if st&StateTracked == 0 {
				t.Fatalf("untracked after ct: %s", stateString(st))
			}
			if st&StateInvalid != 0 && st&(StateNew|StateEstablished|StateRelated) != 0 {
				t.Fatalf("invalid with other states: %s", stateString(st))
			}
		}
		checkInvariants(t, ct)
		if ct.n > 16 {
			t.Fatalf("%d conns over the limit 16", ct.n)
		}
		if ct.zoneCount[1] > 4 {
			t.Fatalf("zone 1 has %d conns over its limit 4", ct.zoneCount[1])
		}
		ct.Dump(AllZones, func(e *Entry) bool { FormatEntry(e, true); return true })
	}
}

func FuzzParseTuple(f *testing.F) {
	f.Add("ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1,ct_tp_dst=2")
	f.Add("ct_ipv6_src=2001:2::1,ct_nw_proto=58,icmp_type=128,icmp_id=5,icmp_code=0")
	f.Add("ct_nw_src=,foo")
	f.Fuzz(func(t *testing.T, s string) {
		var m Match
		if err := ParseTuple(s, &m, len(s)%2 == 0); err != nil && err.Error() == "" {
			t.Fatal("empty error")
		}
		m.IsZero()
		m.Matches(&Entry{})
	})
}
