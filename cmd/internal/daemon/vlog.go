package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// VerboseSpec is one parsed -v/--verbose or vlog/set argument.
type VerboseSpec struct {
	Destination string // "console", "file" or "any"
	Level       slog.Level
	Modules     []string // named modules; none (or "any") means every module
}

// ParseVerbose reads Open vSwitch's -v syntax: words separated by ':', ','
// or spaces, each a destination (console, syslog, file, any), a level (off,
// emer, err, warn, info, dbg) or a module name. An empty spec means "any
// destination at dbg", as bare -v does. Syslog levels are kept (vlog/list
// shows them) but gvs writes no syslog.
func ParseVerbose(spec string) (VerboseSpec, error) {
	v := VerboseSpec{Destination: "any", Level: slog.LevelDebug}
	lower := strings.ToLower(spec)
	if strings.HasPrefix(lower, "pattern:") || strings.HasPrefix(lower, "facility:") {
		return v, fmt.Errorf("%q: custom patterns and syslog facilities are not supported", spec)
	}
	words := strings.FieldsFunc(spec, func(r rune) bool { return r == ':' || r == ',' || r == ' ' || r == '\t' })
	dest, level := false, false
	for _, w := range words {
		lw := strings.ToLower(w)
		switch {
		case lw == "any":
			// "any" names every module and every destination: the
			// defaults, as in vlog_set_levels_from_string.
		case lw == "console" || lw == "file" || lw == "syslog":
			if dest {
				return v, errors.New("cannot specify multiple destinations")
			}
			dest, v.Destination = true, lw
		case isLevel(w):
			if level {
				return v, errors.New("cannot specify multiple levels")
			}
			level = true
			v.Level, _ = ParseLevel(w)
		case strings.ContainsAny(w, "/.="):
			return v, fmt.Errorf("no destination, level, or module \"%s\"", w) // Open vSwitch's words
		default:
			if len(v.Modules) > 0 {
				return v, errors.New("cannot specify multiple modules")
			}
			v.Modules = append(v.Modules, w)
		}
	}
	return v, nil
}

func isLevel(w string) bool {
	_, ok := ParseLevel(w)
	return ok
}

// Apply sets the levels the spec names on h: for each module it names, or
// every module when it names none (or "any"), at its destination.
func (v VerboseSpec) Apply(h *LogHandler) (note string) {
	modules := v.Modules
	if len(modules) == 0 || slices.ContainsFunc(modules, func(m string) bool { return strings.EqualFold(m, "any") }) {
		modules = []string{""}
	}
	for _, m := range modules {
		h.SetModuleLevel(m, v.Destination, v.Level)
	}
	return ""
}
