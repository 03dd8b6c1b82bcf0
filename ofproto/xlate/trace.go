package xlate

// Trace records a translation for ofproto/trace: the lookups and the
// actions each rule ran, indented by resubmit depth.
type Trace struct {
	lines []traceLine
}

type traceLine struct {
	depth int
	text  string
}

func (t *Trace) add(depth int, text string) {
	if t != nil {
		t.lines = append(t.lines, traceLine{depth, text})
	}
}
