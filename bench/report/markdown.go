package report

import (
	"fmt"
	"io"
	"path"
	"strings"
	"time"
)

// References names the setups ratios are computed against.
type References struct {
	Direct     string // the direct veth pair
	OVSDefault string // Open vSwitch as installed
	OVSKind    string // the kind whose best setup per figure is "best OVS"
}

// WriteMarkdown writes the page meant for the README: command, machine,
// values with spread, ratios, targets, setups and plots.
func WriteMarkdown(w io.Writer, r *Results, refs References, plotDir string) error {
	fmt.Fprintf(w, "# gvs benchmark results\n\n")
	fmt.Fprintf(w, "Command: `%s` (%s UTC, %s).\n\n", r.Command, r.Started.UTC().Format("2006-01-02 15:04"), r.Finished.Sub(r.Started).Round(time.Second))
	m := r.Machine
	fmt.Fprintf(w, "Machine: %s, %d CPUs, %.1f GB, Linux %s.", m.CPU, m.CPUs, m.MemoryGB, m.Kernel)
	var versions []string
	for _, k := range sortedKeys(m.Versions) {
		versions = append(versions, k+" "+m.Versions[k])
	}
	if len(versions) > 0 {
		fmt.Fprintf(w, " %s.", strings.Join(versions, ", "))
	}
	fmt.Fprintf(w, "\n\nEach cell is the median of %d run(s) with the range (min-max); setups interleaved run by run. "+
		"A star marks a run during which other processes on the machine used CPU (repeated once, then kept and flagged).\n\n", r.Runs)
	if r.Quick {
		fmt.Fprintf(w, "**QUICK run: one run, shorter tests, for development only.**\n\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if sec := r.Datapath; sec != nil {
		fmt.Fprintf(w, "## %s\n\n", sec.Title)
		markdownTable(w, sec.grid(true))
		fmt.Fprintf(w, "\n### Ratios\n\nEach cell: vs %s / vs %s / vs the best Open vSwitch variant for that figure; loss as a difference in percentage points.\n\n", refs.Direct, refs.OVSDefault)
		markdownTable(w, sec.ratioRows(refs.Direct, refs.OVSDefault, refs.OVSKind))
		fmt.Fprintln(w)
	}
	if len(r.Targets) > 0 {
		fmt.Fprintf(w, "## Targets of the datapath issue\n\n")
		rows := [][]string{{"target", "status", "measured"}}
		for _, t := range r.Targets {
			rows = append(rows, []string{t.Text, t.Status, t.Measured})
		}
		markdownTableAligned(w, rows, "---")
		fmt.Fprintln(w)
	}
	if sec := r.OVSDB; sec != nil && len(sec.Series) > 0 {
		fmt.Fprintf(w, "## %s\n\n", sec.Title)
		markdownTable(w, sec.grid(true))
		fmt.Fprintln(w)
	}
	if sec := r.Scale; sec != nil {
		fmt.Fprintf(w, "## %s\n\n", sec.Title)
		markdownTable(w, sec.grid(true))
		fmt.Fprintln(w)
		if len(r.ScaleTargets) > 0 {
			fmt.Fprintf(w, "### Targets of the scale issue\n\n")
			rows := [][]string{{"target", "status", "measured"}}
			for _, t := range r.ScaleTargets {
				rows = append(rows, []string{t.Text, t.Status, t.Measured})
			}
			markdownTableAligned(w, rows, "---")
			fmt.Fprintln(w)
		}
		for _, c := range r.Curves {
			fmt.Fprintf(w, "![%s](%s)\n", c.Title, path.Join(plotDir, c.ID+".svg"))
		}
		if len(r.Curves) > 0 {
			fmt.Fprintln(w)
		}
	}
	for _, sec := range []*Section{r.OpenFlow, r.FlowTables} {
		if sec == nil {
			continue
		}
		fmt.Fprintf(w, "## %s\n\n", sec.Title)
		markdownTable(w, sec.grid(true))
		fmt.Fprintln(w)
		if refs := OpenFlowRatioRefs(sec, sec == r.OpenFlow); len(refs) > 0 {
			fmt.Fprintf(w, "Ratios: each cell vs %s; loss as a difference in percentage points.\n\n", strings.Join(refs, " / vs "))
			markdownTable(w, sec.compareRows(refs...))
			fmt.Fprintln(w)
		}
	}
	if len(r.OpenFlowTargets) > 0 {
		fmt.Fprintf(w, "### Targets of the OpenFlow issue\n\n")
		rows := [][]string{{"target", "status", "measured"}}
		for _, t := range r.OpenFlowTargets {
			rows = append(rows, []string{t.Text, t.Status, t.Measured})
		}
		markdownTableAligned(w, rows, "---")
		fmt.Fprintln(w)
	}
	writeConntrackMarkdown(w, r)
	fmt.Fprintf(w, "## Setups\n\n")
	for _, sec := range r.Sections() {
		where := ""
		if sec == r.Scale || sec == r.OpenFlow || sec == r.FlowTables {
			// The same names as the datapath's setups, started differently.
			where = " (" + strings.ToLower(sec.Title) + ")"
		}
		for _, si := range sec.Setups {
			status := ""
			if si.Status != StatusMeasured {
				status = fmt.Sprintf(" **%s: %s**", si.Status, si.Reason)
			}
			fmt.Fprintf(w, "- `%s`%s: %s.%s\n", si.Name, where, si.Description, status)
		}
	}
	fmt.Fprintf(w, "\n## Plots\n\n")
	for _, sec := range r.Sections() {
		for _, f := range sec.Figures {
			if sec.hasAny(f.ID) {
				fmt.Fprintf(w, "![%s](%s)\n", f.Heading(), path.Join(plotDir, f.ID+".svg"))
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
