package xlate

import (
	"fmt"
	"strings"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// Trace records a translation for ofproto/trace as Open vSwitch's
// oftrace nodes: a tree of bridges, tables, buckets and, under them, the
// actions and details, printed with Open vSwitch's indentation.
type Trace struct {
	root []*traceNode
	cur  *[]*traceNode
	// formatAction formats one action (ofpact.Format of it).
	formatAction func(Action) string
	// recircs are the conntrack recirculations the translation forked,
	// in order: ofproto/trace follows each (Open vSwitch's recirc_queue).
	recircs []traceRecirc
}

// traceRecirc is one ct(table=N) recirculation to trace after the
// translation that forked it: the flow as it was at the ct action, with
// the recirculation id and the zone; the ct action's nat clause.
type traceRecirc struct {
	id   uint32
	flow mf.Flow
	nat  *ofpact.NAT
}

type nodeKind uint8

// Node kinds, as Open vSwitch's enum oftrace_node_type.
const (
	nodeBridge nodeKind = iota
	nodeTable
	nodeBucket
	nodeThaw
	nodeAction
	nodeDetail
	nodeWarn
	nodeError
)

// terminal is Open vSwitch's oftrace_node_type_is_terminal (which counts
// buckets as terminal for indentation, although they have children).
func (k nodeKind) terminal() bool { return k >= nodeAction || k == nodeBucket }

type traceNode struct {
	kind nodeKind
	text string
	subs []*traceNode
}

// NewTrace returns an empty trace; formatAction formats one action as
// dump-flows prints it (nil: ofpact.Format).
func NewTrace(formatAction func(Action) string) *Trace {
	t := &Trace{formatAction: formatAction}
	t.cur = &t.root
	return t
}

// report appends a node to the current list.
func (t *Trace) report(kind nodeKind, text string) *traceNode {
	if t == nil {
		return nil
	}
	n := &traceNode{kind: kind, text: text}
	*t.cur = append(*t.cur, n)
	return n
}

// enter appends a non-terminal node and makes its children the current
// list; leave(the returned value) goes back.
func (t *Trace) enter(kind nodeKind, text string) *[]*traceNode {
	if t == nil {
		return nil
	}
	saved := t.cur
	n := t.report(kind, text)
	t.cur = &n.subs
	return saved
}

func (t *Trace) leave(saved *[]*traceNode) {
	if t != nil && saved != nil {
		t.cur = saved
	}
}

func (t *Trace) action(a Action) {
	if t == nil {
		return
	}
	t.report(nodeAction, t.formatOne(a))
}

func (t *Trace) formatOne(a Action) string {
	if t.formatAction != nil {
		return t.formatAction(a)
	}
	return ofpact.Format([]ofpact.Action{a})
}

func (ctx *context) detail(s string)   { ctx.trace.report(nodeDetail, s) }
func (ctx *context) warn(s string)     { ctx.trace.report(nodeWarn, s) }
func (ctx *context) errorMsg(s string) { ctx.trace.report(nodeError, s) }

// String prints the trace as Open vSwitch's oftrace_node_print_details.
func (t *Trace) String() string {
	var b strings.Builder
	printNodes(&b, t.root, 0)
	return b.String()
}

func printNodes(b *strings.Builder, nodes []*traceNode, level int) {
	for i, n := range nodes {
		if n.kind == nodeBridge {
			b.WriteByte('\n')
		}
		more := 0
		if i < len(nodes)-1 || n.kind.terminal() {
			more = 1
		}
		indent := strings.Repeat(" ", (level+more)*4)
		b.WriteString(indent)
		switch n.kind {
		case nodeDetail:
			fmt.Fprintf(b, " -> %s\n", n.text)
		case nodeWarn:
			fmt.Fprintf(b, " >> %s\n", n.text)
		case nodeError:
			fmt.Fprintf(b, " >>>> %s <<<<\n", n.text)
		case nodeBridge:
			fmt.Fprintf(b, "%s\n%s%s\n", n.text, indent, strings.Repeat("-", len(n.text)))
		default:
			fmt.Fprintf(b, "%s\n", n.text)
		}
		printNodes(b, n.subs, level+2*more)
	}
}

// formatMatch formats a rule's match as ovs-ofctl prints it (without
// the priority), as Open vSwitch's minimatch_format.
func formatMatch(m *mf.Match) string { return m.Format(mf.DefaultPriority) }

// ruleText is a table node's text: "%2d. MATCH, priority P, cookie C".
func ruleText(table uint8, r Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%2d. ", table)
	if m := r.Match(); m != nil {
		if s := formatMatch(m); s != "" {
			b.WriteString(s)
			b.WriteString(", ")
		}
	}
	fmt.Fprintf(&b, "priority %d", r.Priority())
	if c := r.Cookie(); c != 0 {
		fmt.Fprintf(&b, ", cookie %#x", c)
	}
	return b.String()
}
