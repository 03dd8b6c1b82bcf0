package daemon

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
)

// A level given to one module applies to it alone: -vvlog:off silences
// vlog and nothing else; a spec without a module (or with ANY) sets every
// module, including those that log for the first time later; Enabled
// lets through what any module wants.
func TestModuleLevels(t *testing.T) {
	var out strings.Builder
	h := NewLogHandler(&out, "ovsdb_server")
	apply := func(spec string) {
		t.Helper()
		v, err := ParseVerbose(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		v.Apply(h)
	}
	logger := slog.New(h)
	apply("vlog:off")
	Module(logger, "vlog").Info("hidden")
	logger.Info("shown")
	apply("jsonrpc:console:dbg")
	Module(logger, "jsonrpc").Debug("debug shown")
	logger.Debug("debug hidden")
	apply("console:warn") // every module, jsonrpc included
	Module(logger, "jsonrpc").Info("hidden too")
	Module(logger, "later").Warn("later shown")
	want := "T|00001|ovsdb_server|INFO|shown\n" +
		"T|00002|jsonrpc|DBG|debug shown\n" +
		"T|00003|later|WARN|later shown\n"
	got := regexp.MustCompile(`(?m)^[^|]*\|`).ReplaceAllString(out.String(), "T|")
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	list := h.ListLevels()
	for _, row := range []string{"jsonrpc           WARN       INFO       INFO", "vlog              WARN        OFF        OFF"} {
		if !strings.Contains(list, row+"\n") {
			t.Errorf("vlog/list lacks %q:\n%s", row, list)
		}
	}
}

// ParseVerbose refuses what vlog_set_levels_from_string refuses, with its
// words.
func TestParseVerboseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"file:console":   "cannot specify multiple destinations",
		"info:warn":      "cannot specify multiple levels",
		"vlog:unixctl":   "cannot specify multiple modules",
		"a.b":            `no destination, level, or module "a.b"`,
		"ANY:syslog:off": "",
		"":               "",
	} {
		_, err := ParseVerbose(spec)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("%q: %q, want %q", spec, got, want)
			}
		} else if want != "" {
			t.Errorf("%q: accepted, want %q", spec, want)
		}
	}
}
