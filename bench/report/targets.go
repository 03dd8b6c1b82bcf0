package report

import (
	"fmt"
	"math"
)

// Target is one acceptance target of the datapath issue: setup's figure
// compared with a reference setup's (or with an absolute value when Ref is
// empty).
type Target struct {
	Text   string
	Figure string
	Setup  string
	Ref    string  // reference setup; "" for an absolute bound
	Factor float64 // setup >= Factor * ref (or <= when AtMost)
	Bound  float64 // absolute bound when Ref == ""
	AtMost bool
	// Context is a figure of the same setup shown beside the measured
	// value to explain it ("" for none).
	Context string
	// RefFigure compares with another figure instead of the same one (of
	// Ref, or of Setup itself when Ref is empty): "at 1,000 ports within
	// 1.5x of the 10-port figure".
	RefFigure string
	// Plus is a figure of Setup added to the bound (after Factor), e.g.
	// the ring memory gvs has in use; when Setup has no value for it the
	// bound goes without and the result says "n/a".
	Plus string
	// RefText names the reference in the result ("at 10 ports"); empty:
	// the reference setup's name (and figure, with RefFigure).
	RefText string
}

// Target states.
const (
	TargetMet         = "met"
	TargetNotMet      = "not met"
	TargetNotMeasured = "not measured"
)

// TargetResult is a target's outcome.
type TargetResult struct {
	Text     string `json:"target"`
	Status   string `json:"status"`
	Measured string `json:"measured"`
}

// DatapathTargets are the targets of the datapath issue that `make bench`
// measures.
func DatapathTargets() []Target {
	return []Target{
		{Text: "TCP through gvs system ports >= Open vSwitch netdev with userspace-tso-enable=true", Figure: "tcp-1", Setup: "gvs-system", Ref: "ovs-netdev-tso", Factor: 1},
		{Text: "TCP through gvs system ports >= 0.8x a direct veth pair", Figure: "tcp-1", Setup: "gvs-system", Ref: "direct", Factor: 0.8},
		{Text: "TCP through gvs afxdp ports >= 1.2x Open vSwitch type=afxdp", Figure: "tcp-1", Setup: "gvs-afxdp", Ref: "ovs-afxdp", Factor: 1.2},
		{Text: "UDP 8 KB at 1 Gbit/s through gvs with userspace-sock-buf-size: 0.00% loss in the switch (the receiving socket's own loss excluded)", Figure: "udp-8k-1g-loss", Setup: "gvs-system-sockbuf", Bound: 0.005, AtMost: true, Context: "udp-8k-1g-rcvloss"},
		{Text: "Ping round trip through an idle gvs <= Open vSwitch's", Figure: "ping", Setup: "gvs-system", Ref: "ovs-netdev", Factor: 1, AtMost: true},
		{Text: "20,000 new flows per second (from several senders) with no loss in the switch", Figure: "flows-20k-loss", Setup: "gvs-system", Bound: 0, AtMost: true},
	}
}

// OpenFlowTargets are the benchmark targets of the OpenFlow issue on the
// OVN pipeline's traffic (figures of the OpenFlow section).
func OpenFlowTargets() []Target {
	return []Target{
		{Text: "TCP through gvs with the OVN two-port pipeline >= 0.95x gvs with NORMAL", Figure: "of-tcp-1", Setup: "gvs-system-ovn", Ref: "gvs-system", Factor: 0.95},
		{Text: "TCP (4 streams) through gvs with the OVN pipeline >= 0.95x gvs with NORMAL", Figure: "of-tcp-4", Setup: "gvs-system-ovn", Ref: "gvs-system", Factor: 0.95},
		{Text: "TCP through gvs with the OVN pipeline >= 1.0x the best-tuned Open vSwitch netdev with the same flows", Figure: "of-tcp-1", Setup: "gvs-system-ovn", Ref: "ovs-netdev-tso-bigbuf-ovn", Factor: 1},
		{Text: "New flows per second through the OVN pipeline with no loss >= 2x Open vSwitch's", Figure: "of-flows-max", Setup: "gvs-system-ovn", Ref: "ovs-netdev-tso-bigbuf-ovn", Factor: 2},
	}
}

// FlowTableTargets are the OpenFlow issue's targets on loading flow
// tables (figures of the FlowTables section).
func FlowTableTargets(flows int) []Target {
	return []Target{
		{Text: fmt.Sprintf("ovs-ofctl add-flows of %d flows takes no longer on gvs than on Open vSwitch", flows), Figure: "ft-add-time", Setup: "gvs-system", Ref: "ovs-netdev", Factor: 1, AtMost: true},
		{Text: fmt.Sprintf("ovs-ofctl --bundle add-flows of %d flows takes no longer on gvs than on Open vSwitch", flows), Figure: "ft-bundle-time", Setup: "gvs-system", Ref: "ovs-netdev", Factor: 1, AtMost: true},
	}
}

// Evaluate checks each target against the section.
func (s *Section) Evaluate(targets []Target) []TargetResult {
	var out []TargetResult
	for _, t := range targets {
		out = append(out, s.evaluate(t))
	}
	return out
}

func (s *Section) evaluate(t Target) TargetResult {
	res := TargetResult{Text: t.Text, Status: TargetNotMeasured}
	fig, ok := s.Figure(t.Figure)
	if !ok {
		res.Measured = "figure not in this run"
		return res
	}
	v, ok := s.Value(t.Figure, t.Setup)
	if !ok {
		res.Measured = t.Setup + " " + s.absence(t.Setup)
		return res
	}
	bound, refText := t.Bound, ""
	if t.Ref != "" || t.RefFigure != "" {
		refSetup, refFig := t.Ref, t.Figure
		if refSetup == "" {
			refSetup = t.Setup
		}
		if t.RefFigure != "" {
			if refFig = t.RefFigure; !s.hasFigure(refFig) {
				res.Measured = "figure " + refFig + " not in this run"
				return res
			}
		}
		r, ok := s.Value(refFig, refSetup)
		if !ok {
			res.Measured = refSetup + " " + s.absence(refSetup)
			return res
		}
		bound = t.Factor * r.Median
		refName := refSetup
		switch {
		case t.RefText != "":
			refName = t.RefText
		case t.RefFigure != "":
			rf, _ := s.Figure(refFig)
			refName = refSetup + " " + rf.Test
		}
		refText = fmt.Sprintf(" vs %s %s", refName, FormatWithUnit(r.Median, fig))
		if ratio := safeRatio(v.Median, r.Median); !math.IsNaN(ratio) {
			refText += fmt.Sprintf(" (%.2fx)", ratio)
		}
	}
	if t.Plus != "" {
		pf, _ := s.Figure(t.Plus)
		if pv, ok := s.Value(t.Plus, t.Setup); ok && s.hasFigure(t.Plus) {
			bound += pv.Median
			refText += fmt.Sprintf(", bound %s with %s %s", FormatWithUnit(bound, fig), pf.Label, FormatWithUnit(pv.Median, pf))
		} else {
			name := t.Plus
			if pf.Label != "" {
				name = pf.Label
			}
			refText += fmt.Sprintf(", bound %s (%s: n/a)", FormatWithUnit(bound, fig), name)
		}
	}
	met := v.Median >= bound
	if t.AtMost {
		met = v.Median <= bound
	}
	res.Status = TargetNotMet
	if met {
		res.Status = TargetMet
	}
	res.Measured = fmt.Sprintf("%s %s%s", t.Setup, FormatWithUnit(v.Median, fig), refText)
	if cf, ok := s.Figure(t.Context); ok {
		if cv, ok := s.Value(t.Context, t.Setup); ok {
			res.Measured += fmt.Sprintf(" (%s: %s)", cf.Label, FormatWithUnit(cv.Median, cf))
		}
	}
	return res
}

func (s *Section) hasFigure(id string) bool {
	_, ok := s.Figure(id)
	return ok
}

func (s *Section) absence(setup string) string {
	if si, ok := s.Setup(setup); ok && si.Status != StatusMeasured {
		return si.Status + ": " + si.Reason
	}
	return "not measured"
}

func safeRatio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// OpenFlowRatioRefs are the setups the OpenFlow sections' ratios are
// taken against, those of them the section has: gvs with NORMAL and Open
// vSwitch with the same flows (traffic), Open vSwitch (flow tables).
func OpenFlowRatioRefs(sec *Section, traffic bool) []string {
	want := []string{"ovs-netdev"}
	if traffic {
		want = []string{"gvs-system", "ovs-netdev-tso-bigbuf-ovn"}
	}
	var refs []string
	for _, name := range want {
		if si, ok := sec.Setup(name); ok && si.Status == StatusMeasured {
			refs = append(refs, name)
		}
	}
	return refs
}
