// Command gvs-vswitchd is gvs's stand-in for Open vSwitch's ovs-vswitchd.
//
// It runs the switch: the bridge reconciler (package bridge) drives gvs's
// userspace datapath (bridge/dpadapter) from the Open_vSwitch database, so
// plain `ovs-vsctl add-br`/`add-port` (without --no-wait) configure real
// forwarding.
//
// Without a DATABASE operand it also hosts that database: $OVS_DBDIR/conf.db
// (created from Open vSwitch 3.1's schema when missing, converted to it
// when the file has another version of the schema, and kept on disk in the
// format ovsdb-server and ovsdb-tool use), served on
// punix:$OVS_RUNDIR/db.sock. A conf.db that is a symbolic link to a file
// not created yet (Debian's layout) gets its target created, the link
// kept. ovsdb-server's control commands (ovsdb-server/compact,
// list-dbs, add-remote, ...) act on it through
// `ovs-appctl -t ovs-vswitchd`. Given DATABASE (unix:PATH or tcp:IP:PORT, as
// ovs-ctl passes unix:/var/run/openvswitch/db.sock to ovs-vswitchd) it is
// a client of that server instead (Debian's ovsdb-server or
// gvs-ovsdb-server), with the same behaviour, reconnecting whenever the
// server goes away. Like ovs-vswitchd it does not create the Open_vSwitch
// row; `ovs-vsctl init` does.
//
//	gvs-vswitchd [DATABASE] [--remote=REMOTE]... [--pidfile[=FILE]]
//	    [--detach] [--no-chdir] [--log-file[=FILE]] [--unixctl=SOCKET] [-vSPEC]...
//
// The pidfile and control socket are ovs-vswitchd's, so
// `ovs-appctl -t ovs-vswitchd` reaches it.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gvs/bridge/dpadapter"
	"gvs/cmd/internal/daemon"
	"gvs/cmd/internal/ovsdbd"
	"gvs/ovsdb/server"
	"gvs/schema"
)

var program = daemon.Program{Name: "ovs-vswitchd", Binary: "gvs-vswitchd", ExitCleanup: true}

func main() {
	dirs := daemon.DirsFromEnv(os.Getenv)
	opts, cfg, sc, err := parseCommandLine(os.Args[1:], dirs)
	if err != nil {
		daemon.Fatal(program, "%v", err)
	}
	if opts.Help {
		fmt.Print(usage(dirs))
		return
	}
	if opts.ShowVer {
		fmt.Println(program.VersionString())
		return
	}
	d, err := daemon.Start(program, dirs, opts)
	if err != nil {
		daemon.Fatal(program, "%v", err)
	}
	if len(cfg.DBFiles) == 0 {
		runClient(d, sc)
		return
	}
	cfg.Serving = func(srv *server.Server) func() { return startSwitch(d, sc, srv) }
	if err := ovsdbd.Run(d, cfg); err != nil {
		d.Fatal(err)
	}
}

// parseCommandLine returns the switch's settings (the database to follow)
// and, unless that is an external server's, the configuration of the
// embedded one.
func parseCommandLine(args []string, dirs daemon.Dirs) (*daemon.Options, ovsdbd.Config, switchConfig, error) {
	o := &daemon.Options{}
	var extra []string
	var sc switchConfig
	opts := append(o.DaemonOptions(program, dirs),
		daemon.Option{Long: "metrics-address", Arg: daemon.RequiredArg, Set: func(v string, _ bool) error {
			sc.metricsAddress = v
			return nil
		}},
		daemon.Option{Long: "remote", Arg: daemon.RequiredArg, Set: func(v string, _ bool) error {
			extra = append(extra, v)
			return nil
		}},
		daemon.Option{Long: "enable-dummy", Arg: daemon.OptionalArg, Set: func(v string, _ bool) error {
			mode, err := dpadapter.ParseDummyMode(v)
			sc.dummy = mode
			return err
		}},
		// Open vSwitch's "system" datapath is the kernel module, which
		// gvs never uses: its bridges of datapath_type system are gvs's
		// userspace datapath either way.
		daemon.Option{Long: "disable-system", Set: func(string, bool) error {
			sc.disableSystem = true
			return nil
		}},
		daemon.Option{Long: "disable-system-route", Set: func(string, bool) error {
			sc.disableSystemRoute = true
			return nil
		}},
		daemon.Option{Long: "mlockall", Set: o.Ignored("--mlockall")},
		daemon.Option{Long: "private-key", Short: 'p', Arg: daemon.RequiredArg, Set: o.Ignored("--private-key")},
		daemon.Option{Long: "certificate", Short: 'c', Arg: daemon.RequiredArg, Set: o.Ignored("--certificate")},
		daemon.Option{Long: "ca-cert", Short: 'C', Arg: daemon.RequiredArg, Set: o.Ignored("--ca-cert")},
		daemon.Option{Long: "bootstrap-ca-cert", Arg: daemon.RequiredArg, Set: o.Ignored("--bootstrap-ca-cert")},
	)
	operands, err := daemon.ParseArgs(args, opts)
	if err != nil {
		return nil, ovsdbd.Config{}, sc, err
	}
	socket := filepath.Join(dirs.Run, "db.sock")
	switch {
	case len(operands) > 1:
		return nil, ovsdbd.Config{}, sc, errors.New("at most one non-option argument accepted; use --help for usage")
	case len(operands) == 1:
		sc.database, err = databaseOperand(operands[0])
		if err == nil && len(extra) > 0 {
			err = errors.New("--remote needs the embedded database (no DATABASE operand)")
		}
		return o, ovsdbd.Config{}, sc, err
	}
	cfg := ovsdbd.Config{
		DBFiles:      []string{filepath.Join(dirs.DB, "conf.db")},
		CreateSchema: schema.VSwitch(),
		// Like ovs-ctl's upgrade_db, an older (or newer) conf.db is
		// converted to the schema this switch speaks.
		UpgradeSchema: schema.VSwitch(),
		Program:       program.Binary,
		Remotes:       append([]string{"punix:" + socket}, extra...),
		// ovsdb-server/compact and the other ovsdb-server/* commands act
		// on the embedded database, as they would on Open vSwitch's
		// separate ovsdb-server.
		Commands: true,
	}
	sc.database = "unix:" + socket
	sc.dbFile = cfg.DBFiles[0]
	return o, cfg, sc, nil
}

func usage(dirs daemon.Dirs) string {
	return fmt.Sprintf(`%s: Open vSwitch compatible switch daemon (gvs)
usage: %s [OPTIONS] [DATABASE]
where DATABASE is unix:PATH or tcp:IP:PORT of an external ovsdb-server.
Without DATABASE it serves the Open_vSwitch database %s/conf.db
itself on unix:%s/db.sock.

  --remote=REMOTE         also listen on REMOTE: punix:PATH, ptcp:PORT[:IP]
                          (embedded database only)
  --metrics-address=ADDR  serve Prometheus metrics on http://ADDR/metrics
                          (PORT or :PORT: loopback only)
  --enable-dummy[=system|override]
                          the dummy datapath (datapath_type=dummy) and
                          devices (type=dummy, netdev-dummy/* commands);
                          system: system ports are dummy devices too;
                          override: every port is a dummy device
  --disable-system        accepted (gvs never uses the kernel datapath)
  --disable-system-route  do not take the kernel's routes into the tunnel route table
`, program.Binary, program.Binary, dirs.DB, dirs.Run) + daemon.DaemonUsage(program, dirs)
}
