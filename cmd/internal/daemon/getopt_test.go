package daemon

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func parseFor(t *testing.T, args ...string) (*Options, []string, []string, error) {
	t.Helper()
	o := &Options{}
	var remotes []string
	opts := append(o.DaemonOptions(Program{Name: "ovsdb-server", Binary: "gvs-ovsdb-server"}, Dirs{Run: "/run/ovs", DB: "/db", Log: "/log"}),
		Option{Long: "remote", Arg: RequiredArg, Set: func(v string, _ bool) error { remotes = append(remotes, v); return nil }},
		Option{Long: "private-key", Short: 'p', Arg: RequiredArg, Set: func(string, bool) error { return nil }},
	)
	operands, err := ParseArgs(args, opts)
	return o, operands, remotes, err
}

func TestParseLikeGetopt(t *testing.T) {
	o, operands, remotes, err := parseFor(t,
		"a.db", "--remote=punix:/x", "--remote", "ptcp:0", "--pidfile", "--detach", "b.db",
		"--no-chdir", "--log-file=/tmp/l.log", "--unixctl=ctl", "-vconsole:off", "-v", "--verbose=file:warn",
		"-p", "key.pem", "--", "--c.db")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(operands, []string{"a.db", "b.db", "--c.db"}) {
		t.Errorf("operands %v", operands)
	}
	if !reflect.DeepEqual(remotes, []string{"punix:/x", "ptcp:0"}) {
		t.Errorf("remotes %v", remotes)
	}
	if o.Pidfile != "/run/ovs/ovsdb-server.pid" || !o.Detach || !o.NoChdir || o.LogFile != "/tmp/l.log" || o.Unixctl != "/run/ovs/ctl" {
		t.Errorf("options %+v", o)
	}
	want := []VerboseSpec{
		{Destination: "console", Level: LevelOff},
		{Destination: "any", Level: slog.LevelDebug},
		{Destination: "file", Level: slog.LevelWarn},
	}
	if !reflect.DeepEqual(o.Verbose, want) {
		t.Errorf("verbose %+v", o.Verbose)
	}
}

func TestParseDefaultsAndAbbreviations(t *testing.T) {
	o, _, _, err := parseFor(t, "--pidfile=/abs.pid", "--log-file", "--det", "--unixctl=none")
	if err != nil {
		t.Fatal(err)
	}
	if o.Pidfile != "/abs.pid" || o.LogFile != "/log/ovsdb-server.log" || !o.Detach || o.Unixctl != "none" {
		t.Errorf("options %+v", o)
	}
	p := Program{Name: "ovsdb-server"}
	if got := o.ControlSocket(p, Dirs{Run: "/r"}, 42); got != "" {
		t.Errorf("--unixctl=none gave %q", got)
	}
	if got := (&Options{}).ControlSocket(p, Dirs{Run: "/r"}, 42); got != "/r/ovsdb-server.42.ctl" {
		t.Errorf("default control socket %q", got)
	}
	o, _, _, _ = parseFor(t, "--pidfile=rel.pid")
	if o.Pidfile != "/run/ovs/rel.pid" {
		t.Errorf("relative pidfile %q", o.Pidfile)
	}
}

func TestParseErrorsLikeGetopt(t *testing.T) {
	for args, want := range map[string]string{
		"--bogus":           "unrecognized option '--bogus'",
		"--remote":          "option '--remote' requires an argument",
		"--detach=yes":      "option '--detach' doesn't allow an argument",
		"-x":                "invalid option -- 'x'",
		"-p":                "option requires an argument -- 'p'",
		"--p":               "option '--p' is ambiguous",
		"-vpattern:x:y":     "not supported",
		"--verbose=a/b:dbg": "no destination, level, or module",
	} {
		_, _, _, err := parseFor(t, strings.Fields(args)...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", args, err, want)
		}
	}
}

func TestEnvDirs(t *testing.T) {
	env := map[string]string{"OVS_RUNDIR": "/r"}
	d := DirsFromEnv(func(k string) string { return env[k] })
	if d != (Dirs{Run: "/r", DB: "/etc/openvswitch", Log: "/var/log/openvswitch"}) {
		t.Errorf("%+v", d)
	}
}
