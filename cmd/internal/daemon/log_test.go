package daemon

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestLogFormatLikeVlog(t *testing.T) {
	var console bytes.Buffer
	h := NewLogHandler(&console, "ovsdb_server")
	logFile := filepath.Join(t.TempDir(), "x.log")
	if err := h.OpenFile(logFile); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(h)
	logger.Info("ovsdb-server (gvs) 0.1.0")
	Module(logger, "unixctl").Warn("odd thing", "peer", "a b", "n", 3)
	logger.WithGroup("g").Error("bad", "k", "v")
	logger.Debug("hidden at the default level")

	wantConsole := "2026-11-30T12:00:00Z|00001|vlog|INFO|opened log file " + logFile + "\n" +
		"2026-11-30T12:00:00Z|00002|ovsdb_server|INFO|ovsdb-server (gvs) 0.1.0\n" +
		"2026-11-30T12:00:00Z|00003|unixctl|WARN|odd thing peer=\"a b\" n=3\n" +
		"2026-11-30T12:00:00Z|00004|ovsdb_server|ERR|bad g.k=v\n"
	// slog.Record carries its own time; compare with times masked.
	mask := regexp.MustCompile(`^\S+?Z\|`)
	maskAll := func(s string) string {
		lines := strings.Split(s, "\n")
		for i := range lines {
			lines[i] = mask.ReplaceAllString(lines[i], "TIME|")
		}
		return strings.Join(lines, "\n")
	}
	if got := maskAll(console.String()); got != maskAll(wantConsole) {
		t.Errorf("console:\n%s\nwant\n%s", got, maskAll(wantConsole))
	}
	consoleLine := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\|\d{5}\|`)
	fileLine := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\|\d{5}\|`)
	for _, line := range strings.Split(strings.TrimSpace(console.String()), "\n") {
		if !consoleLine.MatchString(line) {
			t.Errorf("console line %q", line)
		}
	}
	h.Close()
	content, _ := os.ReadFile(logFile)
	lines := strings.Split(strings.TrimSpace(string(content)), "\n")
	if len(lines) != 4 {
		t.Fatalf("log file has %d lines:\n%s", len(lines), content)
	}
	for _, line := range lines {
		if !fileLine.MatchString(line) {
			t.Errorf("file line %q", line)
		}
	}
}

func TestLevelsPerDestination(t *testing.T) {
	var console bytes.Buffer
	h := NewLogHandler(&console, "m")
	logFile := filepath.Join(t.TempDir(), "x.log")
	h.OpenFile(logFile)
	spec, _ := ParseVerbose("console:off")
	spec.Apply(h)
	spec, _ = ParseVerbose("file:dbg")
	spec.Apply(h)
	console.Reset()
	slog.New(h).Debug("debug line")
	h.Close()
	if console.Len() != 0 {
		t.Errorf("console not off: %q", console.String())
	}
	content, _ := os.ReadFile(logFile)
	if !strings.Contains(string(content), "|m|DBG|debug line") {
		t.Errorf("file misses the debug line:\n%s", content)
	}
}
