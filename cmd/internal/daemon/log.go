package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ModuleKey is the attribute that names the logging module, shown in the
// third field of each line like Open vSwitch's vlog modules
// ("ovsdb_server", "unixctl", ...). Loggers get it with Module.
const ModuleKey = "module"

// LevelOff disables a destination.
const LevelOff = slog.Level(1 << 10)

// Module returns a logger whose lines carry the given module name.
func Module(logger *slog.Logger, name string) *slog.Logger {
	return logger.With(slog.String(ModuleKey, name))
}

// logSink is what all handlers derived from one LogHandler share: the
// message counter, the destinations and their levels.
type logSink struct {
	mu       sync.Mutex
	seq      uint64
	console  io.Writer // nil once the daemon has detached
	file     *os.File
	filePath string
	now      func() time.Time
	// levels is the level of each module at each destination (guarded
	// by mu); lowest is their minimum, read without the lock by Enabled.
	levels moduleTable
	lowest slog.LevelVar
}

// LogHandler is a slog.Handler that writes lines in Open vSwitch's vlog
// format: "2026-11-30T12:00:00Z|00001|module|INFO|message" on the console
// (stderr) and the same with milliseconds in the log file. Attributes other
// than the module follow the message as key=value pairs.
type LogHandler struct {
	sink          *logSink
	defaultModule string
	module        string
	attrs         string // preformatted " key=value" pairs
	group         string // prefix for keys of later attributes
}

// NewLogHandler logs to console at INFO, like Open vSwitch's defaults;
// module names lines that carry no module attribute.
func NewLogHandler(console io.Writer, module string) *LogHandler {
	s := &logSink{console: console, now: time.Now, levels: newModuleTable()}
	s.lowest.Set(s.levels.minimum())
	return &LogHandler{sink: s, defaultModule: module}
}

// OpenFile starts logging to path as well, appending; it logs "opened log
// file PATH" as Open vSwitch does. Calling it again reopens the file (after
// log rotation).
func (h *LogHandler) OpenFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o660) // less the umask, as Open vSwitch
	if err != nil {
		return err
	}
	s := h.sink
	s.mu.Lock()
	old := s.file
	s.file, s.filePath = f, path
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	slog.New(h.WithAttrs([]slog.Attr{slog.String(ModuleKey, "vlog")})).Info("opened log file " + path)
	return nil
}

// Reopen reopens the log file, if any, for log rotation.
func (h *LogHandler) Reopen() error {
	h.sink.mu.Lock()
	path := h.sink.filePath
	h.sink.mu.Unlock()
	if path == "" {
		return nil
	}
	return h.OpenFile(path)
}

// DetachConsole stops console output, for a daemon whose stderr is gone.
func (h *LogHandler) DetachConsole() {
	h.sink.mu.Lock()
	h.sink.console = nil
	h.sink.mu.Unlock()
}

// Close closes the log file.
func (h *LogHandler) Close() error {
	h.sink.mu.Lock()
	defer h.sink.mu.Unlock()
	if h.sink.file == nil {
		return nil
	}
	err := h.sink.file.Close()
	h.sink.file = nil
	return err
}

// SetLevel sets the minimum level of a destination ("console", "syslog",
// "file" or "any") for every module.
func (h *LogHandler) SetLevel(destination string, level slog.Level) {
	h.SetModuleLevel("", destination, level)
}

// SetModuleLevel sets the minimum level of one module ("" for all of
// them) at a destination ("console", "syslog", "file" or "any"), as
// vlog_set_levels does.
func (h *LogHandler) SetModuleLevel(module, destination string, level slog.Level) {
	s := h.sink
	s.mu.Lock()
	s.levels.set(module, destIndex(destination), level)
	s.lowest.Set(s.levels.minimum())
	s.mu.Unlock()
}

// Levels reports the console and file levels given to all modules.
func (h *LogHandler) Levels() (console, file slog.Level) {
	h.sink.mu.Lock()
	defer h.sink.mu.Unlock()
	return h.sink.levels.defaults[destConsole], h.sink.levels.defaults[destFile]
}

// ListLevels is vlog/list's table: every module that has logged or been
// given a level, with its level at each destination.
func (h *LogHandler) ListLevels() string {
	h.sink.mu.Lock()
	defer h.sink.mu.Unlock()
	if h.defaultModule != "" {
		h.sink.levels.row(h.defaultModule)
	}
	return h.sink.levels.list()
}

// Enabled reports whether any module wants records at level at any
// destination; Handle then applies the record's own module's levels.
func (h *LogHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.sink.lowest.Level()
}

// Handle writes one record.
func (h *LogHandler) Handle(_ context.Context, r slog.Record) error {
	module := h.module
	var extra strings.Builder
	extra.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == ModuleKey && h.group == "" {
			module = a.Value.String()
			return true
		}
		appendAttr(&extra, h.group, a)
		return true
	})
	if module == "" {
		module = h.defaultModule
	}
	msg := r.Message + extra.String()
	s := h.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	levels := s.levels.row(module)
	toConsole := s.console != nil && r.Level >= levels[destConsole]
	toFile := s.file != nil && r.Level >= levels[destFile]
	if !toConsole && !toFile {
		return nil // not numbered, as vlog numbers only what it writes
	}
	s.seq++
	when := r.Time
	if when.IsZero() {
		when = s.now()
	}
	when = when.UTC()
	var err error
	if toConsole {
		_, err = fmt.Fprintf(s.console, "%s|%05d|%s|%s|%s\n", when.Format("2006-01-02T15:04:05Z"), s.seq, module, levelName(r.Level), msg)
	}
	if toFile {
		_, err = fmt.Fprintf(s.file, "%s|%05d|%s|%s|%s\n", when.Format("2006-01-02T15:04:05.000Z"), s.seq, module, levelName(r.Level), msg)
	}
	return err
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range attrs {
		if a.Key == ModuleKey && h.group == "" {
			h2.module = a.Value.String()
			h.sink.addModule(h2.module)
			continue
		}
		appendAttr(&b, h.group, a)
	}
	h2.attrs = b.String()
	return &h2
}

// WithGroup qualifies later attribute keys with name.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		prefix := group
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			appendAttr(b, prefix, ga)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(group + a.Key)
	b.WriteByte('=')
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}

// levelName is Open vSwitch's name for a level.
func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelInfo:
		return "DBG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARN"
	case l < slog.LevelError+4:
		return "ERR"
	default:
		return "EMER"
	}
}

// ParseLevel reads one of Open vSwitch's level names: off, emer, err, warn,
// info, dbg.
func ParseLevel(word string) (slog.Level, bool) {
	switch strings.ToLower(word) {
	case "off":
		return LevelOff, true
	case "emer":
		return slog.LevelError + 4, true
	case "err":
		return slog.LevelError, true
	case "warn":
		return slog.LevelWarn, true
	case "info":
		return slog.LevelInfo, true
	case "dbg", "debug":
		return slog.LevelDebug, true
	}
	return 0, false
}
