package packet

import (
	"math/bits"
	"unsafe"
)

// VLANTag is one 802.1Q or 802.1ad tag as it appears in the frame. A zero
// TPID means "no tag": a real tag always has a non-zero TPID.
type VLANTag struct {
	TPID uint16 // EtherTypeVLAN or EtherTypeQinQ
	TCI  uint16 // PCP (3 bits), DEI (1 bit), VID (12 bits)
}

// VID returns the 12-bit VLAN identifier.
func (t VLANTag) VID() uint16 { return t.TCI & 0x0fff }

// PCP returns the 3-bit priority code point.
func (t VLANTag) PCP() uint8 { return uint8(t.TCI >> 13) }

// Present reports whether the slot holds a tag.
func (t VLANTag) Present() bool { return t.TPID != 0 }

// Key is a flow key: every header field the switch may match on, in a
// fixed-size, pointer-free struct. It is comparable with ==, usable as a map
// key, and hashed or masked word by word without allocation.
//
// The field order is chosen so that the struct has no implicit padding:
// Hash and ApplyMask read it as keyWords 64-bit words, and padding bytes
// (which == ignores but a word view would not) would make equal keys hash
// differently. key_test.go checks this.
//
// Field semantics follow Open vSwitch's struct flow where it has one:
//   - EtherType is the innermost EtherType, after any VLAN tags; 802.3
//     frames without SNAP get EtherTypeNone.
//   - VLANs[0] is the outermost tag.
//   - ARP and RARP put the sender and target protocol addresses in SrcIPv4
//     and DstIPv4, the opcode in ARPOp, and the hardware addresses in ARPSHA
//     and ARPTHA.
//   - IPv6 puts the traffic class in IPTOS and the hop limit in IPTTL.
//   - IPProto is the last next-header after IPv6 extension headers (for a
//     fragment, the header named by the fragment header).
//   - For later fragments (IPFrag has FragLater) the L4 fields stay zero.
type Key struct {
	_ [0]uint64 // 8-byte alignment for the word view

	// Metadata: what the datapath knows of the packet besides its bytes.
	// Parse keeps it (see MetadataWords); the datapath sets it.
	TunID       uint64   // tunnel key (VNI), filled by tunnel ports
	InPort      uint32   // set by the caller (Buffer.Parse copies Buffer.InPort)
	RecircID    uint32   // 0 on receive; set by the recirculate action
	DPHash      uint32   // set by the hash action
	PktMark     uint32   // skb mark / pkt_mark
	SkbPriority uint32   // skb priority (set_queue)
	CTState     uint32   // conntrack state bits (CTState* as Open vSwitch's cs_*)
	CTMark      uint32   // conntrack mark
	CTZone      uint16   // conntrack zone
	CTNwProto   uint8    // conntrack original direction IP protocol
	TunTOS      uint8    // outer IP TOS of a tunnelled packet
	CTLabel     [16]byte // conntrack label (128 bits, network byte order)
	CTNwSrc     [4]byte  // conntrack original direction IPv4 source
	CTNwDst     [4]byte
	CTIPv6Src   [16]byte // conntrack original direction IPv6 source
	CTIPv6Dst   [16]byte
	CTTpSrc     uint16 // conntrack original direction L4 ports
	CTTpDst     uint16
	TunSrc      [4]byte // outer IPv4 addresses of a tunnelled packet
	TunDst      [4]byte
	TunIPv6Src  [16]byte
	TunIPv6Dst  [16]byte
	TunFlags    uint16 // FLOW_TNL_F_* as Open vSwitch's
	TunTpSrc    uint16
	TunTpDst    uint16
	TunGBPID    uint16
	TunTTL      uint8
	TunGBPFlags uint8
	TunMetaLen  uint8    // bytes of TunMetadata in use
	TunMetaPad  uint8    // always zero: keeps TunMetadata aligned, no implicit padding
	TunMetadata [16]byte // Geneve options, as mapped by the TLV table

	// Packet fields, from the bytes: L2.
	EtherType uint16  // innermost EtherType
	DstMAC    [6]byte // Ethernet destination
	SrcMAC    [6]byte // Ethernet source
	VLANs     [MaxVLANs]VLANTag

	// L3.
	ARPOp         uint16
	SrcIPv4       [4]byte // IPv4 source, or ARP sender protocol address
	DstIPv4       [4]byte // IPv4 destination, or ARP target protocol address
	IPProto       uint8   // IPv4 protocol or final IPv6 next header
	IPTOS         uint8   // IPv4 TOS byte or IPv6 traffic class (DSCP and ECN)
	IPTTL         uint8   // IPv4 TTL or IPv6 hop limit
	IPFrag        uint8   // FragAny, FragLater
	FlowLabel     uint32  // IPv6 flow label (20 bits)
	SrcIPv6       [16]byte
	DstIPv6       [16]byte
	ARPSHA        [6]byte  // ARP sender hardware address, or ND source link-layer address
	ARPTHA        [6]byte  // ARP target hardware address, or ND target link-layer address
	NDReserved    uint32   // ND reserved field (flags of an advertisement)
	NDTarget      [16]byte // IPv6 neighbour discovery target address
	NDOptionsType uint8    // type of the first ND option
	ICMPType      uint8    // ICMP or ICMPv6 type (L4 in Open vSwitch; here for the layout)
	ICMPCode      uint8    // ICMP or ICMPv6 code
	Pad0          uint8    // always zero: the layout has no implicit padding

	// L4.
	SrcPort  uint16    // TCP, UDP or SCTP source port
	DstPort  uint16    // TCP, UDP or SCTP destination port
	TCPFlags uint16    // low 12 bits of TCP header bytes 12-13 (NS..FIN)
	Pad1     [3]uint16 // always zero: the layout has no implicit padding
}

// MaxVLANs is how many VLAN tags a Key records (802.1ad outer + 802.1Q inner).
const MaxVLANs = 2

// IPFrag bits, as in Open vSwitch's nw_frag: a first fragment has FragAny
// only; later fragments have both.
const (
	FragAny   = 1 << 0 // the packet is a fragment (first or later)
	FragLater = 1 << 1 // the fragment offset is non-zero
)

// IsFragment reports whether the packet is an IP fragment.
func (k *Key) IsFragment() bool { return k.IPFrag&FragAny != 0 }

// IsFirstFragment reports whether the packet is the fragment at offset 0.
func (k *Key) IsFirstFragment() bool { return k.IPFrag&(FragAny|FragLater) == FragAny }

// IsLaterFragment reports whether the packet is a fragment at a non-zero offset.
func (k *Key) IsLaterFragment() bool { return k.IPFrag&FragLater != 0 }

// NumVLANs returns how many VLAN tags the key holds.
func (k *Key) NumVLANs() int {
	n := 0
	for _, t := range k.VLANs {
		if t.Present() {
			n++
		}
	}
	return n
}

// Mask has Key's layout; a set bit means "this bit of the key matters".
// Field names are the Key's, so a classifier writes m.DstPort = 0xffff.
type Mask Key

// keyWords is the size of Key in 64-bit words.
const keyWords = int(unsafe.Sizeof(Key{})) / 8

// Compile-time check that Key is a whole number of words.
var _ [unsafe.Sizeof(Key{}) % 8]struct{} = [0]struct{}{}

// words views k as an array of words. Key holds no pointers and no padding,
// so the view is exact; Key's leading [0]uint64 makes it 8-byte aligned.
func (k *Key) words() *[keyWords]uint64 {
	return (*[keyWords]uint64)(unsafe.Pointer(k))
}

func (m *Mask) words() *[keyWords]uint64 {
	return (*[keyWords]uint64)(unsafe.Pointer(m))
}

// metadataWords is how many leading words of Key hold metadata (fields
// the datapath sets, not Parse): everything before EtherType.
const metadataWords = int(unsafe.Offsetof(Key{}.EtherType)) / 8

// Compile-time check that the packet fields start on a word boundary.
var _ [unsafe.Offsetof(Key{}.EtherType) % 8]struct{} = [0]struct{}{}

// clearPacketFields zeroes every field Parse fills, keeping the metadata.
func (k *Key) clearPacketFields() {
	w := k.words()
	for i := metadataWords; i < keyWords; i++ {
		w[i] = 0
	}
}

// ClearMetadata zeroes the metadata fields (everything before EtherType)
// except InPort: what a freshly received packet has.
func (k *Key) ClearMetadata() {
	in := k.InPort
	w := k.words()
	for i := range metadataWords {
		w[i] = 0
	}
	k.InPort = in
}

// ApplyMask writes k AND m into out. out may be k itself.
func (k *Key) ApplyMask(m *Mask, out *Key) {
	kw, mw, ow := k.words(), m.words(), out.words()
	for i := range kw {
		ow[i] = kw[i] & mw[i]
	}
}

// FullMask returns a mask that matches every bit of the key.
func FullMask() Mask {
	var m Mask
	w := m.words()
	for i := range w {
		w[i] = ^uint64(0)
	}
	return m
}

// Hash returns a 64-bit hash of the whole key. Equal keys hash equally;
// it is not cryptographic and is meant for hash tables on the packet path.
func (k *Key) Hash() uint64 {
	return k.HashSeed(0)
}

// HashSeed is Hash with a caller-chosen seed (for example per table, so one
// crafted flow set does not collide in every table).
func (k *Key) HashSeed(seed uint64) uint64 {
	const (
		m1 = 0xa0761d6478bd642f
		m2 = 0xe7037ed1a0b428db
	)
	// Start from m2, not m1: each round XORs m1 into the multiplicand,
	// and a leading zero word must not zero it (that would make the
	// round ignore the second word).
	h := seed ^ m2
	w := k.words()
	// Two words per round through a 64x64->128 multiply (wyhash's mixing
	// step). The running state enters the multiplicand so word order
	// matters (swapping source and destination changes the hash), and is
	// also XORed back in so a zero product cannot erase it. Pairs of zero
	// words are skipped: most of the key is metadata a received packet
	// does not have (tunnel, conntrack) and fields its protocols lack, and
	// the key is hashed for every packet. Each pair's second operand
	// carries a constant of its own (multiples of the golden ratio, which
	// differ from one another in many bits), so a pair moved to where
	// zeros were hashes otherwise.
	const golden = 0x9e3779b97f4a7c15
	pairs := (*[keyWords / 2][2]uint64)(unsafe.Pointer(k)) // no bounds checks
	position := uint64(m2)
	for _, p := range pairs {
		position += golden
		if p[0]|p[1] == 0 {
			continue
		}
		hi, lo := bits.Mul64(h^p[0]^m1, p[1]^position)
		h ^= hi ^ lo
	}
	if keyWords%2 == 1 {
		hi, lo := bits.Mul64(h^w[keyWords-1]^m1, m2)
		h ^= hi ^ lo
	}
	hi, lo := bits.Mul64(h^m2, uint64(keyWords)^m1)
	return hi ^ lo
}
