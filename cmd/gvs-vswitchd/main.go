// Command gvs-vswitchd is gvs's stand-in for Open vSwitch's ovs-vswitchd.
//
// For now it only hosts the OVSDB server that the switch will be built
// around: the Open_vSwitch database of $OVS_DBDIR/conf.db (created from
// Open vSwitch 3.1's schema when missing), served on
// punix:$OVS_RUNDIR/db.sock, so `ovs-vsctl` works against it unchanged.
// Nothing acts on the configuration yet: the bridge layer, datapath and
// netdevs come with later issues, so `ovs-vsctl` without --no-wait waits
// for cur_cfg forever. Like ovs-vswitchd it does not create the
// Open_vSwitch row; `ovs-vsctl init` does.
//
//	gvs-vswitchd [unix:SOCKET] [--remote=REMOTE]... [--pidfile[=FILE]]
//	    [--detach] [--no-chdir] [--log-file[=FILE]] [--unixctl=SOCKET] [-vSPEC]...
//
// The optional operand names the socket to serve, in the form
// ovs-vswitchd takes its database (ovs-ctl passes
// unix:/var/run/openvswitch/db.sock). The pidfile and control socket are
// ovs-vswitchd's, so `ovs-appctl -t ovs-vswitchd` reaches it.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gvs/cmd/internal/daemon"
	"gvs/cmd/internal/ovsdbd"
	"gvs/schema"
)

var program = daemon.Program{Name: "ovs-vswitchd", Binary: "gvs-vswitchd", ExitCleanup: true}

func main() {
	dirs := daemon.DirsFromEnv(os.Getenv)
	opts, cfg, err := parseCommandLine(os.Args[1:], dirs)
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
	d.Logger.Info("no datapath yet: this gvs-vswitchd serves the configuration database only")
	if err := ovsdbd.Run(d, cfg); err != nil {
		d.Fatal(err)
	}
}

func parseCommandLine(args []string, dirs daemon.Dirs) (*daemon.Options, ovsdbd.Config, error) {
	o := &daemon.Options{}
	var extra []string
	opts := append(o.DaemonOptions(program, dirs),
		daemon.Option{Long: "remote", Arg: daemon.RequiredArg, Set: func(v string, _ bool) error {
			extra = append(extra, v)
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
		return nil, ovsdbd.Config{}, err
	}
	socket := filepath.Join(dirs.Run, "db.sock")
	switch {
	case len(operands) > 1:
		return nil, ovsdbd.Config{}, errors.New("at most one non-option argument accepted; use --help for usage")
	case len(operands) == 1:
		path, ok := strings.CutPrefix(operands[0], "unix:")
		if !ok {
			return nil, ovsdbd.Config{}, fmt.Errorf("%s: gvs-vswitchd serves its database itself and takes only unix:SOCKET", operands[0])
		}
		if socket, err = filepath.Abs(path); err != nil {
			return nil, ovsdbd.Config{}, err
		}
	}
	cfg := ovsdbd.Config{
		DBFiles:      []string{filepath.Join(dirs.DB, "conf.db")},
		CreateSchema: schema.VSwitch(),
		Remotes:      append([]string{"punix:" + socket}, extra...),
	}
	return o, cfg, nil
}

func usage(dirs daemon.Dirs) string {
	return fmt.Sprintf(`%s: Open vSwitch compatible switch daemon (gvs)
usage: %s [OPTIONS] [unix:SOCKET]
Serves the Open_vSwitch database %s/conf.db
on unix:SOCKET (default: %s/db.sock). No datapath yet.

  --remote=REMOTE         also listen on REMOTE: punix:PATH, ptcp:PORT[:IP]
`, program.Binary, program.Binary, dirs.DB, dirs.Run) + daemon.DaemonUsage(program, dirs)
}
