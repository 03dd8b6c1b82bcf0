package dpif

// STAND-IN (helper ctxlate) for helper ctdp's ct datapath actions, so
// translation can emit and print them before ctdp's work is on main.
// Delete this file (and the lines marked STAND-IN in actions.go and
// format.go) in favour of ct-dp's versions when they land; the names
// CTAction/CTClearAction are ctxlate's only uses.

import (
	"fmt"
	"net/netip"
	"strings"

	"gvs/dpif/conntrack"
)

// CTAction returns a ct action with req (shared read-only by every PMD:
// never modify it after).
func CTAction(req *conntrack.Request) Action { return Action{Kind: ActCT, CT: req} }

// CTClearAction returns a ct_clear action.
func CTClearAction() Action { return Action{Kind: ActCTClear} }

func ctRequestEqual(a, b *conntrack.Request) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.NAT, y.NAT = nil, nil
	if x != y || (a.NAT == nil) != (b.NAT == nil) {
		return false
	}
	return a.NAT == nil || *a.NAT == *b.NAT
}

// formatCTStandin prints ct and ct_clear as lib/odp-util.c's
// format_odp_conntrack_action does.
func formatCTStandin(b *strings.Builder, a *Action) {
	if a.Kind == ActCTClear {
		b.WriteString("ct_clear")
		return
	}
	r := a.CT
	var parts []string
	if r.Commit && !r.Force {
		parts = append(parts, "commit")
	}
	if r.Force {
		parts = append(parts, "force_commit")
	}
	if r.Zone != 0 {
		parts = append(parts, fmt.Sprintf("zone=%d", r.Zone))
	}
	if r.SetMark {
		parts = append(parts, fmt.Sprintf("mark=%#x/%#x", r.Mark, r.MarkMask))
	}
	if r.SetLabel {
		l := "label=" + hex128(r.Label)
		if r.LabelMask != [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff} {
			l += "/" + hex128(r.LabelMask)
		}
		parts = append(parts, l)
	}
	switch r.Helper {
	case conntrack.HelperFTP:
		parts = append(parts, "helper=ftp")
	case conntrack.HelperTFTP:
		parts = append(parts, "helper=tftp")
	}
	if n := r.NAT; n != nil {
		parts = append(parts, formatNATStandin(n))
	}
	b.WriteString("ct")
	if len(parts) > 0 {
		b.WriteString("(" + strings.Join(parts, ",") + ")")
	}
}

func hex128(v [16]byte) string {
	i := 0
	for i < 15 && v[i] == 0 {
		i++
	}
	s := fmt.Sprintf("%#x", v[i])
	for _, c := range v[i+1:] {
		s += fmt.Sprintf("%02x", c)
	}
	return s
}

func formatNATStandin(n *conntrack.NAT) string {
	if n.Kind == conntrack.NATApply {
		return "nat"
	}
	var b strings.Builder
	b.WriteString("nat(")
	if n.Kind == conntrack.NATSrc {
		b.WriteString("src")
	} else {
		b.WriteString("dst")
	}
	if n.AddrMin.IsValid() {
		b.WriteByte('=')
		addr := func(a netip.Addr) string {
			if a.Is6() && n.PortMin != 0 {
				return "[" + a.String() + "]"
			}
			return a.String()
		}
		b.WriteString(addr(n.AddrMin))
		if n.AddrMax.IsValid() && n.AddrMax != n.AddrMin {
			b.WriteString("-" + addr(n.AddrMax))
		}
		if n.PortMin != 0 {
			fmt.Fprintf(&b, ":%d", n.PortMin)
			if n.PortMax != 0 && n.PortMax != n.PortMin {
				fmt.Fprintf(&b, "-%d", n.PortMax)
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
	return b.String()
}
