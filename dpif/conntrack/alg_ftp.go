package conntrack

import (
	"encoding/binary"
	"net/netip"

	"gvs/packet"
)

// The FTP helper. A control message announcing a data connection is
// PORT (RFC 959) or EPRT (RFC 2428) from the client, or a 227 (PASV) or
// 229 (EPSV) reply from the server. Under NAT the address in PORT, EPRT
// and 227 is rewritten to the one the peer must use; the text may change
// length, and from then on the sequence numbers of that direction, and
// the acknowledgements of the other, are shifted by the sum of the
// changes (the connection's skew).

// algFTPMsgMax is how much of a segment's payload is read for a control
// message (Open vSwitch reads at most 127 bytes, up to a NUL).
const algFTPMsgMax = 127

// algFTPMode says who opens the data connection.
type algFTPMode uint8

const (
	algFTPActive  algFTPMode = iota + 1 // PORT, EPRT: the server connects to the client
	algFTPPassive                       // 227, 229: the client connects to the server
)

// algFTPMsg is a parsed control message.
type algFTPMsg struct {
	mode     algFTPMode
	extended bool       // EPRT or EPSV
	addr     netip.Addr // the address in the message; invalid when it has none (EPSV, IPv6 passive)
	port     uint16
	// addrAt and addrLen locate the address text in the payload
	// (addrLen 0: none to rewrite).
	addrAt, addrLen int
}

// algFTPState is what the FTP helper keeps per control connection; the
// tracker holds it in the connection and passes it under the
// connection's lock.
type algFTPState struct {
	// Skew is how many bytes the rewrites have added (negative: removed)
	// to the direction SkewReply names.
	Skew      int32
	SkewReply bool
}

// algFTPInterest reports whether payload (a TCP segment's data) is a
// control message the helper handles: for IPv4 one starting with PORT,
// EPRT, 227 or 229, for IPv6 with EPRT or containing "EXTENDED PASSIVE"
// (Open vSwitch's detect_ftp_ctl_type), case-insensitively.
func algFTPInterest(payload []byte, v6 bool) bool {
	msg := algFTPText(payload)
	if v6 {
		return algHasPrefixFold(msg, "EPRT") || algContainsFold(msg, "EXTENDED PASSIVE")
	}
	return algHasPrefixFold(msg, "PORT") || algHasPrefixFold(msg, "EPRT") ||
		algHasPrefixFold(msg, "227") || algHasPrefixFold(msg, "229")
}

// algFTPText is the part of the payload read for a control message.
func algFTPText(payload []byte) []byte {
	msg := payload[:min(len(payload), algFTPMsgMax)]
	for i, c := range msg {
		if c == 0 {
			return msg[:i]
		}
	}
	return msg
}

// algFTPParse parses a control message algFTPInterest accepted; ok is
// false for a malformed one (the packet is then +inv). The syntax
// accepted is Open vSwitch's process_ftp_ctl_v4/v6: after the command
// (or reply code) and a space, PORT and 227 carry h1,h2,h3,h4,p1,p2 at
// the first digit; EPRT |1|a.b.c.d|port| or |2|ipv6|port|; 229 and
// IPv6's EXTENDED PASSIVE the port at the first digit (IPv6: after the
// first parenthesis).
func algFTPParse(payload []byte, v6 bool) (m algFTPMsg, ok bool) {
	msg := algFTPText(payload)
	if v6 {
		return algFTPParseV6(msg)
	}
	var i int
	switch {
	case algHasPrefixFold(msg, "PORT"):
		m.mode, i = algFTPActive, 4
	case algHasPrefixFold(msg, "EPRT"):
		m.mode, m.extended, i = algFTPActive, true, 4
	case algHasPrefixFold(msg, "229"):
		m.mode, m.extended, i = algFTPPassive, true, 3
	case algHasPrefixFold(msg, "227"):
		m.mode, i = algFTPPassive, 3
	default:
		return m, false
	}
	for i < len(msg) && msg[i] != ' ' {
		i++
	}
	if i = algSkipNonDigits(msg, i); i == len(msg) {
		return m, false
	}
	if m.extended && m.mode == algFTPActive {
		// The address family: 1, and only 1.
		if msg[i] != '1' || i+1 < len(msg) && algIsDigit(msg[i+1]) {
			return m, false
		}
		if i = algSkipNonDigits(msg, i+1); i == len(msg) {
			return m, false
		}
	}
	if !m.extended || m.mode == algFTPActive {
		// h1,h2,h3,h4 (PORT, 227) or a.b.c.d (EPRT): digits with the
		// first three commas read as dots.
		start, commas := i, 0
		var text [15]byte
		n := 0
		for ; i < len(msg); i++ {
			c := msg[i]
			if c == ',' && commas < 3 {
				c = '.'
				commas++
			}
			if !algIsDigit(c) && c != '.' {
				break
			}
			if n == len(text) {
				return m, false
			}
			text[n] = c
			n++
		}
		addr, ok := algParseIPv4(text[:n])
		if !ok {
			return m, false
		}
		m.addr, m.addrAt, m.addrLen = addr, start, i-start
		i++ // the separator after the address
	}
	if m.extended {
		v, next, ok := algNumber(msg, i, 5)
		if !ok || v > 65535 {
			return m, false
		}
		m.port, i = uint16(v), next
		return m, true
	}
	hi, next, ok := algNumber(msg, i, 3)
	if !ok || hi > 255 {
		return m, false
	}
	lo, _, ok := algNumber(msg, next+1, 3)
	if !ok || lo > 255 {
		return m, false
	}
	m.port = uint16(hi<<8 | lo)
	return m, true
}

func algFTPParseV6(msg []byte) (m algFTPMsg, ok bool) {
	i := 0
	if algHasPrefixFold(msg, "EPRT") {
		m.mode, m.extended = algFTPActive, true
		if i = algSkipNonDigits(msg, 4); i == len(msg) {
			return m, false
		}
		if msg[i] != '2' || i+1 < len(msg) && algIsDigit(msg[i+1]) {
			return m, false
		}
		i += 2 // the family and the delimiter after it
		if i > len(msg) {
			return m, false
		}
		start := i
		for i < len(msg) && (algIsHex(msg[i]) || msg[i] == ':' || msg[i] == '.') {
			i++
		}
		addr, ok := algParseIPv6(msg[start:i])
		if !ok {
			return m, false
		}
		m.addr, m.addrAt, m.addrLen = addr, start, i-start
		i++
	} else {
		m.mode, m.extended = algFTPPassive, true
		for i < len(msg) && msg[i] != '(' {
			i++
		}
		if i = algSkipNonDigits(msg, i); i == len(msg) {
			return m, false
		}
	}
	v, _, ok := algNumber(msg, i, 5)
	if !ok || v > 65535 {
		return m, false
	}
	m.port = uint16(v)
	return m, true
}

// algParseIPv4 parses a dotted quad as inet_pton does: four decimal
// numbers up to 255 without leading zeros. (netip.ParseAddr would need a
// string, and the conversion allocates.)
func algParseIPv4(s []byte) (netip.Addr, bool) {
	var a [4]byte
	i := 0
	for k := range 4 {
		if k > 0 {
			if i >= len(s) || s[i] != '.' {
				return netip.Addr{}, false
			}
			i++
		}
		start, v := i, 0
		for i < len(s) && algIsDigit(s[i]) && i-start < 3 {
			v = v*10 + int(s[i]-'0')
			i++
		}
		if i == start || v > 255 || i-start > 1 && s[start] == '0' {
			return netip.Addr{}, false
		}
		a[k] = byte(v)
	}
	if i != len(s) {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(a), true
}

// algParseIPv6 parses an IPv6 address as inet_pton does: up to eight
// groups of up to four hex digits, one "::" for a run of zero groups, and
// optionally a dotted quad for the last 32 bits.
func algParseIPv6(s []byte) (netip.Addr, bool) {
	var a [16]byte
	n, gap := 0, -1 // bytes written, where "::" was
	i := 0
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		gap, i = 0, 2
	}
	for i < len(s) && n < 16 {
		start, v := i, 0
		for i < len(s) && algIsHex(s[i]) && i-start < 4 {
			v = v<<4 | int(algHexVal(s[i]))
			i++
		}
		if i == start {
			return netip.Addr{}, false
		}
		if i < len(s) && s[i] == '.' {
			// The last 32 bits as a dotted quad.
			v4, ok := algParseIPv4(s[start:])
			if !ok || n > 12 {
				return netip.Addr{}, false
			}
			b := v4.As4()
			copy(a[n:], b[:])
			n += 4
			i = len(s)
			break
		}
		a[n], a[n+1] = byte(v>>8), byte(v)
		n += 2
		if i == len(s) {
			break
		}
		if s[i] != ':' {
			return netip.Addr{}, false
		}
		i++
		if i < len(s) && s[i] == ':' {
			if gap >= 0 {
				return netip.Addr{}, false
			}
			gap = n
			i++
		} else if i == len(s) {
			return netip.Addr{}, false // a trailing single colon
		}
	}
	if i != len(s) {
		return netip.Addr{}, false
	}
	switch {
	case gap >= 0:
		if n == 16 {
			return netip.Addr{}, false
		}
		copy(a[16-(n-gap):], a[gap:n])
		clear(a[gap : 16-(n-gap)])
	case n != 16:
		return netip.Addr{}, false
	}
	return netip.AddrFrom16(a), true
}

func algHexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// algNumber reads a decimal number of at least one and at most
// maxDigits+1 digits at msg[i:] (Open vSwitch's terminate_number_str
// lets one more digit through) and returns it and where it ends.
func algNumber(msg []byte, i, maxDigits int) (v, end int, ok bool) {
	end = i
	for end < len(msg) && end-i <= maxDigits && algIsDigit(msg[end]) {
		v = v*10 + int(msg[end]-'0')
		end++
	}
	return v, end, end > i
}

func algIsDigit(c byte) bool { return c >= '0' && c <= '9' }

func algIsHex(c byte) bool {
	return algIsDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func algSkipNonDigits(msg []byte, i int) int {
	for i < len(msg) && !algIsDigit(msg[i]) {
		i++
	}
	return min(i, len(msg))
}

func algLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func algHasPrefixFold(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range len(prefix) {
		if algLower(s[i]) != algLower(prefix[i]) {
			return false
		}
	}
	return true
}

func algContainsFold(s []byte, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if algHasPrefixFold(s[i:], sub) {
			return true
		}
	}
	return false
}

// algFTPCarriesControl reports whether TCP packet b (Key and Offsets from
// its last Parse) carries a control message algFTP acts on.
func algFTPCarriesControl(b *packet.Buffer) bool {
	payload, _, ok := algTCPPayload(b)
	return ok && algFTPInterest(payload, b.Key.EtherType == packet.EtherTypeIPv6)
}

// algTCPPayload locates the payload of TCP packet b, and its IP packet.
func algTCPPayload(b *packet.Buffer) ([]byte, natIP, bool) {
	h, ok := natOuter(b.Data(), &b.Key, b.Offsets)
	if !ok || h.proto != packet.ProtoTCP || h.l4 == 0 || h.l4+packet.TCPMinLen > h.end {
		return nil, h, false
	}
	frame := b.Data()
	dataAt := h.l4 + int(frame[h.l4+12]>>4)*4
	if dataAt > h.end {
		return nil, h, false
	}
	return frame[dataAt:h.end], h, true
}

// algFTPResult is what algFTP did with a packet.
type algFTPResult uint8

const (
	algFTPOther    algFTPResult = iota // no control message of interest
	algFTPExpected                     // a data connection announced: the expectation is set
	algFTPInvalid                      // a malformed control message: the packet is +inv
)

// algFTP runs the FTP helper on a TCP packet b (Key and Offsets from its
// last Parse) of a control connection with tuples orig and reply (after
// NAT) and nat kind (NATApply for none); nat says the ct action has a nat
// clause, isReply the packet's direction; st is the connection's helper
// state. Under nat it rewrites the announced address (PORT, EPRT: the
// client's address as the server sees it; 227: the server's as the
// client sees it), growing or shrinking the frame and recording the
// skew, and shifts sequence and acknowledgement numbers by the skew so
// far; the TCP checksum is then recomputed (a partial one gets the new
// pseudo-header sum). It returns the expectation a message announces.
//
// A message whose address is neither the sender's own nor its NATed
// one is refused as invalid (an FTP bounce attempt), as in Open vSwitch.
func algFTP(b *packet.Buffer, orig, reply *Tuple, kind NATKind, nat, isReply bool, st *algFTPState) (algExpectation, algFTPResult) {
	var exp algExpectation
	payload, h, ok := algTCPPayload(b)
	if !ok {
		return exp, algFTPOther
	}
	frame := b.Data()
	dataAt := h.end - len(payload)
	result := algFTPOther
	var skew int
	if algFTPInterest(payload, h.v6) {
		m, ok := algFTPParse(payload, h.v6)
		if !ok {
			return exp, algFTPInvalid
		}
		// The address the message should carry after NAT, and the
		// sender's own.
		var rep, own netip.Addr
		if m.mode == algFTPActive {
			rep, own = reply.Dst, orig.Src
		} else {
			rep, own = orig.Dst, reply.Src
		}
		if m.addr.IsValid() && m.addr != own && m.addr != rep {
			return exp, algFTPInvalid
		}
		exp, result = algExpect(orig, reply, kind, isReply, m.port), algFTPExpected
		if nat && m.addrLen > 0 {
			skew = algFTPRewrite(b, h, dataAt+m.addrAt, m.addrLen, rep, m.extended)
			frame = b.Data()
			h.end += skew
		}
	}
	if nat && st.Skew != 0 {
		if isReply != st.SkewReply {
			algAddU32(frame[h.l4+8:], -st.Skew)
		} else {
			algAddU32(frame[h.l4+4:], st.Skew)
		}
	}
	algTCPChecksum(b, h)
	if skew != 0 {
		st.Skew += int32(skew)
		st.SkewReply = isReply
	}
	return exp, result
}

// algFTPRewrite replaces the address text at frame[at:at+n] with rep
// (comma-separated for PORT and 227, dotted in EPRT), moving the rest of
// the segment and fixing the IP length, and returns the change in
// length. A frame without the tailroom to grow is left as it is, as
// Open vSwitch leaves one beyond its buffer.
func algFTPRewrite(b *packet.Buffer, h natIP, at, n int, rep netip.Addr, extended bool) int {
	var text [64]byte
	t := rep.AppendTo(text[:0])
	if rep.Is4() && !extended {
		for i, c := range t {
			if c == '.' {
				t[i] = ','
			}
		}
	}
	delta := len(t) - n
	if delta > b.Tailroom()+(b.Len()-h.end) {
		return 0
	}
	// Ethernet padding after the IP packet goes: the packet is rebuilt
	// to end with its payload.
	b.SetLen(h.end + max(delta, 0))
	frame := b.Data()
	copy(frame[at+len(t):], frame[at+n:h.end])
	copy(frame[at:], t)
	b.SetLen(h.end + delta)
	frame = b.Data()
	l3 := frame[h.l3:]
	if h.v6 {
		binary.BigEndian.PutUint16(l3[4:], binary.BigEndian.Uint16(l3[4:])+uint16(delta))
	} else {
		var old [2]byte
		copy(old[:], l3[2:4])
		binary.BigEndian.PutUint16(l3[2:], binary.BigEndian.Uint16(l3[2:])+uint16(delta))
		natUpdateCsum(l3[10:12], natDiff(old[:], l3[2:4]), false, false)
	}
	return delta
}

// algAddU32 adds d to the big-endian 32-bit number at b (modulo 2^32).
func algAddU32(b []byte, d int32) {
	binary.BigEndian.PutUint32(b, binary.BigEndian.Uint32(b)+uint32(d))
}

// algTCPChecksum recomputes the TCP checksum of the segment h locates
// (the field of a partial checksum gets the pseudo-header sum).
func algTCPChecksum(b *packet.Buffer, h natIP) {
	frame := b.Data()
	seg := frame[h.l4:h.end]
	var sum uint16
	if h.v6 {
		sum = packet.PseudoHeaderSumV6([16]byte(frame[h.l3+8:h.l3+24]), [16]byte(frame[h.l3+24:h.l3+40]), packet.ProtoTCP, uint32(len(seg)))
	} else {
		sum = packet.PseudoHeaderSumV4([4]byte(frame[h.l3+12:h.l3+16]), [4]byte(frame[h.l3+16:h.l3+20]), packet.ProtoTCP, uint16(len(seg)))
	}
	if b.HasVnet && b.Vnet.Flags&packet.VnetNeedsCsum != 0 {
		binary.BigEndian.PutUint16(seg[16:], sum)
		return
	}
	seg[16], seg[17] = 0, 0
	binary.BigEndian.PutUint16(seg[16:], ^packet.Checksum(seg, sum))
}
