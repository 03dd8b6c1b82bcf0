package conntrack

import (
	"strconv"
	"strings"
)

// String formats the nat clause as `ovs-appctl dpctl/dump-flows` prints
// it inside a ct action (Open vSwitch's format_odp_ct_nat): `nat` for a
// bare one, else e.g. `nat(src=198.18.0.10-198.18.0.20:1024-65535,random)`
// or `nat(dst=[2001:2::1]:80,persistent)` (IPv6 in brackets when a port
// follows). A maximum equal to its minimum is not printed. Clauses Open
// vSwitch's datapath would refuse print its error text.
func (n *NAT) String() string {
	var b strings.Builder
	n.format(&b)
	return b.String()
}

func (n *NAT) format(b *strings.Builder) {
	hasAddr := n.AddrMin.IsValid()
	hasMax := n.AddrMax.IsValid() && n.AddrMax != n.AddrMin
	switch {
	case n.Kind != NATSrc && n.Kind != NATDst:
		if hasAddr || n.AddrMax.IsValid() || n.PortMin != 0 || n.PortMax != 0 || n.Persistent || n.Hash || n.Random {
			b.WriteString(`nat(error: options allowed only with "src" or "dst")`)
			return
		}
		b.WriteString("nat")
		return
	case !hasAddr && n.PortMin != 0:
		b.WriteString("nat(error: proto but no IP.)")
		return
	case !hasAddr && n.AddrMax.IsValid() || n.PortMin == 0 && n.PortMax != 0:
		b.WriteString("nat(error: range max without min.)")
		return
	case hasMax && n.AddrMax.Is4() != n.AddrMin.Is4():
		b.WriteString("nat(error: IP address sizes do not match)")
		return
	case hasMax && n.AddrMax.Less(n.AddrMin) || n.PortMax != 0 && n.PortMin > n.PortMax:
		b.WriteString("nat(range error)")
		return
	}
	b.WriteString("nat(")
	if n.Kind == NATSrc {
		b.WriteString("src")
	} else {
		b.WriteString("dst")
	}
	if hasAddr {
		b.WriteByte('=')
		bracket := n.AddrMin.Is6() && n.PortMin != 0
		natFormatAddr(b, n.AddrMin.String(), bracket)
		if hasMax {
			b.WriteByte('-')
			natFormatAddr(b, n.AddrMax.String(), bracket)
		}
		if n.PortMin != 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(int(n.PortMin)))
			if n.PortMax != 0 && n.PortMax != n.PortMin {
				b.WriteByte('-')
				b.WriteString(strconv.Itoa(int(n.PortMax)))
			}
		}
	}
	if n.Persistent {
		b.WriteString(",persistent")
	}
	if n.Hash {
		b.WriteString(",hash")
	}
	if n.Random {
		b.WriteString(",random")
	}
	b.WriteByte(')')
}

func natFormatAddr(b *strings.Builder, s string, bracket bool) {
	if bracket {
		b.WriteByte('[')
	}
	b.WriteString(s)
	if bracket {
		b.WriteByte(']')
	}
}
