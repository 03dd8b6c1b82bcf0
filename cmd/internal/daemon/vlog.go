package daemon

import (
	"fmt"
	"log/slog"
	"strings"
)

// VerboseSpec is one parsed -v/--verbose or vlog/set argument.
type VerboseSpec struct {
	Destination string // "console", "file" or "any"
	Level       slog.Level
	Modules     []string // named modules; gvs applies levels to all modules
}

// ParseVerbose reads Open vSwitch's -v syntax: words separated by ':', ','
// or spaces, each a destination (console, syslog, file, any), a level (off,
// emer, err, warn, info, dbg) or a module name. An empty spec means "any
// destination at dbg", as bare -v does. Syslog is accepted and ignored:
// gvs does not log to syslog.
func ParseVerbose(spec string) (VerboseSpec, error) {
	v := VerboseSpec{Destination: "any", Level: slog.LevelDebug}
	lower := strings.ToLower(spec)
	if strings.HasPrefix(lower, "pattern:") || strings.HasPrefix(lower, "facility:") {
		return v, fmt.Errorf("%q: custom patterns and syslog facilities are not supported", spec)
	}
	words := strings.FieldsFunc(spec, func(r rune) bool { return r == ':' || r == ',' || r == ' ' })
	for _, w := range words {
		switch strings.ToLower(w) {
		case "console", "file", "any":
			v.Destination = strings.ToLower(w)
			continue
		case "syslog":
			v.Destination = "syslog"
			continue
		}
		if level, ok := ParseLevel(w); ok {
			v.Level = level
			continue
		}
		if strings.ContainsAny(w, "/.=") {
			return v, fmt.Errorf("no destination, level, or module %q", w) // Open vSwitch's words
		}
		v.Modules = append(v.Modules, w)
	}
	return v, nil
}

// Apply sets the levels the spec names on h. Per-module levels are not
// implemented: a spec naming modules changes every module, which the
// returned note says.
func (v VerboseSpec) Apply(h *LogHandler) (note string) {
	if v.Destination != "syslog" {
		h.SetLevel(v.Destination, v.Level)
	}
	if len(v.Modules) > 0 && !(len(v.Modules) == 1 && strings.EqualFold(v.Modules[0], "any")) {
		note = fmt.Sprintf("per-module log levels are not supported; level applied to all modules instead of %s", strings.Join(v.Modules, ","))
	}
	return note
}
