package xlate_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

// The megaflow property (the issue's): translate packet P into (mask M,
// actions A); every packet Q equal to P under M must translate to A.
// Random small rule sets over a few fields, with matches, set-fields,
// resubmits, goto_table, VLAN actions, dec_ttl, groups, clone, the action
// set and NORMAL.

type propGen struct {
	rng *rand.Rand
	t   testing.TB
	// ct adds conntrack: packets with conntrack state, matches on it, ct
	// and ct_clear actions.
	ct bool
	// ctFrozen: packets with conntrack state come as a ct recirculation
	// brings them, with a recirc_id (marked 1 here; the test names the
	// frozen state): the datapath receives every other packet untracked.
	ctFrozen bool
	// ctResubmit adds resubmit(,N,ct), which Open vSwitch accepts only in
	// rules matching a valid ct_state (its side-by-side test keeps those).
	ctResubmit bool
}

func (g *propGen) pick(n int) int { return g.rng.IntN(n) }

// packet returns a random packet from a small value space, so that rules
// and packets collide often.
func (g *propGen) packet() mf.Flow {
	var f mf.Flow
	f.InPort = uint32(1 + g.pick(3))
	f.SrcMAC, f.DstMAC = mac6(byte(1+g.pick(3))), mac6(byte(1+g.pick(3)))
	if g.pick(4) == 0 {
		f.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: uint16(10 * (1 + g.pick(2)))}
	}
	switch g.pick(6) {
	case 5:
		f.EtherType = packet.EtherTypeIPv6
		f.SrcIPv6[15], f.DstIPv6[15] = byte(g.pick(3)), byte(g.pick(3))
		f.SrcIPv6[0], f.DstIPv6[0] = 0xfd, 0xfd
		f.IPTTL, f.IPProto = uint8(1+g.pick(3)), []uint8{6, 17}[g.pick(2)]
		f.SrcPort, f.DstPort = uint16(1000+g.pick(3)), uint16(80+g.pick(3))
	case 0:
		f.EtherType = packet.EtherTypeARP
		f.ARPOp = uint16(1 + g.pick(2))
		f.SrcIPv4, f.DstIPv4 = [4]byte{198, 18, 0, byte(g.pick(4))}, [4]byte{198, 18, 1, byte(g.pick(4))}
	default:
		f.EtherType = packet.EtherTypeIPv4
		f.SrcIPv4, f.DstIPv4 = [4]byte{198, 18, byte(g.pick(2)), byte(g.pick(4))}, [4]byte{198, 18, 1, byte(g.pick(4))}
		f.IPTTL = uint8(1 + g.pick(3))
		f.IPProto = []uint8{6, 17, 1}[g.pick(3)]
		if f.IPProto != 1 {
			f.SrcPort, f.DstPort = uint16(1000+g.pick(3)), uint16(80+g.pick(3))
		} else {
			f.ICMPType = uint8(g.pick(2) * 8)
		}
	}
	if g.ct && isIPFlow(&f) && g.pick(3) != 0 {
		f.CTState = []uint32{0x21, 0x22, 0x2a, 0x25, 0x30, 0x61}[g.pick(6)]
		f.CTZone, f.CTMark = uint16(g.pick(3)), uint32(g.pick(3))
		if f.CTState&0x0b != 0 && g.pick(2) == 0 { // new, est or rpl: a valid connection
			f.CTNwProto = f.IPProto
			f.CTNwSrc, f.CTNwDst = [4]byte{198, 18, 1, byte(g.pick(4))}, [4]byte{198, 18, 0, byte(g.pick(4))}
			f.CTTpSrc, f.CTTpDst = uint16(80+g.pick(3)), uint16(1000+g.pick(3))
		}
		if g.ctFrozen {
			f.RecircID = 1
		}
	}
	return f
}

func isIPFlow(f *mf.Flow) bool {
	return f.EtherType == packet.EtherTypeIPv4 || f.EtherType == packet.EtherTypeIPv6
}

// match returns a random match on a few fields, with OpenFlow's
// prerequisites.
func (g *propGen) match(table uint8) mf.Match {
	var m mf.Match
	p := g.packet()
	w := &m.Wildcards.Masks
	if g.pick(3) == 0 {
		m.Flow.InPort, w.InPort = p.InPort, ^uint32(0)
	}
	if g.pick(3) == 0 {
		m.Flow.DstMAC, w.DstMAC = p.DstMAC, allOnes6
	}
	if g.pick(4) == 0 {
		m.Flow.VLANs[0], w.VLANs[0] = p.VLANs[0], packet.VLANTag{TPID: 0xffff, TCI: 0x0fff}
	}
	if g.pick(2) == 0 {
		m.Flow.EtherType, w.EtherType = p.EtherType, 0xffff
		if p.EtherType == packet.EtherTypeIPv4 {
			if g.pick(2) == 0 {
				m.Flow.DstIPv4, w.DstIPv4 = p.DstIPv4, [4]byte{255, 255, 255, byte(0xfc | g.pick(4))}
			}
			if g.pick(3) == 0 {
				m.Flow.SrcIPv4, w.SrcIPv4 = p.SrcIPv4, [4]byte{255, 255, 255, 0}
			}
			if g.pick(2) == 0 {
				m.Flow.IPProto, w.IPProto = p.IPProto, 0xff
				if p.IPProto == 6 && g.pick(2) == 0 {
					m.Flow.DstPort, w.DstPort = p.DstPort, 0xffff
				}
			}
		}
	}
	if table > 0 && g.pick(2) == 0 {
		m.Flow.Regs[0], w.Regs[0] = uint32(g.pick(3)), 0x3
	}
	if g.ct && g.pick(2) == 0 {
		m.Flow.CTState, w.CTState = p.CTState, []uint32{0x20, 0x22, 0x2f, 0x01}[g.pick(4)]
		if g.pick(3) == 0 {
			m.Flow.CTMark, w.CTMark = p.CTMark, 0x3
		}
	}
	m.Normalize()
	return m
}

var allOnes6 = [6]byte{255, 255, 255, 255, 255, 255}

func (g *propGen) action(table uint8, depth int) xlate.Action {
	if g.ct && g.pick(2) == 0 {
		switch g.pick(5) {
		case 0:
			return &ofpact.CTClear{}
		case 1:
			if table < 3 && g.ctResubmit {
				return &ofpact.Resubmit{InPort: mf.PortInPort, TableID: table + 1, WithCTOrig: true}
			}
		case 2:
			return &ofpact.CT{ZoneSrc: mf.Subfield{Field: field(g.t, "reg0"), Ofs: 0, NBits: 16}, RecircTable: ofpact.CTNoRecirc}
		default:
			ct := &ofpact.CT{ZoneImm: uint16(g.pick(3)), RecircTable: ofpact.CTNoRecirc}
			if table < 3 && g.pick(2) == 0 {
				ct.RecircTable = table + 1
			}
			if g.pick(2) == 0 {
				ct.Flags = ofpact.CTCommit
				ct.Actions = []ofpact.Action{setField(g.t, "ct_mark", uint64(g.pick(3)))}
			}
			return ct
		}
	}
	for {
		switch g.pick(22) {
		case 17:
			return setField(g.t, "ipv6_dst", 0xfd000000000000000000000000000001&0xffffffffffffffff)
		case 18:
			return setField(g.t, "tcp_src", uint64(4000+g.pick(2)))
		case 19:
			return setField(g.t, "arp_op", 2)
		case 20:
			return &ofpact.SetIPDSCP{DSCP: uint8(g.pick(4)) << 2}
		case 21:
			return setField(g.t, "udp_dst", uint64(5000+g.pick(2)))
		case 0, 1:
			return &ofpact.Output{Port: uint32(1 + g.pick(4))}
		case 2:
			return setField(g.t, "eth_dst", uint64(0x020000000000+g.pick(3)))
		case 3:
			return setField(g.t, "reg0", uint64(g.pick(3)))
		case 4:
			return setField(g.t, "ip_dst", uint64(0xc6120100+g.pick(4)))
		case 5:
			if table < 3 {
				return &ofpact.Resubmit{InPort: mf.PortInPort, TableID: table + 1}
			}
		case 6:
			return &ofpact.DecTTL{}
		case 7:
			return &ofpact.SetL4DstPort{Port: uint16(8000 + g.pick(2))}
		case 8:
			return &ofpact.PushVLAN{EtherType: packet.EtherTypeVLAN}
		case 9:
			return &ofpact.SetVLANVID{VID: uint16(10 + g.pick(3))}
		case 10:
			return &ofpact.StripVLAN{}
		case 11:
			return &ofpact.Output{Port: mf.PortNormal}
		case 12:
			return &ofpact.Group{ID: uint32(1 + g.pick(2))}
		case 13:
			if depth == 0 {
				return &ofpact.Clone{Actions: []ofpact.Action{g.action(table, 1), g.action(table, 1)}}
			}
		case 14:
			return &ofpact.WriteActions{Actions: []ofpact.Action{&ofpact.Output{Port: uint32(1 + g.pick(4))}}}
		case 15:
			return &ofpact.RegMove{Src: mf.Subfield{Field: field(g.t, "ip_src"), Ofs: 0, NBits: 2}, Dst: mf.Subfield{Field: field(g.t, "reg0"), Ofs: 0, NBits: 2}}
		case 16:
			return &ofpact.Output{Port: mf.PortFlood}
		}
	}
}

func (g *propGen) bridge() *xlatetest.Bridge {
	br := newBridge(g.t)
	for table := uint8(0); table < 4; table++ {
		for range 1 + g.pick(6) {
			var acts []xlate.Action
			for range g.pick(4) {
				acts = append(acts, g.action(table, 0))
			}
			if table < 3 && g.pick(3) == 0 {
				acts = append(acts, &ofpact.GotoTable{TableID: table + 1 + uint8(g.pick(int(3-table)))})
			}
			br.AddRule(&xlatetest.Rule{Table: table, Prio: uint16(g.pick(4)), M: g.match(table), Acts: acts})
		}
	}
	out := func(p uint32) []xlate.Action { return []xlate.Action{&ofpact.Output{Port: p}} }
	br.SetGroup(&xlatetest.Group{ID: 1, Type: xlate.GroupSelect, B: []xlate.Bucket{
		{ID: 0, Weight: 1, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: out(2)},
		{ID: 1, Weight: 1, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: out(3)}}})
	br.SetGroup(&xlatetest.Group{ID: 2, Type: xlate.GroupAll, B: []xlate.Bucket{
		{ID: 0, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: []xlate.Action{setField(g.t, "eth_src", 0x0200000000ee), &ofpact.Output{Port: 4}}}}})
	// A MAC table NORMAL reads (translation here has no side effects).
	for i := byte(1); i <= 3; i++ {
		br.MACs().Learn(0, mac6(i), uint32(i), epoch)
	}
	return br
}

// mix returns a packet equal to p under mask and to q elsewhere.
func mix(p, q *mf.Flow, mask *mf.Wildcards) mf.Flow {
	var out mf.Flow
	pw, qw, mw, ow := p.Words(), q.Words(), mask.Masks.Words(), out.Words()
	for i := range ow {
		ow[i] = pw[i]&mw[i] | qw[i]&^mw[i]
	}
	// A packet without a tag has a zero TCI (as the parser leaves it):
	// keep the mix a possible packet.
	for i := range out.VLANs {
		if !out.VLANs[i].Present() {
			out.VLANs[i].TCI = 0
		}
	}
	return out
}

func TestMegaflowProperty(t *testing.T) {
	t.Run("linear", func(t *testing.T) { testMegaflowProperty(t, false, false) })
	// The classifier reports fewer bits (staged lookup, priority
	// pruning): the megaflows are wider and must still be right.
	t.Run("classifier", func(t *testing.T) { testMegaflowProperty(t, true, false) })
	// Conntrack: ct_state and the other ct fields in the megaflow only
	// where a lookup or ct_clear looked, zones from registers, ct
	// recirculations (their frozen states shared by equal pipelines).
	t.Run("conntrack", func(t *testing.T) { testMegaflowProperty(t, true, true) })
}

func testMegaflowProperty(t *testing.T, useClassifier, ct bool) {
	g := &propGen{rng: rand.New(rand.NewPCG(13, 42)), t: t, ct: ct, ctFrozen: ct}
	recirc := xlate.NewRecircTable()
	// input is the translation of packet f: a tracked one resumes the
	// bridge's frozen state (as after ct(table=0)).
	input := func(br xlate.Bridge, fz *xlate.Frozen, id uint32, f mf.Flow) *xlate.Input {
		in := &xlate.Input{Bridge: br, Version: br.Version(), Flow: f, Recirc: recirc}
		if f.RecircID != 0 {
			in.Flow.RecircID, in.Frozen = id, fz
		}
		return in
	}
	sets, packets, others := 300, 30, 10
	if testing.Short() {
		sets = 50
	}
	tr, tr2 := xlate.NewTranslator(), xlate.NewTranslator()
	checked, withCT := 0, 0
	for range sets {
		br := g.bridge()
		if useClassifier {
			xlatetest.UseClassifier(br)
		}
		fz := &xlate.Frozen{Bridge: br, Version: br.Version(), Conntracked: true}
		id := recirc.Alloc(fz, epoch)
		for range packets {
			p := g.packet()
			in := input(br, fz, id, p)
			p = in.Flow
			res := tr.Translate(in)
			want := res.Actions.String()
			if strings.Contains(want, "ct(") || strings.Contains(want, "ct_clear") {
				withCT++
			}
			var mask mf.Wildcards
			mask.Masks.Key = packet.Key(res.Wildcards.DatapathMask())
			for range others {
				q0 := g.packet()
				q := mix(&p, &q0, &mask)
				if q.RecircID == 0 {
					// Received from a port: untracked.
					q.CTState, q.CTZone, q.CTMark, q.CTNwProto = 0, 0, 0, 0
					q.CTNwSrc, q.CTNwDst, q.CTTpSrc, q.CTTpDst = [4]byte{}, [4]byte{}, 0, 0
				}
				got := tr2.Translate(input(br, fz, id, q))
				if got.Actions.String() != want {
					t.Fatalf("megaflow broken:\nP=%+v\nQ=%+v\nmask=%+v\nP actions %s\nQ actions %s", p.Key, q.Key, mask.Masks.Key, want, got.Actions)
				}
				checked++
			}
		}
	}
	t.Logf("%d packets checked against their megaflows, %d translations with ct or ct_clear", checked, withCT)
	if ct && withCT < sets {
		t.Fatalf("only %d translations had ct actions", withCT)
	}
}
