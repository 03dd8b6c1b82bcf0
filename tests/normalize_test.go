package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Normalisations applied before comparing a tool's output from the two
// servers, each because the difference is legitimate:
//
//  1. The server's private directory (socket paths in messages) becomes
//     "$DIR": each server runs in its own temporary directory.
//  2. Log timestamps ("2026-11-30T13:51:08Z", with or without
//     milliseconds) become "<time>": the runs happen at different moments.
//  3. UUIDs become placeholders "<u1>", "<u2>"... Row UUIDs are random in
//     both servers. A normaliser is kept for one side for a whole test, so a
//     UUID maps to the same placeholder every time it appears; placeholders
//     are handed out first to UUIDs in defining positions (a row's own
//     "_uuid", the row column of a table or monitor output, the UUID
//     ovs-vsctl create prints), in order, then to the rest in order of
//     appearance. Two servers that behave alike thus give equal text.
//  4. A list made only of UUIDs ("[<u3>, <u1>]" or JSON ["set",[["uuid",
//     "<u3>"],...]]) is sorted by placeholder: Open vSwitch prints sets in
//     UUID order, which is random.
//  5. Where a tool prints rows in hash-table order (ovs-vsctl list and find
//     of several rows, ports and interfaces in ovs-vsctl show, rows within
//     one monitor update), the rows are sorted by their text with UUIDs
//     masked before step 3 runs; steps that need this say so (unordered).
//     Likewise the "rows" of each select result in a transaction's reply
//     (RFC 7047 gives them no order; ovsdb-server uses hash order).
//  6. The two rows named in a "Transaction causes multiple rows ... to have
//     identical values" error are put in a fixed order (by what the message
//     says of each) before step 3: which one ovsdb-server calls "First"
//     depends on hash order, so it differs between two Debian runs too.
//
// The last-txn-id of monitor_cond_since replies and update3 notifications
// is not rewritten: both servers send all zeros for a standalone database
// (Open vSwitch keeps transaction ids only for clustered ones).
//
// Nothing else is rewritten: exit codes, error texts and the remaining
// output must match exactly.

var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	uuidPat     = `([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`
	// definingREs find UUIDs that name the row they head; group 1 is the UUID.
	definingREs = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^_uuid\s*: ` + uuidPat),                       // ovs-vsctl list/find
		regexp.MustCompile(`(?m)^` + uuidPat),                                 // table rows, create output, show header
		regexp.MustCompile(`"_uuid":\["uuid","` + uuidPat + `"\]`),            // JSON rows
		regexp.MustCompile(`\{"uuid":\["uuid","` + uuidPat + `"\]`),           // insert results
		regexp.MustCompile(`(?:"data":\[|\],)\[\["uuid","` + uuidPat + `"\]`), // --format=json rows led by _uuid
		regexp.MustCompile(`(?:"data":\[|\],)\["` + uuidPat + `"`),            // monitor rows led by the row UUID
	}
	textUUIDListRE = regexp.MustCompile(`\[<u\d+>(?:, <u\d+>)+\]`)
	jsonUUIDSetRE  = regexp.MustCompile(`\["set",\[\["uuid","<u\d+>"\](?:,\["uuid","<u\d+>"\])+\]\]`)
	placeholderRE  = regexp.MustCompile(`<u(\d+)>`)
	indexClashRE   = regexp.MustCompile(`First row, with UUID ` + uuidPat + `, ([^.]*)\.  Second row, with UUID ` + uuidPat + `, ([^.]*)\.`)
)

// normalizer rewrites one side's output; keep one per server per test.
type normalizer struct {
	dir   string
	uuids map[string]string
}

func newNormalizer(s *server) *normalizer {
	return &normalizer{dir: s.dir, uuids: map[string]string{}}
}

func (n *normalizer) label(uuid string) {
	if _, ok := n.uuids[uuid]; !ok {
		n.uuids[uuid] = fmt.Sprintf("<u%d>", len(n.uuids)+1)
	}
}

// text applies normalisations 1 to 4, 6 and 7.
func (n *normalizer) text(s string) string {
	s = strings.ReplaceAll(s, n.dir, "$DIR")
	s = timestampRE.ReplaceAllString(s, "<time>")
	s = indexClashRE.ReplaceAllStringFunc(s, func(m string) string {
		g := indexClashRE.FindStringSubmatch(m)
		if g[2] > g[4] {
			g[1], g[2], g[3], g[4] = g[3], g[4], g[1], g[2]
		}
		return "First row, with UUID " + g[1] + ", " + g[2] + ".  Second row, with UUID " + g[3] + ", " + g[4] + "."
	})
	type hit struct {
		pos  int
		uuid string
	}
	var defs []hit
	for _, re := range definingREs {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			defs = append(defs, hit{m[2], s[m[2]:m[3]]})
		}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].pos < defs[j].pos })
	for _, d := range defs {
		n.label(d.uuid)
	}
	for _, u := range uuidRE.FindAllString(s, -1) {
		n.label(u)
	}
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string { return n.uuids[u] })
	s = textUUIDListRE.ReplaceAllStringFunc(s, func(list string) string {
		return "[" + strings.Join(sortPlaceholders(placeholderRE.FindAllString(list, -1)), ", ") + "]"
	})
	s = jsonUUIDSetRE.ReplaceAllStringFunc(s, func(set string) string {
		items := sortPlaceholders(placeholderRE.FindAllString(set, -1))
		for i, p := range items {
			items[i] = `["uuid","` + p + `"]`
		}
		return `["set",[` + strings.Join(items, ",") + `]]`
	})
	return s
}

func sortPlaceholders(ps []string) []string {
	num := func(p string) int {
		v, _ := strconv.Atoi(placeholderRE.FindStringSubmatch(p)[1])
		return v
	}
	sort.Slice(ps, func(i, j int) bool { return num(ps[i]) < num(ps[j]) })
	return ps
}

func (n *normalizer) result(r result) result {
	return result{stdout: n.text(r.stdout), stderr: n.text(r.stderr), exit: r.exit}
}

// maskUUIDs is the sort key of normalisation 5.
func maskUUIDs(s string) string { return uuidRE.ReplaceAllString(s, "<uuid>") }

func sortByMasked(items []string) {
	sort.SliceStable(items, func(i, j int) bool { return maskUUIDs(items[i]) < maskUUIDs(items[j]) })
}

// sortRecords puts rows printed in hash order into a stable order
// (normalisation 5). format is how ovs-vsctl printed them: "list" (records
// separated by blank lines), "bare" (one value per line), "table" (a
// heading and a rule, then one row per line) or "json".
func sortRecords(out, format string) string {
	if strings.TrimSpace(out) == "" {
		return out
	}
	switch format {
	case "tree":
		return sortTree(out)
	case "json":
		return sortJSONTable(out)
	case "table":
		return sortTable(out)
	default:
		sep := "\n\n"
		if format == "bare" {
			sep = "\n"
		}
		recs := strings.Split(strings.TrimRight(out, "\n"), sep)
		sortByMasked(recs)
		return strings.Join(recs, sep) + "\n"
	}
}

// sortTable sorts the rows of one table as ovsdb-client and ovs-vsctl print
// it: optional caption, heading, a rule of dashes, then rows; a line that
// starts with a space continues the row above (monitor's "new" line under
// its "old" one) and moves with it.
func sortTable(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	rule := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "--") {
			rule = i
			break
		}
	}
	if rule < 0 {
		return out
	}
	var rows []string
	for _, l := range lines[rule+1:] {
		if strings.HasPrefix(l, " ") && len(rows) > 0 {
			rows[len(rows)-1] += "\n" + l
		} else {
			rows = append(rows, l)
		}
	}
	sortByMasked(rows)
	return strings.Join(append(lines[:rule+1], rows...), "\n") + "\n"
}

// sortTree sorts the siblings at every level of an indented tree such as
// ovs-vsctl show's, each with its subtree.
func sortTree(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var render func(lines []string) []string
	render = func(lines []string) []string {
		// lines[0] is the parent; its children are indented deeper.
		if len(lines) <= 1 {
			return lines
		}
		depth := indentOf(lines[1])
		var blocks [][]string
		for _, l := range lines[1:] {
			if indentOf(l) <= depth || len(blocks) == 0 {
				blocks = append(blocks, []string{l})
			} else {
				blocks[len(blocks)-1] = append(blocks[len(blocks)-1], l)
			}
		}
		texts := make([]string, len(blocks))
		for i, b := range blocks {
			texts[i] = strings.Join(render(b), "\n")
		}
		sortByMasked(texts)
		return append([]string{lines[0]}, texts...)
	}
	return strings.Join(render(append([]string{""}, lines...))[1:], "\n") + "\n"
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

// sortResultRows sorts the "rows" of every select result in a transact
// reply printed as JSON (normalisation 5); other text is returned as is.
func sortResultRows(out string) string {
	var results []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		return out
	}
	for _, r := range results {
		var rows []json.RawMessage
		if r == nil || json.Unmarshal(r["rows"], &rows) != nil {
			continue
		}
		texts := make([]string, len(rows))
		for i, row := range rows {
			var c bytes.Buffer
			json.Compact(&c, row)
			texts[i] = c.String()
		}
		sortByMasked(texts)
		r["rows"] = json.RawMessage("[" + strings.Join(texts, ",") + "]")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		return out
	}
	return b.String()
}

// sortJSONTable sorts the "data" rows of each line of --format=json output.
func sortJSONTable(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var table struct {
			Data     []json.RawMessage `json:"data"`
			Headings json.RawMessage   `json:"headings"`
		}
		if err := json.Unmarshal([]byte(line), &table); err != nil || table.Data == nil {
			b.WriteString(line + "\n")
			continue
		}
		rows := make([]string, len(table.Data))
		for i, r := range table.Data {
			var c bytes.Buffer
			json.Compact(&c, r)
			rows[i] = c.String()
		}
		sortByMasked(rows)
		fmt.Fprintf(&b, `{"data":[%s],"headings":%s}`+"\n", strings.Join(rows, ","), table.Headings)
	}
	return b.String()
}

// compareResults reports a difference between the reference's and our
// normalised results. It returns whether they matched.
func compareResults(t testing.TB, what string, ref, ours result) bool {
	t.Helper()
	if ref == ours {
		return true
	}
	t.Errorf("%s: ours differs from Debian's\n%s", what, describeDiff(ref, ours))
	return false
}

func describeDiff(ref, ours result) string {
	var b strings.Builder
	if ref.exit != ours.exit {
		fmt.Fprintf(&b, "exit status: debian %d, ours %d\n", ref.exit, ours.exit)
	}
	for _, f := range []struct{ name, ref, ours string }{{"stdout", ref.stdout, ours.stdout}, {"stderr", ref.stderr, ours.stderr}} {
		if f.ref != f.ours {
			fmt.Fprintf(&b, "%s: %s\n--- debian %s ---\n%s\n--- ours %s ---\n%s\n", f.name, firstDifference(f.ref, f.ours), f.name, f.ref, f.name, f.ours)
		}
	}
	return b.String()
}

func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("first difference at line %d: debian %q, ours %q", i+1, x, y)
		}
	}
	return "texts differ"
}
