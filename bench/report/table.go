package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// measuredSetups are the columns worth showing: skipped setups are listed
// below the table instead.
func (s *Section) measuredSetups() []SetupInfo {
	var out []SetupInfo
	for _, si := range s.Setups {
		if si.Status == StatusMeasured {
			out = append(out, si)
		}
	}
	return out
}

// grid returns the rows of the values table: a header and one row per
// figure that has any value.
func (s *Section) grid(spread bool) [][]string {
	cols := s.measuredSetups()
	header := []string{s.Title}
	for _, si := range cols {
		header = append(header, si.Name)
	}
	rows := [][]string{header}
	for _, f := range s.Figures {
		row := []string{f.Heading()}
		any := false
		for _, si := range cols {
			c := s.Cell(f, si.Name, spread)
			any = any || (c != "-" && c != "error")
			row = append(row, c)
		}
		if any {
			rows = append(rows, row)
		}
	}
	return rows
}

// WriteText writes the section as an aligned terminal table (medians with
// their half-range in percent), followed by the skipped setups.
func (s *Section) WriteText(w io.Writer) {
	rows := s.grid(false)
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for n, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := widths[i] - utf8.RuneCountInString(c)
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", pad))
			} else {
				b.WriteString("  " + strings.Repeat(" ", pad) + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if n == 0 {
			fmt.Fprintln(w, strings.Repeat("-", len([]rune(b.String()))))
		}
	}
	for _, si := range s.Setups {
		if si.Status != StatusMeasured {
			fmt.Fprintf(w, "%s: %s: %s\n", si.Name, si.Status, si.Reason)
		}
	}
}

// markdownTable renders rows as a GitHub table, numbers right-aligned.
func markdownTable(w io.Writer, rows [][]string) { markdownTableAligned(w, rows, "---:") }

func markdownTableAligned(w io.Writer, rows [][]string, align string) {
	for i, r := range rows {
		esc := make([]string, len(r))
		for j, c := range r {
			esc[j] = strings.ReplaceAll(c, "|", "\\|")
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
		if i == 0 {
			seps := make([]string, len(r))
			seps[0] = "---"
			for j := 1; j < len(r); j++ {
				seps[j] = align
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(seps, " | "))
		}
	}
}

// ratioRows returns, for each non-reference setup, a table of its ratios
// to the direct pair, the default Open vSwitch and the best Open vSwitch.
func (s *Section) ratioRows(direct, ovsDefault, ovsKind string) [][]string {
	cols := s.measuredSetups()
	header := []string{"vs direct / " + ovsDefault + " / best OVS"}
	for _, si := range cols {
		header = append(header, si.Name)
	}
	rows := [][]string{header}
	for _, f := range s.Figures {
		row := []string{f.Heading()}
		any := false
		for _, si := range cols {
			if _, ok := s.Value(f.ID, si.Name); !ok {
				row = append(row, "-")
				continue
			}
			parts := []string{s.Compare(f, si.Name, direct).String(f), s.Compare(f, si.Name, ovsDefault).String(f)}
			best := "-"
			if b, ok := s.BestOf(f, ovsKind); ok {
				best = s.Compare(f, si.Name, b).String(f)
			}
			parts = append(parts, best)
			row = append(row, strings.Join(parts, " / "))
			any = true
		}
		if any {
			rows = append(rows, row)
		}
	}
	return rows
}

// compareRows is a ratio table against the named reference setups: each
// cell "vs ref1 / vs ref2 ..." for every measured setup.
func (s *Section) compareRows(refs ...string) [][]string {
	cols := s.measuredSetups()
	header := []string{"vs " + strings.Join(refs, " / ")}
	for _, si := range cols {
		header = append(header, si.Name)
	}
	rows := [][]string{header}
	for _, f := range s.Figures {
		row := []string{f.Heading()}
		any := false
		for _, si := range cols {
			if _, ok := s.Value(f.ID, si.Name); !ok {
				row = append(row, "-")
				continue
			}
			var parts []string
			for _, ref := range refs {
				parts = append(parts, s.Compare(f, si.Name, ref).String(f))
			}
			row = append(row, strings.Join(parts, " / "))
			any = true
		}
		if any {
			rows = append(rows, row)
		}
	}
	return rows
}
