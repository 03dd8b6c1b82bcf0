package dpif

import (
	"fmt"
	"strings"

	"gvs/dpif/conntrack"
)

// formatCT writes a ct action as Open vSwitch's
// format_odp_conntrack_action: "ct" alone without arguments, else
// ct(commit|force_commit,zone=Z,mark=V/M,label=V[/M],helper=H,timeout=T,nat(...)).
func formatCT(b *strings.Builder, r *conntrack.Request) {
	b.WriteString("ct")
	if r == nil {
		return
	}
	start := b.Len()
	b.WriteByte('(')
	switch {
	case r.Force:
		b.WriteString("force_commit,")
	case r.Commit:
		b.WriteString("commit,")
	}
	if r.Zone != 0 {
		fmt.Fprintf(b, "zone=%d,", r.Zone)
	}
	if r.SetMark {
		fmt.Fprintf(b, "mark=%s/%s,", hexC(uint64(r.Mark)), hexC(uint64(r.MarkMask)))
	}
	if r.SetLabel {
		// format_u128 in verbose mode: the value always, the mask
		// unless it is all ones.
		b.WriteString("label=")
		putHex(b, r.Label[:])
		if r.LabelMask != allOnes16 {
			b.WriteByte('/')
			putHex(b, r.LabelMask[:])
		}
		b.WriteByte(',')
	}
	switch r.Helper {
	case conntrack.HelperFTP:
		b.WriteString("helper=ftp,")
	case conntrack.HelperTFTP:
		b.WriteString("helper=tftp,")
	}
	if r.TimeoutPolicy != 0 {
		// The netdev datapath names a timeout policy by its id
		// (dpif_netdev_ct_get_timeout_policy_name).
		fmt.Fprintf(b, "timeout=%d,", r.TimeoutPolicy)
	}
	if r.NAT != nil {
		b.WriteString(natString(r.NAT))
	}
	if b.Len() == start+1 {
		chomp(b) // nothing inside: plain "ct"
		return
	}
	chompComma(b)
	b.WriteByte(')')
}

var allOnes16 = [16]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}
