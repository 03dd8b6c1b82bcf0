package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func sampleSection() *Section {
	s := &Section{Title: "Datapath",
		Setups: []SetupInfo{
			{Name: "direct", Kind: "kernel", Status: StatusMeasured},
			{Name: "ovs-netdev", Kind: "ovs", Status: StatusMeasured},
			{Name: "ovs-netdev-tso", Kind: "ovs", Status: StatusMeasured},
			{Name: "gvs-system", Kind: "gvs", Status: StatusMeasured},
			{Name: "gvs-afxdp", Kind: "gvs", Status: StatusSkipped, Reason: "no datapath yet"},
		},
		Figures: []Figure{
			{ID: "tcp-1", Test: "TCP, 1 stream", Label: "throughput", Unit: "Gbit/s", Higher: true},
			{ID: "ping", Test: "Ping", Label: "median round trip", Unit: "µs"},
			{ID: "udp-8k-1g-loss", Test: "UDP 8 KB at 1 Gbit/s", Label: "loss", Unit: "%", Percent: true},
			{ID: "udp-8k-1g-rcvloss", Test: "UDP 8 KB at 1 Gbit/s", Label: "loss in the receiving socket", Unit: "%", Percent: true},
		},
	}
	add := func(fig, setup string, vals ...float64) {
		for i, v := range vals {
			s.Add(fig, setup, Sample{Run: i + 1, Value: v, Busy: i == 0 && setup == "gvs-system"})
		}
	}
	add("tcp-1", "direct", 12, 10, 11)
	add("tcp-1", "ovs-netdev", 1.2, 1.4, 1.3)
	add("tcp-1", "ovs-netdev-tso", 9, 10, 11)
	add("tcp-1", "gvs-system", 9.5, 9.9, 10.1)
	add("ping", "direct", 40, 50, 45)
	add("ping", "ovs-netdev", 200, 100, 150)
	add("ping", "ovs-netdev-tso", 120, 90, 100)
	add("ping", "gvs-system", 60, 70, 80)
	add("udp-8k-1g-loss", "ovs-netdev", 2, 2.5, 2.2)
	add("udp-8k-1g-loss", "gvs-system", 0, 0, 0.5)
	add("udp-8k-1g-rcvloss", "gvs-system", 1.5, 2, 1)
	s.Summarize()
	return s
}

func TestCompareAndBest(t *testing.T) {
	s := sampleSection()
	tcp, _ := s.Figure("tcp-1")
	if c := s.Compare(tcp, "gvs-system", "direct"); !c.OK || math.Abs(c.Ratio-9.9/11) > 1e-9 {
		t.Errorf("gvs vs direct = %+v", c)
	}
	if best, _ := s.BestOf(tcp, "ovs"); best != "ovs-netdev-tso" {
		t.Errorf("best OVS for TCP = %s", best)
	}
	ping, _ := s.Figure("ping")
	if best, _ := s.BestOf(ping, "ovs"); best != "ovs-netdev-tso" {
		t.Errorf("best OVS for ping (lower is better) = %s", best)
	}
	loss, _ := s.Figure("udp-8k-1g-loss")
	c := s.Compare(loss, "gvs-system", "ovs-netdev")
	if !c.OK || math.Abs(c.DeltaPP-(0-2.2)) > 1e-9 || c.String(loss) != "-2.20pp" {
		t.Errorf("loss comparison = %+v %q", c, c.String(loss))
	}
	if c := s.Compare(tcp, "gvs-afxdp", "direct"); c.OK || c.String(tcp) != "-" {
		t.Errorf("comparison with a skipped setup = %+v", c)
	}
}

func TestCell(t *testing.T) {
	s := sampleSection()
	tcp, _ := s.Figure("tcp-1")
	if got := s.Cell(tcp, "gvs-system", true); got != "9.90 (9.50-10.10)*" {
		t.Errorf("cell = %q", got)
	}
	if got := s.Cell(tcp, "gvs-afxdp", true); got != StatusSkipped {
		t.Errorf("skipped cell = %q", got)
	}
}

func TestEvaluate(t *testing.T) {
	s := sampleSection()
	got := s.Evaluate(DatapathTargets())
	status := map[string]string{}
	for _, r := range got {
		status[r.Text] = r.Status
	}
	want := map[string]string{
		"TCP through gvs system ports >= Open vSwitch netdev with userspace-tso-enable=true": TargetNotMet, // 9.9 < 10
		"TCP through gvs system ports >= 0.8x a direct veth pair":                            TargetMet,    // 9.9 >= 8.8
		"TCP through gvs afxdp ports >= 1.2x Open vSwitch type=afxdp":                        TargetNotMeasured,
		"Ping round trip through an idle gvs <= Open vSwitch's":                              TargetMet,
		"20,000 new flows per second (from several senders) with no loss in the switch":      TargetNotMeasured,
	}
	for text, st := range want {
		if status[text] != st {
			t.Errorf("%s: %q, want %q", text, status[text], st)
		}
	}
	ctx := s.Evaluate([]Target{{Text: "loss", Figure: "udp-8k-1g-loss", Setup: "gvs-system", Bound: 0.005, AtMost: true, Context: "udp-8k-1g-rcvloss"}})
	if ctx[0].Status != TargetMet || ctx[0].Measured != "gvs-system 0.00% (loss in the receiving socket: 1.50%)" {
		t.Errorf("target with context = %+v", ctx[0])
	}
	for _, r := range got {
		if strings.HasPrefix(r.Text, "TCP through gvs afxdp") && !strings.Contains(r.Measured, "no datapath yet") {
			t.Errorf("a skipped setup's target should say why: %q", r.Measured)
		}
	}
}

func TestWriters(t *testing.T) {
	s := sampleSection()
	r := &Results{Command: "gvs-bench -quick", Runs: 3, Started: time.Unix(0, 0), Finished: time.Unix(90, 0), Datapath: s,
		Machine: Machine{CPU: "test cpu", CPUs: 2, Kernel: "6.18", Versions: map[string]string{"iperf3": "3.12"}}}
	r.Targets = s.Evaluate(DatapathTargets())
	refs := References{Direct: "direct", OVSDefault: "ovs-netdev", OVSKind: "ovs"}

	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse back: %v", err)
	}

	var cs bytes.Buffer
	if err := WriteCSV(&cs, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(s.Series) {
		t.Errorf("%d CSV rows for %d series", len(rows), len(s.Series))
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, r, refs, "plots"); err != nil {
		t.Fatal(err)
	}
	page := md.String()
	for _, want := range []string{"| TCP, 1 stream: throughput (Gbit/s) |", "0.90x / 7.62x / 0.99x", "gvs-afxdp", "no datapath yet", "![TCP, 1 stream: throughput (Gbit/s)](plots/tcp-1.svg)", "not met"} {
		if !strings.Contains(page, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, page)
		}
	}

	var txt bytes.Buffer
	s.WriteText(&txt)
	if !strings.Contains(txt.String(), "gvs-afxdp: skipped: no datapath yet") {
		t.Errorf("terminal table does not list the skipped setup:\n%s", txt.String())
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	s := sampleSection()
	for _, f := range s.Figures {
		var b bytes.Buffer
		if err := s.WriteSVG(&b, f); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(&b)
		bars := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: SVG is not well-formed XML: %v", f.ID, err)
			}
			if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
				bars++
			}
		}
		if want := 1 + countValues(s, f.ID); bars != want {
			t.Errorf("%s: %d rects, want background + %d bars", f.ID, bars, want-1)
		}
	}
}

func countValues(s *Section, fig string) int {
	n := 0
	for _, si := range s.Setups {
		if _, ok := s.Value(fig, si.Name); ok {
			n++
		}
	}
	return n
}

func TestCompactCell(t *testing.T) {
	s := sampleSection()
	tcp, _ := s.Figure("tcp-1")
	// 9.5..10.1 around 9.9: half-range 0.3 is 3% of the median.
	if got := s.Cell(tcp, "gvs-system", false); got != "9.90 ±3%*" {
		t.Errorf("compact cell = %q", got)
	}
}

func TestCompareRowsOpenFlow(t *testing.T) {
	sec := &Section{Title: "OpenFlow", Figures: []Figure{{ID: "of-tcp-1", Test: "TCP", Label: "throughput", Unit: "Gbit/s", Higher: true}}}
	for _, s := range []struct {
		name string
		v    float64
	}{{"gvs-system", 10}, {"gvs-system-ovn", 9.5}, {"ovs-netdev-tso-bigbuf-ovn", 5}} {
		sec.Setups = append(sec.Setups, SetupInfo{Name: s.name, Status: StatusMeasured})
		sec.Add("of-tcp-1", s.name, Sample{Run: 1, Value: s.v})
	}
	sec.Summarize()
	refs := OpenFlowRatioRefs(sec, true)
	if len(refs) != 2 {
		t.Fatalf("refs %v", refs)
	}
	rows := sec.compareRows(refs...)
	if len(rows) != 2 || rows[1][2] != "0.95x / 1.90x" {
		t.Errorf("rows %q", rows)
	}
}
