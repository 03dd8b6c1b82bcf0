package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteFiles writes results.json, results.csv, results.md and one SVG per
// figure (plots/) into dir.
func WriteFiles(dir string, r *Results, refs References) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return nil, err
	}
	var written []string
	write := func(name string, fn func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		written = append(written, path)
		return f.Close()
	}
	if err := write("results.json", func(w io.Writer) error { return WriteJSON(w, r) }); err != nil {
		return written, err
	}
	if err := write("results.csv", func(w io.Writer) error { return WriteCSV(w, r) }); err != nil {
		return written, err
	}
	for _, sec := range r.Sections() {
		for _, f := range sec.Figures {
			if !sec.hasAny(f.ID) {
				continue
			}
			name := filepath.Join("plots", f.ID+".svg")
			if err := write(name, func(w io.Writer) error { return sec.WriteSVG(w, f) }); err != nil {
				return written, err
			}
		}
	}
	for _, c := range r.Curves {
		name := filepath.Join("plots", c.ID+".svg")
		if err := write(name, func(w io.Writer) error { return WriteCurveSVG(w, c) }); err != nil {
			return written, err
		}
	}
	if err := write("results.md", func(w io.Writer) error { return WriteMarkdown(w, r, refs, "plots") }); err != nil {
		return written, err
	}
	return written, nil
}

func (s *Section) hasAny(figure string) bool {
	for _, ser := range s.Series {
		if ser.Figure == figure && ser.Summary.N > 0 {
			return true
		}
	}
	return false
}

// WriteJSON writes the results, NaN values as null.
func WriteJSON(w io.Writer, r *Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonSafe(r))
}

// jsonSafe returns a copy of r whose summaries have no NaN (encoding/json
// refuses NaN): absent values become null via a map round trip.
func jsonSafe(r *Results) any {
	data, err := json.Marshal(nanFree(r))
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	var v any
	json.Unmarshal(data, &v)
	return v
}

func nanFree(r *Results) *Results {
	c := *r
	for _, sec := range []**Section{&c.Datapath, &c.OVSDB, &c.Scale, &c.OpenFlow, &c.FlowTables, &c.Conntrack} {
		if *sec == nil {
			continue
		}
		s := **sec
		s.Series = nil
		for _, ser := range (*sec).Series {
			cp := *ser
			cp.Samples = append([]Sample(nil), ser.Samples...)
			for i := range cp.Samples {
				if math.IsNaN(cp.Samples[i].Value) {
					cp.Samples[i].Value = -1
				}
			}
			if cp.Summary.N == 0 {
				cp.Summary.Median, cp.Summary.Min, cp.Summary.Max = 0, 0, 0
			}
			s.Series = append(s.Series, &cp)
		}
		*sec = &s
	}
	return &c
}

// WriteCSV writes one row per series: section, setup, figure, unit,
// median, min, max, runs, busy runs, samples.
func WriteCSV(w io.Writer, r *Results) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"section", "setup", "figure", "test", "label", "unit", "median", "min", "max", "runs", "busy_runs", "samples", "errors"})
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	for _, sec := range r.Sections() {
		for _, ser := range sec.Series {
			f, _ := sec.Figure(ser.Figure)
			var samples []string
			for _, x := range ser.Samples {
				samples = append(samples, num(x.Value))
			}
			cw.Write([]string{sec.Title, ser.Setup, ser.Figure, f.Test, f.Label, f.Unit,
				num(ser.Summary.Median), num(ser.Summary.Min), num(ser.Summary.Max),
				strconv.Itoa(ser.Summary.N), strconv.Itoa(sec.Busy(ser.Figure, ser.Setup)),
				strings.Join(samples, ";"), strings.Join(ser.Errors, "; ")})
		}
	}
	cw.Flush()
	return cw.Error()
}
