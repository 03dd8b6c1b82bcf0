package dpif

import (
	"strconv"
	"strings"

	"gvs/dpif/conntrack"
)

// natString formats a ct action's nat clause as Open vSwitch's
// format_odp_ct_nat.
//
// STAND-IN: helper ctnat writes (*conntrack.NAT).String (nat_format.go);
// once it is on main this file goes and formatCT calls n.String().
func natString(n *conntrack.NAT) string {
	var b strings.Builder
	b.WriteString("nat")
	if n.Kind == conntrack.NATApply {
		return b.String()
	}
	b.WriteByte('(')
	if n.Kind == conntrack.NATSrc {
		b.WriteString("src")
	} else {
		b.WriteString("dst")
	}
	if n.AddrMin.IsValid() {
		b.WriteByte('=')
		bracket := n.AddrMin.Is6() && n.PortMin != 0
		addr := func(a interface{ String() string }) {
			if bracket {
				b.WriteByte('[')
			}
			b.WriteString(a.String())
			if bracket {
				b.WriteByte(']')
			}
		}
		addr(n.AddrMin)
		if n.AddrMax.IsValid() && n.AddrMax != n.AddrMin {
			b.WriteByte('-')
			addr(n.AddrMax)
		}
		if n.PortMin != 0 {
			b.WriteString(":" + strconv.Itoa(int(n.PortMin)))
			if n.PortMax != 0 && n.PortMax != n.PortMin {
				b.WriteString("-" + strconv.Itoa(int(n.PortMax)))
			}
		}
	}
	b.WriteByte(',')
	if n.Persistent {
		b.WriteString("persistent,")
	}
	if n.Hash {
		b.WriteString("hash,")
	}
	if n.Random {
		b.WriteString("random,")
	}
	s := strings.TrimSuffix(b.String(), ",")
	return s + ")"
}
