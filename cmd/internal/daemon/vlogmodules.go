package daemon

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// Log destinations, as Open vSwitch's vlog names them. gvs writes no
// syslog, but keeps its levels so that vlog/list shows what was set.
const (
	destConsole = iota
	destSyslog
	destFile
	nDests
)

// destLevels is one module's level at each destination.
type destLevels [nDests]slog.Level

// moduleTable is vlog's table of levels: a level per module and
// destination. Modules are not registered in advance (gvs has no static
// list): a module gets its row the first time it logs or is named in a
// -v spec, starting from the levels "any module" was last given. Guarded
// by logSink.mu.
type moduleTable struct {
	defaults destLevels
	modules  map[string]*destLevels
}

func newModuleTable() moduleTable {
	return moduleTable{
		// Open vSwitch's defaults: INFO everywhere (gvs writes no syslog,
		// but vlog/list shows its level as Open vSwitch's does).
		defaults: destLevels{slog.LevelInfo, slog.LevelInfo, slog.LevelInfo},
		modules:  map[string]*destLevels{},
	}
}

// row returns module's levels, creating its row from the defaults.
func (m *moduleTable) row(module string) *destLevels {
	r := m.modules[module]
	if r == nil {
		levels := m.defaults
		r = &levels
		m.modules[module] = r
	}
	return r
}

// set applies one level as vlog_set_levels does: to one module or (module
// "") all of them, at one destination or (dest < 0) all of them.
func (m *moduleTable) set(module string, dest int, level slog.Level) {
	apply := func(l *destLevels) {
		for d := range nDests {
			if dest < 0 || d == dest {
				l[d] = level
			}
		}
	}
	if module == "" {
		apply(&m.defaults)
		for _, r := range m.modules {
			apply(r)
		}
		return
	}
	apply(m.row(module))
}

// minimum is the lowest level any module writes to console or file, for
// Enabled's quick answer.
func (m *moduleTable) minimum() slog.Level {
	lowest := min(m.defaults[destConsole], m.defaults[destFile])
	for _, r := range m.modules {
		lowest = min(lowest, r[destConsole], r[destFile])
	}
	return lowest
}

// list is vlog/list's table, modules sorted by name, in Open vSwitch's
// format.
func (m *moduleTable) list() string {
	var b strings.Builder
	b.WriteString("                 console    syslog    file\n")
	b.WriteString("                 -------    ------    ------\n")
	names := make([]string, 0, len(m.modules))
	for name := range m.modules {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r := m.modules[name]
		fmt.Fprintf(&b, "%-16s  %4s       %4s       %4s\n", name, levelWord(r[destConsole]), levelWord(r[destSyslog]), levelWord(r[destFile]))
	}
	return b.String()
}

// destIndex maps a -v destination word to its index; "any" is -1.
func destIndex(name string) int {
	switch name {
	case "console":
		return destConsole
	case "syslog":
		return destSyslog
	case "file":
		return destFile
	}
	return -1
}

// addModule gives module its row (a logger for it was made), so vlog/list
// shows it and vlog/set accepts it before it has logged anything.
func (s *logSink) addModule(module string) {
	s.mu.Lock()
	s.levels.row(module)
	s.mu.Unlock()
}

// HasModule reports whether module is known: it has a logger or a level.
func (h *LogHandler) HasModule(module string) bool {
	h.sink.mu.Lock()
	defer h.sink.mu.Unlock()
	return h.sink.levels.modules[module] != nil || module == h.defaultModule
}
