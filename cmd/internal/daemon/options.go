package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Version is gvs's version, shown by --version and the "version" command.
const Version = "0.1.0"

// Dirs are Open vSwitch's run, database and log directories, taken from
// OVS_RUNDIR, OVS_DBDIR and OVS_LOGDIR with Debian's defaults.
type Dirs struct {
	Run, DB, Log string
}

// DirsFromEnv reads the directories through getenv (os.Getenv in main).
func DirsFromEnv(getenv func(string) string) Dirs {
	pick := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	return Dirs{
		Run: pick("OVS_RUNDIR", "/var/run/openvswitch"),
		DB:  pick("OVS_DBDIR", "/etc/openvswitch"),
		Log: pick("OVS_LOGDIR", "/var/log/openvswitch"),
	}
}

// Program names a daemon. Name is the Open vSwitch program it stands in
// for ("ovsdb-server"), which names its pidfile, control socket and log
// file so that `ovs-appctl -t ovsdb-server` finds it; Binary is gvs's own
// name, shown in messages and the version string.
type Program struct {
	Name   string
	Binary string
	// ExitCleanup makes "exit" accept ovs-vswitchd's "--cleanup".
	ExitCleanup bool
}

// VersionString is the reply to "version" and --version, shaped like Open
// vSwitch's "ovsdb-server (Open vSwitch) 3.1.0".
func (p Program) VersionString() string {
	return fmt.Sprintf("%s (gvs) %s", p.Binary, Version)
}

// Options are the daemon and logging options every Open vSwitch daemon
// accepts.
type Options struct {
	Pidfile          string // "" when no pidfile
	OverwritePidfile bool
	Detach           bool
	NoChdir          bool
	Monitor          bool
	User             string
	LogFile          string // "" when no log file
	Unixctl          string // "" for the default, "none" for no socket
	Verbose          []VerboseSpec
	Help, ShowVer    bool
	// Transient: the daemon ends on its own soon (ovsdb-server --run), so
	// its version is not logged at start, as in Open vSwitch.
	Transient bool

	// Notes are warnings about accepted but unsupported options, logged
	// once logging is set up.
	Notes []string
}

// DaemonOptions returns the options shared by all daemons, filling o. Paths
// default and resolve as in Open vSwitch: the pidfile and control socket
// relative to dirs.Run, the log file to dirs.Log when not given.
func (o *Options) DaemonOptions(p Program, dirs Dirs) []Option {
	return []Option{
		{Long: "pidfile", Arg: OptionalArg, Set: func(v string, given bool) error {
			if !given {
				v = p.Name + ".pid"
			}
			o.Pidfile = inDir(dirs.Run, v)
			return nil
		}},
		{Long: "overwrite-pidfile", Set: func(string, bool) error { o.OverwritePidfile = true; return nil }},
		{Long: "detach", Set: func(string, bool) error { o.Detach = true; return nil }},
		{Long: "no-chdir", Set: func(string, bool) error { o.NoChdir = true; return nil }},
		{Long: "no-self-confinement", Set: func(string, bool) error { return nil }},
		{Long: "monitor", Set: func(string, bool) error {
			o.Monitor = true
			return nil
		}},
		{Long: "user", Arg: RequiredArg, Set: func(v string, _ bool) error {
			o.User = v
			o.Notes = append(o.Notes, "--user is not supported: running as the invoking user")
			return nil
		}},
		{Long: "log-file", Arg: OptionalArg, Set: func(v string, given bool) error {
			if !given {
				v = filepath.Join(dirs.Log, p.Name+".log")
			}
			abs, err := filepath.Abs(v)
			o.LogFile = abs
			return err
		}},
		{Long: "unixctl", Arg: RequiredArg, Set: func(v string, _ bool) error {
			if v == "none" {
				o.Unixctl = v
			} else {
				o.Unixctl = inDir(dirs.Run, v)
			}
			return nil
		}},
		{Long: "verbose", Short: 'v', Arg: OptionalArg, Set: func(v string, _ bool) error {
			spec, err := ParseVerbose(v)
			if err != nil {
				return err
			}
			o.Verbose = append(o.Verbose, spec)
			return nil
		}},
		{Long: "syslog-target", Arg: RequiredArg, Set: o.Ignored("--syslog-target")},
		{Long: "syslog-method", Arg: RequiredArg, Set: o.Ignored("--syslog-method")},
		{Long: "help", Short: 'h', Set: func(string, bool) error { o.Help = true; return nil }},
		{Long: "version", Short: 'V', Set: func(string, bool) error { o.ShowVer = true; return nil }},
	}
}

// Ignored accepts an option gvs does not implement and notes it.
func (o *Options) Ignored(name string) func(string, bool) error {
	return func(string, bool) error {
		o.Notes = append(o.Notes, name+" is not supported and was ignored")
		return nil
	}
}

// ControlSocket is where the unixctl server listens: the --unixctl path, or
// <rundir>/<program>.<pid>.ctl; "" for --unixctl=none.
func (o *Options) ControlSocket(p Program, dirs Dirs, pid int) string {
	switch o.Unixctl {
	case "none":
		return ""
	case "":
		return filepath.Join(dirs.Run, fmt.Sprintf("%s.%d.ctl", p.Name, pid))
	}
	return o.Unixctl
}

// inDir resolves name against dir unless it is absolute, as Open vSwitch's
// abs_file_name does.
func inDir(dir, name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return filepath.Join(dir, name)
}

// DaemonUsage is the help text for the shared options.
func DaemonUsage(p Program, dirs Dirs) string {
	return fmt.Sprintf(`
Daemon options:
  --detach                run in background as daemon
  --no-chdir              do not chdir to '/'
  --monitor               creates a process to monitor this daemon
  --pidfile[=FILE]        create pidfile (default: %s/%s.pid)
  --overwrite-pidfile     with --pidfile, start even if already running
  --unixctl=SOCKET        override default control socket name

Logging options:
  -vSPEC, --verbose=SPEC  set logging levels
  -v, --verbose           set maximum verbosity level
  --log-file[=FILE]       enable logging to specified FILE
                          (default: %s/%s.log)

Other options:
  -h, --help              display this help message
  -V, --version           display version information
`, dirs.Run, p.Name, dirs.Log, p.Name)
}

// Fatal prints "binary: message" to stderr and exits 1, as Open vSwitch's
// ovs_fatal does.
func Fatal(p Program, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s: %s\n", p.Binary, fmt.Sprintf(format, args...))
	os.Exit(1)
}
