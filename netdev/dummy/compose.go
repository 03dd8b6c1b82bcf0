package dummy

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"gvs/packet"
)

// The frame netdev-dummy/receive queues for one PACKET argument: hex of a
// whole frame, or a datapath flow in Open vSwitch's syntax
// ("in_port(1),eth(src=..,dst=..),eth_type(0x0800),ipv4(src=..,...),
// icmp(type=8,code=0)") composed into the frame Open vSwitch's
// flow_compose builds for it: unset fields zero, correct lengths and
// checksums, and for TCP (without SYN, FIN or RST), UDP and ICMP echo a
// 64-byte payload of the bytes 0, 1, 2, ... 63.

// MinFrameLen is the smallest --len netdev-dummy/receive accepts
// (ETH_TOTAL_MIN).
const MinFrameLen = 60

// FrameFromHex decodes a frame given in hex (white space allowed between
// digit pairs), as netdev-dummy/receive first tries each argument. It
// fails for anything else, and for fewer bytes than an Ethernet header.
func FrameFromHex(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	if s == "" || len(s)%2 != 0 {
		return nil, errors.New("not a hex frame")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("not a hex frame")
	}
	if len(b) < packet.EthHeaderLen {
		return nil, errors.New("Packet data too short for Ethernet")
	}
	return b, nil
}

// composeFlow is the part of a flow that composing a frame uses.
type composeFlow struct {
	dlSrc, dlDst   [6]byte
	dlType         uint16 // flowDLTypeNone: no Ethernet type (802.3 length)
	vlans          []vlanHeader
	nwSrc, nwDst   [4]byte
	ip6Src, ip6Dst [16]byte
	ip6Label       uint32
	nwProto        uint8
	nwTOS, nwTTL   uint8
	nwFrag         uint8
	tpSrc, tpDst   uint16
	tcpFlags       uint16
	arpSHA, arpTHA [6]byte
	ndTarget       [16]byte
	igmpGroup      [4]byte
	haveL3, haveL4 bool
}

type vlanHeader struct{ tpid, tci uint16 }

const (
	flowDLTypeNone = 0x05ff
	fragAny        = 1
	fragLater      = 2
	vlanCFI        = 0x1000
	ipProtoICMP    = 1
	ipProtoIGMP    = 2
	ipProtoTCP     = 6
	ipProtoUDP     = 17
	ipProtoICMPv6  = 58
	ipProtoSCTP    = 132
	tcpSYN         = 0x002
	tcpFIN         = 0x001
	tcpRST         = 0x004
)

// ComposeFrame builds the frame for a datapath flow string, as
// netdev-dummy/receive does; size > 0 (--len) pads it with zeros to that
// many bytes and fixes the lengths and checksums (an error if the frame
// is already longer).
func ComposeFrame(flow string, size int) ([]byte, error) {
	f, err := parseODPFlow(flow)
	if err != nil {
		return nil, err
	}
	l7 := 64
	if size > 0 {
		l7 = 0
	}
	frame, l3, l4 := f.compose(l7)
	if size > 0 {
		if size < len(frame) {
			return nil, fmt.Errorf("packet of %d bytes is larger than --len %d", len(frame), size)
		}
		if size > len(frame) {
			frame = f.expand(frame, l3, l4, size)
		}
	}
	return frame, nil
}

// compose returns the frame and the offsets of its L3 and L4 headers.
func (f *composeFlow) compose(l7Len int) (frame []byte, l3, l4 int) {
	frame = make([]byte, 0, 128)
	frame = append(frame, f.dlDst[:]...)
	frame = append(frame, f.dlSrc[:]...)
	if f.dlType == flowDLTypeNone {
		frame = binary.BigEndian.AppendUint16(frame, packet.EthHeaderLen)
		return frame, len(frame), len(frame)
	}
	for i := len(f.vlans) - 1; i >= 0; i-- {
		v := f.vlans[i]
		if v.tci&vlanCFI == 0 {
			continue
		}
		// Pushed behind the addresses, so the outermost ends up first;
		// the CFI bit only says the header is present (eth_push_vlan
		// clears it in the frame).
		tag := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, v.tpid), v.tci&^vlanCFI)
		frame = append(frame[:12], append(tag, frame[12:]...)...)
	}
	frame = binary.BigEndian.AppendUint16(frame, f.dlType)
	l3 = len(frame)
	switch f.dlType {
	case 0x0800:
		ip := make([]byte, 20)
		ip[0] = 0x45
		ip[1] = f.nwTOS
		if f.nwFrag&fragAny != 0 {
			frag := uint16(0x2000)
			if f.nwFrag&fragLater != 0 {
				frag |= 100
			}
			binary.BigEndian.PutUint16(ip[6:], frag)
		}
		ip[8] = f.nwTTL
		ip[9] = f.nwProto
		copy(ip[12:], f.nwSrc[:])
		copy(ip[16:], f.nwDst[:])
		frame = append(frame, ip...)
		l4 = len(frame)
		frame = f.composeL4(frame, l7Len)
		binary.BigEndian.PutUint16(frame[l3+2:], uint16(len(frame)-l3))
		binary.BigEndian.PutUint16(frame[l3+10:], packet.IPv4HeaderChecksum(frame[l3:l4]))
		f.l4Checksum(frame, l3, l4)
	case 0x86dd:
		ip := make([]byte, 40)
		binary.BigEndian.PutUint32(ip, 6<<28|uint32(f.nwTOS)<<20|f.ip6Label&0xfffff)
		ip[6] = f.nwProto
		ip[7] = f.nwTTL
		copy(ip[8:], f.ip6Src[:])
		copy(ip[24:], f.ip6Dst[:])
		frame = append(frame, ip...)
		l4 = len(frame)
		frame = f.composeL4(frame, l7Len)
		binary.BigEndian.PutUint16(frame[l3+4:], uint16(len(frame)-l4))
		f.l4Checksum(frame, l3, l4)
	case 0x0806, 0x8035:
		arp := make([]byte, 28)
		binary.BigEndian.PutUint16(arp[0:], 1)
		binary.BigEndian.PutUint16(arp[2:], 0x0800)
		arp[4], arp[5] = 6, 4
		binary.BigEndian.PutUint16(arp[6:], uint16(f.nwProto))
		if f.nwProto == 1 || f.nwProto == 2 {
			copy(arp[8:], f.arpSHA[:])
			copy(arp[14:], f.nwSrc[:])
			copy(arp[18:], f.arpTHA[:])
			copy(arp[24:], f.nwDst[:])
		}
		frame = append(frame, arp...)
		l4 = len(frame)
	default:
		l4 = len(frame)
	}
	return frame, l3, l4
}

func appendPayload(frame []byte, n int) []byte {
	for i := range n {
		frame = append(frame, byte(i))
	}
	return frame
}

func (f *composeFlow) composeL4(frame []byte, l7Len int) []byte {
	if f.nwFrag&fragAny != 0 && f.nwFrag&fragLater != 0 {
		return frame
	}
	switch f.nwProto {
	case ipProtoTCP:
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], f.tpSrc)
		binary.BigEndian.PutUint16(h[2:], f.tpDst)
		binary.BigEndian.PutUint16(h[12:], 5<<12|f.tcpFlags&0x0fff)
		frame = append(frame, h...)
		if f.tcpFlags&(tcpSYN|tcpFIN|tcpRST) == 0 {
			frame = appendPayload(frame, l7Len)
		}
	case ipProtoUDP:
		h := make([]byte, 8)
		binary.BigEndian.PutUint16(h[0:], f.tpSrc)
		binary.BigEndian.PutUint16(h[2:], f.tpDst)
		binary.BigEndian.PutUint16(h[4:], uint16(8+l7Len))
		frame = appendPayload(append(frame, h...), l7Len)
	case ipProtoSCTP:
		h := make([]byte, 12)
		binary.BigEndian.PutUint16(h[0:], f.tpSrc)
		binary.BigEndian.PutUint16(h[2:], f.tpDst)
		frame = append(frame, h...)
	case ipProtoICMP:
		h := make([]byte, 8) // type, code, checksum and the 4 bytes of rest-of-header
		h[0], h[1] = byte(f.tpSrc), byte(f.tpDst)
		frame = append(frame, h...)
		if (h[0] == 8 || h[0] == 0) && h[1] == 0 {
			frame = appendPayload(frame, l7Len)
		}
	case ipProtoIGMP:
		h := make([]byte, 8)
		h[0], h[1] = byte(f.tpSrc), byte(f.tpDst)
		copy(h[4:], f.igmpGroup[:])
		frame = append(frame, h...)
	case ipProtoICMPv6:
		h := make([]byte, 8)
		h[0], h[1] = byte(f.tpSrc), byte(f.tpDst)
		copy(h[4:], f.igmpGroup[:])
		frame = append(frame, h...)
		switch {
		case h[1] == 0 && (h[0] == 135 || h[0] == 136):
			frame = append(frame, f.ndTarget[:]...)
			if f.arpSHA != [6]byte{} {
				frame = append(append(frame, 1, 1), f.arpSHA[:]...)
			}
			if f.arpTHA != [6]byte{} {
				frame = append(append(frame, 2, 1), f.arpTHA[:]...)
			}
		case h[1] == 0 && (h[0] == 128 || h[0] == 129):
			frame = appendPayload(frame, l7Len)
		}
	}
	return frame
}

// l4Checksum fills the transport checksum as flow_compose does: TCP, UDP
// and ICMPv6 with the pseudo-header, ICMP and IGMP without.
func (f *composeFlow) l4Checksum(frame []byte, l3, l4 int) {
	if f.nwFrag&fragAny != 0 && f.nwFrag&fragLater != 0 {
		return
	}
	seg := frame[l4:]
	var pseudo uint16
	if f.dlType == 0x0800 {
		pseudo = packet.PseudoHeaderSumV4([4]byte(frame[l3+12:]), [4]byte(frame[l3+16:]), f.nwProto, uint16(len(seg)))
	} else {
		pseudo = packet.PseudoHeaderSumV6([16]byte(frame[l3+8:]), [16]byte(frame[l3+24:]), f.nwProto, uint32(len(seg)))
	}
	put := func(off int, withPseudo, zeroAsOnes bool) {
		if len(seg) < off+2 {
			return
		}
		binary.BigEndian.PutUint16(seg[off:], 0)
		init := uint16(0)
		if withPseudo {
			init = pseudo
		}
		c := ^packet.Checksum(seg, init)
		if c == 0 && zeroAsOnes {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(seg[off:], c)
	}
	switch f.nwProto {
	case ipProtoTCP:
		put(16, true, false)
	case ipProtoUDP:
		put(6, true, true)
	case ipProtoICMP, ipProtoIGMP:
		if f.dlType == 0x0800 {
			put(2, false, false)
		}
	case ipProtoICMPv6:
		if f.dlType == 0x86dd {
			put(2, true, false)
		}
	}
}

// expand pads the frame with zeros to size bytes, as packet_expand does.
func (f *composeFlow) expand(frame []byte, l3, l4, size int) []byte {
	extra := size - len(frame)
	frame = append(frame, make([]byte, extra)...)
	switch f.dlType {
	case flowDLTypeNone:
		binary.BigEndian.PutUint16(frame[12:], uint16(len(frame)))
		return frame
	case 0x0800, 0x86dd:
	default:
		return frame
	}
	l4Len := len(frame) - l4
	if f.dlType == 0x0800 {
		binary.BigEndian.PutUint16(frame[l3+2:], uint16(l4-l3+l4Len))
		binary.BigEndian.PutUint16(frame[l3+10:], 0)
		binary.BigEndian.PutUint16(frame[l3+10:], packet.IPv4HeaderChecksum(frame[l3:l4]))
	} else {
		binary.BigEndian.PutUint16(frame[l3+4:], uint16(l4Len))
	}
	if (f.nwFrag&fragAny == 0 || f.nwFrag&fragLater == 0) && f.nwProto == ipProtoUDP && len(frame) >= l4+8 {
		// packet_expand adds the padding to a UDP length that already
		// counts it.
		binary.BigEndian.PutUint16(frame[l4+4:], uint16(l4Len+extra))
	}
	f.l4Checksum(frame, l3, l4)
	return frame
}

// parseODPFlow reads the fields of a datapath flow string that composing
// uses; metadata keys (in_port, recirc_id, skb_mark, ...) are accepted
// and have no effect on the frame. Masks ("/...") are ignored, as
// odp_flow_key_to_flow ignores them.
func parseODPFlow(s string) (*composeFlow, error) {
	f := &composeFlow{dlType: flowDLTypeNone}
	if err := f.parseKeys(s); err != nil {
		return nil, err
	}
	return f, nil
}

// SyntaxError is a flow string ComposeFrame cannot read; its text is Open
// vSwitch's ("syntax error at" and the flow from the key it could not
// read on).
type SyntaxError struct {
	At     string // the flow from the offending key on
	Reason string // what was wrong, for logs
}

func (e *SyntaxError) Error() string { return "syntax error at " + e.At }

// parseKeys reads a comma-separated list of KEY(ARGS); inside a VLAN's
// encap() eth_type is the inner type.
func (f *composeFlow) parseKeys(s string) error {
	items, err := splitTop(s)
	if err != nil {
		return err
	}
	for _, item := range items {
		name, args, ok := strings.Cut(item.text, "(")
		if !ok || !strings.HasSuffix(args, ")") {
			return &SyntaxError{At: item.rest, Reason: "expected KEY(...)"}
		}
		name = strings.TrimSpace(name)
		args = strings.TrimSuffix(args, ")")
		if err := f.parseKey(name, args); err != nil {
			var se *SyntaxError
			if errors.As(err, &se) {
				return err
			}
			return &SyntaxError{At: item.rest, Reason: err.Error()}
		}
	}
	return nil
}

type flowItem struct {
	text string // one KEY(ARGS)
	rest string // the flow from this item on
}

// splitTop splits at the commas outside parentheses.
func splitTop(s string) ([]flowItem, error) {
	var out []flowItem
	depth, start := 0, 0
	add := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, flowItem{text: t, rest: strings.TrimLeft(s[start:], " ")})
		}
	}
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return nil, &SyntaxError{At: s[start:], Reason: "unbalanced parentheses"}
			}
		case ',':
			if depth == 0 {
				add(i)
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, &SyntaxError{At: s[start:], Reason: "unbalanced parentheses"}
	}
	add(len(s))
	return out, nil
}

// keyValues reads "k=v,k=v" (masks after '/' dropped).
func keyValues(args string) (map[string]string, error) {
	kv := map[string]string{}
	if strings.TrimSpace(args) == "" {
		return kv, nil
	}
	for _, p := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q: expected KEY=VALUE", p)
		}
		v, _, _ = strings.Cut(strings.TrimSpace(v), "/")
		kv[strings.TrimSpace(k)] = v
	}
	return kv, nil
}

var metadataKeys = map[string]bool{
	"in_port": true, "recirc_id": true, "dp_hash": true, "skb_priority": true, "skb_mark": true,
	"ct_state": true, "ct_zone": true, "ct_mark": true, "ct_label": true, "ct_tuple4": true, "ct_tuple6": true,
	"tunnel": true, "packet_type": true, "nsh": true, "mpls": true,
}

func (f *composeFlow) parseKey(name, args string) error {
	if metadataKeys[name] {
		return nil
	}
	if name == "encap" {
		f.dlType = flowDLTypeNone
		return f.parseKeys(args)
	}
	if name == "eth_type" {
		v, err := parseUint(strings.SplitN(args, "/", 2)[0], 16)
		f.dlType = uint16(v)
		return err
	}
	if name == "tcp_flags" {
		v, err := parseTCPFlags(strings.SplitN(args, "/", 2)[0])
		f.tcpFlags = v
		return err
	}
	kv, err := keyValues(args)
	if err != nil {
		return err
	}
	var errs []error
	get := func(k string, set func(string) error) {
		if v, ok := kv[k]; ok {
			if err := set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%s: %w", k, v, err))
			}
			delete(kv, k)
		}
	}
	u8 := func(p *uint8) func(string) error {
		return func(v string) error { n, err := parseUint(v, 8); *p = uint8(n); return err }
	}
	u16 := func(p *uint16) func(string) error {
		return func(v string) error { n, err := parseUint(v, 16); *p = uint16(n); return err }
	}
	mac := func(p *[6]byte) func(string) error {
		return func(v string) error {
			m, err := net.ParseMAC(v)
			if err != nil || len(m) != 6 {
				return errors.New("bad MAC")
			}
			*p = [6]byte(m)
			return nil
		}
	}
	ip4 := func(p *[4]byte) func(string) error {
		return func(v string) error {
			a, err := netip.ParseAddr(v)
			if err != nil || !a.Is4() {
				return errors.New("bad IPv4 address")
			}
			*p = a.As4()
			return nil
		}
	}
	ip6 := func(p *[16]byte) func(string) error {
		return func(v string) error {
			a, err := netip.ParseAddr(v)
			if err != nil || !a.Is6() {
				return errors.New("bad IPv6 address")
			}
			*p = a.As16()
			return nil
		}
	}
	frag := func(v string) error {
		switch v {
		case "no":
			f.nwFrag = 0
		case "first":
			f.nwFrag = fragAny
		case "later":
			f.nwFrag = fragAny | fragLater
		default:
			return errors.New("expected no, first or later")
		}
		return nil
	}
	switch name {
	case "eth":
		get("src", mac(&f.dlSrc))
		get("dst", mac(&f.dlDst))
	case "vlan":
		tpid := f.dlType
		if tpid == flowDLTypeNone {
			tpid = 0x8100
		}
		var vid, pcp uint16
		cfi := uint16(1)
		tci, haveTCI := uint16(0), false
		get("vid", u16(&vid))
		get("pcp", u16(&pcp))
		get("cfi", u16(&cfi))
		get("tci", func(v string) error { haveTCI = true; return u16(&tci)(v) })
		if !haveTCI {
			tci = vid&0x0fff | (pcp&7)<<13
			if cfi != 0 {
				tci |= vlanCFI
			}
		}
		f.vlans = append(f.vlans, vlanHeader{tpid: tpid, tci: tci})
	case "ipv4":
		get("src", ip4(&f.nwSrc))
		get("dst", ip4(&f.nwDst))
		get("proto", u8(&f.nwProto))
		get("tos", u8(&f.nwTOS))
		get("ttl", u8(&f.nwTTL))
		get("frag", frag)
	case "ipv6":
		get("src", ip6(&f.ip6Src))
		get("dst", ip6(&f.ip6Dst))
		get("label", func(v string) error { n, err := parseUint(v, 20); f.ip6Label = uint32(n); return err })
		get("proto", u8(&f.nwProto))
		get("tclass", u8(&f.nwTOS))
		get("hlimit", u8(&f.nwTTL))
		get("frag", frag)
	case "tcp", "udp", "sctp":
		get("src", u16(&f.tpSrc))
		get("dst", u16(&f.tpDst))
	case "icmp", "icmpv6":
		var t, c uint8
		get("type", u8(&t))
		get("code", u8(&c))
		f.tpSrc, f.tpDst = uint16(t), uint16(c)
	case "arp":
		var op uint16
		get("sip", ip4(&f.nwSrc))
		get("tip", ip4(&f.nwDst))
		get("op", u16(&op))
		get("sha", mac(&f.arpSHA))
		get("tha", mac(&f.arpTHA))
		f.nwProto = uint8(op)
	case "nd":
		get("target", ip6(&f.ndTarget))
		get("sll", mac(&f.arpSHA))
		get("tll", mac(&f.arpTHA))
	default:
		return errors.New("unknown key")
	}
	for k := range kv {
		errs = append(errs, fmt.Errorf("unknown field %q", k))
	}
	return errors.Join(errs...)
}

func parseUint(s string, bits int) (uint64, error) {
	return strconv.ParseUint(strings.TrimSpace(s), 0, bits)
}

var tcpFlagNames = map[string]uint16{
	"fin": 0x001, "syn": 0x002, "rst": 0x004, "psh": 0x008, "ack": 0x010, "urg": 0x020, "ece": 0x040, "cwr": 0x080, "ns": 0x100,
}

// parseTCPFlags reads tcp_flags(0x012) or tcp_flags(syn|ack).
func parseTCPFlags(s string) (uint16, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseUint(s, 0, 12); err == nil {
		return uint16(n), nil
	}
	var v uint16
	for _, name := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == '+' }) {
		bit, ok := tcpFlagNames[strings.TrimSpace(name)]
		if !ok {
			return 0, fmt.Errorf("unknown TCP flag %q", name)
		}
		v |= bit
	}
	return v, nil
}
