package report

import (
	"math"
	"time"

	"gvs/bench/measure"
)

// Figure is one measured quantity.
type Figure struct {
	ID     string `json:"id"`
	Test   string `json:"test"`  // what was run, e.g. "UDP 8 KB at 1 Gbit/s"
	Label  string `json:"label"` // what is reported, e.g. "loss"
	Unit   string `json:"unit"`
	Higher bool   `json:"higher_is_better"`
	// Percent figures (loss) compare as differences in percentage points,
	// not as ratios.
	Percent bool `json:"percent"`
}

// Sample is one run's value.
type Sample struct {
	Run        int     `json:"run"`
	Value      float64 `json:"value"`
	Busy       bool    `json:"busy"`        // the machine was loaded from outside
	OutsideCPU float64 `json:"outside_cpu"` // CPUs used by other processes meanwhile
	Repeated   bool    `json:"repeated"`    // a busy first attempt was run again
}

// Series is every sample of one figure for one setup.
type Series struct {
	Figure  string          `json:"figure"`
	Setup   string          `json:"setup"`
	Samples []Sample        `json:"samples"`
	Errors  []string        `json:"errors,omitempty"`
	Summary measure.Summary `json:"summary"`
}

// Setup statuses.
const (
	StatusMeasured = "measured"
	StatusSkipped  = "skipped"
	StatusFailed   = "failed"
)

// SetupInfo describes one column.
type SetupInfo struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
}

// Section is one comparison: the datapath setups or the OVSDB servers.
type Section struct {
	Title   string      `json:"title"`
	Setups  []SetupInfo `json:"setups"`
	Figures []Figure    `json:"figures"`
	Series  []*Series   `json:"series"`
}

// Machine is where the figures come from.
type Machine struct {
	Kernel   string            `json:"kernel"`
	CPU      string            `json:"cpu"`
	CPUs     int               `json:"cpus"`
	MemoryGB float64           `json:"memory_gb"`
	Versions map[string]string `json:"versions"`
}

// Results is everything one benchmark session produced.
type Results struct {
	Command  string         `json:"command"`
	Quick    bool           `json:"quick"`
	Runs     int            `json:"runs"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Machine  Machine        `json:"machine"`
	Notes    []string       `json:"notes,omitempty"`
	Datapath *Section       `json:"datapath"`
	OVSDB    *Section       `json:"ovsdb"`
	Targets  []TargetResult `json:"targets"`
	// Scale is the scale test (many ports, one change at a time, in bulk,
	// restart); its curves are plotted as lines, its targets listed apart.
	Scale        *Section       `json:"scale,omitempty"`
	ScaleTargets []TargetResult `json:"scale_targets,omitempty"`
	Curves       []Curve        `json:"curves,omitempty"`
	// OpenFlow is TCP and new flows through the OVN pipeline and NORMAL;
	// FlowTables is loading large flow tables with ovs-ofctl; their
	// targets are listed together.
	OpenFlow        *Section       `json:"openflow,omitempty"`
	FlowTables      *Section       `json:"flow_tables,omitempty"`
	OpenFlowTargets []TargetResult `json:"openflow_targets,omitempty"`

	// Conntrack is TCP, connections per second and memory per
	// connection through the ct firewall and the same flows without ct.
	Conntrack        *Section       `json:"conntrack,omitempty"`
	ConntrackTargets []TargetResult `json:"conntrack_targets,omitempty"`
}

// Sections returns the sections present, in page order.
func (r *Results) Sections() []*Section {
	var out []*Section
	for _, s := range []*Section{r.Datapath, r.OVSDB, r.Scale, r.OpenFlow, r.FlowTables, r.Conntrack} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Add records a sample of figure for setup.
func (s *Section) Add(figure, setup string, sample Sample) {
	s.series(figure, setup).Samples = append(s.series(figure, setup).Samples, sample)
}

// AddError records a failed attempt of figure for setup.
func (s *Section) AddError(figure, setup, msg string) {
	ser := s.series(figure, setup)
	ser.Errors = append(ser.Errors, msg)
}

func (s *Section) series(figure, setup string) *Series {
	for _, ser := range s.Series {
		if ser.Figure == figure && ser.Setup == setup {
			return ser
		}
	}
	ser := &Series{Figure: figure, Setup: setup}
	s.Series = append(s.Series, ser)
	return ser
}

// Summarize fills every series' summary from its samples.
func (s *Section) Summarize() {
	for _, ser := range s.Series {
		vals := make([]float64, len(ser.Samples))
		for i, x := range ser.Samples {
			vals[i] = x.Value
		}
		ser.Summary = measure.Summarize(vals)
	}
}

// Value returns the summary of figure for setup, if it has a sample.
func (s *Section) Value(figure, setup string) (measure.Summary, bool) {
	for _, ser := range s.Series {
		if ser.Figure == figure && ser.Setup == setup && ser.Summary.N > 0 {
			return ser.Summary, true
		}
	}
	return measure.Summary{Median: math.NaN()}, false
}

// Busy reports how many samples of figure for setup were taken on a busy
// machine.
func (s *Section) Busy(figure, setup string) int {
	n := 0
	for _, ser := range s.Series {
		if ser.Figure == figure && ser.Setup == setup {
			for _, x := range ser.Samples {
				if x.Busy {
					n++
				}
			}
		}
	}
	return n
}

// Setup returns the info of a setup by name.
func (s *Section) Setup(name string) (SetupInfo, bool) {
	for _, si := range s.Setups {
		if si.Name == name {
			return si, true
		}
	}
	return SetupInfo{}, false
}

// Figure returns a figure by id.
func (s *Section) Figure(id string) (Figure, bool) {
	for _, f := range s.Figures {
		if f.ID == id {
			return f, true
		}
	}
	return Figure{}, false
}
