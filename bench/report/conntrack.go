package report

import (
	"fmt"
	"io"
	"strings"
)

// ConntrackTargets are the conntrack issue's benchmark targets (figures of
// the Conntrack section; setups of bench/setups.ConntrackSetups).
func ConntrackTargets() []Target {
	return []Target{
		{Text: "TCP through gvs with the ct firewall >= 0.9x gvs with the same forwarding without ct", Figure: "ct-tcp-1", Setup: "gvs-system-ct", Ref: "gvs-system-noct", Factor: 0.9},
		{Text: "TCP through gvs with the ct firewall >= 1.5x the best-tuned Open vSwitch netdev with the same flows", Figure: "ct-tcp-1", Setup: "gvs-system-ct", Ref: "ovs-netdev-tso-bigbuf-ct", Factor: 1.5},
		{Text: "TCP connections per second through the ct firewall >= 2x Open vSwitch's", Figure: "ct-conns", Setup: "gvs-system-ct", Ref: "ovs-netdev-tso-bigbuf-ct", Factor: 2},
	}
}

// writeConntrackMarkdown writes the Conntrack section, its ratios to the
// Open vSwitch firewall and its targets.
func writeConntrackMarkdown(w io.Writer, r *Results) {
	sec := r.Conntrack
	if sec == nil {
		return
	}
	fmt.Fprintf(w, "## %s\n\n", sec.Title)
	markdownTable(w, sec.grid(true))
	fmt.Fprintln(w)
	var refs []string
	for _, name := range []string{"gvs-system-noct", "ovs-netdev-tso-bigbuf-ct"} {
		if si, ok := sec.Setup(name); ok && si.Status == StatusMeasured {
			refs = append(refs, name)
		}
	}
	if len(refs) > 0 {
		fmt.Fprintf(w, "Ratios: each cell vs %s.\n\n", strings.Join(refs, " / vs "))
		markdownTable(w, sec.compareRows(refs...))
		fmt.Fprintln(w)
	}
	if len(r.ConntrackTargets) > 0 {
		fmt.Fprintf(w, "### Targets of the conntrack issue\n\n")
		rows := [][]string{{"target", "status", "measured"}}
		for _, t := range r.ConntrackTargets {
			rows = append(rows, []string{t.Text, t.Status, t.Measured})
		}
		markdownTableAligned(w, rows, "---")
		fmt.Fprintln(w)
	}
}
