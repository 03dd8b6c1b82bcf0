package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func scaleSection() *Section {
	s := &Section{Title: "Scale",
		Setups: []SetupInfo{{Name: "ovs", Kind: "ovs", Status: StatusMeasured}, {Name: "gvs", Kind: "gvs", Status: StatusMeasured}},
		Figures: []Figure{
			{ID: "at-10", Test: "add-port at 10 ports", Label: "latency", Unit: "ms"},
			{ID: "at-1000", Test: "add-port at 1000 ports", Label: "latency", Unit: "ms"},
			{ID: "rss", Test: "1000 idle ports", Label: "RSS", Unit: "MB"},
			{ID: "ring", Test: "1000 idle ports", Label: "ring memory", Unit: "MB"},
		}}
	s.Add("at-10", "gvs", Sample{Run: 1, Value: 10})
	s.Add("at-1000", "gvs", Sample{Run: 1, Value: 14})
	s.Add("at-10", "ovs", Sample{Run: 1, Value: 12})
	s.Add("at-1000", "ovs", Sample{Run: 1, Value: 100})
	s.Add("rss", "ovs", Sample{Run: 1, Value: 30})
	s.Add("rss", "gvs", Sample{Run: 1, Value: 70})
	s.Summarize()
	return s
}

func TestTargetAgainstAnotherFigure(t *testing.T) {
	s := scaleSection()
	res := s.Evaluate([]Target{
		{Text: "flat", Figure: "at-1000", Setup: "gvs", RefFigure: "at-10", RefText: "at 10 ports", Factor: 1.5, AtMost: true},
		{Text: "steep", Figure: "at-1000", Setup: "ovs", RefFigure: "at-10", Factor: 1.5, AtMost: true},
		{Text: "other setup's other figure", Figure: "at-1000", Setup: "gvs", Ref: "ovs", RefFigure: "at-10", Factor: 1, AtMost: true},
		{Text: "missing ref figure", Figure: "at-1000", Setup: "gvs", RefFigure: "at-500", Factor: 1, AtMost: true},
	})
	if res[0].Status != TargetMet || res[0].Measured != "gvs 14.00 ms vs at 10 ports 10.00 ms (1.40x)" {
		t.Errorf("flat: %+v", res[0])
	}
	if res[1].Status != TargetNotMet || !strings.Contains(res[1].Measured, "vs ovs add-port at 10 ports 12.00 ms") {
		t.Errorf("steep: %+v", res[1])
	}
	if res[2].Status != TargetNotMet { // 14 > 1.0 * 12
		t.Errorf("other setup's other figure: %+v", res[2])
	}
	if res[3].Status != TargetNotMeasured || !strings.Contains(res[3].Measured, "at-500") {
		t.Errorf("missing ref figure: %+v", res[3])
	}
}

func TestTargetWithPlus(t *testing.T) {
	s := scaleSection()
	tg := Target{Text: "rss", Figure: "rss", Setup: "gvs", Ref: "ovs", Factor: 2, AtMost: true, Plus: "ring"}
	// Without a ring figure for gvs: bound 60, 70 > 60, and the ring is n/a.
	r := s.Evaluate([]Target{tg})[0]
	if r.Status != TargetNotMet || !strings.Contains(r.Measured, "bound 60.00 MB (ring memory: n/a)") {
		t.Errorf("without ring memory: %+v", r)
	}
	s.Add("ring", "gvs", Sample{Run: 1, Value: 16})
	s.Summarize()
	r = s.Evaluate([]Target{tg})[0]
	if r.Status != TargetMet || !strings.Contains(r.Measured, "bound 76.00 MB with ring memory 16.00 MB") {
		t.Errorf("with ring memory: %+v", r)
	}
}

func testCurve() Curve {
	return Curve{ID: "add-curve", Title: "add-port <one call>", XLabel: "ports", YLabel: "latency (ms)", Marks: []float64{10, 100},
		Lines: []Line{
			{Setup: "ovs", Kind: "ovs", Points: []Point{{0, 5}, {50, 7}, {99, 12}}, Smooth: []Point{{10, 5}, {100, 12}}},
			{Setup: "gvs", Kind: "gvs", Points: []Point{{0, 20}, {50, 40}, {99, 85}}, Smooth: []Point{{10, 21}, {100, 85}}},
		}}
}

func TestCurveSVG(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCurveSVG(&b, testCurve()); err != nil {
		t.Fatal(err)
	}
	dots, lines := 0, 0
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b.String())
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "circle":
				dots++
			case "polyline":
				lines++
			}
		}
	}
	if dots != 6 || lines != 2 {
		t.Errorf("%d dots and %d lines, want 6 and 2", dots, lines)
	}
	if !strings.Contains(b.String(), "&lt;one call&gt;") {
		t.Error("the title is not escaped")
	}
}

// A few very slow calls do not set the y axis: they are drawn on its top
// edge and counted.
func TestCurveRangeClipsOutliers(t *testing.T) {
	c := Curve{Lines: []Line{{Setup: "gvs", Kind: "gvs"}}}
	for i := range 200 {
		y := 10.0
		if i == 50 || i == 150 {
			y = 5000
		}
		c.Lines[0].Points = append(c.Lines[0].Points, Point{float64(i), y})
	}
	c.Lines[0].Smooth = []Point{{100, 10}, {200, 12}}
	maxX, maxY, clipped := curveRange(c)
	if maxX != 200 || maxY != 20 || clipped != 2 {
		t.Errorf("range %v x %v with %d clipped, want 200 x 20 with 2", maxX, maxY, clipped)
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 7: 10, 85: 100, 101: 200, 999: 1000, 1000: 1000} {
		if got := niceCeil(in); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
}

// A session with only the scale part writes its table, targets, curves
// and plots.
func TestWriteFilesScaleOnly(t *testing.T) {
	s := scaleSection()
	r := &Results{Command: "gvs-bench -only scale", Runs: 1, Started: time.Unix(0, 0), Finished: time.Unix(60, 0), Scale: s,
		Curves: []Curve{testCurve()}}
	r.ScaleTargets = s.Evaluate([]Target{{Text: "flat add-port", Figure: "at-1000", Setup: "gvs", RefFigure: "at-10", Factor: 1.5, AtMost: true}})
	dir := t.TempDir()
	written, err := WriteFiles(dir, r, References{Direct: "direct", OVSDefault: "ovs", OVSKind: "ovs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"results.md", "results.json", "results.csv", "plots/add-curve.svg", "plots/rss.svg"} {
		if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
			t.Errorf("%s not written (%v)", want, written)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	for _, want := range []string{"## Scale", "| add-port at 1000 ports: latency (ms) | 100.0 | 14.00 |", "### Targets of the scale issue", "| flat add-port | met |",
		"![add-port <one call>](plots/add-curve.svg)", "- `gvs` (scale)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
	js, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	var back struct {
		Scale  *Section `json:"scale"`
		Curves []Curve  `json:"curves"`
	}
	if err := json.Unmarshal(js, &back); err != nil || back.Scale == nil || len(back.Curves) != 1 || len(back.Curves[0].Lines[1].Points) != 3 {
		t.Errorf("JSON: %v, %+v", err, back)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	if !strings.Contains(string(csv), "Scale,gvs,rss") {
		t.Errorf("CSV lacks the scale rows:\n%s", csv)
	}
}
