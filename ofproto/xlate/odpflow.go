package xlate

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

// ParseODPFlow parses a datapath flow key in Open vSwitch's odp syntax,
// as ofproto/trace accepts it and dpctl/dump-flows prints it:
// "in_port(1),eth(src=...,dst=...),eth_type(0x0800),ipv4(src=...,...),
// tcp(src=..,dst=..)". Masks ("/...") are accepted and ignored: the key
// is the packet's. in_port is the datapath port number. Unknown
// attributes are an error, as Open vSwitch's odp_flow_from_string.
func ParseODPFlow(s string) (packet.Key, error) {
	var k packet.Key
	attrs, err := splitAttrs(s)
	if err != nil {
		return k, err
	}
	vlan := 0
	for _, a := range attrs {
		if err := parseODPAttr(&k, a.name, a.args, &vlan); err != nil {
			return k, fmt.Errorf("%s: %w", a.name, err)
		}
	}
	return k, nil
}

type odpAttr struct{ name, args string }

// splitAttrs splits "a(x),b(y(z))" at top-level commas.
func splitAttrs(s string) ([]odpAttr, error) {
	var out []odpAttr
	s = strings.TrimSpace(s)
	for s != "" {
		open := strings.IndexByte(s, '(')
		if open <= 0 {
			return nil, fmt.Errorf("syntax error at %q", s)
		}
		depth, end := 0, -1
		for i := open; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, errors.New("unbalanced parentheses")
		}
		out = append(out, odpAttr{strings.TrimSpace(s[:open]), s[open+1 : end]})
		s = strings.TrimSpace(s[end+1:])
		s = strings.TrimPrefix(s, ",")
		s = strings.TrimSpace(s)
	}
	return out, nil
}

// fields parses "a=x,b=y" into pairs, dropping masks.
func odpFields(s string) ([][2]string, error) {
	var out [][2]string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q: expected field=value", p)
		}
		v, _, _ = strings.Cut(v, "/")
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func odpUint(s string, bits int) (uint64, error) {
	s, _, _ = strings.Cut(s, "/")
	return strconv.ParseUint(s, 0, bits)
}

func odpMAC(s string) ([6]byte, error) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return m, fmt.Errorf("bad Ethernet address %q", s)
	}
	copy(m[:], hw)
	return m, nil
}

func odpIP4(s string) ([4]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return [4]byte{}, fmt.Errorf("bad IPv4 address %q", s)
	}
	return a.As4(), nil
}

func odpIP6(s string) ([16]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return [16]byte{}, fmt.Errorf("bad IPv6 address %q", s)
	}
	return a.As16(), nil
}

func parseODPAttr(k *packet.Key, name, args string, vlan *int) error {
	scalar := func(bits int) (uint64, error) { return odpUint(strings.TrimSpace(args), bits) }
	switch name {
	case "in_port":
		v, err := scalar(32)
		k.InPort = uint32(v)
		return err
	case "recirc_id":
		v, err := scalar(32)
		k.RecircID = uint32(v)
		return err
	case "dp_hash":
		v, err := scalar(32)
		k.DPHash = uint32(v)
		return err
	case "skb_priority":
		v, err := scalar(32)
		k.SkbPriority = uint32(v)
		return err
	case "skb_mark":
		v, err := scalar(32)
		k.PktMark = uint32(v)
		return err
	case "eth_type":
		v, err := scalar(16)
		if err != nil {
			return err
		}
		if (uint16(v) == packet.EtherTypeVLAN || uint16(v) == 0x88a8) && *vlan < packet.MaxVLANs {
			k.VLANs[*vlan].TPID = uint16(v)
			return nil
		}
		k.EtherType = uint16(v)
		return nil
	case "encap":
		// The inner attributes of a VLAN-tagged frame.
		*vlan++
		attrs, err := splitAttrs(args)
		if err != nil {
			return err
		}
		for _, a := range attrs {
			if err := parseODPAttr(k, a.name, a.args, vlan); err != nil {
				return err
			}
		}
		return nil
	case "ct_state":
		// +new+trk (masked: -est too), or a number.
		v := strings.TrimSpace(args)
		v, _, _ = strings.Cut(v, "/")
		if v == "" || v[0] != '+' && v[0] != '-' {
			n, err := odpUint(v, 32)
			k.CTState = uint32(n)
			return err
		}
		k.CTState = 0
		for v != "" {
			sign := v[0]
			v = v[1:]
			end := strings.IndexAny(v, "+-")
			if end < 0 {
				end = len(v)
			}
			bit := ctStateBit(v[:end])
			if bit == 0 {
				return fmt.Errorf("bad ct_state flag %q", v[:end])
			}
			if sign == '+' {
				k.CTState |= bit
			}
			v = v[end:]
		}
		return nil
	case "ct_zone":
		v, _, _ := strings.Cut(strings.TrimSpace(args), "/")
		n, err := odpUint(v, 16)
		k.CTZone = uint16(n)
		return err
	case "ct_mark":
		v, _, _ := strings.Cut(strings.TrimSpace(args), "/")
		n, err := odpUint(v, 32)
		k.CTMark = uint32(n)
		return err
	case "ct_label":
		v, _, _ := strings.Cut(strings.TrimSpace(args), "/")
		l, err := odpU128(v)
		k.CTLabel = l
		return err
	case "ct_tuple4", "ct_tuple6":
		fs, err := odpFields(args)
		if err != nil {
			return err
		}
		for _, f := range fs {
			if err := setCTTupleField(k, name == "ct_tuple6", f[0], f[1]); err != nil {
				return err
			}
		}
		return nil
	case "packet_type", "tunnel", "tcp_flags", "ufid":
		return nil // metadata traces start without; flags are not the packet's
	}
	fs, err := odpFields(args)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if err := setODPField(k, name, f[0], f[1], *vlan); err != nil {
			return err
		}
	}
	return nil
}

func setODPField(k *packet.Key, attr, field, v string, vlan int) error {
	var err error
	u := func(bits int) uint64 {
		var n uint64
		if err == nil {
			n, err = odpUint(v, bits)
		}
		return n
	}
	switch attr + "." + field {
	case "eth.src":
		k.SrcMAC, err = odpMAC(v)
	case "eth.dst":
		k.DstMAC, err = odpMAC(v)
	case "vlan.vid":
		if vlan < packet.MaxVLANs {
			if k.VLANs[vlan].TPID == 0 {
				k.VLANs[vlan].TPID = packet.EtherTypeVLAN
			}
			k.VLANs[vlan].TCI = k.VLANs[vlan].TCI&^0x0fff | uint16(u(12))
		}
	case "vlan.pcp":
		if vlan < packet.MaxVLANs {
			if k.VLANs[vlan].TPID == 0 {
				k.VLANs[vlan].TPID = packet.EtherTypeVLAN
			}
			k.VLANs[vlan].TCI = k.VLANs[vlan].TCI&^0xe000 | uint16(u(3))<<13
		}
	case "vlan.cfi":
	case "ipv4.src", "arp.sip":
		k.SrcIPv4, err = odpIP4(v)
	case "ipv4.dst", "arp.tip":
		k.DstIPv4, err = odpIP4(v)
	case "ipv4.proto", "ipv6.proto":
		k.IPProto = uint8(u(8))
	case "ipv4.tos", "ipv6.tclass":
		k.IPTOS = uint8(u(8))
	case "ipv4.ttl", "ipv6.hlimit":
		k.IPTTL = uint8(u(8))
	case "ipv4.frag", "ipv6.frag":
		switch v {
		case "no":
			k.IPFrag = 0
		case "first":
			k.IPFrag = packet.FragAny
		case "later":
			k.IPFrag = packet.FragAny | packet.FragLater
		default:
			err = fmt.Errorf("bad frag %q", v)
		}
	case "ipv6.src":
		k.SrcIPv6, err = odpIP6(v)
	case "ipv6.dst":
		k.DstIPv6, err = odpIP6(v)
	case "ipv6.label":
		k.FlowLabel = uint32(u(20))
	case "tcp.src", "udp.src", "sctp.src":
		k.SrcPort = uint16(u(16))
	case "tcp.dst", "udp.dst", "sctp.dst":
		k.DstPort = uint16(u(16))
	case "icmp.type", "icmpv6.type":
		k.ICMPType = uint8(u(8))
	case "icmp.code", "icmpv6.code":
		k.ICMPCode = uint8(u(8))
	case "arp.op":
		k.ARPOp = uint16(u(16))
	case "arp.sha", "nd.sll":
		k.ARPSHA, err = odpMAC(v)
	case "arp.tha", "nd.tll":
		k.ARPTHA, err = odpMAC(v)
	case "nd.target":
		k.NDTarget, err = odpIP6(v)
	default:
		return fmt.Errorf("unknown field %s in %s", field, attr)
	}
	return err
}

// ctStateBit is the ct_state bit a flag name stands for, or 0.
func ctStateBit(name string) uint32 {
	for i, n := range ctStateNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// odpU128 parses a 128-bit number (ct_label) in hex or decimal into
// network byte order.
func odpU128(v string) ([16]byte, error) {
	var out [16]byte
	h, ok := strings.CutPrefix(strings.ToLower(v), "0x")
	if !ok {
		n, err := odpUint(v, 64)
		binary.BigEndian.PutUint64(out[8:], n)
		return out, err
	}
	if h == "" || len(h) > 32 {
		return out, fmt.Errorf("bad 128-bit value %q", v)
	}
	h = strings.Repeat("0", 32-len(h)) + h
	if _, err := hex.Decode(out[:], []byte(h)); err != nil {
		return out, fmt.Errorf("bad 128-bit value %q", v)
	}
	return out, nil
}

// setCTTupleField sets one field of ct_tuple4(...) / ct_tuple6(...).
func setCTTupleField(k *packet.Key, v6 bool, field, v string) error {
	v, _, _ = strings.Cut(v, "/")
	var err error
	switch field {
	case "src", "dst":
		if v6 {
			var a [16]byte
			if a, err = odpIP6(v); err == nil {
				if field == "src" {
					k.CTIPv6Src = a
				} else {
					k.CTIPv6Dst = a
				}
			}
			return err
		}
		var a [4]byte
		if a, err = odpIP4(v); err == nil {
			if field == "src" {
				k.CTNwSrc = a
			} else {
				k.CTNwDst = a
			}
		}
		return err
	case "proto":
		n, err := odpUint(v, 8)
		k.CTNwProto = uint8(n)
		return err
	case "tp_src", "tp_dst":
		n, err := odpUint(v, 16)
		if field == "tp_src" {
			k.CTTpSrc = uint16(n)
		} else {
			k.CTTpDst = uint16(n)
		}
		return err
	}
	return fmt.Errorf("unknown ct tuple field %q", field)
}
