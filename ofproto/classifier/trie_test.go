package classifier

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"unsafe"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// randAddr4 draws addresses that share long prefixes often: a few
// top-level blocks, then random bits.
func randAddr4(rng *rand.Rand) [4]byte {
	blocks := [][4]byte{{10, 0, 0, 0}, {198, 18, 0, 0}, {198, 19, 128, 0}, {128, 0, 0, 0}, {0, 0, 0, 0}}
	a := blocks[rng.IntN(len(blocks))]
	keep := rng.IntN(33)
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	r := rng.Uint32()
	m := ^uint32(0) << (32 - keep)
	if keep == 0 {
		m = 0
	}
	v = v&m | r&^m
	return [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

func randAddr6(rng *rand.Rand) [16]byte {
	var a [16]byte
	a[0], a[1] = 0x20, 0x01
	a[2], a[3] = 0, 2
	for i := 4; i < 16; i++ {
		if rng.IntN(3) == 0 {
			a[i] = byte(rng.IntN(256))
		}
	}
	return a
}

func prefix16(n int) [16]byte {
	var m [16]byte
	for i := 0; n > 0; i, n = i+1, n-8 {
		if n >= 8 {
			m[i] = 0xff
		} else {
			m[i] = byte(0xff << (8 - n))
		}
	}
	return m
}

// randPrefixFlow is an IPv4 or IPv6 packet (now and then ARP) with
// addresses from randAddr4/randAddr6 and a few other fields.
func randPrefixFlow(rng *rand.Rand) mf.Flow {
	var fl mf.Flow
	fl.InPort = uint32(1 + rng.IntN(2))
	fl.EtherType = []uint16{packet.EtherTypeIPv4, packet.EtherTypeIPv4, packet.EtherTypeIPv6, packet.EtherTypeARP}[rng.IntN(4)]
	fl.SrcIPv4, fl.DstIPv4 = randAddr4(rng), randAddr4(rng)
	fl.SrcIPv6, fl.DstIPv6 = randAddr6(rng), randAddr6(rng)
	fl.IPProto = []uint8{6, 17}[rng.IntN(2)]
	fl.SrcPort = randPort(rng)
	fl.DstPort = randPort(rng)
	fl.TCPFlags = uint16(rng.IntN(2)) << 1
	return fl
}

// randPort is a well-known port or a random one: rules and packets then
// share long port prefixes now and then.
func randPort(rng *rand.Rand) uint16 {
	if rng.IntN(2) == 0 {
		return []uint16{80, 81, 443, 5201}[rng.IntN(4)]
	}
	return uint16(rng.IntN(65536))
}

// randPrefixMatch matches address prefixes of any length (0..32, 0..128;
// now and then a non-prefix mask, which no trie covers), with or without
// the EtherType and other fields.
func randPrefixMatch(rng *rand.Rand) mf.Match {
	var m mf.Match
	m.Flow = randPrefixFlow(rng)
	w := &m.Wildcards.Masks
	if rng.IntN(4) != 0 {
		w.EtherType = 0xffff
	}
	if rng.IntN(4) == 0 {
		w.InPort = ^uint32(0)
	}
	if rng.IntN(2) == 0 {
		w.DstIPv4 = prefix4(rng.IntN(33))
	}
	if rng.IntN(3) == 0 {
		w.SrcIPv4 = prefix4(rng.IntN(33))
	}
	if rng.IntN(10) == 0 {
		w.DstIPv4 = [4]byte{0, 0, 0xff, 0} // not a prefix
	}
	if rng.IntN(3) == 0 {
		w.DstIPv6 = prefix16(rng.IntN(129))
	}
	if rng.IntN(5) == 0 {
		w.SrcIPv6 = prefix16(rng.IntN(129))
	}
	if rng.IntN(4) == 0 {
		w.IPProto = 0xff
	}
	portMasks := []uint16{0xffff, 0xffff, 0xff00, 0xfff0, 0x00ff}
	if rng.IntN(3) == 0 {
		w.DstPort = portMasks[rng.IntN(len(portMasks))]
	}
	if rng.IntN(4) == 0 {
		w.SrcPort = portMasks[rng.IntN(len(portMasks))]
	}
	if rng.IntN(8) == 0 {
		w.TCPFlags = 0x2 // a final-stage bit besides the ports
	}
	m.Normalize()
	return m
}

// The classifier with tries against the linear scan, wildcards
// sufficient, for the default tries and for tries on all four fields
// (IPv6 included), with rules inserted, hidden, removed.
func TestPrefixTriesAgainstLinearScan(t *testing.T) {
	for _, prefixes := range [][]PrefixField{DefaultPrefixes, {PrefixIPv6Dst, PrefixNwSrc, PrefixIPv6Src}, nil} {
		rng := rand.New(rand.NewPCG(3, uint64(len(prefixes))))
		for round := range 300 {
			c := NewWithPrefixes[int](prefixes...)
			n := 1 + rng.IntN(40)
			var rules []*Rule[int]
			for i, p := range rng.Perm(n) {
				rules = append(rules, &Rule[int]{Match: randPrefixMatch(rng), Priority: p, Value: i})
			}
			insertAll(c, rules)
			// Remove some for good (the tries must forget them).
			for i := 0; i < len(rules) && rng.IntN(3) == 0; i++ {
				c.Remove(rules[i])
				rules = append(rules[:i], rules[i+1:]...)
			}
			for range 40 {
				fl := randPrefixFlow(rng)
				var wc mf.Wildcards
				got := c.Lookup(1, &fl, &wc)
				want := linear(rules, 1, &fl, true)
				if got != want {
					t.Fatalf("prefixes %v round %d: lookup %+v: got %v, want %v", prefixes, round, fl.Key, name(got), name(want))
				}
				// Neighbours: the flow with one unreported address bit
				// flipped, where a too short prefix shows first.
				for _, f := range []PrefixField{PrefixNwDst, PrefixNwSrc, PrefixIPv6Dst, PrefixIPv6Src} {
					for range 8 {
						other := fl
						i := rng.IntN(f.Bits)
						if f.hasBit(&wc.Masks, i) {
							continue
						}
						f.flipBit(&other, i)
						if got := linear(rules, 1, &other, true); got != want {
							t.Fatalf("prefixes %v round %d: wildcards too wide: %+v and %+v (bit %d of %s flipped) agree on the reported bits but %v != %v",
								prefixes, round, fl.Key, other.Key, i, f.Name, name(got), name(want))
						}
					}
				}
				for range 16 {
					other := fl
					i := rng.IntN(32)
					bit := uint16(1) << (15 - i%16)
					p, pm := &other.SrcPort, wc.Masks.SrcPort
					if i >= 16 {
						p, pm = &other.DstPort, wc.Masks.DstPort
					}
					if pm&bit != 0 {
						continue
					}
					*p ^= bit
					if got := linear(rules, 1, &other, true); got != want {
						t.Fatalf("prefixes %v round %d: wildcards too wide: %+v and %+v (port bit %d flipped) agree on the reported bits but %v != %v",
							prefixes, round, fl.Key, other.Key, i, name(got), name(want))
					}
				}
				for range 20 {
					other := randPrefixFlow(rng)
					ow, fw, mw := other.Words(), fl.Words(), wc.Masks.Words()
					for i := range ow {
						ow[i] = fw[i]&mw[i] | ow[i]&^mw[i]
					}
					if got := linear(rules, 1, &other, true); got != want {
						t.Fatalf("prefixes %v round %d: wildcards too wide: %+v and %+v agree on the reported bits but %v != %v",
							prefixes, round, fl.Key, other.Key, name(got), name(want))
					}
				}
			}
		}
	}
}

func (f *PrefixField) bytes(fl *mf.Flow) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(fl), f.Offset)), f.Bits/8)
}

func (f *PrefixField) hasBit(fl *mf.Flow, i int) bool { return f.bytes(fl)[i/8]>>(7-i%8)&1 != 0 }
func (f *PrefixField) flipBit(fl *mf.Flow, i int)     { f.bytes(fl)[i/8] ^= 1 << (7 - i%8) }

func flow4(dst string) mf.Flow {
	var fl mf.Flow
	fl.EtherType = packet.EtherTypeIPv4
	fl.DstIPv4 = netip.MustParseAddr(dst).As4()
	return fl
}

func dstRule(prefix string, pri int) *Rule[int] {
	p := netip.MustParsePrefix(prefix)
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
	m.Flow.DstIPv4 = p.Addr().As4()
	m.Wildcards.Masks.DstIPv4 = prefix4(p.Bits())
	return &Rule[int]{Match: m, Priority: pri}
}

// The bits a failed lookup unwildcards are the ones that set the packet
// apart from every rule prefix, as Open vSwitch's trie gives them.
func TestPrefixTrieUnwildcardsOnlyTheTellingBits(t *testing.T) {
	c := New[int]()
	c.Insert(dstRule("10.0.0.0/16", 10), 1)
	for _, tc := range []struct {
		dst  string
		want int // nw_dst prefix length in the wildcards
	}{
		{"198.18.0.1", 1},  // differs from 10/16 at the first bit
		{"10.1.0.1", 16},   // differs at bit 15: the whole /16
		{"11.0.0.1", 8},    // 00001011: differs at bit 7
		{"10.0.200.1", 16}, // matches: the subtable's mask
	} {
		fl := flow4(tc.dst)
		var wc mf.Wildcards
		c.Lookup(1, &fl, &wc)
		if wc.Masks.DstIPv4 != prefix4(tc.want) {
			t.Errorf("%s: nw_dst mask %v, want /%d", tc.dst, wc.Masks.DstIPv4, tc.want)
		}
	}

	// Two rules under 10.0.0.0/8: a packet to 10.2.0.0 follows the
	// trie to the branch at bit 14 and is told apart there.
	c.Insert(dstRule("10.0.0.0/24", 20), 1)
	c.Insert(dstRule("10.3.0.0/16", 5), 1)
	fl := flow4("10.2.0.1")
	var wc mf.Wildcards
	if r := c.Lookup(1, &fl, &wc); r != nil {
		t.Fatalf("matched %v", name(r))
	}
	if wc.Masks.DstIPv4 != prefix4(16) {
		t.Errorf("10.2.0.1 among 10.0/16, 10.0.0/24, 10.3/16: nw_dst mask %v, want /16", wc.Masks.DstIPv4)
	}

	// Falling off a missing branch below a prefix with rules: the next
	// bit (the other branch's) is part of the answer.
	c = New[int]()
	c.Insert(dstRule("10.0.0.0/16", 20), 1)
	wide := dstRule("10.0.0.0/8", 10)
	c.Insert(wide, 1)
	fl = flow4("10.128.0.1")
	wc = mf.Wildcards{}
	if r := c.Lookup(1, &fl, &wc); r != wide {
		t.Fatalf("10.128.0.1: %v, want the /8", name(r))
	}
	if wc.Masks.DstIPv4 != prefix4(9) {
		t.Errorf("10.128.0.1 under 10/8 beside 10.0/16: nw_dst mask %v, want /9", wc.Masks.DstIPv4)
	}
}

// Inserting and removing leaves an empty trie; counts survive
// duplicates.
func TestPrefixTrieInsertRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tr := newTrie(PrefixNwDst)
	type pfx struct {
		v    prefixValue
		plen int
	}
	var in []pfx
	for range 2000 {
		var fl mf.Flow
		fl.DstIPv4 = randAddr4(rng)
		p := pfx{tr.field.load(&fl), 1 + rng.IntN(32)}
		tr.insert(p.v, p.plen)
		in = append(in, p)
	}
	check := func() {
		for _, p := range in {
			var fl mf.Flow
			fl.EtherType = packet.EtherTypeIPv4
			v := maskValue(p.v, p.plen)
			fl.DstIPv4 = [4]byte{byte(v[0] >> 56), byte(v[0] >> 48), byte(v[0] >> 40), byte(v[0] >> 32)}
			if plens, _ := tr.lookup(&fl); !plens.has(p.plen) {
				t.Fatalf("prefix %x/%d not found", v[0]>>32, p.plen)
			}
		}
	}
	check()
	rng.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	for len(in) > 0 {
		p := in[len(in)-1]
		in = in[:len(in)-1]
		tr.remove(p.v, p.plen)
		if len(in)%500 == 0 {
			check()
		}
	}
	if !tr.empty() {
		t.Fatal("trie not empty after removing every prefix")
	}
}

// The ports trie: a packet to a port no rule names unwildcards only the
// port bits that tell it from the rules' ports.
func TestPortsTrie(t *testing.T) {
	c := New[int]()
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
	m.Flow.IPProto, m.Wildcards.Masks.IPProto = packet.ProtoTCP, 0xff
	m.Flow.DstPort, m.Wildcards.Masks.DstPort = 80, 0xffff
	c.Insert(&Rule[int]{Match: m, Priority: 10}, 1)
	var fl mf.Flow
	fl.EtherType, fl.IPProto = packet.EtherTypeIPv4, packet.ProtoTCP
	fl.SrcPort, fl.DstPort = 40000, 5201 // 5201 = 0x1451, 80 = 0x0050: they differ at bit 3
	var wc mf.Wildcards
	if r := c.Lookup(1, &fl, &wc); r != nil {
		t.Fatalf("matched %v", name(r))
	}
	if wc.Masks.DstPort != 0xf000 || wc.Masks.SrcPort != 0 {
		t.Errorf("tp_src mask %#x, tp_dst mask %#x; want 0 and 0xf000", wc.Masks.SrcPort, wc.Masks.DstPort)
	}
	fl.DstPort = 80
	wc = mf.Wildcards{}
	if r := c.Lookup(1, &fl, &wc); r == nil || wc.Masks.DstPort != 0xffff {
		t.Errorf("to port 80: %v, tp_dst mask %#x", name(r), wc.Masks.DstPort)
	}
}

func TestPrefixLen(t *testing.T) {
	for _, tc := range []struct {
		mask [4]byte
		want int
	}{
		{prefix4(0), 0}, {prefix4(1), 1}, {prefix4(24), 24}, {prefix4(32), 32}, {[4]byte{0, 0, 255, 0}, 0}, {[4]byte{255, 0, 255, 0}, 0},
	} {
		var m mf.Flow
		m.DstIPv4 = tc.mask
		if got := PrefixNwDst.prefixLen(&m); got != tc.want {
			t.Errorf("prefixLen(%v) = %d, want %d", tc.mask, got, tc.want)
		}
	}
	var m mf.Flow
	m.DstIPv6 = prefix16(65)
	if got := PrefixIPv6Dst.prefixLen(&m); got != 65 {
		t.Errorf("IPv6 /65: %d", got)
	}
}
