package classifier

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// PrefixField is a field the classifier keeps a prefix trie for (Open
// vSwitch's Flow_Table prefixes): an address of Bits bits stored
// big-endian at byte Offset of mf.Flow, meaningful only for packets of
// EtherType Prereq.
type PrefixField struct {
	Name   string // Open vSwitch's name: nw_dst, nw_src, ipv6_dst, ipv6_src
	Offset uintptr
	Bits   int // 32 or 128
	Prereq uint16
}

// The fields prefix tries can be kept for.
var (
	PrefixNwDst   = PrefixField{"nw_dst", unsafe.Offsetof(packet.Key{}.DstIPv4), 32, packet.EtherTypeIPv4}
	PrefixNwSrc   = PrefixField{"nw_src", unsafe.Offsetof(packet.Key{}.SrcIPv4), 32, packet.EtherTypeIPv4}
	PrefixIPv6Dst = PrefixField{"ipv6_dst", unsafe.Offsetof(packet.Key{}.DstIPv6), 128, packet.EtherTypeIPv6}
	PrefixIPv6Src = PrefixField{"ipv6_src", unsafe.Offsetof(packet.Key{}.SrcIPv6), 128, packet.EtherTypeIPv6}
)

// DefaultPrefixes are the tries a classifier keeps unless told otherwise:
// Open vSwitch's default Flow_Table prefixes, in its order.
var DefaultPrefixes = []PrefixField{PrefixNwDst, PrefixNwSrc}

// MaxPrefixes is how many prefix tries a classifier keeps at most (Open
// vSwitch's CLS_MAX_TRIES of the version gvs follows).
const MaxPrefixes = 3

// PrefixFieldByName returns the prefix field Open vSwitch calls name.
func PrefixFieldByName(name string) (PrefixField, bool) {
	for _, f := range []PrefixField{PrefixNwDst, PrefixNwSrc, PrefixIPv6Dst, PrefixIPv6Src} {
		if f.Name == name {
			return f, true
		}
	}
	return PrefixField{}, false
}

// prefixValue is an address as a left-aligned bit string: bit 0 is the
// most significant bit of v[0].
type prefixValue [2]uint64

// load reads field f of a flow's words as a prefixValue.
func (f *PrefixField) load(flow *mf.Flow) prefixValue {
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(flow), f.Offset)), f.Bits/8)
	if f.Bits == 32 {
		return prefixValue{uint64(binary.BigEndian.Uint32(b)) << 32, 0}
	}
	return prefixValue{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// prefixLen returns the length of the CIDR prefix that mask's bits of f
// form, or 0 when they are empty or not a prefix.
func (f *PrefixField) prefixLen(mask *mf.Flow) int {
	m := f.load(mask)
	n := bits.LeadingZeros64(^m[0])
	if n == 64 {
		n += bits.LeadingZeros64(^m[1])
	}
	if n > f.Bits || m != prefixMask(n) {
		return 0
	}
	return n
}

// setPrefix sets the first n bits of f in wc.
func (f *PrefixField) setPrefix(wc *mf.Wildcards, n int) {
	b := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&wc.Masks), f.Offset)), f.Bits/8)
	for i := 0; n > 0; i, n = i+1, n-8 {
		if n >= 8 {
			b[i] = 0xff
		} else {
			b[i] |= byte(0xff << (8 - n))
		}
	}
}

// hasPrefix reports whether wc has the first n bits of f set.
func (f *PrefixField) hasPrefix(wc *mf.Wildcards, n int) bool {
	m := f.load(&wc.Masks)
	want := prefixMask(n)
	return m[0]&want[0] == want[0] && m[1]&want[1] == want[1]
}

// prefixMask has the first n bits set.
func prefixMask(n int) prefixValue {
	switch {
	case n <= 0:
		return prefixValue{}
	case n < 64:
		return prefixValue{^uint64(0) << (64 - n), 0}
	case n == 64:
		return prefixValue{^uint64(0), 0}
	case n < 128:
		return prefixValue{^uint64(0), ^uint64(0) << (128 - n)}
	}
	return prefixValue{^uint64(0), ^uint64(0)}
}

// bit returns bit i of v.
func (v *prefixValue) bit(i int) int {
	return int(v[i>>6]>>(63-i&63)) & 1
}

// commonBits is how many leading bits a and b share, at most n.
func commonBits(a, b prefixValue, n int) int {
	c := bits.LeadingZeros64(a[0] ^ b[0])
	if c == 64 {
		c += bits.LeadingZeros64(a[1] ^ b[1])
	}
	return min(c, n)
}

// trieNode is one node of a prefix trie of values V. Every node holds its
// whole prefix from the root (value, plen), so removing a node splices its
// only child into its parent unchanged. value and plen never change once
// a node is reachable; rules and the edges are read by lookups while the
// writer changes them. An IPv4 trie's node is 32 bytes.
type trieNode[V comparable] struct {
	value V // bits beyond plen are zero
	plen  uint8
	rules atomic.Int32 // rules whose prefix is exactly (value, plen)
	edges [2]atomic.Pointer[trieNode[V]]
}

func (n *trieNode[V]) isLeaf() bool {
	return n.edges[0].Load() == nil && n.edges[1].Load() == nil
}

// bitOps are the bit operations a trie needs on its values.
type bitOps[V comparable] interface {
	common(a, b V, n int) int // leading bits shared, at most n
	bit(v V, i int) int       // bit i (0: the most significant)
	mask(v V, n int) V        // v with only its first n bits
}

// ops32 are 32-bit values (IPv4 addresses, the L4 ports).
type ops32 struct{}

func (ops32) common(a, b uint32, n int) int { return min(bits.LeadingZeros32(a^b), n) }
func (ops32) bit(v uint32, i int) int       { return int(v>>(31-i)) & 1 }
func (ops32) mask(v uint32, n int) uint32 {
	if n <= 0 {
		return 0
	}
	return v & (^uint32(0) << (32 - n))
}

// ops128 are 128-bit values (IPv6 addresses).
type ops128 struct{}

func (ops128) common(a, b prefixValue, n int) int { return commonBits(a, b, n) }
func (ops128) bit(v prefixValue, i int) int       { return v.bit(i) }
func (ops128) mask(v prefixValue, n int) prefixValue {
	return maskValue(v, n)
}

// bitTrie is the trie proper, over values V of nbits bits. One writer;
// lock-free readers, as Open vSwitch's RCU trie: a node becomes reachable
// whole, with one atomic store into its parent.
type bitTrie[V comparable, O bitOps[V]] struct {
	root  atomic.Pointer[trieNode[V]]
	ops   O
	nbits int
}

// trie is a classifier's prefix trie of one field: the prefixes of the
// rules of every subtable whose mask on the field is a CIDR prefix, each
// counted once per rule, invisible rules included (a superset only costs
// precision, never correctness). A 32-bit field keeps its values as
// uint32 (smaller nodes), a 128-bit one as prefixValue.
type trie struct {
	field PrefixField
	t32   *bitTrie[uint32, ops32]
	t128  *bitTrie[prefixValue, ops128]
}

func newTrie(f PrefixField) *trie {
	t := &trie{field: f}
	if f.Bits == 32 {
		t.t32 = &bitTrie[uint32, ops32]{nbits: 32}
	} else {
		t.t128 = &bitTrie[prefixValue, ops128]{nbits: f.Bits}
	}
	return t
}

// empty reports whether the trie holds no prefix.
func (t *trie) empty() bool {
	if t.t32 != nil {
		return t.t32.root.Load() == nil
	}
	return t.t128.root.Load() == nil
}

// plenSet has bit plen-1 set for each prefix length plen (1..128).
type plenSet [2]uint64

func (s *plenSet) add(plen int)     { s[(plen-1)>>6] |= 1 << ((plen - 1) & 63) }
func (s plenSet) has(plen int) bool { return s[(plen-1)>>6]>>((plen-1)&63)&1 != 0 }

// allPlens says "any prefix length may match": no subtable is skipped.
var allPlens = plenSet{^uint64(0), ^uint64(0)}

// lookup walks the trie with flow's value of the field. It returns the
// prefix lengths of the rule prefixes that match the value and how many
// leading bits of the value that answer depended on (Open vSwitch's
// trie_lookup: the bit that left the trie included). A flow that lacks
// the field's prerequisite gets every length: nothing can be skipped.
func (t *trie) lookup(flow *mf.Flow) (plens plenSet, maskbits int) {
	if flow.EtherType != t.field.Prereq {
		return allPlens, 0
	}
	return t.lookupValue(t.field.load(flow))
}

// lookupValue is lookup for a value of the trie's field.
func (t *trie) lookupValue(v prefixValue) (plenSet, int) {
	if t.t32 != nil {
		return t.t32.lookup(uint32(v[0] >> 32))
	}
	return t.t128.lookup(v)
}

// insert counts one rule with prefix (v, plen). Writer.
func (t *trie) insert(v prefixValue, plen int) {
	if t.t32 != nil {
		t.t32.insert(uint32(v[0]>>32), plen)
	} else {
		t.t128.insert(v, plen)
	}
}

// remove uncounts one rule with prefix (v, plen). Writer.
func (t *trie) remove(v prefixValue, plen int) {
	if t.t32 != nil {
		t.t32.remove(uint32(v[0]>>32), plen)
	} else {
		t.t128.remove(v, plen)
	}
}

func (t *bitTrie[V, O]) lookup(v V) (plens plenSet, maskbits int) {
	var prev *trieNode[V]
	node := t.root.Load()
	for node != nil {
		plen := int(node.plen)
		eq := t.ops.common(node.value, v, plen)
		if eq < plen {
			return plens, eq + 1
		}
		if node.rules.Load() > 0 {
			plens.add(plen)
		}
		if plen >= t.nbits {
			return plens, t.nbits
		}
		prev, node = node, node.edges[t.ops.bit(v, plen)].Load()
	}
	// Fell off at a missing branch: the value's next bit matters only if
	// the other branch exists.
	switch {
	case prev == nil:
		return plens, 0
	case prev.isLeaf():
		return plens, int(prev.plen)
	}
	return plens, int(prev.plen) + 1
}

func (t *bitTrie[V, O]) newNode(v V, plen int, rules int32) *trieNode[V] {
	n := &trieNode[V]{value: v, plen: uint8(plen)}
	n.rules.Store(rules)
	return n
}

func (t *bitTrie[V, O]) insert(v V, plen int) {
	v = t.ops.mask(v, plen)
	link := &t.root
	for {
		n := link.Load()
		if n == nil {
			link.Store(t.newNode(v, plen, 1))
			return
		}
		nplen := int(n.plen)
		eq := t.ops.common(n.value, v, min(nplen, plen))
		switch {
		case eq == nplen && eq == plen:
			n.rules.Add(1)
			return
		case eq == nplen:
			link = &n.edges[t.ops.bit(v, nplen)]
			continue
		case eq == plen:
			// The new prefix is a prefix of n's: a node above n.
			nn := t.newNode(v, plen, 1)
			nn.edges[t.ops.bit(n.value, plen)].Store(n)
			link.Store(nn)
			return
		default:
			// They part at bit eq: a branch node with both below.
			br := t.newNode(t.ops.mask(v, eq), eq, 0)
			br.edges[t.ops.bit(v, eq)].Store(t.newNode(v, plen, 1))
			br.edges[t.ops.bit(n.value, eq)].Store(n)
			link.Store(br)
			return
		}
	}
}

// remove drops nodes that no longer hold rules or branch.
func (t *bitTrie[V, O]) remove(v V, plen int) {
	v = t.ops.mask(v, plen)
	var path [130]*atomic.Pointer[trieNode[V]] // links from the root down
	depth := 0
	link := &t.root
	for {
		n := link.Load()
		if n == nil || t.ops.common(n.value, v, min(int(n.plen), plen)) < int(n.plen) {
			return // not there (cannot happen for a counted prefix)
		}
		path[depth] = link
		depth++
		if int(n.plen) == plen {
			break
		}
		link = &n.edges[t.ops.bit(v, int(n.plen))]
	}
	if path[depth-1].Load().rules.Add(-1) > 0 {
		return
	}
	// Splice out nodes with no rules and at most one child, bottom up.
	for d := depth - 1; d >= 0; d-- {
		n := path[d].Load()
		if n.rules.Load() > 0 {
			return
		}
		e0, e1 := n.edges[0].Load(), n.edges[1].Load()
		if e0 != nil && e1 != nil {
			return
		}
		if e0 == nil {
			e0 = e1
		}
		path[d].Store(e0)
		if e0 != nil {
			return // the parent keeps its child count
		}
	}
}

func maskValue(v prefixValue, plen int) prefixValue {
	m := prefixMask(plen)
	return prefixValue{v[0] & m[0], v[1] & m[1]}
}

// portsField describes the L4 ports as one 32-bit prefix field, source
// port first, as Open vSwitch's per-subtable ports trie sees them (they
// are not a big-endian field of mf.Flow: see portsValue).
var portsField = PrefixField{Name: "tp_ports", Bits: 32}

// portsValue is flow's L4 ports as a 32-bit prefix value (source port in
// the high half).
func portsValue(flow *mf.Flow) prefixValue {
	return prefixValue{uint64(flow.SrcPort)<<48 | uint64(flow.DstPort)<<32, 0}
}

// trieLookup is the state of one classifier lookup's trie checks: each
// trie is walked at most once, when a subtable first needs it.
type trieLookup struct {
	done     [MaxPrefixes]bool
	plens    [MaxPrefixes]plenSet
	maskbits [MaxPrefixes]int
}
